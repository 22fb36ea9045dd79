"""``searchengine check`` on a cluster index: its layout, health and shard copies."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from searchengine import build_index
from searchengine.cli import main

CORPUS = Path(__file__).resolve().parents[3] / "corpus"


def test_a_built_index_is_sound_with_every_shard_copy_named(location, index_name):
    build_index([CORPUS], location)
    result = CliRunner().invoke(main, ["check", "--index", location, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["engine"], report["documents"], report["sound"], report["problem"]) == ("opensearch", 24, True, None)
    assert report["version"].startswith(index_name + "-")
    primaries = [part for part in report["parts"] if " primary on " in part["name"]]
    assert primaries and sum(part["size"] for part in primaries) == 24
    assert all(part["problem"] is None for part in report["parts"])
    result = CliRunner().invoke(main, ["check", "--index", location])
    assert result.exit_code == 0
    assert result.stdout.startswith(f"{location}: sound ({report['version']}: ")
    assert result.stdout.endswith(", 24 documents)\n")


def test_an_index_of_another_layout_is_named(location, cluster_client):
    from searchengine.engines.opensearch.mapping import META_KEY

    build_index([CORPUS], location)
    (physical,) = cluster_client.indices.get_alias(index=location.rsplit("/", 1)[1])
    cluster_client.indices.put_mapping(index=physical, body={"_meta": {META_KEY: {"layout": 0}}})
    result = CliRunner().invoke(main, ["check", "--index", location])
    assert result.exit_code == 3
    assert result.stderr.startswith(f"Error: {location}: the index {physical} was built by another version")


def test_no_index_is_exit_1(location):
    result = CliRunner().invoke(main, ["check", "--index", location])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.stderr.startswith("Error: ")
