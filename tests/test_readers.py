import json

import pytest

from searchengine.readers import detect_format, read_records
from searchengine.readers.arxivlisting import NO_DATES
from searchengine.records import split_authors, title_id

from conftest import CORPUS, write

ZENG_YEARS = [2026, 2025, 2023, 2023, 2023, 2022]
ZENG_CATEGORIES = ["cs.DC", "math.NA", "q-bio.NC", "cs.NE", "cs.CV", "q-bio.NC"]
QIAN_YEARS = [2026] * 6 + [2025] * 5 + [2024] * 4 + [2023] * 2 + [2022]
QIAN_CATEGORIES = [
    "cs.DC",
    "cs.SE",
    "cs.DC",
    "cs.DC",
    "cs.DC",
    "cs.AR",
    "cs.LG",
    "cs.LG",
    "cs.DC",
    "cs.DC",
    "cs.SE",
    "cs.LG",
    "cs.DC",
    "cs.DC",
    "cs.DC",
    "cs.DC",
    "cs.LG",
    "cs.DC",
]

PAGE = """arXiv subjects

Ada Lovelace

Publications and source records attributed to Ada Lovelace.

At least 9 recordsLinked to original sources

arXiv2024

First Paper: On Engines

An abstract about analytical engines.

cs.DC↗

arXiv2023

Second paper without a category

Its abstract.

arXiv2022

Third Paper

Third abstract,
over two lines.

math.NA↗

arXiv2021

cs.LG↗

arXiv2020

Cut-off paper

An abstract that never ends
"""


def read(paths):
    problems = []
    records = list(read_records(paths, problems))
    return records, problems


def test_author_pages_of_the_corpus_give_every_record_with_year_and_category():
    zeng, problems = read([CORPUS / "longbin-zeng.txt"])
    qian, more = read([CORPUS / "depei-qian.txt"])
    assert problems == [] and more == []
    assert [r.year for r in zeng] == ZENG_YEARS
    assert [r.categories for r in zeng] == [[c] for c in ZENG_CATEGORIES]
    assert {tuple(r.authors) for r in zeng} == {("Longbin Zeng",)}
    # The page claims "At least 19 records"; it holds 18.
    assert [r.year for r in qian] == QIAN_YEARS
    assert [r.categories for r in qian] == [[c] for c in QIAN_CATEGORIES]
    assert {tuple(r.authors) for r in qian} == {("Depei Qian",)}


def test_author_page_record_fields_are_exact():
    qian, _ = read([CORPUS / "depei-qian.txt"])
    first = qian[0]
    assert first.title == (
        "DB-SpMSpV: Dual-View Blocked Sparse Matrix-Sparse Vector Multiplication for Dynamic GPU Workloads"
    )
    assert first.abstract.startswith("Sparse Matrix-Sparse Vector Multiplication (SpMSpV) is a core primitive")
    # The page writes "4.50$\\times$"; readers turn TeX into text at read time.
    assert first.abstract.endswith("by up to 4.50\u00d7.")
    assert first.source.endswith("depei-qian.txt:9")
    assert first.id == title_id(first.title)


def test_ids_are_stable_and_ignore_case_spacing_and_punctuation():
    assert title_id("CB-SpMV: A Study") == title_id("cb spmv  a study")
    assert title_id("CB-SpMV: A Study") != title_id("CB-SpMV: Another Study")
    # The id format is a contract: re-indexing with a later version keeps ids.
    assert title_id("A Study") == "t-5d48c11362a2"


def test_malformed_author_page_records_are_reported_with_line_and_good_ones_kept(tmp_path):
    page = write(tmp_path / "lovelace.txt", PAGE)
    records, problems = read([page])
    assert [r.title for r in records] == ["First Paper: On Engines", "Third Paper"]
    assert records[1].abstract == "Third abstract, over two lines."
    assert [str(p) for p in problems] == [
        f"{page}:17: record has no category line before the next record (skipped)",
        f"{page}:32: record has no title (skipped)",
        f"{page}:36: page ends in the middle of a record (skipped)",
    ]


def test_crlf_and_bom_author_page_reads_like_lf(tmp_path):
    page = write(tmp_path / "crlf.txt", "\ufeff" + PAGE.replace("\n", "\r\n"))
    records, _ = read([page])
    assert [r.title for r in records] == ["First Paper: On Engines", "Third Paper"]
    assert records[0].authors == ["Ada Lovelace"]


def test_json_lines_reader_keeps_good_lines_and_reports_bad_ones(tmp_path):
    lines = [
        json.dumps(
            {
                "id": "2101.00001",
                "title": "Sparse GPU kernels",
                "abstract": "SpMV.",
                "authors": ["A. One", "B. Two"],
                "year": 2021,
                "categories": ["cs.DC", "cs.PF"],
            }
        ),
        "{not json",
        json.dumps({"id": "x2", "abstract": "no title here"}),
        "",
        json.dumps({"title": "Year as text", "year": "2019", "categories": "cs.LG stat.ML"}),
        json.dumps({"title": "Bad year", "year": "soon"}),
        json.dumps(["a", "list"]),
        json.dumps({"title": "Authors as one string", "authors": "A. One, B. Two and C. Three"}),
    ]
    path = write(tmp_path / "records.txt", "\n".join(lines) + "\n")
    assert detect_format(path) == "jsonl"
    records, problems = read([path])
    assert [r.title for r in records] == ["Sparse GPU kernels", "Year as text", "Authors as one string"]
    assert records[0].authors == ["A. One", "B. Two"]
    assert records[0].categories == ["cs.DC", "cs.PF"]
    assert records[1].year == 2019 and records[1].categories == ["cs.LG", "stat.ML"]
    assert records[1].id == title_id("Year as text")
    assert records[2].authors == ["A. One", "B. Two", "C. Three"]
    assert [str(p) for p in problems] == [
        f"{path}:2: invalid JSON (Expecting property name enclosed in double quotes at column 2) (skipped)",
        f"{path}:3: record has no title (skipped)",
        f"{path}:6: field 'year' must be a four-digit year, not 'soon' (skipped)",
        f"{path}:7: expected a JSON object, found list (skipped)",
    ]


@pytest.mark.parametrize("first", ["[1, 2]", "null", '"a string"'])
def test_json_lines_after_first_lines_that_are_not_objects_are_read(tmp_path, first):
    records = [json.dumps({"id": f"x{n}", "title": f"Title {n}"}) for n in range(3)]
    listing = json.dumps(
        {"id": "2503.00001", "title": "Listed", "summary": "S", "abs": "https://arxiv.org/abs/2503.00001"}
    )
    plain = write(tmp_path / "plain.jsonl", f"{first}\n\n" + "\n".join(records) + "\n")
    assert detect_format(plain) == "jsonl"
    found, problems = read([plain])
    assert [r.id for r in found] == ["x0", "x1", "x2"]
    assert [p.line for p in problems] == [1] and "expected a JSON object" in problems[0].reason
    # The first object decides the format, as for a file without the stray line.
    assert detect_format(write(tmp_path / "listing.jsonl", f"{first}\n{listing}\n")) == "arxiv-listing"
    # Text that is not JSON before the first object is no JSON lines file.
    assert detect_format(write(tmp_path / "text.txt", "hello world\n" + "\n".join(records) + "\n")) is None


def test_a_line_nested_too_deeply_is_reported_and_the_rest_read(tmp_path):
    deep = "[" * 100_000 + "]" * 100_000  # valid JSON that Python's decoder cannot descend
    path = write(tmp_path / "deep.jsonl", f'{{"title": "Good one"}}\n{deep}\n{{"title": "Good two"}}\n')
    records, problems = read([path])
    assert [r.title for r in records] == ["Good one", "Good two"]
    assert [str(p) for p in problems] == [f"{path}:2: JSON nested too deeply (skipped)"]
    # As a first line it is no JSON value the format can be known by: the file is named, not a crash.
    first = write(tmp_path / "first.jsonl", f'{deep}\n{{"title": "Good"}}\n')
    assert detect_format(first) is None


def test_a_lone_surrogate_escape_is_replaced_and_the_record_kept(tmp_path):
    path = write(
        tmp_path / "s.jsonl",
        '{"title": "Lone \\ud800 half", "authors": ["A \\udc00 B"]}\n{"title": "Pair \\ud83d\\ude00 whole"}\n',
    )
    records, problems = read([path])
    assert [r.title for r in records] == ["Lone \ufffd half", "Pair \U0001f600 whole"]
    assert records[0].authors == ["A \ufffd B"] and problems == []


def test_invalid_utf8_line_is_reported_and_the_rest_read(tmp_path):
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b'{"title": "Good one"}\n{"title": "Bad \xff byte"}\n{"title": "Good two"}\n')
    records, problems = read([path])
    assert [r.title for r in records] == ["Good one", "Good two"]
    assert len(problems) == 1 and str(problems[0]).startswith(f"{path}:2: not valid UTF-8")


def test_format_is_detected_by_content_not_extension(tmp_path):
    page = write(tmp_path / "page.jsonl", PAGE)
    lines = write(tmp_path / "records.txt", '{"title": "T"}\n')
    other = write(tmp_path / "notes.md", "# just some notes\n")
    assert detect_format(page) == "authorpage"
    assert detect_format(lines) == "jsonl"
    assert detect_format(other) is None
    records, problems = read([tmp_path])
    assert sorted(r.title for r in records) == ["First Paper: On Engines", "T", "Third Paper"]
    assert f"{other}:0: not a recognised input format (skipped)" in [str(p) for p in problems]


def test_a_first_record_longer_than_the_sniff_is_read_whole_to_name_the_format(tmp_path):
    import gzip
    import json

    long_summary = "sparse " * 3000  # 21,000 characters: the listing's keys come after it
    first = {
        "id": "2401.00001",
        "title": "Long one",
        "summary": long_summary,
        "authors": ["A B"],
        "abs": "https://arxiv.org/abs/2401.00001",
        "pdf": "https://arxiv.org/pdf/2401.00001",
    }
    second = dict(
        first, id="2401.00002", title="Short one", summary="A short abstract.", abs="https://arxiv.org/abs/2401.00002"
    )
    text = json.dumps(first) + "\n" + json.dumps(second) + "\n"
    plain = write(tmp_path / "listing.jsonl", text)
    packed = tmp_path / "listing.jsonl.gz"
    packed.write_bytes(gzip.compress(text.encode()))
    for path in (plain, packed):
        assert detect_format(path) == "arxiv-listing"
        records, problems = read([path])
        assert [(r.title, len(r.abstract)) for r in records] == [("Long one", 20999), ("Short one", 17)]
        assert [p.reason for p in problems] == [NO_DATES]  # no table of listing dates beside it


def test_broken_gzip_empty_file_and_fifo_are_reported_not_fatal(tmp_path):
    import gzip
    import os

    import pytest

    from searchengine import InputError

    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(gzip.compress(b'{"title": "never read"}\n')[:12])
    empty = write(tmp_path / "empty.jsonl", "")
    good = write(tmp_path / "good.jsonl", '{"title": "Kept"}\n')
    records, problems = read([cut, empty, good])
    assert [r.title for r in records] == ["Kept"]
    assert [str(p) for p in problems] == [
        f"{cut}:1: the file ended early after 0 records: the compressed data ends before its end-of-stream "
        "marker in this line; the rest of the file is missing",
        f"{empty}:0: empty file (skipped)",
    ]
    assert [p.cut_off for p in problems] == [True, False]
    header_only = tmp_path / "header.jsonl.gz"
    header_only.write_bytes(gzip.compress(b'{"title": "never read"}\n')[:10])
    assert [(str(p), p.cut_off) for p in read([header_only])[1]] == [
        (f"{header_only}:0: cannot be read: the compressed data ends before its end-of-stream marker (skipped)", True)
    ]
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="pipe: not a regular file or directory"):
        read([fifo])


def test_a_json_lines_file_cut_inside_its_last_record_is_cut_off(tmp_path):
    cut = write(tmp_path / "cut.jsonl", '{"id": "2101.00001", "title": "Kept"}\n{"id": "2101.00002", "title": "Cu')
    bad = write(tmp_path / "bad.jsonl", '{"id": "2101.00003", "title": "Kept too"}\n{not json}\n')
    whole = write(tmp_path / "whole.jsonl", '{"id": "2101.00004", "title": "No line end"}')
    records, problems = read([cut, bad, whole])
    assert [r.title for r in records] == ["Kept", "Kept too", "No line end"]
    assert [(p.line, p.cut_off) for p in problems] == [(2, True), (2, False)]
    assert str(problems[0]) == (
        f"{cut}:2: the file ended early after 1 records: a JSON record stops unfinished, without a line end, "
        "in this line; the rest of the file is missing"
    )


def test_a_file_that_cannot_be_read_is_cut_off(tmp_path, monkeypatch):
    import searchengine.readers as readers

    good = write(tmp_path / "good.jsonl", '{"id": "2101.00001", "title": "Kept"}\n{"id": "2101.00002", "title": "B"}\n')
    real = readers.numbered_lines

    def failing(path, problems):
        for number, line in real(path, problems):
            if number == 2:
                raise OSError(5, "Input/output error")
            yield number, line

    monkeypatch.setattr(readers, "numbered_lines", failing)
    records, problems = read([good])
    assert [r.title for r in records] == ["Kept"]
    assert [(str(p), p.cut_off) for p in problems] == [
        (f"{good}:0: read failed after 1 records: [Errno 5] Input/output error", True)
    ]


def test_utf16_files_with_a_byte_order_mark_are_read(tmp_path):
    lines = [
        {"id": "2101.00001", "title": "Première étude", "authors": ["Zoë Ünal"]},
        {"id": "2101.00002", "title": "Second study"},
    ]
    text = "\r\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\r\n"
    for encoding in ("utf-16", "utf-16-be"):
        path = tmp_path / f"{encoding}.jsonl"
        path.write_bytes(("\ufeff" if encoding.endswith("be") else "").encode(encoding) + text.encode(encoding))
        assert detect_format(path) == "jsonl"
        problems = []
        records = list(read_records([path], problems))
        assert problems == []
        assert [(r.id, r.title, r.authors, r.source) for r in records] == [
            ("2101.00001", "Première étude", ["Zoë Ünal"], f"{path}:1"),
            ("2101.00002", "Second study", [], f"{path}:2"),
        ]


def test_fifos_in_a_folder_are_skipped_not_read(tmp_path):
    import os

    write(tmp_path / "in" / "a.jsonl", json.dumps({"id": "x1", "title": "Kept"}) + "\n")
    os.mkfifo(tmp_path / "in" / "pipe.jsonl")  # reading it would block forever
    problems = []
    assert [r.id for r in read_records([tmp_path / "in"], problems)] == ["x1"]
    assert problems == []


def test_a_stray_year_like_line_does_not_turn_json_lines_into_an_author_page(tmp_path):
    path = write(tmp_path / "b.jsonl", '{"id":"a1","title":"One"}\narXiv2026\n{"id":"a2","title":"Two"}\n')
    assert detect_format(path) == "jsonl"
    problems = []
    assert [r.id for r in read_records([path], problems)] == ["a1", "a2"]
    assert [(p.path, p.line) for p in problems] == [(str(path), 2)]


def test_a_line_over_the_cap_is_reported_and_passed_over(tmp_path):
    import gzip

    from searchengine.readers import MAX_LINE_BYTES

    huge = json.dumps({"id": "big", "title": "Huge", "abstract": "x " * (MAX_LINE_BYTES // 2)})
    lines = [json.dumps({"id": "a1", "title": "One"}), huge, json.dumps({"id": "a2", "title": "Two"})]
    path = tmp_path / "records.jsonl.gz"
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    problems = []
    assert [r.id for r in read_records([path], problems)] == ["a1", "a2"]
    assert [(p.line, p.reason) for p in problems] == [(2, "line longer than 8 MB (skipped)")]


@pytest.mark.parametrize(
    ("text", "people"),
    [
        # BibTeX: "and" between people, each "Last, First".
        ("Lovelace, Ada and Babbage, Charles", ["Ada Lovelace", "Charles Babbage"]),
        ("van der Berg, Jan and Smith, J.", ["Jan van der Berg", "J. Smith"]),
        ("King, Jr., Martin Luther and Lovelace, Ada", ["Martin Luther King Jr.", "Ada Lovelace"]),
        ("Smith, John, Jr.", ["John Smith Jr."]),
        ("Smith, John, III and Lovelace, Ada", ["John Smith III", "Ada Lovelace"]),
        (
            "Lovelace, Ada and {Barnes and Noble Detector Collaboration}",
            ["Ada Lovelace", "Barnes and Noble Detector Collaboration"],
        ),
        # Semicolons: one person each.
        ("Lovelace, Ada; Babbage, C.", ["Ada Lovelace", "C. Babbage"]),
        ("Ada Lovelace; Charles Babbage", ["Ada Lovelace", "Charles Babbage"]),
        # arXiv's: commas and a last "and".
        ("A. Lovelace, C. Babbage and M. Somerville", ["A. Lovelace", "C. Babbage", "M. Somerville"]),
        ("Ada Lovelace and Charles Babbage", ["Ada Lovelace", "Charles Babbage"]),
        ("Martin Luther King, Jr., Ada Lovelace", ["Martin Luther King, Jr.", "Ada Lovelace"]),
        # One person, inverted.
        ("Lovelace, Ada", ["Ada Lovelace"]),
        # Given names ending in a particle: a surname of several words before the comma.
        ("Holt Brink, J. van der", ["J. van der Holt Brink"]),
        ("Holt Brink, J.", ["Holt Brink", "J."]),
        # A group's name keeps its "and".
        ("Barnes and Noble Detector Collaboration", ["Barnes and Noble Detector Collaboration"]),
        ("A. One, Barnes and Noble Detector Collaboration", ["A. One", "Barnes and Noble Detector Collaboration"]),
        # Leftovers of a list split at commas only.
        ("and Shadab Khan", ["Shadab Khan"]),
        ("Donald Johann Jr. and Fred Prior", ["Donald Johann Jr.", "Fred Prior"]),
        ("Depei Qian", ["Depei Qian"]),
        ("", []),
    ],
)
def test_an_author_string_is_split_into_people(text, people):
    assert split_authors(text) == people


def test_authors_are_people_in_every_format_and_punctuation_is_dropped_with_a_note(tmp_path):
    """JSON lines and CSV author strings in BibTeX's form give people; a list
    entry holding two people is split; ":" after a name (a group, then its
    members) is dropped quietly, other punctuation with a note that does not
    count as a skipped record."""
    lines = write(
        tmp_path / "papers.jsonl",
        "\n".join(
            [
                json.dumps(
                    {"id": "2101.00001", "title": "BibTeX authors", "authors": "Lovelace, Ada and Babbage, Charles"}
                ),
                json.dumps(
                    {
                        "id": "2101.00002",
                        "title": "A listing",
                        "authors": [
                            "NVIDIA",
                            ":",
                            "*",
                            "Ada Lovelace and Charles Babbage",
                            "Barnes and Noble Detector Collaboration",
                        ],
                    }
                ),
            ]
        )
        + "\n",
    )
    table = write(tmp_path / "papers.csv", 'id,title,authors\n2101.00003,CSV authors,"Lovelace, Ada; Babbage, C."\n')
    problems = []
    records = {r.id: r.authors for r in read_records([lines, table], problems)}
    assert records == {
        "2101.00001": ["Ada Lovelace", "Charles Babbage"],
        "2101.00002": ["NVIDIA", "Ada Lovelace", "Charles Babbage", "Barnes and Noble Detector Collaboration"],
        "2101.00003": ["Ada Lovelace", "C. Babbage"],
    }
    assert [str(p) for p in problems] == [f"{lines}:2: author '*' has no letter or digit (dropped)"]
    assert [p.skipped for p in problems] == [False]


def test_a_json_lines_version_field_is_the_records_version(tmp_path):
    path = tmp_path / "v.jsonl"
    path.write_text(
        '{"id": "2201.00010", "title": "A", "version": 4}\n'
        '{"id": "2201.00011", "title": "B", "version": "v2"}\n'
        '{"id": "2201.00012", "title": "C", "version": "four"}\n',
        encoding="utf-8",
    )
    problems = []
    records = list(read_records([path], problems))
    assert [(r.id, r.version) for r in records] == [("2201.00010", 4), ("2201.00011", 2)]
    assert [str(p) for p in problems] == [f"{path}:3: field 'version' must be a whole number, not 'four' (skipped)"]


def test_author_page_lines_outside_any_record_are_named_not_dropped(tmp_path):
    stray = PAGE.replace("At least 9 recordsLinked", "Follow this author\n\nAt least 9 recordsLinked").replace(
        "math.NA↗\n", "math.NA↗\n\nA note pasted between two records.\n"
    )
    page = write(tmp_path / "stray.txt", stray)
    records, problems = read([page])
    assert [r.title for r in records] == ["First Paper: On Engines", "Third Paper"]
    assert [(p.line, p.reason, p.skipped) for p in problems if not p.skipped] == [
        (7, "line 'Follow this author' not read (outside any record)", False),
        (34, "line 'A note pasted between two records.' not read (outside any record)", False),
    ]


def test_atom_entry_elements_that_records_do_not_keep_are_named(tmp_path):
    feed = write(
        tmp_path / "feed.xml",
        '<?xml version="1.0"?>\n'
        '<feed xmlns="http://www.w3.org/2005/Atom" xmlns:arxiv="http://arxiv.org/schemas/atom"'
        ' xmlns:x="urn:example">\n'
        "<entry><id>http://arxiv.org/abs/2101.00001v1</id><title>Sparse kernels</title>"
        "<summary>About SpMV.</summary><published>2021-01-01T00:00:00Z</published>"
        "<author><name>Ada Lovelace</name><arxiv:affiliation>Analytical Society</arxiv:affiliation></author>"
        "<x:rating>5</x:rating><arxiv:comment/></entry>\n"
        "</feed>\n",
    )
    records, problems = read([feed])
    assert [(r.id, r.title, r.authors) for r in records] == [("2101.00001", "Sparse kernels", ["Ada Lovelace"])]
    assert [str(p) for p in problems] == [
        f"{feed}:3: elements '{{urn:example}}rating', 'arxiv:affiliation' not read (not a field of this format)"
    ]
