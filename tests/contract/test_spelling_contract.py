"""Did-you-mean on every engine: a rare word is searched as typed, a typo corrected.

The records below are written for these tests: one paper holds ``braid``,
121 hold ``brain`` (one edit away), and one of them, the atlas, has the typo
``imagng`` beside ``imaging``; 200 papers about graphs make the rest.
"""

from __future__ import annotations

import pytest

SPELLING_RECORDS = [
    {
        "id": "braid",
        "title": "Braid groups and their linear representations",
        "abstract": "The braid group on n strands acts on the free group; we study its linear representations.",
    },
    {"id": "atlas", "title": "A brain atlas", "abstract": "Brain imagng and brain imaging of the cortex in one atlas."},
    *(
        {
            "id": f"brain-{i}",
            "title": f"Brain imaging study {i}",
            "abstract": "Functional brain imaging of cortical activity in volunteers.",
        }
        for i in range(120)
    ),
    *(
        {
            "id": f"graph-{i}",
            "title": f"Graph partitioning heuristic {i}",
            "abstract": "A multilevel heuristic partitions the graph into balanced parts.",
        }
        for i in range(200)
    ),
]


# query, then (total, first hit, suggestion, corrected)
@pytest.mark.parametrize(
    ("query", "searched"),
    [
        # Held by one paper, one edit from a word 121 papers hold: searched as typed.
        ("braid", (1, "braid", None, None)),
        ("braid groups", (1, "braid", None, None)),
        ("braids", (1, "braid", None, None)),  # the plural of a held word
        # A word the index does not hold: corrected when the other words vouch for
        # it; alone, "brian" is an English word (a name) and only suggested.
        ("brian", (0, None, "brain", None)),
        ("brian imaging", (121, None, "brain imaging", "brain imaging")),
        # A typo one abstract holds, beside the word it misspells: suggested, the typed query's paper shown.
        ("brain imagng", (1, "atlas", "brain imaging", None)),
    ],
)
def test_a_rare_word_is_searched_as_typed_and_a_typo_corrected(spelling_index, query, searched):
    results = spelling_index.search(query, time_budget=30)
    first = results.hits[0].id if searched[1] else None
    assert (results.total, first, results.suggestion, results.corrected) == searched
    typed = spelling_index.search(query, time_budget=30, exact=True)
    assert (typed.suggestion, typed.corrected) == (searched[2], None)
