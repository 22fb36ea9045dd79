import pytest

from searchengine import IndexDamagedError, IndexNotFoundError, QueryError, open_index

from conftest import contains_word, corpus_records

CB_SPMV = "CB-SpMV:A Data Aggregating and Balance Algorithm for Cache-Friendly Block-Based SpMV on GPUs"


def test_spmv_gpu_ranks_cb_spmv_first(corpus_index):
    results = corpus_index.search("SpMV GPU")
    assert results.hits[0].title == CB_SPMV
    assert results.total == 1


def test_every_term_is_required(corpus_index):
    expected = {r.id for r in corpus_records() if contains_word(r, "gpus?") and contains_word(r, "memory")}
    results = corpus_index.search("GPU memory")
    assert results.total == len(expected) == 5
    assert {h.id for h in results.hits} == expected


def test_plural_acronym_meets_singular(corpus_index):
    expected = {r.id for r in corpus_records() if contains_word(r, "gpus?")}
    assert len(expected) == 12
    assert {h.id for h in corpus_index.search("GPUs", limit=50).hits} == expected
    assert {h.id for h in corpus_index.search("GPU", limit=50).hits} == expected


def test_punctuation_glued_to_a_word_does_not_hide_it(corpus_index):
    titles = [h.title for h in corpus_index.search("SpMV", limit=50).hits]
    assert CB_SPMV in titles


def test_case_is_folded(corpus_index):
    assert corpus_index.search("spmv gpu").hits[0].title == CB_SPMV


def test_title_match_outranks_abstract_only_match(corpus_index):
    hits = corpus_index.search("checkpointing").hits
    assert hits[0].title.startswith("Mimose")
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_author_name_is_searchable(corpus_index):
    assert corpus_index.search("Zeng").total == 6
    assert corpus_index.search("authors:qian").total == 18


def test_results_to_dict_has_the_documented_shape(corpus_index):
    data = corpus_index.search("SpMV GPU").to_dict()
    assert {"query", "total", "hits", "facets", "page", "suggestion", "relaxed"} <= set(data)
    assert data["query"] == "SpMV GPU" and data["total"] == 1
    hit = data["hits"][0]
    assert {"id", "title", "authors", "year", "categories", "score", "snippet"} <= set(hit)
    assert (hit["year"], hit["categories"], hit["authors"]) == (2026, ["cs.DC"], ["Depei Qian"])
    assert data["page"] == {"number": 1, "size": 10, "pages": 1}


def test_paging_windows_do_not_overlap(corpus_index):
    first = corpus_index.search("GPU", limit=5, page=1)
    second = corpus_index.search("GPU", limit=5, page=2)
    third = corpus_index.search("GPU", limit=5, page=3)
    beyond = corpus_index.search("GPU", limit=5, page=9)
    ids = [h.id for r in (first, second, third) for h in r.hits]
    assert len(ids) == len(set(ids)) == 12
    assert beyond.hits == [] and beyond.total == 12


@pytest.mark.parametrize("query", ["", "   "])
def test_empty_query_is_a_query_error(corpus_index, query):
    with pytest.raises(QueryError, match="empty"):
        corpus_index.search(query)


def test_bad_limit_is_a_query_error(corpus_index):
    with pytest.raises(QueryError, match="limit must be between 1 and 100"):
        corpus_index.search("GPU", limit=0)


def test_missing_index_is_reported(tmp_path):
    with pytest.raises(IndexNotFoundError, match="no index here"):
        open_index(tmp_path)


def test_damaged_index_is_reported(tmp_path):
    (tmp_path / "gen-x").mkdir()
    (tmp_path / "gen-x" / "_MAIN_1.toc").write_bytes(b"garbage")
    (tmp_path / "CURRENT").write_text("gen-x\n")
    with pytest.raises(IndexDamagedError, match="another version.*rebuild"):
        open_index(tmp_path)
    from searchengine.engines.whoosh.store import LAYOUT

    (tmp_path / "gen-x" / "LAYOUT").write_text(f"{LAYOUT}\n")
    with pytest.raises(IndexDamagedError, match="gen-x/CHECKSUMS is missing; rebuild"):
        open_index(tmp_path)


def test_stats_counts_years_and_categories(corpus_index):
    assert corpus_index.stats() == {
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


def test_the_title_order_starts_at_each_title_s_first_letter_or_digit(tmp_path):
    import json

    from searchengine import build_index
    from searchengine.records import sort_title

    titles = [
        '"Quoted" kernels',
        "(Un)bounded kernels",
        "Apple kernels",
        "'Zeta' kernels",
        "¿Qué kernels?",
        "3D kernels",
        "Éclair kernels",
        "... kernels",
    ]
    path = tmp_path / "t.jsonl"
    path.write_text(
        "".join(json.dumps({"id": f"r{n}", "title": t, "abstract": "kernels"}) + "\n" for n, t in enumerate(titles)),
        encoding="utf-8",
    )
    build_index([path], tmp_path / "ix")
    order = [h.title for h in open_index(tmp_path / "ix").search("kernels", sort="title", limit=20).hits]
    assert order == [
        "3D kernels",
        "Apple kernels",
        "Éclair kernels",
        "... kernels",
        "¿Qué kernels?",
        '"Quoted" kernels',
        "(Un)bounded kernels",
        "'Zeta' kernels",
    ]
    assert sort_title("... kernels") == "kernels" and sort_title("¿Qué kernels?") == "que kernels?"
    assert sort_title("!!!") == "!!!"


@pytest.mark.parametrize(
    "options, message",
    [
        ({"limit": "5"}, "limit must be a whole number, not '5'"),
        ({"limit": 2.5}, "limit must be a whole number, not 2.5"),
        ({"page": True}, "page must be a whole number, not True"),
    ],
)
def test_a_request_of_the_wrong_type_is_a_query_error(corpus_index, options, message):
    from searchengine import QueryError

    with pytest.raises(QueryError) as caught:
        corpus_index.search("gpu", **options)
    assert str(caught.value) == message


def test_a_query_written_in_tex_finds_what_the_record_wrote_in_tex(tmp_path):
    import json

    from searchengine import build_index

    source = tmp_path / "tex.jsonl"
    source.write_text(
        json.dumps(
            {
                "id": "t-00000000000a",
                "authors": ["Jan Vr\\v{c}ak"],
                "title": 'The Schr\\"odinger equation of $\\alpha$-particles',
                "abstract": "Wave functions of $\\alpha$ decay.",
            }
        )
        + "\n",
        encoding="utf-8",
    )
    build_index([source], tmp_path / "ix")
    index = open_index(tmp_path / "ix")
    for query in [
        'Schr\\"odinger',
        "Schrödinger",
        "$\\alpha$ decay",
        "α decay",
        "Vr\\v{c}ak",
        'title:"Schr\\"odinger equation"',
    ]:
        results = index.search(query)
        assert [hit.id for hit in results.hits] == ["t-00000000000a"], query
    assert index.search('Schr\\"odinger').query == "Schrödinger"
    # a tilde stays the fuzzy suffix beside TeX
    assert [hit.id for hit in index.search("$\\alpha$ equatoin~1").hits] == ["t-00000000000a"]


def test_the_python_api_takes_first_author_and_past_as_the_web_does(corpus_index):
    by_qian = {hit.id for hit in corpus_index.search("", first_author="Depei Qian", limit=100).hits}
    assert by_qian == {hit.id for hit in corpus_index.search("", author="^Depei Qian", limit=100).hits}
    assert len(by_qian) == 18
    assert (
        corpus_index.export("gpu", first_author="Longbin Zeng").total
        == corpus_index.search("gpu", author="^Longbin Zeng").total
    )
    assert corpus_index.search("gpu", past="week").total == 0  # the author pages give no days
    with pytest.raises(QueryError, match="past 'fortnight' is not one of week, month, year"):
        corpus_index.search("gpu", past="fortnight")
