"""How many HTTP requests a search sends, counted where the client sends them.

Term statistics (document frequencies, average lengths), did-you-mean's word
counts and the counts of an author the words may name are kept per
generation of the index in the searching process and read with the search's
count; a change of the index (a build, an update) makes them be read again.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from searchengine import build_index, open_index, update_index
from searchengine.engines.opensearch import scoring

CORPUS = Path(__file__).resolve().parents[3] / "corpus"


class Requests:
    """Every request the index's client sends (method, path), counted at its transport."""

    def __init__(self, index) -> None:
        self.sent: list[tuple[str, str]] = []
        transport = index.engine.client.transport
        send = transport.perform_request

        def counted(method, url, *args, **kwargs):
            self.sent.append((method, url))
            return send(method, url, *args, **kwargs)

        transport.perform_request = counted

    def during(self, work) -> list[tuple[str, str]]:
        """The requests sent while ``work()`` ran."""
        self.sent.clear()
        work()
        return list(self.sent)


@pytest.fixture
def corpus_index(location):
    build_index([CORPUS], location)
    scoring._KNOWN.clear()  # a process that has searched nothing yet
    index = open_index(location)
    index.search("gpu", limit=10)  # the layout and vector checks of a newly opened index
    yield index
    index.close()


def test_a_keyword_search_takes_two_requests_and_a_repeated_word_no_more(corpus_index):
    requests = Requests(corpus_index)

    def search(query: str):
        return lambda: corpus_index.search(query, limit=10)

    # A word not searched before: its counts are read with the search's count.
    first = requests.during(search("sparse"))
    assert len(first) == 2, first
    assert all(path.endswith("/_search") for _, path in first)
    # Words of a phrase-like query: the best hits of the words get the bonus
    # of standing together (found once the words' statistics are known).
    assert len(requests.during(search("sparse matrix multiplication"))) == 3
    for query in ("sparse", "sparse matrix multiplication", "matrix", "multiplication sparse"):
        assert len(requests.during(search(query))) == 2, query
    # The same answer as a process that knew nothing.
    again = corpus_index.search("sparse matrix multiplication", limit=10)
    scoring._KNOWN.clear()
    fresh = corpus_index.search("sparse matrix multiplication", limit=10)
    assert again.total == fresh.total > 0
    assert [(h.id, h.score) for h in again.hits] == [(h.id, h.score) for h in fresh.hits]


def test_the_counts_are_read_again_when_the_index_changes(corpus_index, location, tmp_path):
    before = corpus_index.search("sparse", limit=10)
    assert corpus_index.search("", sort="newest").total == 24  # a count of filters alone, kept
    known = scoring.index_statistics(corpus_index.engine.location)
    generation = known.generation
    added = tmp_path / "added.jsonl"
    added.write_text(
        "".join(
            json.dumps({"id": f"added-{n}", "title": f"Sparse kernels {n}", "abstract": "Sparse sparse sparse."}) + "\n"
            for n in range(5)
        ),
        encoding="utf-8",
    )
    update_index([added], location)
    assert corpus_index.search("", sort="newest").total == 24 + 5  # counted again, not the kept count
    after = corpus_index.search("sparse", limit=10)
    assert known.generation != generation
    assert known.total == corpus_index.doc_count == 24 + 5  # the corpus and the papers added
    assert after.total == before.total + 5
    scoring._KNOWN.clear()
    fresh = corpus_index.search("sparse", limit=10)
    assert [(h.id, h.score) for h in after.hits] == [(h.id, h.score) for h in fresh.hits]
