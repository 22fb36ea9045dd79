"""Words standing together, and the ways of writing them, on every engine.

A small corpus written out below: the same words spaced, hyphenated, joined
and in camel case, and papers that use the words apart. The expected hits
and their order are written out for each query.
"""

from __future__ import annotations

WORDS_RECORDS = [
    {
        "id": "fa2",
        "title": "FlashAttention-2: Faster Attention with Better Parallelism",
        "abstract": "Scaling transformers to longer sequences is hard. FlashAttention-2 computes exact "
        "attention with fewer reads of GPU memory.",
    },
    {
        "id": "fak",
        "title": "Flash attention kernels for long-context inference",
        "abstract": "Scaling transformers to longer sequences is hard. Flash attention kernels compute exact "
        "attention with fewer reads of GPU memory.",
    },
    {
        "id": "chess",
        "title": "A chess engine with learned evaluation",
        "abstract": "The engine searches the game graph and scores each position with a neural-network "
        "evaluation trained by self-play against older versions of itself.",
    },
    {
        "id": "gnn",
        "title": "Graph neural networks for molecules",
        "abstract": "We train graph neural networks on molecules and compare message passing layers.",
    },
    {
        "id": "gnn-gpu",
        "title": "Training a graph neural network on GPUs",
        "abstract": "Sampling makes graph neural network training fit in GPU memory.",
    },
    {
        "id": "apart",
        "title": "Neural decoding of network traffic graphs",
        "abstract": "A neural model reads the graph of a network and its traffic.",
    },
    {
        "id": "kmeans",
        "title": "Mini-batch k-means clustering at scale",
        "abstract": "We run k-means clustering on billions of points.",
    },
    {
        "id": "cb",
        "title": "CB-SpMV:A cache-friendly block-based SpMV on GPUs",
        "abstract": "Sparse matrix-vector multiplication on GPUs with blocks that fit the cache.",
    },
    {
        "id": "sparse",
        "title": "Sparse matrix formats for GPUs",
        "abstract": "A sparse matrix stored in blocks is multiplied by a vector on GPUs.",
    },
    {
        "id": "sparse-apart",
        "title": "Matrix sketches for sparse signals",
        "abstract": "A random matrix recovers sparse signals from few measurements.",
    },
]


def ids(index, query):
    return [hit.id for hit in index.search(query, limit=10).hits]


def test_the_words_together_outrank_a_single_hyphenated_mention(words_index):
    # The chess paper has "graph" once and "neural-network" once, apart from
    # each other; the two papers about graph neural networks come first.
    found = ids(words_index, "graph neural network")
    assert set(found[:2]) == {"gnn", "gnn-gpu"} and set(found[2:]) == {"apart", "chess"}
    # "Sparse matrix-vector" in an abstract outranks "matrix" and "sparse" apart in a title.
    assert ids(words_index, "sparse matrix") == ["sparse", "cb", "sparse-apart"]
    found = ids(words_index, "neural network")
    assert set(found[:2]) == {"gnn", "gnn-gpu"} and set(found[2:]) == {"chess", "apart"}
    # The hyphenated mention is the words together: the chess paper comes
    # before the one that has both words apart.
    assert found[2:] == ["chess", "apart"]


def test_joined_camel_and_spaced_forms_find_each_other_typed_spelling_first(words_index):
    assert ids(words_index, "flash attention") == ["fak", "fa2"]
    assert ids(words_index, "FlashAttention") == ["fa2", "fak"]
    assert ids(words_index, "flashattention") == ["fa2", "fak"]


def test_hyphenated_identifiers_keep_working(words_index):
    assert ids(words_index, "k-means") == ["kmeans"]
    assert ids(words_index, "k means clustering") == ["kmeans"]
    assert ids(words_index, "CB-SpMV:A") == ["cb"]
    assert ids(words_index, "CB-SpMV GPUs") == ["cb"]
