"""Author filters and the author facet, the same on every engine.

The records are tests/fixtures/authors.jsonl: 13 records, ``aNN`` of year
``2000 + NN``, so the oldest-first order of the expected ids is the order
written here. Names as the records give them:

a01 Tomas Okafor, Lena Brandt      a08 J. Mueller, Lena Brandt
a02 T. Okafor, Jörg Müller         a09 Anna Muller
a03 Lena Brandt, Okafor, T.        a10 Manuel Ruiz, Lena Brandt
a04 Teresa Okafor                  a11 Depei Qian, Longbin Zeng
a05 J. van der Holt Brink,         a12 Longbin Zeng, D. Qian
    Tomas Okafor                   a13 Le Chen, Van Nguyen
a06 Holt Brink, J. van der (read as
    J. van der Holt Brink), Lena Brandt
a07 Jan Brink
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.contract.conftest import BUILDERS, ENGINES

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "authors.jsonl"


@pytest.fixture(scope="module", params=ENGINES)
def authors_index(request, tmp_path_factory):
    index, drop = BUILDERS[request.param](tmp_path_factory, FIXTURE)
    yield index
    drop()
    index.close()


def ids(index, query: str = "", **filters) -> list[str]:
    return [h.id for h in index.search(query, sort="oldest", limit=20, **filters).hits]


@pytest.mark.parametrize(
    ("author", "expected"),
    [
        # A full first name finds records giving only its initial, never another first name.
        ("Tomas Okafor", ["a01", "a02", "a03", "a05"]),
        ("Okafor, Tomas", ["a01", "a02", "a03", "a05"]),
        ("Teresa Okafor", ["a02", "a03", "a04"]),
        ("T. Okafor", ["a01", "a02", "a03", "a04", "a05"]),
        ("Okafor", ["a01", "a02", "a03", "a04", "a05"]),
        ("Depei Qian", ["a11", "a12"]),
        # Surnames with particles, however they are written.
        ("van der Holt Brink", ["a05", "a06"]),
        ("Van Der Holt Brink", ["a05", "a06"]),
        ("Holt Brink, J. van der", ["a05", "a06"]),
        ("J. van der Holt Brink", ["a05", "a06"]),
        ("Jan van der Holt-Brink", ["a05", "a06"]),
        ("vanderholt brink, j", ["a05", "a06"]),
        ("Holt Brink, J.", ["a05", "a06"]),
        ("Brink", ["a07"]),
        ("Brink, J.", ["a07"]),
        # Umlauts: the spelled umlaut meets both spellings.
        ("muller", ["a02", "a09"]),
        ("mueller", ["a02", "a08"]),
        ("Müller", ["a02", "a08", "a09"]),
        ("Mueller, J.", ["a02", "a08"]),
        ("Jörg Müller", ["a02", "a08"]),
        ("Manuel Ruiz", ["a10"]),
        # A leading particle that may be a given name.
        ("le chen", ["a13"]),
        ("Chen, L.", ["a13"]),
        ("Nguyen, V.", ["a13"]),
        ("Van Nguyen", ["a13"]),
        # arXiv's form and the first-author mark.
        ("Qian_D", ["a11", "a12"]),
        ("van_der_holt_brink_j", ["a05", "a06"]),
        ("^Okafor", ["a01", "a02", "a04"]),
        ("^Tomas Okafor", ["a01", "a02"]),
        ("^Qian, D", ["a11"]),
        ("^Brandt", ["a03"]),
    ],
)
def test_author_filter_finds_exactly(authors_index, author, expected):
    assert ids(authors_index, author=author) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("^Qian", ["a11"]),
        ('^"Okafor, T"', ["a01", "a02", "a04"]),
        ('author:"^Qian, D"', ["a11"]),
        ("au:^Zeng", ["a12"]),
        ("au:Qian_D", ["a11", "a12"]),
        ('author:"van der Holt Brink" study', ["a05", "a06"]),
        ("au:mueller", ["a02", "a08"]),
    ],
)
def test_author_filters_in_the_query_text(authors_index, query, expected):
    assert ids(authors_index, query) == expected


def test_first_author_and_author_values_combine_with_or(authors_index):
    assert ids(authors_index, author=["^Zeng", "Teresa Okafor"]) == ["a02", "a03", "a04", "a12"]


def test_the_author_facet_pins_the_chosen_author_over_the_co_authors(authors_index):
    results = authors_index.search("", author="Tomas Okafor", facets="author,year")
    assert [(v["value"], v["count"], v["selected"]) for v in results.facets["author"]] == [
        ("T. Okafor", 2, True),
        ("Tomas Okafor", 2, True),
        ("Lena Brandt", 2, False),
        ("J. van der Holt Brink", 1, False),
        ("Jörg Müller", 1, False),
    ]
    assert results.facets_remaining["author"] == 0
    # The year facet keeps counting over every filter but its own.
    assert [v["value"] for v in results.facets["year"]] == [2005, 2003, 2002, 2001]


def test_a_pinned_author_stays_listed_when_co_authors_fill_the_facet(authors_index):
    results = authors_index.search("", author="Brandt", facets="author", facet_size=2)
    assert [(v["value"], v["count"], v["selected"]) for v in results.facets["author"]] == [
        ("Lena Brandt", 5, True),
        ("J. Mueller", 1, False),
    ]
    # The co-authors not listed: J. van der Holt Brink, Manuel Ruiz, T. Okafor, Tomas Okafor.
    assert results.facets_remaining["author"] == 4


def test_without_an_author_filter_the_author_facet_counts_every_hit(authors_index):
    results = authors_index.search("study", category="cs.DL", facets="author", facet_size=3)
    assert [(v["value"], v["count"], v["selected"]) for v in results.facets["author"]] == [
        ("Lena Brandt", 5, False),
        ("J. van der Holt Brink", 2, False),
        ("Longbin Zeng", 2, False),
    ]
