"""Fuzzy words on every engine: whole words only, never numbers or pieces.

A small corpus written out below. ``transformer`` stands beside its plural,
a typo of it, and the compounds ``Transformer-2`` and ``L-Transformer``,
two edits from it whose parts ``2`` and ``l`` other papers hold alone;
``graph`` beside ``gap`` and ``grain`` (two edits); identifiers one edit
from each other (``GPT4``, ``GPT3``; ``H100``, ``H200``); author names one
edit from ``Lee`` (``Lei``; ``Le``, two letters).
"""

from __future__ import annotations

import re

import pytest

from searchengine.errors import QueryError

FUZZY_RECORDS = [
    {"id": "plain", "title": "A transformer for parsing", "abstract": "We train a transformer on parse trees."},
    {"id": "plural", "title": "Transformers for translation", "abstract": "Transformers translate text."},
    {"id": "typo", "title": "Sequence models", "abstract": "A tranformer reads the sequence."},
    {"id": "numbered", "title": "Transformer-2 for speech", "abstract": "Transformer-2 recognises speech."},
    {"id": "lettered", "title": "L-Transformer for vision", "abstract": "The L-Transformer labels images."},
    {"id": "two", "title": "Sorting on 2 processors", "abstract": "We sort keys with 2 processors and a heap."},
    {"id": "ell", "title": "The L curve", "abstract": "An L curve picks the regulariser."},
    {"id": "graph", "title": "Graph partitioning", "abstract": "A heuristic partitions the graph."},
    {"id": "graphs", "title": "Graphs of groups", "abstract": "Groups act on graphs."},
    {"id": "gap", "title": "The spectral gap", "abstract": "We bound the gap of a spectrum."},
    {"id": "grain", "title": "Grain growth in metals", "abstract": "Grain boundaries move when heated."},
    {"id": "gpt4", "title": "GPT4 answers questions", "abstract": "We ask GPT4 questions."},
    {"id": "gpt3", "title": "GPT3 writes code", "abstract": "We ask GPT3 for code."},
    {"id": "h100", "title": "Kernels for H100 GPUs", "abstract": "Tensor cores of the H100."},
    {"id": "h200", "title": "Kernels for H200 GPUs", "abstract": "Tensor cores of the H200."},
    {"id": "y2023", "title": "Results of 2023", "abstract": "The benchmark as run in 2023."},
    {"id": "y2024", "title": "Results of 2024", "abstract": "The benchmark as run in 2024."},
    {"id": "lee", "title": "Cell sorting", "abstract": "Cells are sorted by size.", "authors": ["Min Lee"]},
    {"id": "lei", "title": "Cell counting", "abstract": "Cells are counted by size.", "authors": ["Lei Wang"]},
    {"id": "le", "title": "Cell tracking", "abstract": "Cells are tracked by size.", "authors": ["Le Zhang"]},
]


def found(index, query):
    results = index.search(query, limit=100)
    assert results.total == len(results.hits)
    return {hit.id for hit in results.hits}


def test_a_fuzzy_word_never_matches_a_number_or_letter_of_a_compound_near_it(fuzzy_index):
    # Two edits reach transformers, the typo and both compounds (each holds
    # "transformer"), never the 2 or the l of the compounds, which the
    # papers "two" and "ell" hold alone.
    assert found(fuzzy_index, "transformer~2") == {"plain", "plural", "typo", "numbered", "lettered"}
    assert found(fuzzy_index, "transformer~") == found(fuzzy_index, "transformer~2")
    assert found(fuzzy_index, "transformer~1") == {"plain", "plural", "typo", "numbered", "lettered"}
    assert found(fuzzy_index, "transformer") == {"plain", "plural", "numbered", "lettered"}


def test_a_word_of_five_letters_or_fewer_is_allowed_one_edit(fuzzy_index):
    # gap and grain are two edits from graph: 40 % of the word.
    assert found(fuzzy_index, "graph~2") == found(fuzzy_index, "graph~1") == {"graph", "graphs"}
    assert found(fuzzy_index, "grpah~2") == {"graph", "graphs"}  # a swap is one edit


@pytest.mark.parametrize(("query", "typed"), [("gpt4~1", "gpt4"), ("h100~2", "h100"), ("title:h100~", "title:h100")])
def test_an_identifier_made_fuzzy_is_searched_as_typed(fuzzy_index, query, typed):
    results = fuzzy_index.search(query, limit=100)
    assert {hit.id for hit in results.hits} == found(fuzzy_index, typed) == {typed.split(":")[-1]}
    assert results.notes == [f"'{query.split(':')[-1]}': a word with a digit is never fuzzy; searched as typed"]


@pytest.mark.parametrize("query", ["2023~1", "2023~", "title:2023~2"])
def test_a_number_made_fuzzy_is_refused(fuzzy_index, query):
    with pytest.raises(
        QueryError, match=re.escape("numbers, years and identifiers are never fuzzy (search 2023 without the ~)")
    ):
        fuzzy_index.search(query)


def test_an_author_name_expands_to_names_of_three_letters_or_more(fuzzy_index):
    # "le" is one edit from "lee" but two letters long: an initial, or a name
    # that one edit reaches from any short word.
    assert found(fuzzy_index, "lee~1") == {"lee", "lei"}
    assert found(fuzzy_index, "lee") == {"lee"}
