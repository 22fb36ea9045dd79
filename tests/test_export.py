"""The export writers (searchengine/export.py): BibTeX, CSV, JSON lines and RIS, byte for byte."""

import csv
import io
import json

import bibtexparser
import pytest
from bibtexparser.middlewares import LatexDecodingMiddleware, SeparateCoAuthors

from searchengine.export import (
    bibtex_author,
    bibtex_title,
    citation_key,
    render,
    ris_author,
    to_bibtex,
    to_csv,
    to_jsonl,
    to_ris,
)

RECORDS = [
    {
        "id": "2101.00001",
        "title": "Speed-ups of 5× for Vlček's & Schrödinger's {sparse} 100% kernels",
        "authors": ["Jan Vlček", "Erwin Schrödinger"],
        "year": 2021,
        "categories": ["cs.DC", "cs.PF"],
        "url": "",
    },
    {"id": "t-abc", "title": "A study of things", "authors": [], "year": None, "categories": [], "url": ""},
    {
        "id": "2101.00002",
        "title": "Speed-ups again",
        "authors": ["Jan Vlček"],
        "year": 2021,
        "categories": [],
        "url": "",
    },
]


def test_bibtex_parses_back_with_the_same_values():
    text = to_bibtex(RECORDS)
    library = bibtexparser.parse_string(text, append_middleware=[LatexDecodingMiddleware()])
    assert library.failed_blocks == []
    entries = {e.key: e.fields_dict for e in library.entries}
    assert list(entries) == ["vlcek2021speedups", "anonstudy", "vlcek2021speedupsa"]
    first = entries["vlcek2021speedups"]
    assert first["title"].value == RECORDS[0]["title"]
    assert first["author"].value == "Jan Vlček and Erwin Schrödinger"
    assert first["eprint"].value == "2101.00001"
    assert first["primaryClass"].value == "cs.DC"
    assert first["url"].value == "https://arxiv.org/abs/2101.00001"
    assert "eprint" not in entries["anonstudy"] and "year" not in entries["anonstudy"]
    # The url field is the URL itself, for readers that do not decode LaTeX as well.
    raw = {e.key: e.fields_dict for e in bibtexparser.parse_string(text).entries}
    assert raw["vlcek2021speedups"]["url"].value == "https://arxiv.org/abs/2101.00001"


def test_citation_key_uses_last_name_year_and_first_long_title_word():
    assert citation_key({"authors": ["Qian, Depei"], "year": 2026, "title": "CB-SpMV: A kernel"}) == "qian2026cbspmv"
    assert citation_key({"authors": ["Depei Qian"], "year": None, "title": "On the GPU"}) == "qianon"


def test_csv_has_a_header_and_one_row_per_hit():
    rows = list(csv.reader(io.StringIO(to_csv([dict(r, score=1.5) for r in RECORDS[:2]], first_rank=11))))
    assert rows[0] == [
        "rank",
        "id",
        "title",
        "authors",
        "year",
        "categories",
        "score",
        "url",
        "pdf_url",
        "doi",
        "arxiv_doi",
        "journal_ref",
        "comments",
        "license",
        "submitted",
        "updated",
        "abstract",
    ]
    assert rows[1] == [
        "11",
        "2101.00001",
        RECORDS[0]["title"],
        "Jan Vlček; Erwin Schrödinger",
        "2021",
        "cs.DC cs.PF",
        "1.5",
        "https://arxiv.org/abs/2101.00001",
        "https://arxiv.org/pdf/2101.00001",
        "",
        "10.48550/arXiv.2101.00001",
        "",
        "",
        "",
        "",
        "",
        "",
    ]
    assert rows[2] == ["12", "t-abc", "A study of things", "", "", "", "1.5", *[""] * 10]
    # The whole abstract, last, after the columns that were there before it.
    with_abstract = to_csv([dict(COLLABORATION, score=2.0)])
    assert list(csv.reader(io.StringIO(with_abstract)))[1][-1] == "We port BERT.\nIt runs   fast."


def test_csv_cells_that_look_like_formulas_are_neutralised():
    rows = list(
        csv.reader(
            io.StringIO(
                to_csv(
                    [
                        {
                            "id": "x",
                            "title": '=HYPERLINK("http://e")',
                            "authors": ["@me"],
                            "year": 2020,
                            "categories": [],
                            "score": 1.0,
                            "url": "",
                        }
                    ]
                )
            )
        )
    )
    assert rows[1][2:4] == ['\'=HYPERLINK("http://e")', "'@me"]


COLLABORATION = {
    "id": "2301.04567",
    "title": "BERT for GPU kernels: SpMV in $O(n^2)$ with 3D tiles by Markov chains",
    "abstract": "We port BERT.\nIt runs   fast.",
    "authors": ["Anna Čapek", "Barnes and Noble Detector Collaboration"],
    "year": 2023,
    "categories": ["cs.DC", "cs.LG"],
    "url": "",
}


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("BERT for GPU kernels", "{BERT} for {GPU} kernels"),
        ("Fast SpMV on iPhone in 3D", "Fast {SpMV} on {iPhone} in {3D}"),
        ("A study of Markov chains", "A study of {Markov} chains"),  # a proper noun after the first word
        ("Gaussian processes", "Gaussian processes"),  # the first word: the style keeps its capital
        ("Sorting in $O(n^2)$ time, not $O(N)$", "Sorting in $O(n^2)$ time, not $O(N)$"),
        ("GPU-Accelerated CB-SpMV", "{GPU}-{Accelerated} {CB}-{SpMV}"),
        ("50% & {braces} #1 costs $5", "50\\% \\& \\{braces\\} \\#1 costs \\$5"),
        ("ŁUKASZ and ČR", "{{\\L}UKASZ} and {{\\v{C}R}}"),
    ],
)
def test_bibtex_titles_protect_inner_capitals_and_keep_math(title, expected):
    assert bibtex_title(title) == expected


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Q&A for C# and C++ in O(n^2) time", "{Q\\&A} for {C\\#} and {C++} in {O(n{\\textasciicircum}2)} time"),
        ("TCP/IP (Markov) models: Q&A.", "{TCP/IP} ({Markov}) models: {Q\\&A}."),
    ],
)
def test_bibtex_titles_brace_words_with_capitals_and_symbols(title, expected):
    assert bibtex_title(title) == expected


@pytest.mark.parametrize(
    ("author", "key"),
    [
        ("Kari Brønholt", "bronholt2021measuring"),
        ("Łukasz Ærø", "aero2021measuring"),
        ("ATLAS Collaboration", "atlas2021measuring"),
        ("The LIGO Scientific Collaboration", "ligo2021measuring"),
        ("Bo Okafor Jr.", "okafor2021measuring"),
    ],
)
def test_citation_keys_are_ascii_and_name_a_group_by_its_own_word(author, key):
    assert citation_key({"authors": [author], "year": 2021, "title": "Measuring things"}) == key


def test_bibtex_reads_back_in_pybtex_with_suffixes_as_lineage_and_symbols_protected():
    from pybtex.backends.plaintext import Backend
    from pybtex.database import parse_string
    from pybtex.style.formatting.plain import Style

    record = {
        "id": "2101.00001",
        "title": "Q&A and C# in O(n^2) time",
        "year": 2021,
        "categories": ["cs.DC"],
        "authors": ["Bo Okafor Jr.", "ATLAS Collaboration", "Bo van Okafor III", "Kari Brønholt"],
        "url": "",
    }
    database = parse_string(to_bibtex([record]), "bibtex")
    entry = database.entries["okafor2021time"]
    assert [(p.first_names, p.prelast_names, p.last_names, p.lineage_names) for p in entry.persons["author"]] == [
        (["Bo"], [], ["Okafor"], ["Jr."]),
        ([], [], ["{ATLAS Collaboration}"], []),
        (["Bo"], ["van"], ["Okafor"], ["III"]),
        (["Kari"], [], ["Br{\\o}nholt"], []),
    ]
    shown = next(Style().format_entries(database.entries.values())).text.render(Backend())
    assert shown.startswith(
        "Bo Okafor, Jr., ATLAS Collaboration, Bo van Okafor, III, and Kari Brønholt. Q&A and C# in O(n"
    )  # the style lowercases no protected word


def test_a_collaboration_holding_and_is_one_braced_name():
    assert bibtex_author("Barnes and Noble Detector Collaboration") == "{Barnes and Noble Detector Collaboration}"
    assert bibtex_author("ATLAS AND CMS Collaborations") == "{ATLAS AND CMS Collaborations}"
    assert bibtex_author("Alexander Andersen") == "Alexander Andersen"
    assert bibtex_author("Jan Vlček") == "Jan Vl\\v{c}ek"
    assert bibtex_author("ATLAS Collaboration") == "{ATLAS Collaboration}"
    assert bibtex_author("Bo Okafor Jr.") == "Okafor, Jr., Bo"
    assert bibtex_author("Li Xi") == "Li Xi"


def test_bibtex_entry_is_written_exactly():
    assert to_bibtex([COLLABORATION]) == (
        "@misc{capek2023bert,\n"
        "\ttitle = {{BERT} for {GPU} kernels: {SpMV} in $O(n^2)$ with {3D} tiles by {Markov} chains},\n"
        "\tauthor = {Anna \\v{C}apek and {Barnes and Noble Detector Collaboration}},\n"
        "\tyear = {2023},\n"
        "\teprint = {2301.04567},\n"
        "\tarchivePrefix = {arXiv},\n"
        "\tprimaryClass = {cs.DC},\n"
        "\tdoi = {10.48550/arXiv.2301.04567},\n"
        "\turl = {https://arxiv.org/abs/2301.04567}\n"
        "}\n"
    )


def test_bibtex_round_trip_gives_back_titles_and_authors():
    from pylatexenc.latex2text import LatexNodes2Text

    records = [COLLABORATION, *RECORDS]
    text = to_bibtex(records)
    # Names split first (a braced "and" does not split), then each decoded.
    names = bibtexparser.parse_string(text, append_middleware=[SeparateCoAuthors()])
    assert names.failed_blocks == []
    decode = LatexNodes2Text().latex_to_text
    assert [[decode(name) for name in e["author"]] if "author" in e else [] for e in names.entries] == [
        ["Anna Čapek", "Barnes and Noble Detector Collaboration"],
        ["Jan Vlček", "Erwin Schrödinger"],
        [],
        ["Jan Vlček"],
    ]
    # Decoding drops the protecting braces and keeps math as written.
    titles = bibtexparser.parse_string(text, append_middleware=[LatexDecodingMiddleware()])
    assert [e["title"] for e in titles.entries] == [r["title"] for r in records]


@pytest.mark.parametrize(
    ("name", "written"),
    [
        ("Depei Qian", "Qian, Depei"),
        ("Guy L. Steele Jr.", "Steele, Guy L., Jr."),
        ("Ludwig van Beethoven", "van Beethoven, Ludwig"),
        ("Qian, Depei", "Qian, Depei"),
        ("ATLAS Collaboration", "ATLAS Collaboration"),
        ("Plato", "Plato"),
    ],
)
def test_ris_names_are_surname_given_suffix(name, written):
    assert ris_author(name) == written


def test_ris_reads_back_in_a_ris_reader():
    import rispy

    record = {
        "id": "2101.00001",
        "title": "Q&A for C# in O(n^2) time",
        "year": 2021,
        "categories": ["cs.DC"],
        "authors": ["Bo Okafor Jr.", "ATLAS Collaboration", "Kari Brønholt"],
        "url": "",
        "submitted": "2021-01-04",
        "abstract": "Line one.\nLine two.",
        "journal_ref": "Phys. Rev. B 1 (2021)",
    }
    [entry] = rispy.loads(to_ris([record]))
    assert (entry["type_of_reference"], entry["title"], entry["year"]) == ("UNPB", record["title"], "2021")
    assert entry["authors"] == ["Okafor, Bo, Jr.", "ATLAS Collaboration", "Brønholt, Kari"]
    assert (entry["abstract"], entry["doi"]) == ("Line one. Line two.", "10.48550/arXiv.2101.00001")
    assert entry["urls"] == ["https://arxiv.org/abs/2101.00001"] and entry["keywords"] == ["cs.DC"]


def test_ris_record_is_written_exactly_with_crlf():
    second = {
        "id": "t-0123456789ab",
        "title": "Plain",
        "authors": [],
        "year": None,
        "categories": [],
        "url": "https://example.org/p",
        "abstract": "",
    }
    assert to_ris([COLLABORATION, second]) == (
        "TY  - UNPB\r\n"
        "ID  - 2301.04567\r\n"
        "TI  - BERT for GPU kernels: SpMV in $O(n^2)$ with 3D tiles by Markov chains\r\n"
        "AU  - Čapek, Anna\r\n"
        "AU  - Barnes and Noble Detector Collaboration\r\n"
        "PY  - 2023\r\n"
        "AB  - We port BERT. It runs fast.\r\n"
        "KW  - cs.DC\r\n"
        "KW  - cs.LG\r\n"
        "DO  - 10.48550/arXiv.2301.04567\r\n"
        "UR  - https://arxiv.org/abs/2301.04567\r\n"
        "L1  - https://arxiv.org/pdf/2301.04567\r\n"
        "ER  - \r\n"
        "TY  - GEN\r\n"
        "ID  - t-0123456789ab\r\n"
        "TI  - Plain\r\n"
        "UR  - https://example.org/p\r\n"
        "ER  - \r\n"
    )


def test_json_lines_have_the_record_keys_in_order():
    lines = to_jsonl([dict(COLLABORATION, score=2.5, snippet="x"), RECORDS[1]]).splitlines()
    assert [json.loads(line) for line in lines] == [
        {
            "id": "2301.04567",
            "title": COLLABORATION["title"],
            "abstract": "We port BERT.\nIt runs   fast.",
            "authors": COLLABORATION["authors"],
            "year": 2023,
            "categories": ["cs.DC", "cs.LG"],
            "url": "https://arxiv.org/abs/2301.04567",
            "pdf_url": "https://arxiv.org/pdf/2301.04567",
            "doi": "",
            "arxiv_doi": "10.48550/arXiv.2301.04567",
            "journal_ref": "",
            "comments": "",
            "license": "",
            "submitted": None,
            "updated": None,
            "versions": [],
        },
        {
            "id": "t-abc",
            "title": "A study of things",
            "abstract": "",
            "authors": [],
            "year": None,
            "categories": [],
            "url": "",
            "pdf_url": "",
            "doi": "",
            "arxiv_doi": "",
            "journal_ref": "",
            "comments": "",
            "license": "",
            "submitted": None,
            "updated": None,
            "versions": [],
        },
    ]
    assert lines[0].startswith('{"id": "2301.04567", "title": "BERT for GPU kernels')
    assert "Čapek" in lines[0]  # UTF-8 as is, not \u escapes


def test_render_names_each_format_and_refuses_others():
    assert render("ris", [COLLABORATION]) == to_ris([COLLABORATION])
    assert render("csv", RECORDS, first_rank=3).splitlines()[1].startswith("3,2101.00001,")
    with pytest.raises(KeyError):
        render("xml", RECORDS)


PUBLISHED = {
    "id": "0704.0001",
    "title": "Prompt diphoton production",
    "authors": ["C. Balázs"],
    "year": 2007,
    "categories": ["hep-ph"],
    "url": "",
    "abstract": "",
    "doi": "10.1103/PhysRevD.76.013009 10.1103/PhysRevD.76.099901",
    "journal_ref": "Phys.Rev.D76:013009,2007",
    "comments": "37 pages, 15 figures",
    "license": "",
    "pdf_url": "https://arxiv.org/pdf/0704.0001v2",
}


def test_a_published_paper_exports_its_doi_journal_reference_and_links():
    assert to_bibtex([PUBLISHED]) == (
        "@misc{balazs2007prompt,\n"
        "\ttitle = {Prompt diphoton production},\n"
        "\tauthor = {C. Bal\\'azs},\n"
        "\tyear = {2007},\n"
        "\teprint = {0704.0001},\n"
        "\tarchivePrefix = {arXiv},\n"
        "\tprimaryClass = {hep-ph},\n"
        "\tdoi = {10.1103/PhysRevD.76.013009},\n"
        "\tnote = {Phys.Rev.D76:013009,2007},\n"
        "\turl = {https://arxiv.org/abs/0704.0001}\n"
        "}\n"
    )
    assert to_ris([PUBLISHED]).split("\r\n")[-7:] == [
        "KW  - hep-ph",
        "DO  - 10.1103/PhysRevD.76.013009",
        "JO  - Phys.Rev.D76:013009,2007",
        "UR  - https://arxiv.org/abs/0704.0001",
        "L1  - https://arxiv.org/pdf/0704.0001v2",
        "ER  - ",
        "",
    ]
    row = json.loads(to_jsonl([PUBLISHED]))
    assert {key: row[key] for key in ("url", "pdf_url", "doi", "arxiv_doi", "journal_ref", "comments")} == {
        "url": "https://arxiv.org/abs/0704.0001",
        "pdf_url": "https://arxiv.org/pdf/0704.0001v2",
        "doi": "10.1103/PhysRevD.76.013009 10.1103/PhysRevD.76.099901",
        "arxiv_doi": "10.48550/arXiv.0704.0001",
        "journal_ref": "Phys.Rev.D76:013009,2007",
        "comments": "37 pages, 15 figures",
    }
    assert list(csv.reader(io.StringIO(to_csv([PUBLISHED]))))[1][7:] == [
        "https://arxiv.org/abs/0704.0001",
        "https://arxiv.org/pdf/0704.0001v2",
        "10.1103/PhysRevD.76.013009 10.1103/PhysRevD.76.099901",
        "10.48550/arXiv.0704.0001",
        "Phys.Rev.D76:013009,2007",
        "37 pages, 15 figures",
        "",
        "",
        "",
        PUBLISHED.get("abstract", ""),
    ]


NAMED = {
    "id": "2101.00009",
    "title": "Gaussian processes for Bayesian optimisation of GPU kernels in PyTorch",
    "year": 2021,
    "categories": ["cs.LG"],
    "authors": [
        "Walter Van Assche",
        "Charles de la Vallée Poussin",
        "Guy L. Steele Jr.",
        "John Smith III",
        "Martin Luther King, Jr.",
    ],
    "url": "",
}


def test_bibtex_keeps_proper_nouns_and_acronyms_and_names_read_back_in_strict_pybtex():
    from pybtex import errors
    from pybtex.backends.plaintext import Backend
    from pybtex.database import parse_string
    from pybtex.style.formatting.unsrt import Style
    from pylatexenc.latex2text import LatexNodes2Text

    text = to_bibtex([NAMED])
    assert ",," not in text  # no doubled comma before "Jr."
    errors.set_strict_mode(True)
    try:
        database = parse_string(text, "bibtex")
    finally:
        errors.set_strict_mode(False)
    [entry] = database.entries.values()
    decode = LatexNodes2Text().latex_to_text
    people = [
        tuple(
            " ".join(decode(n) for n in part)
            for part in (p.first_names + p.middle_names, p.prelast_names, p.last_names, p.lineage_names)
        )
        for p in entry.persons["author"]
    ]
    assert people == [
        ("Walter", "", "Van Assche", ""),
        ("Charles", "de la", "Vallée Poussin", ""),
        ("Guy L.", "", "Steele", "Jr."),
        ("John", "", "Smith", "III"),
        ("Martin Luther", "", "King", "Jr."),
    ]
    # The unsrt style lower-cases the title but for its first letter and what is braced.
    shown = next(Style().format_entries([entry])).text.render(Backend())
    assert "Gaussian processes for Bayesian optimisation of GPU kernels in PyTorch." in shown
    plain = dict(NAMED, title="Gaussian processes for bayesian optimisation")
    assert "Gaussian processes for bayesian optimisation." in next(
        Style().format_entries(parse_string(to_bibtex([plain]), "bibtex").entries.values())
    ).text.render(Backend())


def test_ris_names_with_particles_and_suffixes_read_back_in_rispy():
    import rispy

    [entry] = rispy.loads(to_ris([NAMED]))
    assert entry["authors"] == [
        "Van Assche, Walter",
        "de la Vallée Poussin, Charles",
        "Steele, Guy L., Jr.",
        "Smith, John, III",
        "King, Martin Luther, Jr.",
    ]
