"""Dates on every engine: date filters, the date orders and the date histogram.

The records below are written for these tests; every expected id list and
count is worked out by hand from them.
"""

from __future__ import annotations

import pytest

from searchengine import QueryError

DATED_RECORDS = [
    {"id": "d1", "title": "Lattice one", "abstract": "lattice", "date": "2025-03-14", "updated": "2025-04-02"},
    {"id": "d2", "title": "Lattice two", "abstract": "lattice", "date": "2025-03-31"},
    # 00:30 at UTC+2 is 22:30 UTC of the day before: the UTC day is March 31.
    {"id": "d3", "title": "Lattice three", "abstract": "lattice", "date": "2025-04-01T00:30:00+02:00"},
    {"id": "d4", "title": "Lattice four", "abstract": "lattice", "date": "2025-06-30"},
    {"id": "d5", "title": "Lattice five", "abstract": "lattice", "year": 2025},
    {"id": "d6", "title": "Lattice six", "abstract": "lattice", "date": "2024-12-31"},
    {"id": "d7", "title": "Lattice seven", "abstract": "lattice", "year": 2024},
    {"id": "d8", "title": "Lattice eight", "abstract": "lattice"},
    {"id": "d9", "title": "Lattice nine", "abstract": "lattice", "date": "2019-05-05"},
]


def ids(results) -> list[str]:
    return [hit.id for hit in results.hits]


def test_newest_and_oldest_go_by_day_year_only_papers_after_their_years_dated_ones(dates_index):
    # d2 and d3 share March 31 (UTC): newest breaks the tie by id descending, oldest ascending.
    assert ids(dates_index.search("lattice", sort="newest")) == ["d4", "d3", "d2", "d1", "d5", "d6", "d7", "d9", "d8"]
    assert ids(dates_index.search("lattice", sort="oldest")) == ["d9", "d6", "d7", "d1", "d2", "d3", "d4", "d5", "d8"]
    # Browsing without words is newest first.
    assert ids(dates_index.search("", date="2019..")) == ["d4", "d3", "d2", "d1", "d6", "d9"]


def test_a_listing_sort_alone_lists_every_paper_in_its_order(dates_index):
    newest = dates_index.search("", sort="newest", facets="year,date")
    assert ids(newest) == ["d4", "d3", "d2", "d1", "d5", "d6", "d7", "d9", "d8"]
    assert newest.total == dates_index.doc_count == 9
    assert newest.query == "" and not newest.relaxed and newest.notes == []
    assert all(hit.score == 0 and hit.snippet_matches == [] for hit in newest.hits)  # nothing ranked, nothing marked
    assert [(v["value"], v["count"]) for v in newest.facets["year"]] == [(2025, 5), (2024, 2), (2019, 1), (None, 1)]
    # d5 and d7 (a year only) and d8 (nothing) have no day.
    assert newest.date_histogram["undated"] == 3 and sum(n for _, n in newest.date_histogram["rows"]) == 6
    assert ids(dates_index.search("", sort="oldest")) == ["d9", "d6", "d7", "d1", "d2", "d3", "d4", "d5", "d8"]
    # eight, five, four, nine, one, seven, six, three, two
    assert ids(dates_index.search("", sort="title")) == ["d8", "d5", "d4", "d9", "d1", "d7", "d6", "d3", "d2"]
    # Paged like any search: the third page of four holds the last paper.
    last = dates_index.search("", sort="newest", limit=4, page=3)
    assert ids(last) == ["d8"] and last.page == {"number": 3, "size": 4, "pages": 3}


@pytest.mark.parametrize("sort", [None, "relevance"])
def test_an_empty_search_without_a_filter_or_a_listing_sort_is_refused(dates_index, sort):
    with pytest.raises(
        QueryError,
        match="^the query is empty: give query text or a filter, or sort by newest, "
        "oldest or title to list every paper$",
    ):
        dates_index.search("  ", sort=sort)


@pytest.mark.parametrize(
    "options, expected",
    [
        ({"since": "2025-03-31", "until": "2025-03"}, {"d2", "d3"}),  # both ends inclusive
        ({"since": "2025-03-15"}, {"d2", "d3", "d4"}),
        ({"until": "2025-03-14"}, {"d1", "d6", "d9"}),
        ({"since": "2025"}, {"d1", "d2", "d3", "d4"}),  # year-only d5: no day, no match
        ({"until": "2024"}, {"d6", "d9"}),
        ({"date": "2025-03"}, {"d1", "d2", "d3"}),
        ({"date": "2025-03-31"}, {"d2", "d3"}),
        ({"date": "2025-04-01"}, set()),  # d3 is March 31 in UTC
        ({"date": "..2025-03-14"}, {"d1", "d6", "d9"}),
        ({"date": "2025-04.."}, {"d4"}),
        ({"since": "2025-03", "until": "2025-06", "year": "2025"}, {"d1", "d2", "d3", "d4"}),
    ],
)
def test_date_filters_are_inclusive_utc_days(dates_index, options, expected):
    results = dates_index.search("lattice", limit=20, **options)
    assert set(ids(results)) == expected and results.total == len(expected)


def test_date_filters_in_the_query_text(dates_index):
    assert set(ids(dates_index.search("lattice date:2025-03..2025-06"))) == {"d1", "d2", "d3", "d4"}
    assert set(ids(dates_index.search("date:2025-03-14"))) == {"d1"}
    # A query range and an option narrow each other (AND).
    assert set(ids(dates_index.search("lattice date:2025-03..", until="2025-03-30"))) == {"d1"}


@pytest.mark.parametrize(
    "query, message",
    [
        ("lattice date:2025-13", "date '2025-13' is not a date"),
        ("lattice date:2025-06..2025-03", "date range '2025-06..2025-03' is reversed"),
        ("lattice date:..", "date range '..' has no date"),
    ],
)
def test_bad_dates_name_the_bad_part(dates_index, query, message):
    with pytest.raises(QueryError, match=message.replace(".", r"\.")):
        dates_index.search(query)


def test_the_histogram_bins_follow_the_span_of_the_hits(dates_index):
    # 2019-05-05 .. 2025-06-30: over three years, so years.
    assert dates_index.search("lattice", facets="date").date_histogram == {
        "bin": "year",
        "rows": [
            ["2019-01-01", 1],
            ["2020-01-01", 0],
            ["2021-01-01", 0],
            ["2022-01-01", 0],
            ["2023-01-01", 0],
            ["2024-01-01", 1],
            ["2025-01-01", 4],
        ],
        "undated": 3,
    }
    # 2024-12-31 .. 2025-06-30: 181 days, so months.
    assert dates_index.search("lattice", date="2024-12..2025-06", facets="date").date_histogram == {
        "bin": "month",
        "rows": [
            ["2024-12-01", 1],
            ["2025-01-01", 0],
            ["2025-02-01", 0],
            ["2025-03-01", 3],
            ["2025-04-01", 0],
            ["2025-05-01", 0],
            ["2025-06-01", 1],
        ],
        "undated": 0,
    }
    # 2025-03-14 .. 2025-03-31: days, empty days included.
    days = dates_index.search("lattice", date="2025-03", facets="date").date_histogram
    assert days["bin"] == "day" and days["undated"] == 0
    assert days["rows"][0] == ["2025-03-14", 1] and days["rows"][-1] == ["2025-03-31", 2]
    assert len(days["rows"]) == 18 and sum(count for _, count in days["rows"]) == 3


def test_histogram_of_undated_hits_and_of_one_day(dates_index):
    assert dates_index.search("eight", facets="date").date_histogram == {"bin": None, "rows": [], "undated": 1}
    assert dates_index.search("nine", facets="date").date_histogram == {
        "bin": "day",
        "rows": [["2019-05-05", 1]],
        "undated": 0,
    }
    assert dates_index.search("nine").date_histogram is None  # only when asked


def test_hits_and_records_carry_their_dates(dates_index):
    hit = dates_index.search("one").hits[0]
    assert hit.to_dict()["submitted"] == "2025-03-14" and hit.to_dict()["updated"] == "2025-04-02"
    assert dates_index.document("d3")["submitted"] == "2025-03-31"
    assert dates_index.document("d3")["year"] == 2025
    assert dates_index.document("d5")["submitted"] is None and dates_index.document("d5")["year"] == 2025
    assert dates_index.document("d8")["versions"] == []


def test_ranges_that_do_not_meet_match_nothing_and_a_reversed_since_until_is_refused(dates_index):
    assert dates_index.search("lattice date:2025-03", since="2025-04").total == 0
    assert dates_index.search("lattice date:2025-06", since="2025-06-30").total == 1
    with pytest.raises(QueryError, match=r"^the dates are reversed: 'since 2025-04' starts after 'until 2025-03' ends"):
        dates_index.search("lattice", since="2025-04", until="2025-03")
