"""Dates: reading them from every format, date filters and orders, the
histogram's bins, and how the CLI, the web page and the API show them.

The engines' behaviour on dated records is in
``tests/contract/test_dates_contract.py``; expected values here are worked
out by hand from the records written in each test.
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from datetime import date, timedelta
from html import unescape
from pathlib import Path

import pytest
from click.testing import CliRunner

from searchengine import build_index, dates
from searchengine.cli import main
from searchengine.errors import QueryError
from searchengine.readers import read_records

from conftest import CORPUS, write
from shareddata import DATA

ARXIV = DATA / "arxiv"

# --- parsing days and ranges ----------------------------------------------------------


@pytest.mark.parametrize(
    "text, day",
    [
        ("2025-03-14", date(2025, 3, 14)),
        ("2025-03", date(2025, 3, 1)),
        ("2025-03-14T23:30:00-02:00", date(2025, 3, 15)),  # 01:30 UTC the next day
        ("2025-03-14T00:30:00+02:00", date(2025, 3, 13)),
        ("2025-03-14T10:00:00Z", date(2025, 3, 14)),
        ("2025-03-14 10:00:00", date(2025, 3, 14)),  # no offset: taken as UTC
        ("Mon, 2 Apr 2007 19:18:42 GMT", date(2007, 4, 2)),
        ("Tue, 3 Apr 2007 23:30:00 -0300", date(2007, 4, 4)),
    ],
)
def test_source_dates_become_utc_days(text, day):
    assert dates.parse_day(text) == day


@pytest.mark.parametrize("text", ["2025-02-30", "2025-13", "14/03/2025", "yesterday", "", "2025-3-14"])
def test_a_source_date_that_is_not_one_is_refused_with_its_text(text):
    with pytest.raises(ValueError, match=re.escape(repr(text.strip()))):
        dates.parse_day(text)


@pytest.mark.parametrize(
    "function, text, low, high",
    [
        (dates.parse_since, "2025-03", date(2025, 3, 1), None),
        (dates.parse_since, "2025", date(2025, 1, 1), None),
        (dates.parse_since, "2025-03-14", date(2025, 3, 14), None),
        (dates.parse_until, "2025-06", None, date(2025, 6, 30)),
        (dates.parse_until, "2024-02", None, date(2024, 2, 29)),
        (dates.parse_until, "2025-12", None, date(2025, 12, 31)),
        (dates.parse_until, "2025", None, date(2025, 12, 31)),
        (dates.parse_range, "2025-03..2025-06", date(2025, 3, 1), date(2025, 6, 30)),
        (dates.parse_range, "2025-03-14", date(2025, 3, 14), date(2025, 3, 14)),
        (dates.parse_range, "2025-03..", date(2025, 3, 1), None),
        (dates.parse_range, "..2025-06", None, date(2025, 6, 30)),
        (dates.parse_range, "2025", date(2025, 1, 1), date(2025, 12, 31)),
    ],
)
def test_date_bounds_are_inclusive_whole_periods(function, text, low, high):
    found = function(text)
    assert (found.low, found.high) == (low, high)


@pytest.mark.parametrize(
    "function, text, message",
    [
        (dates.parse_since, "2025-3", "since date '2025-3' is not a date"),
        (dates.parse_until, "March", "until date 'March' is not a date"),
        (
            dates.parse_range,
            "2025-06..2025-03",
            "date range '2025-06..2025-03' is reversed (did you mean 2025-03..2025-06?)",
        ),
        (dates.parse_range, "2025-03..2025-02-30", "date '2025-02-30' is not a date"),
        (dates.parse_past, "decade", "past 'decade' is not one of week, month, year"),
    ],
)
def test_bad_filter_dates_name_the_bad_part(function, text, message):
    with pytest.raises(QueryError, match=re.escape(message)):
        function(text)


def test_past_counts_back_from_today():
    today = date(2025, 3, 14)
    # Seven days, today included: March 8 to 14.
    assert dates.parse_past("week", today).low == date(2025, 3, 8)
    assert dates.parse_past("month", today).low == date(2025, 2, 13)
    assert dates.parse_past("year", today).low == date(2024, 3, 15)
    assert dates.parse_past("week", today).high == today  # a paper dated tomorrow is in no past period
    with pytest.raises(QueryError, match="is not one of week, month, year"):
        dates.parse_past("wee\u212a", today)  # the Kelvin sign lowers to "k", but is none


def test_sort_keys_put_year_only_papers_after_the_dated_ones_of_their_year():
    papers = {
        "jan1": (date(2025, 1, 1), 2025),
        "dec31": (date(2025, 12, 31), 2025),
        "year": (None, 2025),
        "2024": (date(2024, 6, 1), 2024),
        "none": (None, None),
    }
    keys = {name: dates.sort_keys(*paper) for name, paper in papers.items()}
    known = [name for name in papers if keys[name][0] is not None]
    assert sorted(known, key=lambda n: keys[n][0], reverse=True) == ["dec31", "jan1", "year", "2024"]
    assert sorted(known, key=lambda n: keys[n][1]) == ["2024", "jan1", "dec31", "year"]
    assert keys["none"] == (None, None)


@pytest.mark.parametrize(
    "first, last, unit",
    [
        (date(2020, 1, 1), date(2022, 12, 31), "year"),  # 1,095 days: not over three years
        (date(2020, 1, 1), date(2023, 1, 1), "year"),
        (date(2025, 1, 1), date(2025, 3, 4), "month"),  # 62 days: months from 63 on
        (date(2025, 1, 1), date(2025, 3, 5), "month"),
        (date(2025, 3, 1), date(2025, 3, 31), "day"),
        (date(2025, 3, 1), date(2025, 3, 1), "day"),
    ],
)
def test_the_bin_unit_follows_the_span(first, last, unit):
    expected = {(date(2020, 1, 1), date(2022, 12, 31)): "month", (date(2025, 1, 1), date(2025, 3, 4)): "day"}
    assert dates.bin_unit(first, last) == expected.get((first, last), unit)


def test_histogram_rows_cover_every_bin_from_first_to_last():
    counted = Counter({date(2025, 11, 30): 2, date(2026, 2, 1): 1})
    assert dates.histogram(counted, undated=5).to_dict() == {
        "bin": "month",
        "rows": [["2025-11-01", 2], ["2025-12-01", 0], ["2026-01-01", 0], ["2026-02-01", 1]],
        "undated": 5,
    }
    assert dates.histogram(Counter()).to_dict() == {"bin": None, "rows": [], "undated": 0}


# --- readers ---------------------------------------------------------------------------


def _read(*paths):
    problems = []
    records = {r.id: r for r in read_records([str(p) for p in paths], problems)}
    return records, [str(p) for p in problems]


def test_jsonl_and_csv_dates_bad_dates_and_implausible_years(tmp_path):
    jsonl = write(
        tmp_path / "a.jsonl",
        "\n".join(
            json.dumps(r)
            for r in [
                {"id": "2503.00001", "title": "One", "date": "2025-03-14", "updated": "2025-04-01T12:00:00Z"},
                {"id": "2503.00002", "title": "Two", "date": "2025-13-01", "year": 2025},
                {"id": "x3", "title": "Three", "year": 2103},
                {"id": "x4", "title": "Four", "date": "2024-05", "year": 1999},
                {"id": "x5", "title": "Five", "date": 20250314},
                {"id": "x6", "title": "Six", "date": "1850-01-01"},
            ]
        )
        + "\n",
    )
    csv = write(
        tmp_path / "b.csv", "id,title,date,updated\nc1,Seven,2025-03-14T23:30:00-05:00,\nc2,Eight,soon,2025-01-02\n"
    )
    records, problems = _read(jsonl, csv)
    assert (records["2503.00001"].submitted, records["2503.00001"].updated) == (date(2025, 3, 14), date(2025, 4, 1))
    assert (records["2503.00002"].submitted, records["2503.00002"].year) == (None, 2025)
    assert records["x3"].year is None
    assert (records["x4"].submitted, records["x4"].year) == (date(2024, 5, 1), 2024)  # the year follows the date
    assert (records["x6"].submitted, records["x6"].year) == (None, None)
    assert (records["c1"].submitted, records["c1"].updated) == (date(2025, 3, 15), None)
    assert (records["c2"].submitted, records["c2"].updated) == (None, date(2025, 1, 2))
    assert problems == [
        f"{jsonl}:2: field 'date': date '2025-13-01' is not a date (YYYY-MM-DD, YYYY-MM, an ISO timestamp "
        "or RFC 2822) (date left unknown)",
        f"{jsonl}:3: year 2103 is not plausible (stored as unknown)",
        f"{jsonl}:5: field 'date': is a int, not a date (date left unknown)",
        f"{jsonl}:6: submitted date 1850-01-01 is not plausible (stored as unknown)",
        f"{csv}:3: field 'date': date 'soon' is not a date (YYYY-MM-DD, YYYY-MM, an ISO timestamp "
        "or RFC 2822) (date left unknown)",
    ]


def test_oai_versions_give_submitted_and_update_date_updated(tmp_path, shared_data):
    records, problems = _read(ARXIV / "kaggle_oai_snapshot_sample.jsonl")
    first = records["0704.0001"]
    assert (first.submitted, first.updated, first.year) == (date(2007, 4, 2), date(2008, 11, 26), 2007)
    assert first.versions == [(1, date(2007, 4, 2)), (2, date(2007, 7, 24))]
    assert problems == [] and all(r.submitted is not None for r in records.values())
    line = json.dumps(
        {
            "id": "0704.0002",
            "title": "T",
            "update_date": "2008-13-01",
            "versions": [
                {"version": "v1", "created": "Mon, 2 Apr 2007 23:30:00 -0300"},
                {"version": "v2", "created": "not a date"},
            ],
        }
    )
    records, problems = _read(write(tmp_path / "oai.jsonl", line + "\n"))
    record = records["0704.0002"]
    assert (record.submitted, record.updated, record.versions) == (date(2007, 4, 3), None, [(1, date(2007, 4, 3))])
    assert [p.split(": ", 1)[1] for p in problems] == [
        "field 'versions[v2].created': date 'not a date' is not a date (YYYY-MM-DD, YYYY-MM, an ISO timestamp "
        "or RFC 2822) (date left unknown)",
        "field 'update_date': date '2008-13-01' is not a date (YYYY-MM-DD, YYYY-MM, an ISO timestamp "
        "or RFC 2822) (date left unknown)",
    ]


def test_atom_published_and_updated(shared_data):
    records, problems = _read(ARXIV / "api_atom_samples" / "api2016_id_list_1111.2011v2.xml")
    record = records["1111.2011"]
    assert (record.submitted, record.updated, record.year) == (date(2011, 11, 8), date(2012, 4, 2), 2011)
    assert record.versions == [(1, date(2011, 11, 8)), (2, date(2012, 4, 2))]
    assert problems == []


def test_listing_dates_come_from_the_table_beside_the_file(tmp_path, shared_data):
    with gzip.open(ARXIV / "arxiv_listing_sample.jsonl.gz", "rt", encoding="utf-8") as lines:
        head = [next(lines) for _ in range(3)]
    listing = write(tmp_path / "listing.jsonl", "".join(head))
    ids = [json.loads(line)["id"] for line in head]
    records, _ = _read(listing)
    assert [records[i].submitted for i in ids] == [None, None, None]  # no table yet
    (tmp_path / "listing_dates.tsv.gz").write_bytes((ARXIV / "listing_dates.tsv.gz").read_bytes())
    records, problems = _read(listing)
    assert [(records[i].submitted, records[i].updated) for i in ids] == [(date(2025, 3, 18), date(2025, 3, 18))] * 3
    assert problems == []
    # Reading the folder: the table is not taken for a file of records.
    assert _read(tmp_path) == (records, [])


def test_a_bad_row_of_the_listing_table_is_reported_with_its_line(tmp_path):
    line = {
        "id": "2506.06837",
        "title": "T",
        "summary": "S",
        "abs": "https://arxiv.org/abs/2506.06837",
        "authors": ["A. One"],
        "categories": ["cs.CV"],
        "pdf": "",
        "comment": None,
    }
    other = dict(line, id="2506.06838")
    listing = write(tmp_path / "l.jsonl", json.dumps(line) + "\n" + json.dumps(other) + "\n")
    table = write(
        tmp_path / "listing_dates.tsv",
        "id\tfirst_listing_date\tlast_listing_date\tn_listing_files\n"
        "2506.06837\t2025-06-10\t2025-06-12\t2\n2506.06838\t2025-06-31\t2025-07-01\t1\n",
    )
    records, problems = _read(listing)
    assert (records["2506.06837"].submitted, records["2506.06837"].updated) == (date(2025, 6, 10), date(2025, 6, 12))
    assert (records["2506.06838"].submitted, records["2506.06838"].year) == (None, 2025)  # the id's year
    assert problems == [
        f"{table}:3: listing dates: date '2025-06-31' is not a date (YYYY-MM-DD, YYYY-MM, "
        "an ISO timestamp or RFC 2822) (row left out)"
    ]


def test_author_pages_give_only_years():
    records, problems = _read(CORPUS)
    assert len(records) == 24 and problems == []
    assert all(r.submitted is None and r.updated is None and r.versions == [] and r.year for r in records.values())


# --- CLI, exports, web -----------------------------------------------------------------------

DATED = [
    {
        "id": "2503.00001",
        "title": "Sparse lattice kernels",
        "abstract": "lattice",
        "authors": ["Ada Lovelace"],
        "date": "2025-03-14",
        "updated": "2025-04-02",
    },
    {"id": "2506.00002", "title": "Dense lattice kernels", "abstract": "lattice", "date": "2025-06-30"},
    {"id": "t-undated", "title": "Undated lattice", "abstract": "lattice", "year": 2024},
]


@pytest.fixture(scope="module")
def dated_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("dated")
    source = folder / "dated.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in DATED), encoding="utf-8")
    build_index([source], folder / "index")
    return folder / "index"


def test_cli_since_until_and_the_hit_lines(dated_dir):
    result = CliRunner().invoke(
        main,
        [
            "search",
            "lattice",
            "--index",
            str(dated_dir),
            "--since",
            "2025-03",
            "--until",
            "2025-03",
            "--facets",
            "date",
        ],
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("1 hit for 'lattice' with since 2025-03, until 2025-03 (")
    assert lines[3] == "     2025-03-14 · - · Ada Lovelace"
    assert lines[-3:] == ["", "Submitted (by day):", "  2025-03-14      1  ##############################"]
    browse = CliRunner().invoke(main, ["search", "--index", str(dated_dir), "--sort", "oldest", "--since", "2025"])
    assert browse.exit_code == 0 and [
        line for line in browse.output.splitlines() if "·" in line and "id" not in line
    ] == ["     2025-03-14 · - · Ada Lovelace", "     2025-06-30 · - · (no authors)"]


def test_a_reversed_since_and_until_is_refused_by_the_python_api(dated_dir):
    from searchengine import QueryError, open_index

    index = open_index(dated_dir)
    try:
        with pytest.raises(
            QueryError,
            match=r"^the dates are reversed: 'since 2025-07' starts after "
            r"'until 2025-06' ends \(swap the two dates\)$",
        ):
            index.search("lattice", since="2025-07", until="2025-06")
        assert index.search("lattice", since="2025-06", until="2025-06").total == 1
    finally:
        index.close()


def test_cli_past_counts_back_from_today(tmp_path):
    from searchengine.dates import utc_today

    today = utc_today()
    recent = [
        {
            "id": f"t-{n}",
            "title": f"Lattice {n}",
            "abstract": "lattice",
            "date": (today - timedelta(days=n)).isoformat(),
        }
        for n in (-1, 0, 6, 7, 29, 30, 364, 365)
    ]
    source = write(tmp_path / "recent.jsonl", "".join(json.dumps(r) + "\n" for r in recent))
    build_index([source], tmp_path / "index")
    # The last 7, 30 or 365 days, today included; a paper dated tomorrow (t--1) is in none.
    for past, expected in (
        ("week", ["t-0", "t-6"]),
        ("month", ["t-0", "t-6", "t-7", "t-29"]),
        ("year", ["t-0", "t-6", "t-7", "t-29", "t-30", "t-364"]),
    ):
        result = CliRunner().invoke(
            main, ["search", "--index", str(tmp_path / "index"), "--past", past, "--format", "jsonl"]
        )
        assert result.exit_code == 0, result.output
        assert [json.loads(line)["id"] for line in result.output.splitlines()] == expected
    heading = CliRunner().invoke(main, ["search", "lattice", "--index", str(tmp_path / "index"), "--past", "week"])
    assert heading.output.startswith("2 hits for 'lattice' with past week (")
    bad = CliRunner().invoke(main, ["search", "lattice", "--index", str(tmp_path / "index"), "--past", "decade"])
    assert bad.exit_code == 2
    assert "Invalid value for '--past': past 'decade' is not one of week, month, year" in bad.output


def test_cli_bad_date_is_a_usage_error(dated_dir):
    result = CliRunner().invoke(main, ["search", "lattice", "--index", str(dated_dir), "--since", "2025-3"])
    assert result.exit_code == 2
    assert "Invalid value for '--since': since date '2025-3' is not a date" in result.output
    result = CliRunner().invoke(main, ["search", "lattice date:2025-06..2025-03", "--index", str(dated_dir)])
    assert result.exit_code == 1
    assert "date range '2025-06..2025-03' is reversed" in result.output
    result = CliRunner().invoke(
        main, ["search", "lattice", "--index", str(dated_dir), "--since", "2025-03-31", "--until", "2025-03-01"]
    )
    assert result.exit_code == 2
    assert result.stderr.endswith(
        "Error: the dates are reversed: 'since 2025-03-31' starts after 'until 2025-03-01' ends (swap the two dates)\n"
    )
    # One day, or a month given at both ends, is no reversed range.
    for since, until in (("2025-03-14", "2025-03-14"), ("2025-03", "2025-03")):
        same = CliRunner().invoke(
            main, ["search", "lattice", "--index", str(dated_dir), "--json", "--since", since, "--until", until]
        )
        assert same.exit_code == 0 and json.loads(same.output)["total"] == 1


def test_show_and_exports_carry_the_dates(dated_dir):
    shown = CliRunner().invoke(main, ["show", "2503.00001", "--index", str(dated_dir)])
    assert "Submitted 14 Mar 2025; last updated 2 Apr 2025" in shown.output.splitlines()
    bibtex = CliRunner().invoke(main, ["show", "2503.00001", "--index", str(dated_dir), "--format", "bibtex"]).output
    assert "\tmonth = mar,\n\tdate = {2025-03-14}," in bibtex
    ris = CliRunner().invoke(main, ["show", "2503.00001", "--index", str(dated_dir), "--format", "ris"]).stdout_bytes
    assert b"PY  - 2025\r\nDA  - 2025/03/14/\r\n" in ris
    csv = (
        CliRunner()
        .invoke(main, ["search", "lattice", "--index", str(dated_dir), "--format", "csv", "--sort", "newest"])
        .output.splitlines()
    )
    assert csv[0].endswith(",url,pdf_url,doi,arxiv_doi,journal_ref,comments,license,submitted,updated,abstract")
    assert [row.split(",")[-3:-1] for row in csv[1:]] == [["2025-06-30", ""], ["2025-03-14", "2025-04-02"], ["", ""]]
    jsonl = (
        CliRunner()
        .invoke(main, ["search", "lattice", "--index", str(dated_dir), "--format", "jsonl", "--sort", "oldest"])
        .output.splitlines()
    )
    # Oldest first: the 2024 paper with only a year comes before both 2025 papers.
    assert [json.loads(line)["id"] for line in jsonl] == ["t-undated", "2503.00001", "2506.00002"]
    second = json.loads(jsonl[1])
    assert (second["submitted"], second["updated"], second["versions"]) == ("2025-03-14", "2025-04-02", [])
    assert json.loads(jsonl[0])["submitted"] is None


@pytest.fixture(scope="module")
def client(dated_dir):
    from searchengine.web import create_app

    return create_app(index_dir=dated_dir).test_client()


def test_api_since_until_past_and_the_histogram(client):
    body = client.get("/api/search?q=lattice&since=2025-03-14&until=2025-06").get_json()
    assert {hit["id"] for hit in body["hits"]} == {"2506.00002", "2503.00001"} and body["total"] == 2
    assert body["date_histogram"] == {
        "bin": "month",
        "undated": 0,
        "rows": [["2025-03-01", 1], ["2025-04-01", 0], ["2025-05-01", 0], ["2025-06-01", 1]],
    }
    hit = next(h for h in body["hits"] if h["id"] == "2503.00001")
    assert (hit["submitted"], hit["updated"], hit["versions"]) == ("2025-03-14", "2025-04-02", [])
    export = client.get("/api/export?q=lattice&since=2025-06&format=csv")
    assert export.status_code == 200 and export.headers["X-Total-Hits"] == "1"
    assert export.get_data(as_text=True).splitlines()[1].endswith(",2025-06-30,,lattice")
    # These papers are from 2025: none is of the past week, whatever today is after 2026.
    assert client.get("/api/search?q=lattice&past=week").get_json()["total"] == 0


@pytest.mark.parametrize(
    "query, message",
    [
        ("since=2025-13", "since date '2025-13' is not a date"),
        ("until=tomorrow", "until date 'tomorrow' is not a date"),
        ("past=decade", "past 'decade' is not one of week, month, year"),
        ("since=2025&since=2026", "since is given 2 times; it takes one value"),
        ("q=lattice+date:2025-06..2025-03", "date range '2025-06..2025-03' is reversed"),
        ("since=2025-04&until=2025-03", "the dates are reversed: 'since 2025-04' starts after 'until 2025-03' ends"),
    ],
)
def test_bad_dates_are_400s_naming_them(client, query, message):
    for path in ("/api/search", "/"):
        response = client.get(f"{path}?q=lattice&{query}" if "q=" not in query else f"{path}?{query}")
        assert response.status_code == 400
        assert message in unescape(response.get_data(as_text=True))


def test_page_shows_dates_histogram_chips_and_record_dates(client):
    html = client.get("/?q=lattice&since=2025-03").get_data(as_text=True)
    assert '<span class="date">14 Mar 2025</span>' in html and '<span class="date">30 Jun 2025</span>' in html
    bars = re.findall(
        r'<a href="([^"]*)" aria-hidden="true" tabindex="-1">\s*<rect [^>]*><title>([^<]*)</title>',
        html[html.index("date-histogram") :],
    )
    assert [(unescape(url), label) for url, label in bars] == [
        (f"/?q=lattice&since={month}&until={month}", f"{month}: {count}")
        for month, count in [("2025-03", 1), ("2025-04", 0), ("2025-05", 0), ("2025-06", 1)]
    ]
    assert "2025-03 – 2025-06, by month" in html
    assert re.search(r'<li class="chip"><span>Submitted since: 2025-03</span>\s*<a href="/\?q=lattice"', html)
    # A past choice replaces the other date filters.
    assert 'href="/?q=lattice&amp;past=week" data-past="week"' in html
    record = client.get("/records/2503.00001").get_data(as_text=True)
    assert '<dd class="dates">Submitted 14 Mar 2025; last updated 2 Apr 2025</dd>' in record
