"""An index folder crafted to run code is refused when opened, not run."""

from __future__ import annotations

import os
import pickle

import pytest
from click.testing import CliRunner

from searchengine import IndexDamagedError, build_index, open_index
from searchengine.cli import main
from searchengine.engines.whoosh import integrity, safepickle, store

from conftest import CORPUS


class Payload:
    """Pickles as a call of os.mkdir: what a crafted index would run."""

    def __init__(self, marker) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return os.mkdir, (self.marker,)


@pytest.fixture
def index_dir(tmp_path):
    build_index([CORPUS / "depei-qian.txt"], tmp_path / "ix")
    return tmp_path / "ix"


def _rewrite_toc(index_dir, *, schema=None, segments=None) -> None:
    from whoosh.fields import Schema
    from whoosh.filedb.filestore import FileStorage
    from whoosh.index import TOC

    generation = store.current_generation(index_dir)
    storage = FileStorage(str(generation))
    toc = TOC.read(storage, "MAIN")
    (generation / f"_MAIN_{toc.generation}.toc").unlink()
    if schema is not None:

        class CraftedSchema(Schema):
            def __reduce__(self):
                return schema.__reduce__()

        toc.schema = CraftedSchema()
    if segments is not None:
        toc.segments = segments
    toc.write(storage, "MAIN")
    integrity.write_checksums(generation)  # whoever crafts a folder can list its checksums too


@pytest.mark.parametrize("where", ["schema", "segments"])
def test_a_crafted_table_of_contents_is_refused_and_runs_nothing(index_dir, tmp_path, where):
    marker = tmp_path / "ran"
    _rewrite_toc(index_dir, **({"schema": Payload(marker)} if where == "schema" else {"segments": [Payload(marker)]}))
    with pytest.raises(IndexDamagedError, match=r"it names posix\.mkdir, which no index holds"):
        open_index(index_dir).search("gpu")
    result = CliRunner().invoke(main, ["search", "gpu", "--index-dir", str(index_dir)])
    assert result.exit_code == 3 and "which no index holds (the folder may have been made to run code)" in result.stderr
    assert "Traceback" not in result.output and not marker.exists()


def test_what_an_index_holds_reads_back():
    from collections import OrderedDict, defaultdict

    data = (frozenset({"a"}), {"k": [1, 2.5, b"x", None, True]}, OrderedDict(a=1), defaultdict(int))
    assert safepickle.loads(pickle.dumps(data, 2)) == data
    for forbidden in (os.system, eval, getattr, __import__, range(3)):
        with pytest.raises(pickle.UnpicklingError, match="which no index holds"):
            safepickle.loads(pickle.dumps(forbidden, 2))


def test_only_the_exact_classes_an_index_holds_are_built():
    from collections import Counter

    from whoosh.fields import Schema
    from whoosh.filedb.filestore import FileStorage

    from searchengine.cli.progress import IndexProgress

    assert isinstance(safepickle.loads(pickle.dumps(Schema(), 2)), Schema)
    # Classes of the same packages that no index holds are refused, not only functions.
    for other, name in [
        (FileStorage("."), "whoosh.filedb.filestore.FileStorage"),
        (Counter("ab"), "collections.Counter"),
        (IndexProgress.__new__(IndexProgress), "searchengine.cli.progress.IndexProgress"),
    ]:
        with pytest.raises(pickle.UnpicklingError, match=f"it names {name}, which no index holds"):
            safepickle.loads(pickle.dumps(other, 2))
