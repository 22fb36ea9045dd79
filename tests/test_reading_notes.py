"""Nothing read is lost silently: undated listings, records of another layout, unread fields, grouped notes."""

import json

import pytest
from click.testing import CliRunner

from searchengine.cli import main
from searchengine.readers import read_records
from searchengine.readers.arxivlisting import NO_DATES
from searchengine.records import Problem, group_problems

from conftest import write


def listing_line(arxiv_id: str, title: str, authors: list[str], **more: object) -> str:
    record = {
        "id": arxiv_id,
        "pdf": f"https://arxiv.org/pdf/{arxiv_id}",
        "abs": f"https://arxiv.org/abs/{arxiv_id}",
        "authors": authors,
        "title": title,
        "categories": ["cs.DC"],
        "comment": None,
        "summary": f"Abstract of {title}.",
    }
    return json.dumps({**record, **more})


PLAIN = {
    "id": "old-paper-1",
    "title": "An appended plain record",
    "abstract": "Sparse kernels on old machines.",
    "year": 1999,
    "date": "1999-05-04",
    "authors": ["Ada Lovelace"],
}
OAI = {
    "id": "0704.0001",
    "title": "An appended snapshot record",
    "abstract": "Gluon fusion.",
    "authors": "C. Balazs",
    "authors_parsed": [["Balazs", "C.", ""]],
    "categories": "hep-ph",
    "versions": [{"version": "v1", "created": "Mon, 2 Apr 2007 19:18:42 GMT"}],
    "update_date": "2008-11-26",
}


@pytest.fixture
def listing(tmp_path):
    lines = [
        listing_line("2503.14492", "Cosmos world models", ["NVIDIA", ":", "Hassan Abu Alhaija", "Jose Alvarez"]),
        listing_line("2503.00002", "A listing record", ["B. Two"], journal="Nature 1"),
        json.dumps(PLAIN),
        json.dumps(OAI),
    ]
    return write(tmp_path / "listing" / "new.jsonl", "\n".join(lines) + "\n")


def test_a_listing_without_its_dates_is_said_once_and_appended_records_keep_their_fields(listing):
    problems: list[Problem] = []
    records = {r.id: r for r in read_records([listing], problems)}
    assert [str(p) for p in problems] == [
        f"{listing}:0: {NO_DATES}",
        f"{listing}:2: field 'journal' not read (not a field of this format)",
    ]
    assert not any(p.skipped for p in problems)
    # The group's ":" separates it from its members: dropped, and nothing to say.
    assert records["2503.14492"].authors == ["NVIDIA", "Hassan Abu Alhaija", "Jose Alvarez"]
    assert (records["2503.14492"].year, records["2503.14492"].submitted) == (2025, None)
    plain = records["old-paper-1"]
    assert (plain.year, plain.submitted.isoformat(), plain.abstract) == (
        1999,
        "1999-05-04",
        "Sparse kernels on old machines.",
    )
    oai = records["0704.0001"]
    assert (oai.year, oai.submitted.isoformat(), oai.updated.isoformat(), oai.abstract) == (
        2007,
        "2007-04-02",
        "2008-11-26",
        "Gluon fusion.",
    )


def test_the_dates_table_dates_listing_records_but_not_an_appended_records_own(listing):
    write(
        listing.parent / "listing_dates.tsv",
        "id\tfirst_listing_date\tlast_listing_date\tn_listing_files\n"
        "2503.14492\t2025-03-19\t2025-03-20\t2\nold-paper-1\t2025-01-01\t2025-01-01\t1\n",
    )
    problems: list[Problem] = []
    records = {r.id: r for r in read_records([listing], problems)}
    assert [str(p) for p in problems] == [f"{listing}:2: field 'journal' not read (not a field of this format)"]
    assert records["2503.14492"].submitted.isoformat() == "2025-03-19"
    assert records["old-paper-1"].submitted.isoformat() == "1999-05-04"


def test_plain_json_lines_name_the_keys_they_do_not_read(tmp_path):
    path = write(
        tmp_path / "p.jsonl",
        '{"title": "A", "summary": "not a plain key", "venue": "X", "note": null}\n{"title": "B"}\n',
    )
    problems: list[Problem] = []
    assert [r.title for r in read_records([path], problems)] == ["A", "B"]
    assert [str(p) for p in problems] == [f"{path}:1: fields 'summary', 'venue' not read (not a field of this format)"]


def test_problems_are_grouped_by_kind_in_the_order_met():
    problems = [
        Problem("a.jsonl", 3, "author '*' has no letter or digit (dropped)", skipped=False),
        Problem("a.jsonl", 5, "invalid JSON (Expecting value at column 1) (skipped)"),
        Problem("a.jsonl", 9, "author '-' has no letter or digit (dropped)", skipped=False),
        Problem("b.txt", 0, "not a recognised input format (skipped)"),
        Problem("c.txt", 0, "not a recognised input format (skipped)"),
    ]
    assert [(str(first), count) for first, count in group_problems(problems)] == [
        ("a.jsonl:3: author '*' has no letter or digit (dropped)", 2),
        ("a.jsonl:5: invalid JSON (Expecting value at column 1) (skipped)", 1),
        ("b.txt:0: not a recognised input format (skipped)", 1),
        ("c.txt:0: not a recognised input format (skipped)", 1),
    ]


def test_index_prints_one_line_per_kind_and_verbose_prints_all(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lines = [listing_line(f"2503.{n:05d}", f"Paper {n}", [f"A. Author{n}", "*"]) for n in range(1, 44)]
    write(tmp_path / "in" / "l.jsonl", "\n".join(lines) + "\n")
    runner = CliRunner()
    result = runner.invoke(main, ["index", "in", "--index", "idx"])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        f"in/l.jsonl:0: {NO_DATES}",
        "in/l.jsonl:1: author '*' has no letter or digit (dropped)"
        " [43 like this in all; the first shown: index --verbose lists every one]",
    ]
    verbose = runner.invoke(main, ["index", "in", "--index", "idx", "--verbose"])
    assert verbose.exit_code == 0
    assert len(verbose.stderr.splitlines()) == 44
    assert verbose.stderr.splitlines()[-1] == "in/l.jsonl:43: author '*' has no letter or digit (dropped)"
    stats = runner.invoke(main, ["stats", "--index", "idx"])
    assert stats.stdout.splitlines()[:2] == [
        "43 documents in idx",
        "43 documents without a submitted date (none has one: date filters find nothing)",
    ]
    assert json.loads(runner.invoke(main, ["stats", "--index", "idx", "--json"]).stdout)["undated"] == 43


def test_the_page_offers_date_choices_only_when_the_index_has_dates(tmp_path):
    from searchengine import build_index
    from searchengine.web import create_app

    undated = tmp_path / "undated.jsonl"
    write(undated, json.dumps({"id": "u-1", "title": "SpMV kernels", "year": 2024}) + "\n")
    dated = tmp_path / "dated.jsonl"
    write(
        dated,
        json.dumps({"id": "d-1", "title": "SpMV kernels", "date": "2024-03-05"})
        + "\n"
        + json.dumps({"id": "d-2", "title": "SpMV tiles", "year": 2023})
        + "\n",
    )
    build_index([undated], tmp_path / "i1")
    build_index([dated], tmp_path / "i2")
    page = create_app(index_dir=tmp_path / "i1").test_client().get("/?q=spmv").get_data(as_text=True)
    assert "The papers in this index have years but no submitted dates." in page
    assert "data-past" not in page and 'id="since"' not in page
    client = create_app(index_dir=tmp_path / "i2").test_client()
    page = client.get("/?q=spmv").get_data(as_text=True)
    assert page.count("data-past=") == 3 and 'id="since"' in page and "1 without a date" in page
    # A hit without a date in an index with dates: the choices stay.
    page = client.get("/?q=tiles").get_data(as_text=True)
    assert "No hit has a submitted date." in page and page.count("data-past=") == 3


def test_a_csv_header_names_the_columns_not_read_once(tmp_path):
    path = write(tmp_path / "p.csv", "id,title,venue,Pages\n1,A paper,X,3\n2,Another,Y,4\n")
    problems: list[Problem] = []
    assert [r.title for r in read_records([path], problems)] == ["A paper", "Another"]
    assert [str(p) for p in problems] == [f"{path}:1: columns 'venue', 'pages' not read (not a field of this format)"]
