"""The time budget and long questions, on every engine.

A pasted abstract is searched by the words the fewest papers hold (chosen by
the query language from the engine's own document frequencies, so both
engines choose the same words), and every search stops within its budget,
saying ``timed_out`` when the deadline cut something.
"""

from __future__ import annotations

import time

from searchengine import querylang
from searchengine.querylang.parser import MAX_QUESTION_TERMS

CB_SPMV = "t-30f1b8f5a2a1"  # "CB-SpMV: A Data Aggregating and Balance Algorithm ..." (127 different words)


def _abstract(index, record_id: str) -> str:
    return index.record(record_id).abstract


def _kept(index, text: str) -> list[str]:
    """The words of ``text`` a search keeps, with the engine's frequencies."""
    return index.engine.call(lambda searcher: querylang.parse(text, frequencies=searcher.lexicon().frequencies).words)


# Each engine's spelling frequencies (papers whose title, or abstract, holds
# the word's stem, as its analysis stems it): the same order, not the same counts.
FREQUENCIES = {
    "whoosh": {"SpMV": 1, "GPUs": 12, "the": 0, "qwertyuiop": 0},
    "opensearch": {"SpMV": 1, "GPUs": 12, "the": 0, "qwertyuiop": 0},
}


def test_word_frequencies_count_the_papers_holding_the_word(engine_index):
    found = engine_index.engine.call(lambda s: s.lexicon().frequencies(["SpMV", "GPUs", "the", "qwertyuiop"]))
    assert found == FREQUENCIES[engine_index.engine.name]


def test_a_pasted_abstract_is_searched_by_its_rarest_words(engine_index):
    abstract = _abstract(engine_index, CB_SPMV)
    results = engine_index.search(abstract, time_budget=30)
    assert results.notes[0] == (
        f"a long question: searched by the {MAX_QUESTION_TERMS} of its 114 different words that the fewest papers hold"
    )
    assert results.hits[0].id == CB_SPMV
    assert results.timed_out is False
    kept = {word.casefold() for word in _kept(engine_index, abstract)}
    # Words as typed: a hyphenated word counts as its parts, so a few more forms than words.
    assert MAX_QUESTION_TERMS <= len(kept) <= MAX_QUESTION_TERMS + 8
    # Words in one or two papers stay; the corpus's commonest words go.
    assert {"spmv", "cb-spmv", "cache-friendly", "convergent", "aggregating", "suitesparse", "tilespmv"} <= kept
    assert not {"performance", "gpus", "gpu", "data", "paper", "optimization"} & kept


def test_a_cut_search_says_so_and_returns_at_once(engine_index):
    chain = " OR ".join(["Collision-Free OR cache-friendly OR sparse-matrix"] * 30)
    started = time.thread_time()
    results = engine_index.search(chain, time_budget=0)
    assert time.thread_time() - started < 1.0
    if engine_index.engine.name == "whoosh":
        # Whoosh stops matching at the deadline; the cluster's shortest
        # timeout (100 ms) is time enough for this corpus.
        assert results.timed_out is True
        assert results.notes[-1] == "matching was stopped after 0 s; some papers may be missing"
    else:
        assert (results.total, results.timed_out) == (3, False)
