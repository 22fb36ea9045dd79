"""Shared fixtures: small real indexes built in temporary directories, and the large test data."""

from __future__ import annotations

from pathlib import Path

import pytest

from searchengine import build_index, open_index

import shareddata

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "corpus"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data``: a test that takes it skips without the data (fails under CI).

    Session-scoped, so it is set up, and skips, before the fixtures that read the data.
    """
    return shareddata.require()


@pytest.fixture(scope="session")
def corpus_index_dir(tmp_path_factory) -> Path:
    """An index of the bundled corpus, built once per test session."""
    index_dir = tmp_path_factory.mktemp("corpus-index")
    build_index([CORPUS], index_dir)
    return index_dir


@pytest.fixture(scope="session")
def corpus_index(corpus_index_dir):
    index = open_index(corpus_index_dir)
    yield index
    index.close()


@pytest.fixture(scope="module", params=[1, 2], ids=["one-segment", "two-segments"])
def corpus_searcher(request, tmp_path_factory):
    """A Whoosh searcher over the corpus written by one process (one segment) or two (two segments)."""
    folder = tmp_path_factory.mktemp(f"corpus-{request.param}-segments")
    build_index([CORPUS], folder, jobs=request.param)
    index = open_index(folder)
    yield index.engine.current().searcher
    index.close()


def write(path: Path, text: str) -> Path:
    """Write ``text`` as UTF-8 (no newline translation) and return ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path


def corpus_records():
    """The corpus records, read independently of any index."""
    from searchengine.readers import read_records

    return list(read_records([CORPUS], []))


def contains_word(record, pattern: str) -> bool:
    """Brute-force check: does ``pattern`` occur as a whole word in title or abstract?"""
    import re

    text = f"{record.title} {record.abstract}"
    return re.search(rf"(?<![^\W_])(?:{pattern})(?![^\W_])", text, re.IGNORECASE) is not None


def child_processes(parent: int) -> list[int]:
    """The pids of the processes whose parent is ``parent``, sorted (from ``/proc``)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended while listed
        if int(fields[1]) == parent:
            found.append(int(stat.parent.name))
    return sorted(found)
