"""Facet counts, sorting and paging over the whole result set.

Expected counts come from a brute-force count over the records in the test
(the bundled corpus, and tests/fixtures/facets.jsonl read with ``json``),
never from the code under test; a few are also written out literally.
"""

import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from searchengine import build_index, open_index
from searchengine.cli import main

from conftest import contains_word, corpus_records, write

FIXTURE = Path(__file__).parent / "fixtures" / "facets.jsonl"
SPARSE_IDS = {"f01", "f03", "f06", "f07", "f08", "f10", "f12"}


def fixture_records() -> list[dict]:
    """The fixture as plain dicts (``year`` None when missing), each author
    entry read as the readers read it (``Qian, Depei`` is ``Depei Qian``)."""
    from searchengine.records import split_authors

    records = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
    for record in records:
        record.setdefault("year", None)
        record["authors"] = [name for entry in record.get("authors", []) for name in split_authors(entry)]
    return records


@pytest.fixture(scope="module")
def fixture_index_dir(tmp_path_factory):
    index_dir = tmp_path_factory.mktemp("facets-index")
    build_index([FIXTURE], index_dir)
    return index_dir


@pytest.fixture(scope="module")
def index(fixture_index_dir):
    opened = open_index(fixture_index_dir)
    yield opened
    opened.close()


def brute_facets(hits: list[dict], size: int = 1000, primary_only: bool = False) -> dict:
    """Facet lists computed directly from records, in the documented order."""

    def ranked_by_count(counter: Counter, unknown: int) -> list[dict]:
        ordered = sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[:size]
        listed = [{"value": v, "count": c, "selected": False} for v, c in ordered]
        return listed + ([{"value": None, "count": unknown, "selected": False}] if unknown else [])

    years = Counter(h["year"] for h in hits if h["year"] is not None)
    year_list = [{"value": y, "count": years[y], "selected": False} for y in sorted(years, reverse=True)[:size]]
    no_year = sum(1 for h in hits if h["year"] is None)
    if no_year:
        year_list.append({"value": None, "count": no_year, "selected": False})
    authors = Counter(a for h in hits for a in set(h["authors"]))
    if primary_only:
        categories = Counter(h["categories"][0] for h in hits if h["categories"])
    else:
        categories = Counter(c for h in hits for c in set(h["categories"]))
    return {
        "year": year_list,
        "author": ranked_by_count(authors, sum(1 for h in hits if not h["authors"])),
        "category": ranked_by_count(categories, sum(1 for h in hits if not h["categories"])),
    }


def as_dicts(records) -> list[dict]:
    return [
        {"id": r.id, "year": r.year, "authors": r.authors, "categories": r.categories, "title": r.title}
        for r in records
    ]


def test_corpus_facets_count_every_hit_not_only_the_page(corpus_index):
    hits = as_dicts(r for r in corpus_records() if contains_word(r, "gpus?"))
    results = corpus_index.search("GPU", limit=1, facets="year,author,category", facet_size=1000)
    assert results.total == len(hits) == 12
    assert len(results.hits) == 1
    assert results.facets == brute_facets(hits)
    assert results.facets["year"][0] == {"value": 2026, "count": 5, "selected": False}


def test_corpus_browse_by_year_counts_every_document(corpus_index):
    everything = as_dicts(corpus_records())
    results = corpus_index.search("", year="2000-", facets=["year", "author", "category"], facet_size=1000)
    expected = brute_facets(everything)
    for value in expected["year"]:
        value["selected"] = True  # every year lies in 2000-
    assert results.total == 24
    assert results.facets == expected
    assert [(v["value"], v["count"]) for v in results.facets["year"]] == [
        (2026, 7),
        (2025, 6),
        (2024, 4),
        (2023, 5),
        (2022, 2),
    ]


def test_browsing_a_year_lists_every_paper_of_that_year_newest_first(corpus_index):
    expected = {r.id for r in corpus_records() if r.year == 2026}
    results = corpus_index.search("", year="2026", limit=100, facets="year")
    assert results.total == len(expected) == 7
    assert {h.id for h in results.hits} == expected
    # The year facet ignores its own filter, so the other years stay visible as choices.
    years = Counter(r.year for r in corpus_records())
    assert results.facets["year"] == [
        {"value": y, "count": years[y], "selected": y == 2026} for y in sorted(years, reverse=True)
    ]
    assert results.facets["year"][0] == {"value": 2026, "count": 7, "selected": True}


def test_fixture_facets_match_brute_force_with_unknown_buckets(index):
    hits = [r for r in fixture_records() if r["id"] in SPARSE_IDS]
    results = index.search("sparse", facets="year,author,category", facet_size=1000)
    assert {h.id for h in results.hits} == SPARSE_IDS
    assert results.facets == brute_facets(hits)
    assert results.facets["year"] == [
        {"value": 2026, "count": 1, "selected": False},
        {"value": 2025, "count": 1, "selected": False},
        {"value": 2023, "count": 2, "selected": False},
        {"value": None, "count": 3, "selected": False},
    ]
    assert results.facets["author"][-1] == {"value": None, "count": 1, "selected": False}
    # "Qian, Depei" in one record and "Depei Qian" in another are one name, read as "First Last".
    assert [v["value"] for v in results.facets["author"][:3]] == ["Depei Qian", "Ana María Pérez", "Ana Pérez"]
    assert results.facets["author"][0]["count"] == 2


def test_multi_valued_fields_count_each_value_once_per_document(index):
    results = index.search("", year="2025", facets="author,category")
    # f04: Depei Wang, astro-ph.CO; f06: Yu Wang, Yan Wang, Dong Qian, cs.CL cs.AI cs.LG
    assert results.facets["author"] == [
        {"value": v, "count": 1, "selected": False} for v in ["Depei Wang", "Dong Qian", "Yan Wang", "Yu Wang"]
    ]
    assert results.facets["category"] == [
        {"value": v, "count": 1, "selected": False} for v in ["astro-ph.CO", "cs.AI", "cs.CL", "cs.LG"]
    ]


def test_top_values_with_the_number_remaining(index):
    results = index.search("sparse", facets="category,author", facet_size=3)
    assert results.facets["category"] == [
        {"value": "cs.DC", "count": 2, "selected": False},
        {"value": "cs.LG", "count": 2, "selected": False},
        {"value": "astro-ph.CO", "count": 1, "selected": False},
        {"value": None, "count": 1, "selected": False},
    ]
    assert results.facets_remaining == {"category": 7, "author": 5}
    assert results.to_dict()["facets_remaining"] == {"category": 7, "author": 5}


def test_selected_values_are_marked(index):
    results = index.search("sparse", year="2023-2025", author="Qian, D.", category="cs", facets="year,author,category")
    # f01 (2023, Depei Qian + Ana María Pérez, cs.DC cs.LG) and f06 (2025, ..., Dong Qian, cs.CL cs.AI cs.LG)
    assert results.total == 2
    # Each facet counts the hits of every filter but its own.
    # Year: sparse, by Qian D., in cs -> f01 (2023), f06 (2025), f03 (no year, cs.MS).
    assert results.facets["year"] == [
        {"value": 2025, "count": 1, "selected": True},
        {"value": 2023, "count": 1, "selected": True},
        {"value": None, "count": 1, "selected": False},
    ]
    # Author: under an author filter, every filter counts (the co-authors of f01 and f06), the chosen names first.
    assert results.facets["author"] == [
        {"value": name, "count": 1, "selected": name in ("Depei Qian", "Dong Qian")}
        for name in ["Depei Qian", "Dong Qian", "Ana María Pérez", "Yan Wang", "Yu Wang"]
    ]
    # Category: sparse, 2023-2025, by Qian D. -> f01 and f06, all in cs.
    assert results.facets["category"] == [{"value": "cs.LG", "count": 2, "selected": True}] + [
        {"value": code, "count": 1, "selected": True} for code in ["cs.AI", "cs.CL", "cs.DC"]
    ]


def test_primary_only_counts_the_first_category(index):
    hits = [r for r in fixture_records() if r["id"] in SPARSE_IDS]
    results = index.search("sparse", facets="category", primary_only=True, facet_size=1000)
    assert results.facets["category"] == brute_facets(hits, primary_only=True)["category"]
    assert results.facets["category"][0] == {"value": "cs.DC", "count": 2, "selected": False}


def test_unknown_is_null_in_json(index):
    data = json.loads(json.dumps(index.search("sparse", facets="year").to_dict()))
    assert data["facets"]["year"][-1] == {"value": None, "count": 3, "selected": False}


def browse_all(index, sort, limit=100, page=1):
    return (
        index.search(
            "", category=["cs", "math", "q-bio", "astro-ph", "hep-th"], year=[], sort=sort, limit=limit, page=page
        )
        if sort
        else None
    )


def test_sort_newest_and_oldest(index):
    records = [r for r in fixture_records() if r["categories"]]  # f07 has no category
    known = [r for r in records if r["year"] is not None]
    unknown = [r for r in records if r["year"] is None]
    newest = [r["id"] for r in sorted(known, key=lambda r: (r["year"], r["id"]), reverse=True)] + sorted(
        (r["id"] for r in unknown), reverse=True
    )
    oldest = [r["id"] for r in sorted(known, key=lambda r: (r["year"], r["id"]))] + sorted(r["id"] for r in unknown)
    assert [h.id for h in browse_all(index, "newest").hits] == newest
    assert [h.id for h in browse_all(index, "oldest").hits] == oldest
    assert newest[:3] == ["f10", "f09", "f06"] and oldest[-1] == "f15"


def test_sort_by_title(index):
    records = [r for r in fixture_records() if r["categories"]]
    expected = [r["id"] for r in sorted(records, key=lambda r: (r["title"].casefold(), r["id"]))]
    assert [h.id for h in browse_all(index, "title").hits] == expected
    assert expected[:2] == ["f12", "f04"]


def test_a_listing_sort_alone_lists_every_record_with_facets(index):
    records = fixture_records()  # f07 too, which no category filter reaches
    known = [r for r in records if r["year"] is not None]
    newest = [r["id"] for r in sorted(known, key=lambda r: (r["year"], r["id"]), reverse=True)] + sorted(
        (r["id"] for r in records if r["year"] is None), reverse=True
    )
    results = index.search("", sort="newest", limit=100, facets="year,author,category", facet_size=1000)
    assert [h.id for h in results.hits] == newest
    assert results.total == index.doc_count == len(records) == 15
    assert results.facets == brute_facets(records)
    assert results.facets["year"][0] == {"value": 2026, "count": 2, "selected": False}
    assert results.facets["year"][-1] == {"value": None, "count": 4, "selected": False}  # f03, f07, f12, f15
    assert newest[:3] == ["f10", "f09", "f06"] and newest[-4:] == ["f15", "f12", "f07", "f03"]
    titles = [h.id for h in index.search("", sort="title", limit=100).hits]
    assert titles == [r["id"] for r in sorted(records, key=lambda r: (r["title"].casefold(), r["id"]))]


def test_browsing_sorts_newest_first_by_default(index):
    assert [h.id for h in index.search("", year="2024-").hits] == ["f10", "f09", "f06", "f04", "f14", "f11", "f02"]


def test_relevance_ties_are_broken_by_year_then_id(index):
    results = index.search("tensors")
    assert [h.id for h in results.hits] == ["f14", "f13", "f15"]
    assert results.hits[0].score == results.hits[1].score == results.hits[2].score


def test_sorted_text_query_keeps_scores_and_snippets(index):
    results = index.search("sparse", sort="oldest", limit=3)
    assert [h.id for h in results.hits] == ["f01", "f08", "f06"]
    assert all(h.score > 0 for h in results.hits)


@pytest.mark.parametrize("sort", ["relevance", "newest", "oldest", "title"])
def test_pages_are_exact_windows(index, sort):
    everything = index.search("", category="cs", sort=sort, limit=100)
    assert everything.total == 8
    pages = [index.search("", category="cs", sort=sort, limit=3, page=n) for n in (1, 2, 3)]
    assert [h.id for p in pages for h in p.hits] == [h.id for h in everything.hits]
    assert [len(p.hits) for p in pages] == [3, 3, 2]
    assert pages[0].page == {"number": 1, "size": 3, "pages": 3}
    beyond = index.search("", category="cs", sort=sort, limit=3, page=4)
    assert beyond.hits == [] and beyond.total == 8 and beyond.page == {"number": 4, "size": 3, "pages": 3}


def test_relevance_pages_over_tied_scores_are_exact(index):
    pages = [[h.id for h in index.search("tensors", limit=1, page=n).hits] for n in (1, 2, 3, 4)]
    assert pages == [["f14"], ["f13"], ["f15"], []]


# Command line


@pytest.fixture
def cli(fixture_index_dir):
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(main, ["search", *args, "--index-dir", str(fixture_index_dir)])

    return invoke


def test_cli_prints_facets_under_the_results(cli):
    result = cli("--year", "2026", "--facets", "year,category", "--limit", "1")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("2 hits with year 2026 (")
    assert lines[2:] == [
        "  1. Sparse matrix formats on accelerators",
        "     2026 · cs.DC · Longbin Zeng",
        "     id f10",
        "     An abstract about sparse matrix formats on accelerators.",
        "",
        "Page 1 of 2",
        "",
        "Year:",
        "  2026                                2  (selected)",
        "  2025                                2",
        "  2024                                3",
        "  2023                                2",
        "  2022                                1",
        "  2021                                1",
        "  unknown                             4",
        "",
        "Category:",
        "  cs.DC                               1",
        "  cs.NE                               1",
        "  q-bio.NC                            1",
    ]


def test_cli_sort_newest_alone_lists_the_latest_papers(cli):
    result = cli("--sort", "newest", "--facets", "year", "--limit", "2")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("15 papers, newest first (")
    assert lines[2:] == [
        "  1. Sparse matrix formats on accelerators",
        "     2026 · cs.DC · Longbin Zeng",
        "     id f10",
        "     An abstract about sparse matrix formats on accelerators.",
        "",
        "  2. Neural decoding of spikes",
        "     2026 · q-bio.NC · Depei Qian, Longbin Zeng",  # the primary category
        "     id f09",
        "     An abstract about neural decoding of spikes.",
        "",
        "Page 1 of 8",
        "",
        "Year:",
        "  2026                                2",
        "  2025                                2",
        "  2024                                3",
        "  2023                                2",
        "  2022                                1",
        "  2021                                1",
        "  unknown                             4",
    ]
    oldest = cli("--sort", "oldest", "--limit", "1", "--page", "15", "--json")
    assert oldest.exit_code == 0, oldest.output
    data = json.loads(oldest.stdout)
    assert data["total"] == 15 and [h["id"] for h in data["hits"]] == ["f15"]
    assert data["page"] == {"number": 15, "size": 1, "pages": 15}
    by_title = cli("--sort", "title", "--limit", "1")
    assert by_title.stdout.startswith("15 papers, by title (")


@pytest.mark.parametrize("args", [[], ["--sort", "relevance"], ["--facets", "year"]])
def test_cli_without_query_filter_or_listing_sort_asks_for_one(cli, args):
    result = cli(*args)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.endswith(
        "Error: give a QUERY, a filter (--year, --author, --first-author, --category, --journal, --since, --until, "
        "--past) "
        "or both; or --sort newest, oldest or title alone to list every paper\n"
    )


def test_cli_reports_remaining_and_unknown_values(cli):
    result = cli("sparse", "--facets", "author", "--facet-size", "2")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-5:] == [
        "Author:",
        "  Depei Qian                          2",
        "  Ana María Pérez                     1",
        "  unknown                             1",
        "  ... and 6 more values",
    ]


def test_cli_json_has_facets_and_page(cli):
    result = cli(
        "--author",
        "Qian, D.",
        "--category",
        "cs",
        "--sort",
        "oldest",
        "--limit",
        "2",
        "--page",
        "2",
        "--facets",
        "year",
        "--json",
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    # Qian in cs: f01 2023, f02 2024, f03 (no year), f06 2025, f09 2026 (cs.NE), f11 2024
    assert data["total"] == 6
    assert [h["id"] for h in data["hits"]] == ["f11", "f06"]
    assert data["page"] == {"number": 2, "size": 2, "pages": 3}
    assert data["facets"] == {
        "year": [
            {"value": 2026, "count": 1, "selected": False},
            {"value": 2025, "count": 1, "selected": False},
            {"value": 2024, "count": 2, "selected": False},
            {"value": 2023, "count": 1, "selected": False},
            {"value": None, "count": 1, "selected": False},
        ]
    }


def test_cli_repeated_options_combine_with_or(cli):
    result = cli("--category", "hep-th", "--category", "astro-ph.CO", "--json")
    assert {h["id"] for h in json.loads(result.stdout)["hits"]} == {"f04", "f05", "f12"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--year", "2025-2023"], "Invalid value for '--year' / '-y': year filter '2025-2023' is reversed"),
        (["--year", "next"], "Invalid value for '--year' / '-y': year filter 'next' is not a year or a range"),
        (
            ["--category", "cs dc"],
            "Invalid value for '--category' / '-c': category filter 'cs dc' is not a category code",
        ),
        (["--author", "--"], "Invalid value for '--author' / '-a': author filter '--' holds no name"),
        (["sparse", "--facets", "venue"], "Invalid value for '--facets': unknown facet 'venue'"),
        (["sparse", "--limit", "101"], "Invalid value for '--limit' / '-n': 101 is not in the range 1<=x<=100."),
        (["sparse", "--sort", "random"], "Invalid value for '--sort' / '-s': 'random' is not one of"),
        (
            [],
            "give a QUERY, a filter (--year, --author, --first-author, --category, --journal, --since, --until, "
            "--past) or both",
        ),
    ],
)
def test_cli_bad_options_are_usage_errors_naming_the_value(cli, args, message):
    result = cli(*args)
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert message in result.stderr


def test_cli_bad_query_filter_is_an_error(cli):
    result = cli("sparse year:2025-2023")
    assert result.exit_code == 1
    assert result.stderr == "Error: year filter '2025-2023' is reversed (did you mean 2023-2025?)\n"


def test_an_index_without_facet_data_must_be_rebuilt():
    from searchengine import IndexDamagedError
    from searchengine.engines.whoosh.facetcolumns import FacetColumns

    class OldReader:
        def has_column(self, name):
            return False

    with pytest.raises(IndexDamagedError, match="no facet data; rebuild it with 'searchengine index'"):
        FacetColumns(OldReader())


def test_facet_size_is_bounded(index):
    from searchengine import QueryError

    with pytest.raises(QueryError, match="facet size must be between 1 and 1000, not 0"):
        index.search("sparse", facets="year", facet_size=0)


@pytest.mark.parametrize(
    "text",
    [
        "GPU",
        "GPU memory",
        "sparse OR graph",
        "GPU NOT memory",
        '"sparse matrix"',
        "spars*",
        "authors:qian GPU",
        "nosuchword",
        "GPU OR nosuchword",
        "(GPU OR memory) NOT training",
    ],
)
def test_fast_hit_collection_equals_whoosh(corpus_index, text):
    from searchengine.engines.whoosh.facetcolumns import SearcherCache
    from searchengine.engines.whoosh.querying import parse

    searcher = corpus_index.engine.current().searcher
    query = parse(text, searcher.schema).query
    cache = SearcherCache(searcher)
    expected = sorted(searcher.docs_for_query(query))
    assert cache.docnums(query) == expected
    assert cache.docnums(query) == expected  # again, from the term cache
    small = SearcherCache(searcher, term_budget=8)  # evicts nearly every posting list
    assert small.docnums(query) == small.docnums(query) == expected


def test_cli_open_ranges_and_primary_only(cli):
    result = cli("--year", "-2022", "--json")
    assert result.exit_code == 0, result.output
    assert [h["id"] for h in json.loads(result.stdout)["hits"]] == ["f05", "f13"]
    result = cli("--category", "cs.LG", "--primary-only", "--facets", "category", "--json")
    data = json.loads(result.stdout)
    assert [h["id"] for h in data["hits"]] == ["f02"]
    # The category facet ignores the category filter: every primary category, cs.LG selected.
    expected = brute_facets(fixture_records(), size=10, primary_only=True)["category"]
    for entry in expected:
        entry["selected"] = entry["value"] == "cs.LG"
    assert data["facets"]["category"] == expected


@pytest.fixture(scope="module", params=[1, 2], ids=["one-segment", "two-segments"])
def dated_searcher(request, tmp_path_factory):
    """A Whoosh searcher over 40 records of years 2019-2025 (every eighth
    without a year), half with a submission day; one segment or two."""
    lines = []
    for n in range(40):
        record = {
            "id": f"d{n}",
            "title": f"paper {n}",
            "abstract": "words",
            "categories": ["cs.DC" if n % 3 else "math.NA"],
        }
        if n % 8:
            record["year"] = 2019 + n % 7
            if n % 2:
                record["date"] = f"{record['year']}-{1 + n % 12:02d}-{1 + n % 27:02d}"
        lines.append(json.dumps(record))
    folder = tmp_path_factory.mktemp(f"dated-{request.param}")
    build_index([write(folder / "d.jsonl", "\n".join(lines))], folder / "ix", jobs=request.param)
    index = open_index(folder / "ix")
    yield index.engine.current().searcher
    index.close()


@pytest.mark.parametrize("numpy", [False, True], ids=["stdlib", "numpy"])
def test_year_and_day_ranges_from_the_columns_equal_whoosh(dated_searcher, monkeypatch, numpy):
    from datetime import date

    from whoosh import query as wq

    from searchengine.engines.whoosh.facetcolumns import FacetColumns, SearcherCache

    monkeypatch.setattr(FacetColumns, "use_numpy", lambda self, hits: numpy)
    day = date(2022, 6, 1).toordinal()
    queries = [
        wq.NumericRange("year", 2022, 2022),
        wq.NumericRange("year", None, 2021),
        wq.NumericRange("year", 2023, None),
        wq.NumericRange("year", 0, None),
        wq.NumericRange("year", 2019, 2025, startexcl=True, endexcl=True),
        wq.Or([wq.NumericRange("year", 2019, 2019), wq.NumericRange("year", 2025, None)]),
        wq.And([wq.NumericRange("year", 2022, None), wq.Term("category_keys", "cs.*")]),
        wq.NumericRange("day", day, None),
        wq.NumericRange("day", None, day),
        wq.NumericRange("day", day - 400, day, endexcl=True),
        wq.NumericRange("year", 1800, 1800),
    ]
    cache = SearcherCache(dated_searcher)
    found = []
    for query in queries:
        expected = sorted(dated_searcher.docs_for_query(query))
        assert cache.docnums(query) == expected, query
        found.append(len(expected))
    assert found == [5, 15, 15, 35, 25, 10, 13, 10, 10, 3, 0]  # counted from the records above


@pytest.mark.parametrize(
    ("reference", "journal"),
    [
        ("Phys. Rev. D 102, 034501 (2020)", "Phys. Rev. D"),
        ("Phys.Rev.D76:013009,2007", "Phys. Rev. D"),
        ("J. Phys.: Condens. Matter 19 (2007) 176210", "J. Phys.: Condens. Matter"),
        ("J. Low. Temp. Phys. Vol. 140 pp77-89 (2005)", "J. Low. Temp. Phys."),
        ("Nature Physics, volume 16, pages 1-5", "Nature Physics"),
        ("2020 J. Phys.: Conf. Ser. 1234 012345", "J. Phys.: Conf. Ser."),
        ("JHEP   0706:061,2007", "JHEP"),
        ("", ""),
        ("(2007) 12", ""),
    ],
)
def test_the_journal_is_the_name_before_the_numbers_of_the_reference(reference, journal):
    from searchengine.records import Record, journal_name

    assert journal_name(reference) == journal
    assert Record("x", "t", journal_ref=reference).journal == journal


def test_a_column_file_written_before_a_facet_counts_it_unknown_and_filters_to_nothing(tmp_path):
    # An index written before the journal facet: its column file has no journal arrays.
    from searchengine.engines.whoosh.columns import COLUMNS_FILE
    from searchengine.engines.whoosh.facetcolumns import FacetColumns, count_facets

    records = [{"id": "a", "title": "Lattice", "journal_ref": "JHEP 05 (2020) 1"}, {"id": "b", "title": "Lattice"}]
    source = write(tmp_path / "r.jsonl", "".join(json.dumps(r) + "\n" for r in records))
    build_index([source], tmp_path / "idx")
    index = open_index(tmp_path / "idx")
    assert [(v["value"], v["count"]) for v in index.search("lattice", facets="journal").facets["journal"]] == [
        ("JHEP", 1),
        (None, 1),
    ]
    (column_file,) = (tmp_path / "idx").glob("*/" + COLUMNS_FILE)
    index.close()
    arrays = {name: values for name, values in FacetColumns.load(column_file, _Reader(column_file)).arrays.items()}
    old = FacetColumns(arrays={k: v for k, v in arrays.items() if not k.startswith("journal.")})
    counted = count_facets(old, [0, 1], ["journal", "year"])
    assert [(v.value, v.count) for v in counted["journal"].values] == [(None, 2)]
    assert old.value_docs("journal", ["jhep"]) == []


class _Reader:
    """Just what :meth:`FacetColumns.load` asks of a reader: the column file's own generation and size."""

    def __init__(self, path: Path) -> None:
        data = path.read_bytes()
        self.header = json.loads(data[16 : 16 + int.from_bytes(data[8:16], "little")])

    def generation(self) -> int:
        return self.header["generation"]

    def doc_count_all(self) -> int:
        return self.header["documents"]
