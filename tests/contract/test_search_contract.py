"""Search behaviour every engine must show on the bundled corpus (24 papers).

Expected values are written out: ids from the corpus files, counts checked
by hand against the records (``tests/conftest.py``'s brute-force helpers
where a set is large).
"""

from __future__ import annotations

import re
import time
from collections import Counter

import pytest

from searchengine import QueryError, RecordNotFoundError

from conftest import contains_word, corpus_records

CB_SPMV = "t-30f1b8f5a2a1"  # CB-SpMV: ... Block-Based SpMV on GPUs (2026)
MIMOSE = "t-60f6346867ae"  # Mimose: ... Checkpointing Planner for Efficient Training on GPU (2022)
GPU_MEMORY = {"t-5feb5d73a9aa", MIMOSE, "t-85ff818227a4", "t-c0d04f741409", "t-e15a2fb3f66a"}
ZENG = ["t-06a445664b21", "t-26b906fcdcbd", "t-5feb5d73a9aa", "t-b275e169d4d6", "t-031c0c403dfe", "t-54d6136e0d28"]


def _records():
    return {record.id: record for record in corpus_records()}


def test_every_word_must_match_and_the_best_paper_comes_first(engine_index):
    results = engine_index.search("SpMV GPU")
    assert results.total == 1 and not results.relaxed
    assert [hit.id for hit in results.hits] == [CB_SPMV]
    assert results.hits[0].year == 2026 and results.hits[0].categories == ["cs.DC"]


def test_totals_are_exact_and_hits_come_in_descending_score(engine_index):
    results = engine_index.search("GPU memory", limit=10)
    assert results.total == 5
    assert {hit.id for hit in results.hits} == GPU_MEMORY
    assert results.hits[0].id == MIMOSE
    scores = [hit.score for hit in results.hits]
    assert scores == sorted(scores, reverse=True) and scores[-1] > 0
    records = _records()
    expected = {r.id for r in records.values() if contains_word(r, "gpus?") and contains_word(r, "memory|memories")}
    assert expected == GPU_MEMORY


def test_match_offsets_cover_the_words_as_written(engine_index):
    hit = engine_index.search("SpMV GPU").hits[0]
    assert [hit.title[a:b] for a, b in hit.title_matches] == ["SpMV", "SpMV", "GPUs"]
    words = [hit.snippet[a:b] for a, b in hit.snippet_matches]
    assert words and {w.lower() for w in words} <= {"spmv", "gpu", "gpus"}
    assert hit.snippet in _records()[CB_SPMV].abstract or " … " in hit.snippet


def test_facets_count_every_hit(engine_index):
    results = engine_index.search("GPU memory", facets="year,author,category")
    facet = {name: [(v["value"], v["count"]) for v in values] for name, values in results.facets.items()}
    assert facet == {
        "year": [(2026, 3), (2023, 1), (2022, 1)],
        "author": [("Depei Qian", 4), ("Longbin Zeng", 1)],
        "category": [("cs.DC", 4), ("cs.NE", 1)],
    }
    assert results.facets_remaining == {"year": 0, "author": 0, "category": 0}


def test_a_facet_is_counted_over_every_filter_but_its_own(engine_index):
    results = engine_index.search("GPU memory", year=["2026"], facets="year,category")
    assert results.total == 3
    assert [(v["value"], v["count"], v["selected"]) for v in results.facets["year"]] == [
        (2026, 3, True),
        (2023, 1, False),
        (2022, 1, False),
    ]
    assert sum(v["count"] for v in results.facets["category"]) == 3


def test_filters_from_options_and_from_the_query_mean_the_same(engine_index):
    by_option = engine_index.search("gpu", year=["2023-2025"], limit=20)
    by_query = engine_index.search("gpu year:2023-2025", limit=20)
    assert [h.id for h in by_option.hits] == [h.id for h in by_query.hits]
    expected = {r.id for r in _records().values() if contains_word(r, "gpus?") and 2023 <= r.year <= 2025}
    assert by_option.total == len(expected) == 5 and {h.id for h in by_option.hits} == expected


def test_sort_orders_and_their_ties(engine_index):
    oldest = engine_index.search("", author=["Longbin Zeng"], sort="oldest", limit=20)
    assert [h.id for h in oldest.hits] == ZENG  # year ascending, then id
    newest = engine_index.search("", author=["Longbin Zeng"], limit=20)  # no text: newest
    assert [h.id for h in newest.hits] == [
        "t-54d6136e0d28",
        "t-031c0c403dfe",
        "t-b275e169d4d6",
        "t-5feb5d73a9aa",
        "t-26b906fcdcbd",
        "t-06a445664b21",
    ]  # year descending, then id descending
    titles = [h.title for h in engine_index.search("", author=["Longbin Zeng"], sort="title", limit=20).hits]
    assert titles == sorted(titles, key=str.casefold)


def test_the_latest_papers_are_every_paper_newest_first_with_facets(engine_index):
    records = _records().values()
    latest = engine_index.search("", sort="newest", limit=100, facets="year,author,category", facet_size=100)
    # The corpus gives years only: year descending, then id descending.
    assert [h.id for h in latest.hits] == [r.id for r in sorted(records, key=lambda r: (r.year, r.id), reverse=True)]
    assert latest.total == engine_index.doc_count == 24
    assert [(v["value"], v["count"]) for v in latest.facets["year"]] == [
        (2026, 7),
        (2025, 6),
        (2024, 4),
        (2023, 5),
        (2022, 2),
    ]
    assert not any(v["selected"] for values in latest.facets.values() for v in values)
    authors = Counter(name for r in records for name in set(r.authors))
    assert [(v["value"], v["count"]) for v in latest.facets["author"]] == [("Depei Qian", 18), ("Longbin Zeng", 6)]
    assert dict((v["value"], v["count"]) for v in latest.facets["author"]) == authors
    categories = Counter(code for r in records for code in r.categories)
    assert [(v["value"], v["count"]) for v in latest.facets["category"]] == sorted(
        categories.items(), key=lambda kv: (-kv[1], kv[0])
    )
    assert latest.facets["category"][0] == {"value": "cs.DC", "count": 12, "selected": False}
    first = engine_index.search("", sort="newest", limit=3)
    assert [h.id for h in first.hits] == [h.id for h in latest.hits[:3]] and first.page["pages"] == 8
    # An export of the same listing holds every paper in the same order.
    assert [h.id for h in engine_index.export("", sort="newest").hits] == [h.id for h in latest.hits]


def test_pages_neither_overlap_nor_skip(engine_index):
    whole = [h.id for h in engine_index.search("gpu", limit=20).hits]
    assert len(whole) == 12
    paged = [h.id for page in range(1, 7) for h in engine_index.search("gpu", limit=2, page=page).hits]
    assert paged == whole
    past = engine_index.search("gpu", limit=2, page=7)
    assert past.hits == [] and past.total == 12 and past.page == {"number": 7, "size": 2, "pages": 6}


def test_the_deepest_page_is_the_same_everywhere(engine_index):
    assert engine_index.search("gpu", limit=100, page=10).total == 12
    with pytest.raises(QueryError, match="page 11 with limit 100 reaches past hit 1000"):
        engine_index.search("gpu", limit=100, page=11)
    with pytest.raises(QueryError, match="limit must be between 1 and 100, not 101"):
        engine_index.search("gpu", limit=101)


def test_quoted_phrases_exclusions_and_prefixes(engine_index):
    assert [h.id for h in engine_index.search('"cache-friendly"').hits] == [CB_SPMV]
    records = _records()
    without = engine_index.search("gpu -memory", limit=20)
    assert without.total == 7
    assert not any(contains_word(records[h.id], "memory|memories") for h in without.hits)
    prefixed = engine_index.search("spars*", limit=20)
    assert {h.id for h in prefixed.hits} == {r.id for r in records.values() if contains_word(r, r"spars\w*")}


# query, year filter, then (total, suggestion, corrected, unmatched) as searched
# and (total, unmatched) with exact=True (the query as typed).
@pytest.mark.parametrize(
    ("query", "year", "searched", "as_typed"),
    [
        ("sparce matrix", None, (3, "sparse matrix", "sparse matrix", []), (4, ["sparce"])),
        ("sparce matrix", "2025", (1, "sparse matrix", "sparse matrix", []), (1, ["sparce"])),
        ("sparse matrx", None, (3, "sparse matrix", "sparse matrix", []), (4, ["matrx"])),
        ("memroy bandwith", None, (2, "memory bandwidth", "memory bandwidth", []), (0, [])),  # two words
        ("memroy bandwith", "2025", (0, None, None, []), (0, [])),  # no 2025 paper has the corrections
        ("nueral network", None, (1, "neural network", "neural network", []), (4, ["nueral"])),  # a swap
        ("nueral network", "2025", (1, None, None, ["nueral"]), (1, ["nueral"])),
        ("cahce", None, (3, "cache", "cache", []), (0, [])),
        ("laguage model", None, (10, "language model", "language model", []), (18, ["laguage"])),
        (
            "matrix multiplicaton",
            "2025",
            (1, "matrix multiplication", "matrix multiplication", []),
            (1, ["multiplicaton"]),
        ),
        # "kernal" is in the English word list, and no paper writes "kernel fusion": only suggested.
        ("kernal fusion", None, (2, "kernel fusion", None, ["kernal"]), (2, ["kernal"])),
        ('"sparce" matrix', None, (0, '"sparse" matrix', None, []), (0, [])),  # quoted: only suggested
        ("+sparce matrix", None, (4, "sparse matrix", None, ["sparce"]), (4, ["sparce"])),  # required: only suggested
        ("qian", None, (18, None, None, []), (18, [])),  # a known word is left alone
        ("spmv gpu", None, (1, None, None, []), (1, [])),
        ("SpMV gpu fpga", None, (12, None, None, ["fpga"]), (12, ["fpga"])),  # no typo, one word unknown
    ],
)
def test_a_misspelled_query_is_corrected_within_the_filters(engine_index, query, year, searched, as_typed):
    results = engine_index.search(query, year=year or (), time_budget=30)
    assert (results.total, results.suggestion, results.corrected, results.unmatched) == searched
    assert results.relaxed == bool(results.unmatched)
    literal = engine_index.search(query, year=year or (), time_budget=30, exact=True)
    assert (literal.total, literal.corrected, literal.unmatched) == (as_typed[0], None, as_typed[1])
    assert literal.suggestion == searched[1]


def test_similar_papers_leave_the_paper_out(engine_index):
    results = engine_index.similar(CB_SPMV, limit=3)
    assert results.total > 3 and len(results.hits) == 3
    assert CB_SPMV not in {h.id for h in results.hits}
    assert results.query == f"similar:{CB_SPMV}"


def test_similar_papers_total_is_the_same_whatever_the_page_size(engine_index):
    totals = {limit: engine_index.similar(CB_SPMV, limit=limit) for limit in (1, 3, 10, 100)}
    counts = {limit: results.total for limit, results in totals.items()}
    assert len(set(counts.values())) == 1, counts
    total = counts[1]
    assert [len(results.hits) for results in totals.values()] == [min(limit, total) for limit in totals]
    assert [results.page["pages"] for results in totals.values()] == [-(-total // limit) for limit in totals]


def test_records_and_stats(engine_index):
    record = engine_index.record(CB_SPMV)
    assert record.title.startswith("CB-SpMV:A Data Aggregating") and record.authors == ["Depei Qian"]
    assert engine_index.document(CB_SPMV)["year"] == 2026
    assert sorted(r.id for r in engine_index.records()) == sorted(_records())
    assert engine_index.stats() == {
        "documents": 24,
        "undated": 24,
        "years": {"2026": 7, "2025": 6, "2024": 4, "2023": 5, "2022": 2},
        "categories": {
            "cs.DC": 12,
            "cs.LG": 4,
            "cs.SE": 2,
            "q-bio.NC": 2,
            "cs.AR": 1,
            "cs.CV": 1,
            "cs.NE": 1,
            "math.NA": 1,
        },
    }


@pytest.mark.parametrize(
    "query, message",
    [
        ("", "empty"),
        ("the of", "common words"),
        ("interpretability~5", "the edit distance of a fuzzy word must be 0, 1 or 2"),
        ('"sparse matrix"~3', "proximity search is not supported"),
        ("id:abc~1", "fuzzy words are searched in the title, the abstract and the author names only"),
        ("memory~-1", "a fuzzy word is written memory~, memory~1 or memory~2"),
        ("spar*~1", "either a prefix"),
        ("x~", "at least 3 letters"),
        ("au:qian~1", "never fuzzily"),
        ("auth:qian", "auth"),
        ("*gpu", "wildcard"),
    ],
)
def test_queries_that_cannot_be_understood_raise_a_query_error(engine_index, query, message):
    with pytest.raises(QueryError, match=re.compile(message, re.IGNORECASE)):
        engine_index.search(query)


def test_a_category_code_typed_as_the_query_lists_its_papers(engine_index):
    results = engine_index.search("cs.DC", limit=100)
    listed = engine_index.search("", category="cs.DC", limit=100)
    assert (results.query, results.total) == ("category:cs.DC", 12)
    assert [hit.id for hit in results.hits] == [hit.id for hit in listed.hits]
    assert results.notes == [
        "'cs.DC' is an arXiv category: its papers are listed (search \"cs.DC\" in quotes for the words)"
    ]
    assert engine_index.search("q-bio.NC year:2023").total == 1
    # In quotes, a code no paper has, or beside a chosen category: the words.
    for query, options in [('"cs.DC"', {}), ("cs.XX", {}), ("cs.DC", {"category": "cs.LG"})]:
        other = engine_index.search(query, **options)
        assert other.query == query and not any("arXiv category" in note for note in other.notes)


def test_a_date_filter_on_an_index_without_dates_says_why_nothing_matched(engine_index):
    # the bundled author pages give years only
    results = engine_index.search("gpu", since="2025-04")
    assert results.total == 0
    assert results.notes == [
        "no paper of this index has a submitted day (its sources gave none), so date "
        "filters match none; filter by year instead"
    ]
    assert engine_index.search("gpu", year="2025-").notes == []


@pytest.mark.parametrize(("query", "unmatched"), [("gpu zzq*", ["zzq"]), ("gpu zzzzqqq~1", ["zzzzqqq~1"])])
def test_a_prefix_or_fuzzy_word_that_matches_nothing_is_not_dropped(engine_index, query, unmatched):
    results = engine_index.search(query)
    assert (results.total, results.relaxed, results.unmatched) == (engine_index.search("gpu").total, True, unmatched)


def test_an_unknown_record_is_reported(engine_index):
    with pytest.raises(RecordNotFoundError, match="no record with id 'nope'"):
        engine_index.record("nope")


# Every paper without "gpu", newest first (ties: id descending).
WITHOUT_GPU = [
    "t-fe6cc62b7596",
    "t-c48c8420a095",
    "t-ea9fb6524aca",
    "t-5bfd345cb047",
    "t-031c0c403dfe",
    "t-ea0d12a4d371",
    "t-dc5585ee0ce0",
    "t-7e878c467802",
    "t-5a81142e9d1d",
    "t-b275e169d4d6",
    "t-4b8ebb019dd4",
    "t-26b906fcdcbd",
]


@pytest.mark.parametrize("query", ["NOT gpu", "-gpu", "-gpu -memory"])
def test_a_query_of_only_exclusions_lists_every_other_paper_newest_first(engine_index, query):
    results = engine_index.search(query, limit=100)
    assert [hit.id for hit in results.hits] == WITHOUT_GPU
    assert results.total == 12 and not results.relaxed and results.suggestion is None
    # Nothing is searched for, so nothing is marked: the abstract's start is shown.
    assert all(hit.snippet_matches == [] and hit.title_matches == [] for hit in results.hits)
    records = _records()
    assert set(WITHOUT_GPU) == {r.id for r in records.values() if not contains_word(r, "gpus?")}
    assert set(WITHOUT_GPU).isdisjoint(GPU_MEMORY)  # so "-memory" removes no more
    assert [hit.id for hit in engine_index.search(query, year="2025").hits] == [
        "t-ea9fb6524aca",
        "t-5bfd345cb047",
        "t-031c0c403dfe",
    ]


def test_a_field_applies_to_every_word_of_its_group(engine_index):
    both = engine_index.search("title:(sparse matrix)")
    assert {hit.id for hit in both.hits} == {"t-c0d04f741409", "t-6b881bb63257"} and both.total == 2
    either = engine_index.search("abs:(sparse OR dense)")
    assert {hit.id for hit in either.hits} == {
        "t-6b881bb63257",
        "t-c0d04f741409",
        CB_SPMV,
        "t-e15a2fb3f66a",
        "t-5feb5d73a9aa",
    }
    assert engine_index.search("ti:(graph neural)").total == 0  # no title has both; "title" is not a word here


def test_a_fuzzy_word_matches_words_within_its_edit_distance(engine_index):
    # The stem of "memroy" is two edits from that of "memory": the GPU memory papers and no others.
    assert {hit.id for hit in engine_index.search("memroy~2").hits} == GPU_MEMORY
    assert {hit.id for hit in engine_index.search("memroy~").hits} == GPU_MEMORY  # no number: 2
    # One edit: SpMM as well as SpMV.
    assert {hit.id for hit in engine_index.search("spmv~1 GPUs").hits} == {CB_SPMV, "t-6b881bb63257"}
    assert {hit.id for hit in engine_index.search("title:sparce~1").hits} == {"t-c0d04f741409", "t-6b881bb63257"}
    assert engine_index.search("sparce~0").total == 0  # no edit: the word as typed


@pytest.mark.parametrize("sort", [None, "oldest", "title"])
def test_an_export_holds_every_hit_in_the_order_pages_show(engine_index, sort):
    paged = [h.id for page in (1, 2) for h in engine_index.search("gpu", limit=10, page=page, sort=sort).hits]
    exported = engine_index.export("gpu", sort=sort)
    assert exported.total == 12 and [h.id for h in exported.hits] == paged
    assert all(h.abstract and h.snippet == "" for h in exported.hits)
    capped = engine_index.export("gpu", sort=sort, cap=5)
    assert capped.total == 12 and [h.id for h in capped.hits] == paged[:5]


def test_the_api_exports_through_every_engine(engine_index):
    from searchengine.web import create_app

    client = create_app(index=engine_index).test_client()
    response = client.get("/api/export?q=gpu&author=Depei+Qian&sort=oldest&format=ris")
    assert response.status_code == 200
    assert response.headers["Content-Disposition"] == 'attachment; filename="search-results.ris"'
    body = response.get_data(as_text=True)
    expected = [h.id for h in engine_index.search("gpu", author=["Depei Qian"], sort="oldest", limit=20).hits]
    assert len(expected) > 1
    assert [line[6:] for line in body.split("\r\n") if line.startswith("ID  - ")] == expected


LONG_QUESTION = (
    "what planner decides which tensors to checkpoint when training large models on a gpu with little memory"
)


def test_a_long_question_is_re_ranked_by_feedback_the_same_way(engine_index):
    from searchengine.filters import Filters

    def applies(searcher):
        parsed = searcher.parse(LONG_QUESTION)
        return searcher.feedback_applies(searcher.match(parsed, Filters(), time.monotonic() + 60, []))

    assert engine_index.engine.call(applies) is True
    found = engine_index.search(LONG_QUESTION, limit=5)
    assert found.total == 18
    assert [hit.id for hit in found.hits] == [
        MIMOSE,
        "t-e15a2fb3f66a",
        "t-9c1bd2ca5e7c",
        "t-85ff818227a4",
        "t-54d6136e0d28",
    ]


def test_a_relaxed_query_scores_each_word_as_a_whole(engine_index):
    # No paper has both words: the OR fallback, each word one BM25F term over
    # its fields (not each field on its own, as in a typed OR).
    found = engine_index.search("checkpointing SpMV", limit=3)
    assert found.relaxed is True and found.total == 2
    assert [(hit.id, round(hit.score, 4)) for hit in found.hits] == [(CB_SPMV, 6.9463), (MIMOSE, 6.7423)]
    typed = engine_index.search("checkpointing OR SpMV", limit=3)
    assert typed.relaxed is False
    assert [(hit.id, round(hit.score, 4)) for hit in typed.hits] == [(CB_SPMV, 11.6297), (MIMOSE, 10.598)]
