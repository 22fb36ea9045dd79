"""The engine contract: one suite of search behaviour, run against every engine.

``engine_index`` is parametrised by engine name; each engine's builder
indexes the same records (the bundled corpus) and returns a
:class:`searchengine.SearchIndex`. The OpenSearch engine runs on the cluster
named by ``SEARCHENGINE_TEST_CLUSTER`` (``scripts/dev-cluster.sh start``);
without one it is skipped with one reason, and under ``CI=true`` a missing
cluster fails. Both engines index the same terms and score them alike, so
every case expects the same answer of both (``test_parity_contract.py``
compares them on real records).
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from searchengine import build_index, open_index

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "corpus"
ENGINES = ["whoosh", "opensearch"]
CLUSTER_VARIABLE = "SEARCHENGINE_TEST_CLUSTER"


def _whoosh(tmp_path_factory, source: Path = CORPUS, **options):
    folder = tmp_path_factory.mktemp("contract-whoosh")
    build_index([source], folder, **options)
    return open_index(folder), lambda: None


def _opensearch(tmp_path_factory, source: Path = CORPUS, **options):
    url = os.environ.get(CLUSTER_VARIABLE, "").strip().rstrip("/")
    if not url:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(
                f"{CLUSTER_VARIABLE} is not set under CI=true: the contract must run on OpenSearch", pytrace=False
            )
        pytest.skip(
            f"needs an OpenSearch cluster: scripts/dev-cluster.sh start, then {CLUSTER_VARIABLE}=http://127.0.0.1:9200"
        )
    location = f"{url}/contract-{uuid.uuid4().hex[:8]}"
    build_index([source], location, **options)
    index = open_index(location)

    def drop() -> None:
        from searchengine.engines.opensearch.writer import aliased_indexes

        engine = index.engine
        for name in aliased_indexes(engine.client, engine.cluster) or []:
            engine.client.indices.delete(index=name, ignore_unavailable=True)

    return index, drop


BUILDERS = {"whoosh": _whoosh, "opensearch": _opensearch}


@pytest.fixture(scope="session", params=ENGINES)
def engine_index(request, tmp_path_factory):
    """A SearchIndex of the bundled corpus (24 records) on each engine."""
    index, drop = BUILDERS[request.param](tmp_path_factory)
    yield index
    drop()
    index.close()


@pytest.fixture(scope="session", params=ENGINES)
def words_index(request, tmp_path_factory):
    """A SearchIndex, on each engine, of the records of ``WORDS_RECORDS``
    (``tests/contract/test_words_contract.py``): the same words written
    spaced, hyphenated and joined."""
    import json

    from .test_words_contract import WORDS_RECORDS

    source = tmp_path_factory.mktemp("words") / "words.jsonl"
    source.write_text("".join(json.dumps(record) + "\n" for record in WORDS_RECORDS), encoding="utf-8")
    index, drop = BUILDERS[request.param](tmp_path_factory, source)
    yield index
    drop()
    index.close()


@pytest.fixture(scope="session", params=ENGINES)
def dates_index(request, tmp_path_factory):
    """A SearchIndex, on each engine, of ``DATED_RECORDS``
    (``tests/contract/test_dates_contract.py``): papers with a day, with
    only a year, and with neither."""
    import json

    from .test_dates_contract import DATED_RECORDS

    source = tmp_path_factory.mktemp("dates") / "dates.jsonl"
    source.write_text("".join(json.dumps(record) + "\n" for record in DATED_RECORDS), encoding="utf-8")
    index, drop = BUILDERS[request.param](tmp_path_factory, source)
    yield index
    drop()
    index.close()


@pytest.fixture(scope="session", params=ENGINES)
def spelling_index(request, tmp_path_factory):
    """A SearchIndex, on each engine, of ``SPELLING_RECORDS``
    (``tests/contract/test_spelling_contract.py``): a rare word held by one
    paper beside a common look-alike held by many."""
    import json

    from .test_spelling_contract import SPELLING_RECORDS

    source = tmp_path_factory.mktemp("spelling") / "spelling.jsonl"
    source.write_text("".join(json.dumps(record) + "\n" for record in SPELLING_RECORDS), encoding="utf-8")
    index, drop = BUILDERS[request.param](tmp_path_factory, source)
    yield index
    drop()
    index.close()


@pytest.fixture(scope="session", params=ENGINES)
def fuzzy_index(request, tmp_path_factory):
    """A SearchIndex, on each engine, of ``FUZZY_RECORDS``
    (``tests/contract/test_fuzzy_contract.py``): a word beside its plural,
    a typo of it and compounds with a number or a letter, papers holding
    only that number or letter, identifiers and short author names."""
    import json

    from .test_fuzzy_contract import FUZZY_RECORDS

    source = tmp_path_factory.mktemp("fuzzy") / "fuzzy.jsonl"
    source.write_text("".join(json.dumps(record) + "\n" for record in FUZZY_RECORDS), encoding="utf-8")
    index, drop = BUILDERS[request.param](tmp_path_factory, source)
    yield index
    drop()
    index.close()
