"""The engine contract: one suite of search behaviour, run against every engine.

``engine_index`` is parametrised by engine name; each engine's builder
indexes the same records (the bundled corpus) and returns a
:class:`searchengine.SearchIndex`. A test that depends on an analysis
difference an engine documents marks it with ``differs(engine, reason)``
rather than skipping silently.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from searchengine import build_index, open_index

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "corpus"
ENGINES = ["whoosh"]


def _whoosh(tmp_path_factory):
    folder = tmp_path_factory.mktemp("contract-whoosh")
    build_index([CORPUS], folder)
    return open_index(folder)


BUILDERS = {"whoosh": _whoosh}


@pytest.fixture(scope="session", params=ENGINES)
def engine_index(request, tmp_path_factory):
    """A SearchIndex of the bundled corpus (24 records) on each engine."""
    index = BUILDERS[request.param](tmp_path_factory)
    yield index
    index.close()
