"""The cluster writer's document feed: sources made in worker processes, in
order, as the writer would make them itself; vectors taken from an embedded
index (``index --vectors-from``) for records of the same id and text."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from searchengine import build_index, semantic
from searchengine.engines.base import Document
from searchengine.engines.opensearch import feed, mapping, writer
from searchengine.engines.whoosh.lent import EmbeddedVectors
from searchengine.errors import InputError
from searchengine.processes import WorkerDied, in_order, worker_pool
from searchengine.readers import read_records

REPO = Path(__file__).resolve().parents[3]
CORPUS = REPO / "corpus"
CORPUS_RECORDS = 24


def corpus_documents() -> list[Document]:
    return [Document(record, False, "added") for record in read_records([CORPUS], [])]


def test_sources_are_the_documents_as_json():
    documents = corpus_documents()
    made = feed.sources(documents[:3])
    assert [json.loads(text) for text in made] == [
        json.loads(json.dumps(mapping.document(d.record))) for d in documents[:3]
    ]
    assert all(", " not in text[:40] for text in made)  # compact, as the client would send it


def test_source_text_adds_fields():
    assert feed.source_text('{"id":"a"}', {}) == '{"id":"a"}'
    assert json.loads(feed.source_text('{"id":"a"}', {"vector": [0.5, 1.0], "content_key": "ab"})) == {
        "id": "a",
        "vector": [0.5, 1.0],
        "content_key": "ab",
    }
    assert feed.source_text("{}", {"x": 1}) == '{"x":1}'


def test_worker_processes_make_the_same_sources_in_order():
    documents = corpus_documents() * 6  # 144: three batches, the last one short
    with feed.Analysis(1) as here:
        alone = list(here.batches(documents))
    with feed.Analysis(2) as workers:
        shared = list(workers.batches(documents))
    assert [len(batch) for batch, _ in shared] == [64, 64, 16]
    assert [[d.record.id for d in batch] for batch, _ in shared] == [[d.record.id for d in b] for b, _ in alone]
    assert [made for _, made in shared] == [made for _, made in alone]


def test_the_bulk_action_carries_the_source_made_ahead_and_the_vector():
    (document,) = corpus_documents()[:1]
    (made,) = feed.sources([document])
    action = writer._index_action("idx", document.record, {feed.SOURCE: made, "vector": [1.0], "content_key": "k"})
    assert action["_id"] == document.record.id and action["_index"] == "idx"
    assert json.loads(action["_source"]) == {
        **json.loads(json.dumps(mapping.document(document.record))),
        "vector": [1.0],
        "content_key": "k",
    }
    # Without one, the source is made on the spot, as before.
    assert writer._index_action("idx", document.record, None)["_source"] == mapping.document(document.record)


def _die_on_three(item: int) -> int:
    if item == 3:
        os._exit(1)
    return item * 2


def test_a_dead_worker_is_an_error_not_a_hang():
    pool = worker_pool(2)
    try:
        with pytest.raises(WorkerDied):
            list(in_order(pool, _die_on_three, range(8), ahead=4))
    finally:
        pool.terminate()
        pool.join()


def test_in_order_reads_its_input_only_so_far_ahead():
    taken: list[int] = []

    def items():
        for item in range(20):
            taken.append(item)
            yield item

    pool = worker_pool(2)
    try:
        results = in_order(pool, abs, items(), ahead=3)
        assert next(results) == (0, 0)
        assert len(taken) == 3
        assert [value for _, value in results] == list(range(1, 20))
    finally:
        pool.terminate()
        pool.join()


@pytest.fixture(scope="module")
def embedded_with_vectors(tmp_path_factory) -> Path:
    """An embedded index of the corpus with vector files: encoded when the
    semantic extra is installed, else rows made up here (row i of document
    number i: i+1 in column i % 384), which is all the reading side needs."""
    import numpy as np

    from searchengine.engines.whoosh import store
    from searchengine.engines.whoosh.vectors import SCALES_FILE, VECTORS_FILE

    folder = tmp_path_factory.mktemp("embedded") / "index"
    if semantic.available():
        build_index([CORPUS], folder, vectors=True)
        return folder
    build_index([CORPUS], folder)
    generation = store.current_generation(folder)
    assert generation is not None
    rows = np.zeros((CORPUS_RECORDS, 384), dtype=np.int8)
    for number in range(CORPUS_RECORDS):
        rows[number, number % 384] = number + 1
    np.save(generation / VECTORS_FILE, rows)
    np.save(generation / SCALES_FILE, np.full(CORPUS_RECORDS, 0.5, dtype=np.float32))
    return folder


def test_vectors_are_taken_for_the_same_id_and_text_only(embedded_with_vectors):
    import numpy as np

    from searchengine.semantic.encoder import content_key, record_text

    documents = corpus_documents()
    keys = {d.record.id: content_key(record_text(d.record.title, d.record.abstract)).hex() for d in documents}
    first, second = documents[0].record.id, documents[1].record.id
    keys[second] = "0" * 40  # its text changed since
    keys["not-indexed"] = "1" * 40
    with EmbeddedVectors(embedded_with_vectors) as embedded:
        found = embedded.vectors(keys)
    assert set(found) == set(keys) - {second, "not-indexed"}
    assert embedded.taken == CORPUS_RECORDS - 1
    assert all(len(vector) == 384 and abs(np.linalg.norm(vector) - 1) < 1e-5 for vector in found.values())
    if not semantic.available():  # the made-up rows: a unit vector on the document's own column
        assert sum(1 for value in found[first] if value) == 1


def test_vectors_from_a_generation_or_its_vector_file(embedded_with_vectors):
    from searchengine.engines.whoosh import store
    from searchengine.engines.whoosh.vectors import VECTORS_FILE

    generation = store.current_generation(embedded_with_vectors)
    assert generation is not None
    documents = corpus_documents()
    from searchengine.semantic.encoder import content_key, record_text

    keys = {d.record.id: content_key(record_text(d.record.title, d.record.abstract)).hex() for d in documents}
    for path in (generation, generation / VECTORS_FILE):
        with EmbeddedVectors(path) as embedded:
            assert len(embedded.vectors(keys)) == CORPUS_RECORDS


def test_vectors_from_what_holds_none_is_refused(tmp_path):
    with pytest.raises(InputError, match="no such index folder"):
        EmbeddedVectors(tmp_path / "missing").__enter__()
    with pytest.raises(InputError, match="no index here"):
        EmbeddedVectors(tmp_path).__enter__()
    build_index([CORPUS], tmp_path / "plain")
    with pytest.raises(InputError, match="keeps no vectors"):
        EmbeddedVectors(tmp_path / "plain").__enter__()


def test_vectors_from_is_for_a_cluster(tmp_path):
    with pytest.raises(InputError, match="--vectors-from is for an index on a cluster"):
        build_index([CORPUS], tmp_path / "folder", vectors_from=tmp_path)


def test_no_vectors_and_vectors_from_contradict_each_other(tmp_path):
    from click.testing import CliRunner

    from searchengine.cli import main

    done = CliRunner().invoke(
        main, ["index", str(CORPUS), "--index", str(tmp_path / "i"), "--no-vectors", "--vectors-from", str(tmp_path)]
    )
    assert done.exit_code == 2
    assert "--no-vectors and --vectors-from contradict each other" in done.output
    assert not (tmp_path / "i").exists()


@pytest.mark.cluster
def test_a_cluster_build_takes_the_embedded_vectors(
    location, cluster_client, index_name, embedded_with_vectors, tmp_path
):
    from searchengine.engines.opensearch.knn import knn_available

    if not semantic.available():
        pytest.skip("needs the semantic extra (a build with vectors loads the model)")
    if not knn_available(cluster_client):
        pytest.skip("the cluster lacks the k-NN plugin (scripts/dev-cluster.sh installs it)")
    import numpy as np

    from searchengine.semantic.encoder import encoder, record_text

    summary = build_index([CORPUS], location, vectors_from=embedded_with_vectors)
    assert (summary.documents, summary.vectors, summary.encoded) == (CORPUS_RECORDS, True, 0)
    record = corpus_documents()[0].record
    held = cluster_client.get(index=index_name, id=record.id)["_source"]
    fresh = encoder(1).encode([record_text(record.title, record.abstract)])[0]
    assert float(np.dot(held["vector"], fresh)) > 0.995  # int8 rows scaled back: cosine within ~0.002
    # A record whose text changed is encoded; the other is still taken.
    kept, changed = (d.record for d in corpus_documents()[:2])
    lines = [
        {"id": r.id, "title": r.title + extra, "abstract": r.abstract, "authors": list(r.authors), "year": r.year}
        for r, extra in ((kept, ""), (changed, " revisited"), (changed, " revisited"))
    ]
    (tmp_path / "two.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    again = build_index([tmp_path / "two.jsonl"], location, vectors_from=embedded_with_vectors)
    # The repeat is folded into the first copy and written again: its vector is counted in both passes.
    assert (again.documents, again.merged, again.encoded) == (2, 1, 2)
