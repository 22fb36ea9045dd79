"""The journal facet on every engine: counts and the journal filter.

The records below are written for these tests; every expected count is
worked out by hand from them. The journal is the name a journal reference
starts with (:func:`searchengine.records.journal_name`).
"""

from __future__ import annotations

import json

import pytest

from searchengine import QueryError

from .conftest import BUILDERS, ENGINES

JOURNAL_RECORDS = [
    {"id": "j1", "title": "Lattice one", "abstract": "lattice", "journal_ref": "Phys. Rev. D 102, 034501 (2020)"},
    {"id": "j2", "title": "Lattice two", "abstract": "lattice", "journal_ref": "Phys.Rev.D76:013009,2007"},
    {"id": "j3", "title": "Lattice three", "abstract": "lattice", "journal_ref": "JHEP 0706:061,2007"},
    {"id": "j4", "title": "Lattice four", "abstract": "lattice gauge", "journal_ref": "Phys.  Rev. D 75, 1 (2007)"},
    {"id": "j5", "title": "Lattice five", "abstract": "lattice gauge", "journal_ref": "JHEP 05 (2020) 123"},
    {"id": "j6", "title": "Lattice six", "abstract": "lattice gauge", "journal_ref": "Nucl. Phys. B 900 (2015) 1"},
    {"id": "j7", "title": "Lattice seven", "abstract": "lattice"},
]


@pytest.fixture(scope="module", params=ENGINES)
def journal_index(request, tmp_path_factory):
    source = tmp_path_factory.mktemp("journals") / "journals.jsonl"
    source.write_text("".join(json.dumps(record) + "\n" for record in JOURNAL_RECORDS), encoding="utf-8")
    index, drop = BUILDERS[request.param](tmp_path_factory, source)
    yield index
    drop()
    index.close()


def counts(results, facet: str = "journal") -> list[tuple]:
    return [(v["value"], v["count"], v["selected"]) for v in results.facets[facet]]


def test_the_journal_facet_counts_journal_names_and_papers_without_one(journal_index):
    found = journal_index.search("lattice", facets="journal")
    # By count, then name; j7 has no journal reference: the unknown bucket, last.
    assert counts(found) == [
        ("Phys. Rev. D", 3, False),
        ("JHEP", 2, False),
        ("Nucl. Phys. B", 1, False),
        (None, 1, False),
    ]
    assert found.facets_remaining == {"journal": 0}
    small = journal_index.search("lattice", facets="journal", facet_size=1)
    assert counts(small) == [("Phys. Rev. D", 3, False), (None, 1, False)]
    assert small.facets_remaining == {"journal": 2}


def test_a_journal_filter_matches_the_name_in_any_case_and_spacing(journal_index):
    found = journal_index.search("lattice", journal="phys.  rev. d", facets="journal,year")
    assert sorted(hit.id for hit in found.hits) == ["j1", "j2", "j4"]
    # The journal facet is counted without its own filter, the chosen name selected.
    assert counts(found)[0] == ("Phys. Rev. D", 3, True)
    assert ("JHEP", 2, False) in counts(found)
    # Several journals: OR; with the query and other filters: AND.
    both = journal_index.search("gauge", journal=["JHEP", "Nucl. Phys. B"])
    assert sorted(hit.id for hit in both.hits) == ["j5", "j6"]
    assert journal_index.search("", journal="JHEP", sort="newest").total == 2
    assert journal_index.search("lattice", journal="Phys. Rev.").total == 0  # the whole name, never a part


def test_an_empty_journal_filter_is_refused(journal_index):
    with pytest.raises(QueryError, match="journal filter"):
        journal_index.search("lattice", journal=" ")
