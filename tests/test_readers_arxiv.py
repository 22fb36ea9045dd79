"""The arXiv readers and the CSV reader; the arXiv ones on the real samples in ../shared/data/arxiv."""

import gzip
import itertools
import json

import pytest

from searchengine.readers import FORMATS, detect_format, read_records
from searchengine.readers.arxivlisting import NO_DATES
from searchengine.readers.arxivmeta import arxiv_categories, split_version, year_from_id
from searchengine.records import title_id
from searchengine.tex import tex_to_text

from conftest import write
from shareddata import DATA

ARXIV = DATA / "arxiv"
OAI = ARXIV / "kaggle_oai_snapshot_sample.jsonl"
LISTING = ARXIV / "arxiv_listing_sample.jsonl.gz"
ATOM = ARXIV / "api_atom_samples"
ATOM_OLD_ONE = ATOM / "api2016_id_list_1111.2011v2.xml"
ATOM_OLD = ATOM / "api2016_search_query_au_del_maestro.xml"
ATOM_NEW = ATOM / "api2026_search_query_testing_start0_max100.xml"


def read(paths, format=None):
    problems = []
    records = list(read_records(paths, problems, format=format))
    return records, problems


@pytest.mark.usefixtures("shared_data")
@pytest.mark.parametrize(
    ("path", "name"),
    [
        (OAI, "arxiv-oai"),
        (LISTING, "arxiv-listing"),
        (ATOM_OLD_ONE, "arxiv-atom"),
        (ATOM_OLD, "arxiv-atom"),
        (ATOM_NEW, "arxiv-atom"),
    ],
)
def test_each_sample_is_recognised_by_content(path, name):
    assert detect_format(path) == name


@pytest.mark.usefixtures("shared_data")
def test_sniffing_is_unambiguous_across_formats(tmp_path):
    samples = {
        "arxiv-oai": OAI.read_text(encoding="utf-8").splitlines()[0] + "\n",
        "arxiv-listing": gzip.open(LISTING, "rt", encoding="utf-8").readline(),  # noqa: SIM115
        "arxiv-atom": ATOM_NEW.read_text(encoding="utf-8"),
        "csv": "id,title,year\n1,A title,2020\n",
        "jsonl": '{"id": "x", "title": "A title", "abstract": "summary of it"}\n',
        "authorpage": "arXiv subjects\n\nAda Lovelace\n\narXiv2024\n\nTitle\n\nAbstract\n\ncs.DC↗\n",
    }
    assert set(samples) == set(FORMATS)
    for name, text in samples.items():
        head = text[:8192]
        assert [n for n, module in FORMATS.items() if module.sniff(head)][0] == name


@pytest.mark.usefixtures("shared_data")
def test_oai_snapshot_reads_all_200_records_with_exact_fields():
    records, problems = read([OAI])
    assert problems == []
    assert len(records) == 200 and len({r.id for r in records}) == 200
    assert records[0].id == "0704.0001" and records[-1].id == "0704.0200"
    first = records[0]
    # The title's hard line wrap ("and\n  LHC") is collapsed.
    assert first.title == "Calculation of prompt diphoton production cross sections at Tevatron and LHC energies"
    assert first.abstract.startswith(
        "A fully differential calculation in perturbative quantum chromodynamics is presented"
    )
    assert first.authors == ["C. Balázs", "E. L. Berger", "P. M. Nadolsky", "C. -P. Yuan"]
    assert (first.year, first.version, first.categories) == (2007, 2, ["hep-ph"])
    assert first.url == "https://arxiv.org/abs/0704.0001"
    assert first.source == f"{OAI}:1"
    second = records[1]
    assert second.categories == ["math.CO", "cs.CG"] and second.authors == ["Ileana Streinu", "Louis Theran"]
    assert records[9].version == 1
    # Accented names come out in Unicode (the "authors" string has them as TeX).
    assert records[48].authors == ["Mikkel Øbro"]
    assert records[61].authors == ["Rastislav Šrámek", "Broňa Brejová", "Tomáš Vinař"]
    assert {r.year for r in records} == {2007}


def test_oai_without_authors_parsed_decodes_tex_in_the_authors_string(tmp_path):
    line = {
        "id": "0704.0062v3",
        "title": "T",
        "abstract": "A",
        "categories": "q-bio.GN",
        "authors": "Rastislav \\v{S}r\\'amek, Bro\\v{n}a Brejov\\'a and Tom\\'a\\v{s} Vina\\v{r}",
        "versions": [],
        "update_date": "2009-01-05",
    }
    path = write(tmp_path / "oai.jsonl", json.dumps(line) + "\n")
    records, problems = read([path], format="arxiv-oai")
    assert problems == []
    assert records[0].authors == ["Rastislav Šrámek", "Broňa Brejová", "Tomáš Vinař"]
    # No versions list: the id's suffix gives the version, the id the year.
    assert (records[0].id, records[0].version, records[0].year) == ("0704.0062", 3, 2007)


@pytest.mark.usefixtures("shared_data")
def test_oai_bad_lines_are_reported_with_line_numbers(tmp_path):
    good = OAI.read_text(encoding="utf-8").splitlines()[0]
    lines = [
        good,
        '{"id": "0704.9999", "title": null, "versions": [], "update_date": "2007-01-01"}',
        '{"title": "no id", "versions": [], "update_date": "2007-01-01"}',
        "{cut",
    ]
    path = write(tmp_path / "oai.jsonl", "\n".join(lines) + "\n")
    records, problems = read([path])
    assert [r.id for r in records] == ["0704.0001"]
    assert [str(p) for p in problems] == [
        f"{path}:2: record has no title (skipped)",
        f"{path}:3: record has no id (skipped)",
        f"{path}:4: invalid JSON (Expecting property name enclosed in double quotes at column 2) (skipped)",
    ]


@pytest.mark.usefixtures("shared_data")
def test_listing_sample_reads_all_74728_records():
    records, problems = read([LISTING])
    # 43 listings name ":" as an author after a group ("NVIDIA", ":", then its
    # members): a separator, dropped without a note; no record is skipped.
    assert problems == []
    by_id = {r.id: r for r in records}
    assert by_id["2503.14492"].authors[:3] == ["NVIDIA", "Hassan Abu Alhaija", "Jose Alvarez"]
    assert not any(not any(ch.isalnum() for ch in name) for r in records for name in r.authors)
    # Scraped lists that kept an "and": people, not a name with "and" in it.
    assert by_id["2503.16565"].authors[-2:] == ["Marco Pimentel", "Shadab Khan"]
    assert by_id["2606.06950"].authors[-3:] == ["Jonathan Bona", "Donald Johann Jr.", "Fred Prior"]
    assert len(records) == 74_728 and len({r.id for r in records}) == 74_728
    years = {}
    for record in records:
        years[record.year] = years.get(record.year, 0) + 1
    # listing_dates.tsv.gz lies beside the sample: every paper's year is that
    # of its first listing (2025-03-18 .. 2026-07-01), counted from the table:
    # 40,717 in 2025, 34,011 in 2026 (by id, PROVENANCE.md: 40,903, 33,784 and 41 older).
    assert (years[2025], years[2026], sum(years.values()) - years[2025] - years[2026]) == (40_717, 34_011, 0)
    assert all(r.submitted is not None and r.updated >= r.submitted for r in records)
    assert all(r.title and r.abstract and r.authors and r.categories for r in records)


@pytest.mark.usefixtures("shared_data")
def test_listing_record_fields_and_class_codes_dropped():
    records = list(itertools.islice(read_records([LISTING], []), 200))
    by_id = {r.id: r for r in records[:200]}
    first = records[0]
    assert first.id == "2503.11731"
    assert first.title == (
        "Industrial-Grade Sensor Simulation via Gaussian Splatting: A Modular "
        "Framework for Scalable Editing and Full-Stack Validation"
    )
    assert first.abstract.startswith(
        "Sensor simulation is pivotal for scalable validation of autonomous driving systems, yet"
    )
    assert "\n" not in first.abstract
    assert first.authors[:3] == ["Xianming Zeng", "Sicong Du", "Qifeng Chen"] and len(first.authors) == 16
    assert (first.year, first.version, first.categories) == (2025, None, ["cs.CV", "cs.RO"])
    assert first.url == "https://arxiv.org/abs/2503.11731"
    assert records[1].authors[0] == "Moreno D'Incà"
    # Line 72 lists ["cs.CV", "I.4"], line 160 also "68Txx" and "I.2.1".
    assert by_id["2503.12260"].categories == ["cs.CV"]
    assert by_id["2503.12780"].categories == ["cs.CV", "cs.AI", "cs.LG", "eess.IV", "stat.ML"]
    assert by_id["2503.12780"].source == f"{LISTING}:160"


@pytest.mark.usefixtures("shared_data")
def test_atom_old_layout_single_entry():
    records, problems = read([ATOM_OLD_ONE])
    assert problems == [] and len(records) == 1
    record = records[0]
    assert (record.id, record.version, record.year) == ("1111.2011", 2, 2011)
    assert record.title == "Quantum Criticality for Extended Nodes on a Bethe Lattice in the Large Connectivity Limit"
    assert record.abstract.startswith("Theoretical description of anisotropic systems, such as layered superconductors")
    assert record.authors == ["James M. Murray", "Adrian Del Maestro", "Zlatko Tesanovic"]
    assert record.categories == ["cond-mat.str-el", "cond-mat.stat-mech"]
    assert record.url == "http://arxiv.org/abs/1111.2011v2"
    assert record.source == f"{ATOM_OLD_ONE}:10"


@pytest.mark.usefixtures("shared_data")
def test_atom_old_layout_search_feed_with_old_style_ids():
    records, problems = read([ATOM_OLD])
    assert problems == [] and len(records) == 10
    assert [r.id for r in records[:3]] == ["1201.4869", "cond-mat/0412498", "cond-mat/0603029"]
    assert [r.year for r in records[:3]] == [2012, 2004, 2006]
    assert [r.source.rsplit(":", 1)[1] for r in records[:3]] == ["10", "49", "81"]
    # The feed answers au:del_maestro; he is named two ways.
    assert sum("Adrian Del Maestro" in r.authors for r in records) == 6
    assert sum("A. Del Maestro" in r.authors for r in records) == 4


@pytest.mark.usefixtures("shared_data")
def test_atom_new_layout_reads_100_entries():
    records, problems = read([ATOM_NEW])
    # One entry gives an author's affiliation, which records do not keep: named, the record kept.
    assert [(p.line, p.reason, p.skipped) for p in problems] == [
        (2013, "element 'arxiv:affiliation' not read (not a field of this format)", False)
    ]
    assert len(records) == 100
    first = records[0]
    assert (first.id, first.version, first.year) == ("2202.12139", 1, 2022)
    assert first.title == "Testing Deep Learning Models: A First Comparative Study of Multiple Testing Techniques"
    assert first.authors == ["Mohit Kumar Ahuja", "Arnaud Gotlieb", "Helge Spieker"]
    assert first.categories == ["cs.SE", "cs.LG"]
    assert first.url == "https://arxiv.org/abs/2202.12139v1"


@pytest.mark.usefixtures("shared_data")
def test_atom_error_entry_and_broken_xml_are_reported(tmp_path):
    feed = ATOM_OLD_ONE.read_text(encoding="utf-8")
    error_entry = (
        "<entry><id>http://arxiv.org/api/errors#incorrect_id_format_for_1234</id>"
        "<title>Error</title><summary>incorrect id format for 1234</summary></entry>\n"
    )
    path = write(tmp_path / "err.xml", feed.replace("<entry>", error_entry + "  <entry>", 1))
    records, problems = read([path])
    assert [r.id for r in records] == ["1111.2011"]
    assert [str(p) for p in problems] == [f"{path}:10: arXiv API error: incorrect id format for 1234 (skipped)"]
    cut = write(tmp_path / "cut.xml", feed.replace("</entry>", "</entri>"))
    records, problems = read([cut])
    assert records == []
    assert len(problems) == 1 and str(problems[0]).startswith(f"{cut}:54: XML is not well formed (mismatched tag")


@pytest.mark.usefixtures("shared_data")
def test_atom_feed_cut_inside_an_entry_reports_that_entry(tmp_path):
    lines = ATOM_OLD.read_text(encoding="utf-8").split("\n")
    # Entries start on lines 10, 49, 81, ...; cut two lines into the third one.
    path = write(tmp_path / "cut.xml", "\n".join(lines[:82]))
    records, problems = read([path])
    assert [r.id for r in records] == ["1201.4869", "cond-mat/0412498"]
    assert len(problems) == 1
    assert str(problems[0]).startswith(f"{path}:81: entry cut off: XML ends early (no element found")


def test_csv_quote_left_open_is_reported_not_swallowed(tmp_path):
    path = write(tmp_path / "open.csv", 'title,id,year\nFirst paper,1,2020\n"unterminated,2,2020\nok,3,2021\n')
    records, problems = read([path], format="csv")
    assert [r.title for r in records] == ["First paper"]
    assert [str(p) for p in problems] == [f"{path}:3: CSV error (unexpected end of data); rest of file skipped"]


def test_csv_with_record_field_names(tmp_path):
    text = (
        "id,title,abstract,authors,year,categories,url,extra\n"
        '2101.00001v2,Sparse GPU kernels,"SpMV, on GPUs",Ada Lovelace; Charles Babbage,2021,cs.DC cs.PF,,x\n'
        "\n"
        ',"A title, with a comma","An abstract\nover two lines",A. One and B. Two,,math.NA,,\n'
        "2101.00002,,No title here,,,,,\n"
        "2101.00003,Bad year,,,soon,,,\n"
        "2201.00004,Year from id,,,,,,\n"
        "2101.00005,Too,many,values,1,2,3,4,5\n"
    )
    path = write(tmp_path / "papers.txt", "\ufeff" + text.replace("\n", "\r\n"))
    assert detect_format(path) == "csv"
    records, problems = read([path])
    assert [(r.id, r.title) for r in records] == [
        ("2101.00001", "Sparse GPU kernels"),
        (title_id("A title, with a comma"), "A title, with a comma"),
        ("2201.00004", "Year from id"),
    ]
    first, second, third = records
    assert first.authors == ["Ada Lovelace", "Charles Babbage"]
    assert (first.abstract, first.year, first.version, first.categories) == (
        "SpMV, on GPUs",
        2021,
        2,
        ["cs.DC", "cs.PF"],
    )
    assert second.abstract == "An abstract over two lines" and second.authors == ["A. One", "B. Two"]
    assert second.source == f"{path}:4"
    assert third.year == 2022
    assert [str(p) for p in problems] == [
        f"{path}:1: column 'extra' not read (not a field of this format)",
        f"{path}:6: record has no title (skipped)",
        f"{path}:7: field 'year' must be a four-digit year, not 'soon' (skipped)",
        f"{path}:9: row has 9 values but the header names 8 (skipped)",
    ]


@pytest.mark.usefixtures("shared_data")
def test_format_can_be_forced(tmp_path):
    # A listing line read as plain JSON lines has no abstract ("summary" is not
    # a Record field), and a note names the keys left unread.
    with gzip.open(LISTING, "rt", encoding="utf-8") as lines:
        line = lines.readline()
    path = write(tmp_path / "one.jsonl", line)
    records, problems = read([path], format="jsonl")
    assert records[0].id == "2503.11731" and records[0].abstract == ""
    assert [str(p) for p in problems] == [f"{path}:1: fields 'abs', 'summary' not read (not a field of this format)"]
    records, problems = read([path])
    assert records[0].abstract.startswith("Sensor simulation")
    assert [p.reason for p in problems] == [NO_DATES]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2101.00003v2", ("2101.00003", 2)),
        ("2101.00003", ("2101.00003", None)),
        ("cond-mat/0102536v1", ("cond-mat/0102536", 1)),
        ("0704.0001v12", ("0704.0001", 12)),
        ("t-5d48c11362a2", ("t-5d48c11362a2", None)),
        ("paperv2", ("paperv2", None)),
    ],
)
def test_split_version(raw, expected):
    assert split_version(raw) == expected


def test_year_from_id_and_category_filter_and_tex():
    assert [year_from_id(i) for i in ("2506.06837", "0704.0001", "cond-mat/9912345", "hep-th/0101001", "x")] == [
        2025,
        2007,
        1999,
        2001,
        None,
    ]
    assert arxiv_categories(["cs.CV", "I.2.7", "68T07", "68U10, 90C26", "I.4.8; I.2.10", "hep-ph", "cs.CV"]) == [
        "cs.CV",
        "hep-ph",
    ]
    assert tex_to_text("Bal\\'azs") == "Balázs" and tex_to_text("plain") == "plain"


@pytest.mark.usefixtures("shared_data")
def test_listing_reader_streams(tmp_path):
    # Reading the first records of the 130 MB sample does not read the whole file.
    problems = []
    first = list(itertools.islice(read_records([LISTING], problems), 3))
    assert [r.id for r in first] == ["2503.11731", "2503.11742", first[2].id] and problems == []


# --- links and identifiers ----------------------------------------------------


def _links(record):
    return (record.url, record.pdf_url, record.doi, record.journal_ref, record.comments, record.license)


@pytest.mark.usefixtures("shared_data")
def test_oai_records_carry_doi_journal_ref_comments_and_license():
    records, _ = read([OAI])
    by_id = {r.id: r for r in records}
    assert _links(by_id["0704.0001"]) == (
        "https://arxiv.org/abs/0704.0001",
        "",
        "10.1103/PhysRevD.76.013009",
        "Phys.Rev.D76:013009,2007",
        "37 pages, 15 figures; published version",
        "",
    )
    assert _links(by_id["0704.0002"]) == (
        "https://arxiv.org/abs/0704.0002",
        "",
        "",
        "",
        "To appear in Graphs and Combinatorics",
        "http://arxiv.org/licenses/nonexclusive-distrib/1.0/",
    )
    # two DOIs in one field (an erratum's) stay two, separated by a space
    assert by_id["0704.0033"].doi == "10.1364/JOSAA.23.002578 10.1364/JOSAA.32.002407"
    assert (
        sum(1 for r in records if r.doi),
        sum(1 for r in records if r.journal_ref),
        sum(1 for r in records if r.comments),
        sum(1 for r in records if r.license),
    ) == (117, 109, 182, 19)


@pytest.mark.usefixtures("shared_data")
def test_atom_entries_carry_pdf_link_doi_journal_ref_and_comment():
    records, _ = read([ATOM_OLD_ONE])
    assert _links(records[0]) == (
        "http://arxiv.org/abs/1111.2011v2",
        "http://arxiv.org/pdf/1111.2011v2",
        "10.1103/PhysRevB.85.115117",
        "Phys. Rev. B 85, 115117 (2012)",
        "8 pages, 3 figures. Published version",
        "",
    )
    records, _ = read([ATOM_NEW])
    assert _links(records[0]) == (
        "https://arxiv.org/abs/2202.12139v1",
        "https://arxiv.org/pdf/2202.12139v1",
        "10.1109/ICSTW55395.2022.00035",
        "Artificial Intelligence in Software Testing @ 2022 IEEE International Conference on Software Testing, "
        "Verification and Validation Workshops (ICSTW)",
        "Artificial Intelligence in Software Testing 2022 workshop @ ICST 2022",
        "",
    )
    assert sum(1 for r in records if r.doi) == 32


def test_listing_records_carry_abs_pdf_and_comment(tmp_path):
    line = {
        "id": "2503.11742",
        "pdf": "https://arxiv.org/pdf/2503.11742",
        "abs": "https://arxiv.org/abs/2503.11742",
        "authors": ["A. One"],
        "title": "T",
        "categories": ["cs.LG"],
        "comment": "Work in progress",
        "summary": "S",
    }
    path = write(
        tmp_path / "listing.jsonl",
        json.dumps(line) + "\n" + json.dumps(dict(line, id="2503.11743", comment=None)) + "\n",
    )
    records, problems = read([path])
    assert [p.reason for p in problems] == [NO_DATES] and [r.id for r in records] == ["2503.11742", "2503.11743"]
    assert _links(records[0]) == (
        "https://arxiv.org/abs/2503.11742",
        "https://arxiv.org/pdf/2503.11742",
        "",
        "",
        "Work in progress",
        "",
    )
    assert records[1].comments == ""


def test_csv_and_json_lines_carry_link_and_identifier_columns(tmp_path):
    csv_path = write(
        tmp_path / "papers.csv",
        (
            "id,title,doi,journal_ref,comments,pdf,license\n"
            'r1,Magnons,https://doi.org/10.1103/PhysRevB.76.125117,"Phys. Rev. B 76, 125117",5 pages,'
            "https://example.org/r1.pdf,CC BY 4.0\n"
            "r2,Phonons,not a doi,,,,\n"
        ),
    )
    jsonl_path = write(
        tmp_path / "papers.jsonl",
        json.dumps(
            {
                "id": "j1",
                "title": "Magnons",
                "doi": "doi:10.1103/PhysRevB.76.125117",
                "journal_ref": "PRB 76",
                "comments": "5 pages",
                "pdf": "https://example.org/j1.pdf",
                "license": "CC BY 4.0",
            }
        )
        + "\n"
        + json.dumps({"id": "j2", "title": "Bad", "doi": 10})
        + "\n",
    )
    records, problems = read([csv_path, jsonl_path])
    assert [(r.id,) + _links(r) for r in records] == [
        (
            "r1",
            "",
            "https://example.org/r1.pdf",
            "10.1103/PhysRevB.76.125117",
            "Phys. Rev. B 76, 125117",
            "5 pages",
            "CC BY 4.0",
        ),
        # text that is no DOI is kept as written (shown, never linked)
        ("r2", "", "", "not a doi", "", "", ""),
        ("j1", "", "https://example.org/j1.pdf", "10.1103/PhysRevB.76.125117", "PRB 76", "5 pages", "CC BY 4.0"),
    ]
    assert [str(p) for p in problems] == [f"{jsonl_path}:2: field 'doi' must be a string, not int (skipped)"]
