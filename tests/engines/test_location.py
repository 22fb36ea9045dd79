"""An index location is read once into a Location, which the door and the pipelines take as it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from searchengine.engines import check_location, is_cluster, needs_build
from searchengine.engines.location import Location
from searchengine.errors import InputError


def test_a_folder_and_a_cluster_location():
    folder = Location.parse("some/index")
    assert (folder.folder, folder.cluster, folder.is_cluster, folder.working) == (
        Path("some/index"),
        None,
        False,
        Path("some/index"),
    )
    cluster = Location.parse(" http://user:secret@127.0.0.1:9200/papers ")
    assert cluster.is_cluster and cluster.folder is None and cluster.cluster.index == "papers"
    assert cluster.working == "http://user:secret@127.0.0.1:9200/papers"  # the text as the engines took it
    assert str(cluster) == "http://127.0.0.1:9200/papers" and "secret" not in repr(cluster)
    assert is_cluster(cluster) and not is_cluster(folder)


def test_a_location_is_read_once_and_taken_as_it_is(tmp_path):
    location = Location.parse(tmp_path / "index")
    assert Location.parse(location) is location
    assert check_location(location) == tmp_path / "index" == check_location(str(tmp_path / "index"))
    assert needs_build(location) is True


@pytest.mark.parametrize(
    "text", ["", "  ", "htp://127.0.0.1:9200/papers", "127.0.0.1:9200/papers", "http://127.0.0.1:9200/"]
)
def test_malformed_locations_are_refused(text):
    with pytest.raises(InputError):
        Location.parse(text)


def test_a_cluster_location_names_no_folder():
    with pytest.raises(ValueError):
        assert Location.parse("http://127.0.0.1:9200/papers").path is None
