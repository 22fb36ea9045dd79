"""Filters: parsing of year, author and category values, and which documents they keep.

Expected document sets are written out by hand from tests/fixtures/facets.jsonl.
"""

import json
from pathlib import Path

import pytest

from searchengine import QueryError, build_index, open_index
from searchengine.filters import (
    author_keys,
    build_filters,
    category_keys,
    parse_author,
    parse_category,
    parse_first_author,
    parse_year,
)

FIXTURE = Path(__file__).parent / "fixtures" / "facets.jsonl"
ALL_IDS = {f"f{n:02d}" for n in range(1, 16)}


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    index_dir = tmp_path_factory.mktemp("filters-index")
    build_index([FIXTURE], index_dir)
    opened = open_index(index_dir)
    yield opened
    opened.close()


def ids(results):
    return {hit.id for hit in results.hits}


def browse(index, **options):
    return ids(index.search("", limit=100, **options))


@pytest.mark.parametrize(
    ("text", "low", "high"),
    [
        ("2023", 2023, 2023),
        (2023, 2023, 2023),
        ("2023-2025", 2023, 2025),
        (" 2023 - 2025 ", 2023, 2025),
        ("2023–2025", 2023, 2025),
        ("2023-", 2023, None),
        ("-2020", None, 2020),
        (">=2023", 2023, None),
        (">2023", 2024, None),
        ("<=2020", None, 2020),
        ("<2021", None, 2020),
        ("2024-2024", 2024, 2024),
    ],
)
def test_year_forms(text, low, high):
    parsed = parse_year(text)
    assert (parsed.low, parsed.high) == (low, high)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("2025-2023", "year filter '2025-2023' is reversed (did you mean 2023-2025?)"),
        ("20x", "year filter '20x' is not a year or a range"),
        ("2023-2024-2025", "year filter '2023-2024-2025' is not a year or a range"),
        ("", "year filter '' is not a year or a range"),
        ("23", "year filter '23' is not a year or a range"),
        ("=>2023", "year filter '=>2023' is not a year or a range"),
    ],
)
def test_bad_year_is_an_error_naming_it(text, message):
    with pytest.raises(QueryError) as caught:
        parse_year(text)
    assert str(caught.value).startswith(message)


def test_author_keys_fold_case_and_accents():
    assert author_keys(["Ana María Pérez"]) == ["perez", "perez/a", "perez/ana", "^perez", "^perez/a", "^perez/ana"]
    assert author_keys(["Qian, Depei", "D. Qian"]) == [
        "qian",
        "qian/d",
        "qian/depei",
        "^qian",
        "^qian/d",
        "^qian/depei",
        "qian/d.",
    ]
    assert author_keys(["Wang", "Moreno D'Incà"]) == ["wang", "^wang", "dinca", "dinca/m", "dinca/moreno"]
    assert author_keys(["  ", "Plato"]) == ["plato"]
    assert author_keys(["Wang", "Guy L. Steele Jr."]) == ["wang", "^wang", "steele", "steele/g", "steele/guy"]


def test_author_keys_mark_a_name_given_only_by_its_initial():
    assert author_keys(["X", "T. Okafor"]) == ["x", "^x", "okafor", "okafor/t", "okafor/t."]
    assert author_keys(["X", "Okafor, TJ"]) == ["x", "^x", "okafor", "okafor/t", "okafor/t."]
    assert author_keys(["X", "JRR Tolkien"]) == ["x", "^x", "tolkien", "tolkien/j", "tolkien/j."]
    assert author_keys(["X", "Okafor, T."]) == ["x", "^x", "okafor", "okafor/t", "okafor/t."]
    assert author_keys(["X", "Tomas Okafor"]) == ["x", "^x", "okafor", "okafor/t", "okafor/tomas"]


def test_author_keys_of_surnames_with_particles():
    keys = ["vanderholtbrink", "vanderholtbrink/j", "vanderholtbrink/j.", "holtbrink", "holtbrink/j", "holtbrink/j."]
    for name in (
        "J. van der Holt Brink",
        "Holt Brink, J. van der",
        "van der Holt Brink, J.",
        "J. Van der Holt-Brink",
        "Van Der Holt Brink, J",
    ):
        assert author_keys(["X", name])[2:] == keys, name
    # Without a comma or particle, only the last word is known to be the surname.
    assert author_keys(["X", "J. Vanderholt Brink"])[2:] == ["brink", "brink/j", "brink/j."]
    assert author_keys(["X", "Vanderholt Brink, J."])[2:] == [
        "vanderholtbrink",
        "vanderholtbrink/j",
        "vanderholtbrink/j.",
    ]
    # A particle leading the name is a given name unless lower case or followed by another particle.
    assert author_keys(["X", "Van Nguyen"])[2:] == ["nguyen", "nguyen/v", "nguyen/van"]
    assert author_keys(["X", "Le Chen"])[2:] == ["chen", "chen/l", "chen/le"]
    assert author_keys(["X", "Thanh Do"])[2:] == ["do", "do/t", "do/thanh"]
    assert author_keys(["X", "Thanh Van Nguyen"])[2:] == [
        "vannguyen",
        "vannguyen/t",
        "vannguyen/thanh",
        "nguyen",
        "nguyen/t",
        "nguyen/thanh",
    ]


def test_author_keys_spell_umlauts_both_ways():
    assert author_keys(["X", "Jörg Müller"])[2:] == [
        "muller",
        "muller/j",
        "muller/jorg",
        "mueller",
        "mueller/j",
        "mueller/joerg",
    ]
    assert author_keys(["X", "Muller, J."])[2:] == ["muller", "muller/j", "muller/j."]
    assert author_keys(["X", "Mueller, J."])[2:] == ["mueller", "mueller/j", "mueller/j."]
    assert author_keys(["X", "Søren Kierkegaard"])[2:] == [
        "kierkegaard",
        "kierkegaard/s",
        "kierkegaard/soren",
        "kierkegaard/soeren",
    ]
    assert author_keys(["X", "Łukasz Wałęsa"])[2:] == ["walesa", "walesa/l", "walesa/lukasz"]


@pytest.mark.parametrize(
    ("text", "keys"),
    [
        ("Depei Qian", ("qian/depei", "qian/d.")),
        ("Qian, Depei", ("qian/depei", "qian/d.")),
        ("QIAN, depei", ("qian/depei", "qian/d.")),
        ("Qian, D.", ("qian/d",)),
        ("D. Qian", ("qian/d",)),
        ("Qian", ("qian",)),
        ("ana maria perez", ("perez/ana", "perez/a.")),
        ("Zoe Aberg", ("aberg/zoe", "aberg/z.")),
        ("Qian_D", ("qian/d",)),
        ("del_maestro_a", ("delmaestro/a",)),
        ("Del_Maestro", ("delmaestro",)),
        ("^Qian", ("^qian",)),
        ("^Qian, D", ("^qian/d",)),
        ("^ Depei Qian", ("^qian/depei", "^qian/d.")),
        ("van der Holt Brink", ("vanderholtbrink",)),
        ("Van der Holt Brink", ("vanderholtbrink",)),
        ("Holt Brink, J. van der", ("vanderholtbrink/j",)),
        ("J. van der Holt Brink", ("vanderholtbrink/j",)),
        ("van Dijk", ("vandijk",)),
        ("le chen", ("lechen", "chen/le", "chen/l.")),
        ("Van Nguyen", ("vannguyen", "nguyen/van", "nguyen/v.")),
        ("Müller", ("muller", "mueller")),
        ("muller", ("muller",)),
        ("Mueller", ("mueller",)),
        ("Jörg Müller", ("muller/jorg", "muller/j.", "mueller/joerg", "mueller/j.")),
    ],
)
def test_author_forms(text, keys):
    assert parse_author(text).keys == keys


def test_first_author_forms():
    assert parse_first_author("Qian, D").keys == ("^qian/d",)
    assert parse_first_author("^Qian, D").keys == ("^qian/d",)
    assert parse_first_author("Qian").first and not parse_author("Qian").first
    with pytest.raises(QueryError, match=r"author filter '\^' holds no name"):
        parse_first_author("")


def test_author_without_a_name_is_an_error():
    with pytest.raises(QueryError, match=r"author filter '\.,' holds no name"):
        parse_author(".,")


def test_a_shared_first_name_never_matches():
    assert not parse_author("Depei Qian").matches("Depei Wang")
    assert not parse_author("Qian, D.").matches("Depei Wang")
    assert not parse_author("Depei Qian").matches("Dong Qian")
    assert parse_author("Qian, D.").matches("Dong Qian")
    assert parse_author("Depei Qian").matches("Qian, Depei")


@pytest.mark.parametrize(
    ("text", "name", "expected"),
    [
        ("Tomas Okafor", "T. Okafor", True),
        ("Tomas Okafor", "Okafor, T.", True),
        ("Okafor, Tomas", "T. Okafor", True),
        ("Tomas Okafor", "Tomas Okafor", True),
        ("Tomas Okafor", "Teresa Okafor", False),
        ("Tomas Okafor", "Okafor", False),
        # initials run together, with or without dots
        ("Tomas Okafor", "Okafor, TJ", True),
        ("Tomas Okafor", "TJ Okafor", True),
        ("Tomas Okafor", "Okafor, T.J.", True),
        ("Tomas Okafor", "Okafor, T. J.", True),
        ("Teresa Okafor", "Okafor, TJ", True),  # the record gives only the initial: either may be meant
        ("Okafor, TJ", "Tomas J. Okafor", True),
        ("Okafor, TJ", "Jan Okafor", False),
        ("Tomas Okafor", "OKAFOR, TJ", False),  # a name all in capitals: TJ may be a name
        ("T. Okafor", "Teresa Okafor", True),
        ("T. Okafor", "Tomas Okafor", True),
        ("Okafor", "T. Okafor", True),
        ("van der Holt Brink", "J. van der Holt Brink", True),
        ("van der Holt Brink", "Holt Brink, J. van der", True),
        ("Holt Brink, J.", "J. van der Holt Brink", True),
        ("Vanderholt Brink, Jan", "J. van der Holt Brink", True),
        ("J. van der Holt Brink", "Jan Brink", False),
        ("van der Holt Brink", "Holt Brink", False),
        ("muller", "Jörg Müller", True),
        ("mueller", "Jörg Müller", True),
        ("Müller", "Muller, J.", True),
        ("Müller", "J. Mueller", True),
        ("muller", "J. Mueller", False),
        ("mueller", "J. Muller", False),
        ("Manuel Ruiz", "Manuel Ruiz", True),
        ("Ruiz, Manul", "Manuel Ruiz", False),
        ("le chen", "Le Chen", True),
        ("Chen, L.", "Le Chen", True),
        ("Qian_D", "Depei Qian", True),
        ("^Qian", "Depei Qian", True),
    ],
)
def test_author_name_matching(text, name, expected):
    assert parse_author(text).matches(name) is expected


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("cs.DC", "cs.dc"),
        ("CS.dc", "cs.dc"),
        ("cs", "cs.*"),
        ("cs.*", "cs.*"),
        ("hep-th", "hep-th.*"),
        ("astro-ph.CO", "astro-ph.co"),
        ("q-bio", "q-bio.*"),
    ],
)
def test_category_forms(text, key):
    assert parse_category(text).key == key


@pytest.mark.parametrize("text", ["cs dc", "cs.", "*", "cs.DC!", ""])
def test_bad_category_is_an_error_naming_it(text):
    with pytest.raises(QueryError) as caught:
        parse_category(text)
    assert str(caught.value) == f"category filter {text.strip()!r} is not a category code (like cs.DC, cs or cs.*)"


def test_category_keys_mark_the_primary():
    assert category_keys(["cs.DC", "math.NA"]) == ["cs.dc", "^cs.dc", "cs.*", "^cs.*", "math.na", "math.*"]
    assert category_keys([]) == []


# Documents kept, by hand from the fixture (years: f01 2023, f02 2024, f03 none,
# f04 2025, f05 2022, f06 2025, f07 none, f08 2023, f09 2026, f10 2026, f11 2024,
# f12 none, f13 2021, f14 2024, f15 none).
@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"year": "2023"}, {"f01", "f08"}),
        ({"year": "2023-2024"}, {"f01", "f08", "f02", "f11", "f14"}),
        ({"year": "2025-"}, {"f04", "f06", "f09", "f10"}),
        ({"year": "-2022"}, {"f05", "f13"}),
        ({"year": ["2022", "2026"]}, {"f05", "f09", "f10"}),
        # f11 gives only "D. Qian", who may be Depei Qian.
        ({"author": "Depei Qian"}, {"f01", "f03", "f09", "f11"}),
        ({"author": "qian, depei"}, {"f01", "f03", "f09", "f11"}),
        ({"author": "Qian, D."}, {"f01", "f02", "f03", "f06", "f09", "f11"}),
        ({"author": "Qian"}, {"f01", "f02", "f03", "f06", "f09", "f11"}),
        ({"author": "Depei Wang"}, {"f04"}),
        ({"author": "Ana Perez"}, {"f01", "f05", "f12"}),
        ({"author": "ZOE ÅBERG"}, {"f08"}),
        ({"author": ["Longbin Zeng", "Edward Witten"]}, {"f09", "f10", "f05"}),
        ({"category": "cs.DC"}, {"f01", "f10"}),
        ({"category": "CS.lg"}, {"f01", "f02", "f06"}),
        ({"category": "cs"}, {"f01", "f02", "f03", "f06", "f08", "f09", "f10", "f11"}),
        ({"category": "cs.*"}, {"f01", "f02", "f03", "f06", "f08", "f09", "f10", "f11"}),
        ({"category": "cs", "primary_only": True}, {"f01", "f02", "f06", "f08", "f10", "f11"}),
        ({"category": "cs.LG", "primary_only": True}, {"f02"}),
        ({"category": "hep-th"}, {"f05"}),
        ({"category": ["astro-ph", "q-bio.NC"]}, {"f04", "f12", "f09"}),
        ({"category": "cs", "year": "2024-"}, {"f02", "f06", "f09", "f10", "f11"}),
        ({"category": "cs", "author": "Qian, D.", "year": "-2024"}, {"f01", "f02", "f11"}),
        ({"year": "2030-"}, set()),
        ({"year": "<0000"}, set()),
        ({"year": ["<0000", "2026"]}, {"f09", "f10"}),
        ({"year": "<=0000"}, set()),
    ],
)
def test_filters_keep_exactly_these_documents(index, options, expected):
    assert browse(index, **options) == expected


def test_a_year_filter_never_keeps_a_paper_without_a_year(index):
    without_year = {"f03", "f07", "f12", "f15"}
    assert not browse(index, year="1000-9999") & without_year
    assert browse(index, year="1000-9999") == ALL_IDS - without_year


def test_filters_narrow_a_text_query(index):
    assert ids(index.search("sparse", limit=100)) == {"f01", "f03", "f06", "f07", "f08", "f10", "f12"}
    assert ids(index.search("sparse", year="2023-2025", category="cs", limit=100)) == {"f01", "f06", "f08"}


@pytest.mark.parametrize(
    ("query", "text", "options"),
    [
        ("sparse year:2023-2025", "sparse", {"year": "2023-2025"}),
        ("year:>=2024 sparse", "sparse", {"year": "2024-"}),
        ('sparse author:"Qian, D."', "sparse", {"author": "Qian, D."}),
        ("sparse author:Qian category:CS", "sparse", {"author": "Qian", "category": "cs"}),
        ("sparse category:cs.DC category:math.NA", "sparse", {"category": ["cs.DC", "math.NA"]}),
        ("year:2026", "", {"year": "2026"}),
    ],
)
def test_query_syntax_means_the_same_as_the_options(index, query, text, options):
    by_syntax = index.search(query, limit=100)
    by_options = index.search(text, limit=100, **options)
    assert [h.id for h in by_syntax.hits] == [h.id for h in by_options.hits]
    assert by_syntax.total == by_options.total > 0


def test_a_year_bound_below_zero_matches_nothing_instead_of_failing(index):
    assert index.search("sparse year:<0000").total == 0
    assert index.search("sparse", year=["<0000", "-0000"]).total == 0


def test_query_syntax_and_options_combine_with_and(index):
    assert ids(index.search("sparse year:2023", category="math", limit=100)) == {"f08"}


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("sparse OR year:2023", "filter 'year:2023' cannot be combined with OR, NOT or parentheses"),
        ("NOT category:cs", "filter 'category:cs' cannot be combined with OR, NOT or parentheses"),
        ("(sparse year:2023)", "filter 'year:2023)' cannot be combined with OR, NOT or parentheses"),
        ("sparse year:2025-2023", "year filter '2025-2023' is reversed"),
        ("sparse category:cs!", "category filter 'cs!' is not a category code"),
    ],
)
def test_query_syntax_errors_name_the_filter(index, query, message):
    with pytest.raises(QueryError) as caught:
        index.search(query)
    assert str(caught.value).startswith(message)


def test_bad_option_values_are_query_errors(index):
    with pytest.raises(QueryError, match="year filter '2026-2020' is reversed"):
        index.search("", year="2026-2020")
    with pytest.raises(QueryError, match="unknown sort 'random'"):
        index.search("sparse", sort="random")
    with pytest.raises(QueryError, match="unknown facet 'venue'"):
        index.search("sparse", facets="year,venue")


def test_empty_query_without_filters_is_still_an_error(index):
    with pytest.raises(QueryError, match="the query is empty"):
        index.search("", primary_only=True)


def test_build_filters_accepts_single_values_and_lists():
    filters = build_filters(year=2024, author=["Depei Qian", "Qian, D."], category="cs")
    assert [f.low for f in filters.years] == [2024]
    assert [f.keys for f in filters.authors] == [("qian/depei", "qian/d."), ("qian/d",)]
    assert [f.key for f in filters.categories] == ["cs.*"]


def test_fixture_is_what_the_expectations_assume():
    records = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
    assert {r["id"] for r in records} == ALL_IDS
    assert {r["id"] for r in records if "year" not in r} == {"f03", "f07", "f12", "f15"}


def test_query_syntax_aliases(index):
    assert ids(index.search('au:"Qian, D." cat:math', limit=100)) == {"f03"}


def test_a_full_first_name_finds_a_record_with_its_initials_run_together(tmp_path):
    source = tmp_path / "okafor.jsonl"
    source.write_text(
        "".join(
            json.dumps(r) + "\n"
            for r in [
                {"id": "t-000000000001", "title": "Qubit routing", "abstract": "routing", "authors": ["Okafor, TJ"]},
                {"id": "t-000000000002", "title": "Qubit mapping", "abstract": "mapping", "authors": ["Teresa Okafor"]},
            ]
        ),
        encoding="utf-8",
    )
    build_index([source], tmp_path / "ix")
    found = open_index(tmp_path / "ix").search("qubit", author="Tomas Okafor")
    assert [hit.id for hit in found.hits] == ["t-000000000001"]
