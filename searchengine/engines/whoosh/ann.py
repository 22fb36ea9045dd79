"""Approximate nearest neighbours over a generation's record vectors (large indexes).

Past :data:`ANN_MIN` documents a generation also holds ``vectors.usearch``:
an HNSW graph (Malkov and Yashunin, "Efficient and robust approximate
nearest neighbor search using Hierarchical Navigable Small World graphs",
IEEE TPAMI 2018) in the `usearch <https://github.com/unum-cloud/usearch>`_
library's own file format (no pickle), over the int8 rows of
``vectors.npy`` with the cosine metric (a row's scale does not change its
cosine, so the int8 rows go in as they are). Its keys are Whoosh document
numbers; deleted documents are left out. It is memory-mapped for searching
(:meth:`Index.restore` with ``view=True``): processes serving the same
generation share its pages, and it is checksummed like every file of the
generation (:mod:`.integrity`).

A search asks the graph for :data:`RESCORE` candidates or more (expansion
:data:`EXPANSION_SEARCH`) and ranks them again with the exact similarities
of their rows, so the order of the hits is the exact one. Below
:data:`ANN_MIN` documents, and for filters that leave few documents
(:data:`EXACT_POOL`), the similarity is computed with every row instead:
exact, and at that size fast enough (docs/performance.md, "Vectors at scale").
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

ANN_FILE = "vectors.usearch"
#: Documents from which a generation gets a graph. Below, every search
#: compares every row with one float copy of them per process (1.5 KB a
#: document): 3.5 ms at 74,728 documents on an idle core, about 10 ms here.
ANN_MIN = 200_000
#: Links per node and search breadth while building (usearch's ``connectivity``
#: and ``expansion_add``).
CONNECTIVITY = 16
EXPANSION_ADD = 128
#: Search breadth (usearch's ``expansion_search``), at least the candidates asked for.
EXPANSION_SEARCH = 256
#: Candidates taken from the graph and ranked again exactly.
RESCORE = 100
#: Documents within the filters up to which a filtered search is exact.
EXACT_POOL = 60_000
#: Most candidates asked of the graph for a filtered search (beyond: exact).
MOST_CANDIDATES = 20_000
#: Share of changed documents up to which an update changes the copied graph
#: (beyond: the graph is built again, which takes as long as the build).
UPDATE_SHARE = 0.2
#: Rows compared or added to the graph at a time while writing.
ROWS_PER_STEP = 65_536


def minimum() -> int:
    """:data:`ANN_MIN` as it is now (tests lower it)."""
    return ANN_MIN


def available() -> bool:
    """Whether the ``usearch`` package is installed (without importing it)."""
    from importlib.util import find_spec

    return find_spec("usearch") is not None


def _library():
    """usearch's ``Index`` class. ONNX Runtime (the model's) is imported first
    when installed: imported after usearch 2.26's extension, its import
    crashes the process (a segmentation fault), the other way round both work."""
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        pass
    from usearch.index import Index

    return Index


def _new_index():
    return _library()(ndim=384, metric="cos", dtype="i8", connectivity=CONNECTIVITY, expansion_add=EXPANSION_ADD)


def write_ann(
    generation: Path,
    rows,
    scales,
    *,
    base: Path | None = None,
    base_vectors: tuple[Any, Any] | None = None,
    threads: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> bool:
    """Write ``generation/vectors.usearch`` for the int8 ``rows`` ``(documents,
    384)`` and their ``scales`` (0: a deleted document, left out), or remove
    it below :data:`ANN_MIN` documents or without ``usearch``.

    With ``base`` (the generation this one was copied from) holding a graph,
    and ``base_vectors`` (that generation's rows and scales) differing from
    these in at most :data:`UPDATE_SHARE` of the documents, that graph is
    loaded and only the changed documents are removed and added again;
    otherwise the graph is built from every row.

    Args:
        threads: cores to build on.
        progress: called with ``(documents added, to add)`` now and then.

    Returns:
        Whether the generation has a graph.
    """
    import numpy as np

    path = generation / ANN_FILE
    path.unlink(missing_ok=True)  # a new file, never the hard-linked one of the base
    size = len(rows)
    if size < ANN_MIN or not available():
        return False
    live = np.asarray(scales) > 0
    index, todo = None, np.flatnonzero(live)
    if base is not None and base_vectors is not None and (base / ANN_FILE).is_file():
        index, todo = _changed(base, base_vectors, rows, scales, live)
    if index is None:
        index, todo = _new_index(), np.flatnonzero(live)
    step = max(ROWS_PER_STEP, len(todo) // 100)
    for start in range(0, len(todo), step):
        keys = todo[start : start + step]
        index.add(keys.astype(np.uint64), np.ascontiguousarray(rows[keys]), threads=max(1, threads))
        if progress is not None:
            progress(min(start + step, len(todo)), len(todo))
    temporary = path.with_name(path.name + ".tmp")
    index.save(str(temporary))
    os.replace(temporary, path)
    return True


def _changed(base: Path, base_vectors: tuple[Any, Any], rows, scales, live) -> tuple[Any, Any]:
    """``(the base's graph loaded, documents to add)`` when few documents
    changed, with the changed ones removed from it; ``(None, None)`` otherwise."""
    import numpy as np

    base_rows, base_scales = base_vectors
    size, shared = len(rows), min(len(rows), len(base_rows))
    differs = np.zeros(size, dtype=bool)
    differs[shared:] = True
    for start in range(0, shared, ROWS_PER_STEP):
        end = min(shared, start + ROWS_PER_STEP)
        differs[start:end] = (np.asarray(scales[start:end]) != np.asarray(base_scales[start:end])) | np.any(
            np.asarray(rows[start:end]) != np.asarray(base_rows[start:end]), axis=1
        )
    gone = np.arange(shared, len(base_rows))  # documents past this generation's end
    if np.count_nonzero(differs) + len(gone) > UPDATE_SHARE * size:
        return None, None
    try:
        index = _library().restore(str(base / ANN_FILE), view=False)
    except Exception:  # noqa: BLE001 - an unreadable old graph only costs building again
        return None, None
    if index is None:
        return None, None
    stale = np.concatenate([np.flatnonzero(differs[:shared]), gone]).astype(np.uint64)
    if len(stale):
        index.remove(stale)
    return index, np.flatnonzero(differs & live)


class Graph:
    """A generation's graph, memory-mapped, for searching (thread-safe).

    Args:
        path: the ``vectors.usearch`` file.

    Raises:
        OSError, ValueError, RuntimeError: the file cannot be read (the
            caller names it as damage).
    """

    def __init__(self, path: Path) -> None:
        index = _library().restore(str(path), view=True)
        if index is None:
            raise ValueError("not a usearch index")
        index.expansion_search = EXPANSION_SEARCH
        self.index = index
        self.size = len(index)

    def candidates(self, query, count: int):
        """Keys (int64 document numbers) of about the ``count`` rows nearest to
        ``query`` (unit float32 ``(384,)``), nearest first."""
        import numpy as np

        peak = float(np.abs(query).max())
        if peak == 0:
            return np.zeros(0, dtype=np.int64)
        quantized = np.rint(query * (127.0 / peak)).astype(np.int8)
        # The breadth is set once (a setting of the shared index); usearch
        # widens it to the count asked for when that is larger.
        found = self.index.search(quantized, min(count, self.size), threads=1)
        return np.asarray(found.keys, dtype=np.int64)


def candidates_wanted(count: int, pool: int | None, documents: int) -> int | None:
    """Candidates to ask the graph for, to find ``count`` documents among
    ``pool`` of ``documents`` (``None``: no filter); ``None`` when a filtered
    search should be exact instead (few documents in the filter, or too many
    candidates needed)."""
    wanted = max(RESCORE, count)
    if pool is None:
        return wanted
    if pool <= EXACT_POOL:
        return None
    needed = math.ceil(wanted * 1.5 * documents / max(pool, 1))
    return needed if needed <= MOST_CANDIDATES else None
