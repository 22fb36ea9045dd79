"""Record vectors of the embedded index: one row per document, kept with each generation.

A generation built with vectors holds two NumPy files beside its Whoosh
files (checksummed like them, :mod:`.integrity`)::

    vectors.npy        int8, shape (documents, 384): each row the record's
                       unit vector divided by its scale, rounded
    vector-scales.npy  float32, shape (documents,): the scale of each row
                       (its largest magnitude / 127); 0 for a deleted document

Row ``i`` belongs to Whoosh document number ``i`` (deleted documents keep
their rows until a merge). Scalar quantisation to int8 keeps a 74,728-record
index's vectors at 29 MB and changes cosine similarities by about 0.002.
Both files are memory-mapped; the first semantic search of a generation
turns them into one float32 matrix (4 × the int8 size in memory) that the
searches of that generation share.

Vectors are found by content (the SHA-1 of the encoded text): a record
whose title and abstract did not change keeps its vector from the generation
an update copies, so an update encodes only new and changed records. While
encoding, the vectors made so far go to the index folder's ``.vectors/``
cache (:class:`VectorCache`), so a build stopped while encoding (Ctrl-C, a
crash) starts again where it stopped; the cache is emptied once they are in
a published generation.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from searchengine.engines.whoosh.ann import ANN_FILE, write_ann
from searchengine.engines.whoosh.ann import available as ann_available
from searchengine.engines.whoosh.ann import minimum as ann_min
from searchengine.semantic import CACHE_DIR

VECTORS_FILE = "vectors.npy"
SCALES_FILE = "vector-scales.npy"
# Texts per encoding step; the cache is written at least every CHUNK_SECONDS.
ENCODE_STEP = 64
# Records to encode from which one process per core is started.
PARALLEL_ENCODE_MIN = 512
CHUNK_SECONDS = 30.0
# Rows turned into floats at a time by a search without the float matrix (12 MB).
ROWS_PER_STEP = 8192


def has_vectors(generation: Path) -> bool:
    """Whether ``generation`` was written with vectors."""
    return (generation / VECTORS_FILE).is_file()


def quantize(vectors):
    """``(int8 rows, float32 scales)`` of a float32 array ``(n, d)``: each row
    divided by its largest magnitude / 127 and rounded."""
    import numpy as np

    peak = np.abs(vectors).max(axis=1)
    scales = (peak / 127.0).astype(np.float32)
    safe = np.where(scales > 0, scales, 1.0)[:, None]
    return np.rint(vectors / safe).astype(np.int8), scales


class VectorCache:
    """Vectors by content key (:func:`searchengine.semantic.encoder.content_key`)
    in ``INDEX_DIR/.vectors/<model>/``: ``chunk-*.npz`` files, each with
    ``keys`` (uint8, (n, 20)), ``rows`` (int8, (n, 384)) and ``scales``
    (float32, (n,)), written whole (temporary name, then renamed), so a
    chunk is either there or not. Used by one writer at a time (it holds
    the index's write lock).
    """

    def __init__(self, index_dir: Path) -> None:
        from searchengine.semantic import MODEL_ID

        # One folder per model: vectors of another model are never mixed in.
        self.folder = index_dir / CACHE_DIR / re.sub(r"[^A-Za-z0-9.-]+", "-", MODEL_ID)
        # A linked cache is shared with other indexes (evaluation's): never pruned.
        self.shared = (index_dir / CACHE_DIR).is_symlink()
        self._found: dict[bytes, tuple[int, int]] = {}
        self._chunks: list = []

    def load(self) -> None:
        """Read every chunk's keys (a damaged chunk is deleted: its vectors are encoded again)."""
        import numpy as np

        if not self.folder.is_dir():
            return
        for path in sorted(self.folder.glob("chunk-*.npz")):
            try:
                with np.load(path) as data:
                    keys, rows, scales = data["keys"], data["rows"], data["scales"]
                if not len(keys) == len(rows) == len(scales):
                    raise ValueError("lengths differ")
            except Exception:  # noqa: BLE001 - any unreadable chunk is only lost work
                path.unlink(missing_ok=True)
                continue
            number = len(self._chunks)
            self._chunks.append((path, rows, scales))
            for row, key in enumerate(keys):
                self._found[key.tobytes()] = (number, row)

    def __len__(self) -> int:
        return len(self._found)

    def __contains__(self, key: bytes) -> bool:
        return key in self._found

    def get(self, key: bytes) -> tuple[Any, Any]:
        """``(int8 row, scale)`` of ``key``; raises KeyError when not cached."""
        number, row = self._found[key]
        _, rows, scales = self._chunks[number]
        return rows[row], scales[row]

    def add(self, keys: list[bytes], rows, scales) -> None:
        """Write one chunk holding ``keys``' vectors."""
        import numpy as np

        if not keys:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"chunk-{time.time_ns():020d}-{os.getpid()}.npz"
        temporary = path.with_name("." + path.name)
        with open(temporary, "wb") as out:
            np.savez(
                out, keys=np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), -1), rows=rows, scales=scales
            )
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
        number = len(self._chunks)
        self._chunks.append((path, rows, scales))
        for row, key in enumerate(keys):
            self._found[key] = (number, row)

    def clear(self) -> None:
        """Delete every chunk (their vectors are in a published generation now);
        a linked, shared cache is kept."""
        if self.shared:
            return
        for path, _, _ in self._chunks:
            path.unlink(missing_ok=True)
        self._found, self._chunks = {}, []


def write_vectors(
    generation: Path,
    reader,
    index_dir: Path,
    *,
    base: Path | None = None,
    threads: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Write ``generation``'s vector files for every live document of ``reader``
    (its Whoosh reader), encoding the records that neither ``base`` (the
    generation it was copied from) nor the cache holds with the same text.
    Past :data:`~.ann.ANN_MIN` documents the generation's graph for
    approximate search is written too (:func:`.ann.write_ann`). Once they
    are written, the cache is emptied: the vectors are in the generation,
    so an index keeps each vector once.

    Args:
        threads: cores to encode on: that many processes, each running the
            model on one thread (one process, and no new one, for a few records).
        progress: called with ``(encoded so far, to encode)`` after each
            step, and once with ``(0, to encode)`` before the first; its
            ``graph`` method, if it has one, with ``(added, to add)`` while
            the graph is built (minutes past a million documents).

    Returns:
        The number of records encoded (the rest came from the cache).

    Raises:
        SemanticUnavailableError: the ``semantic`` extra is not installed.
        KeyboardInterrupt: passed on after the vectors encoded so far are
            written to the cache.
    """
    import numpy as np

    from searchengine.semantic import DIMENSIONS
    from searchengine.semantic.encoder import EncodingPool, content_key, record_text

    cache = VectorCache(index_dir)
    cache.load()
    kept = _base_vectors(base)
    size = reader.doc_count_all()
    keys: list[bytes | None] = [None] * size
    wanted: dict[bytes, str] = {}
    for docnum, stored in reader.iter_docs():
        text = record_text(stored.get("title", ""), stored.get("abstract", ""))
        key = keys[docnum] = content_key(text)
        if key not in cache and key not in kept[0]:
            wanted[key] = text
    todo = list(wanted.items())
    if todo:
        if progress is not None:
            progress(0, len(todo))
        pending: list[tuple[list[bytes], object, object]] = []
        written_at = time.monotonic()
        done = 0

        def save() -> None:
            if pending:
                cache.add(
                    [k for part in pending for k in part[0]],
                    np.concatenate([p[1] for p in pending]),
                    np.concatenate([p[2] for p in pending]),
                )
                pending.clear()

        steps = [todo[start : start + ENCODE_STEP] for start in range(0, len(todo), ENCODE_STEP)]
        # One single-threaded model per core, for enough records to pay for starting them.
        pool = EncodingPool(threads, processes=len(todo) >= PARALLEL_ENCODE_MIN and len(steps) > 1)
        try:
            encoded = pool.imap([[text for _, text in step] for step in steps])
            for step, vectors in zip(steps, encoded):
                rows, scales = quantize(vectors)
                pending.append(([key for key, _ in step], rows, scales))
                done += len(step)
                if time.monotonic() - written_at >= CHUNK_SECONDS:
                    save()
                    written_at = time.monotonic()
                if progress is not None:
                    progress(done, len(todo))
        finally:
            pool.close()
            save()  # what was encoded is kept, even when stopped
    rows = np.zeros((size, DIMENSIONS), dtype=np.int8)
    scales = np.zeros(size, dtype=np.float32)
    rows_of, base_rows, base_scales = kept
    for docnum, kept_key in enumerate(keys):
        if kept_key is None:
            continue
        if kept_key in rows_of:
            rows[docnum], scales[docnum] = base_rows[rows_of[kept_key]], base_scales[rows_of[kept_key]]
        else:
            rows[docnum], scales[docnum] = cache.get(kept_key)
    _save_array(generation / VECTORS_FILE, rows)
    _save_array(generation / SCALES_FILE, scales)
    base_vectors = None if base_rows is None else (base_rows, base_scales)
    on_graph = getattr(progress, "graph", None)
    write_ann(generation, rows, scales, base=base, base_vectors=base_vectors, threads=threads, progress=on_graph)
    cache.clear()
    return len(todo)


def _base_vectors(base: Path | None) -> tuple[dict[bytes, int], Any, Any]:
    """``({content key: row}, rows, scales)`` of the vectors ``base`` holds
    (numpy arrays; ``({}, None, None)`` when it has none); the keys come
    from its stored titles and abstracts."""
    from searchengine.engines.whoosh import store
    from searchengine.semantic.encoder import content_key, record_text

    if base is None or not has_vectors(base):
        return {}, None, None
    import numpy as np

    found: dict[bytes, int] = {}
    try:
        rows, scales = np.load(base / VECTORS_FILE, mmap_mode="r"), np.load(base / SCALES_FILE, mmap_mode="r")
        ix = store.open_generation(base)
        with ix.reader() as reader:
            if reader.doc_count_all() != len(rows) or len(scales) != len(rows):
                return {}, None, None  # not this generation's: encoded again, never mixed up
            for docnum, stored in reader.iter_docs():
                found[content_key(record_text(stored.get("title", ""), stored.get("abstract", "")))] = docnum
    except Exception:  # noqa: BLE001 - an unreadable old generation only costs encoding again
        return {}, None, None
    return found, rows, scales


def _save_array(path: Path, array) -> None:
    import numpy as np

    # A new file, never the hard-linked one of the generation this one was copied from.
    path.unlink(missing_ok=True)
    with open(path, "wb") as out:
        np.save(out, array)


class GenerationVectors:
    """The vectors of one open generation, for searching (thread-safe).

    Args:
        generation: the generation folder (:func:`has_vectors` true).
        documents: its Whoosh ``doc_count_all()``; a file of another length is damage.

    Raises:
        IndexDamagedError: the files cannot be read or do not fit the generation.
    """

    def __init__(self, generation: Path, documents: int) -> None:
        import numpy as np

        from searchengine.engines.whoosh.integrity import damaged
        from searchengine.errors import IndexDamagedError
        from searchengine.semantic import DIMENSIONS

        try:
            self.rows = np.load(generation / VECTORS_FILE, mmap_mode="r")
            self.scales = np.load(generation / SCALES_FILE, mmap_mode="r")
        except (OSError, ValueError) as exc:
            raise IndexDamagedError(damaged(generation.parent, f"its vector files cannot be read ({exc})")) from exc
        if self.rows.shape != (documents, DIMENSIONS) or self.scales.shape != (documents,):
            raise IndexDamagedError(
                damaged(generation.parent, f"its vectors ({self.rows.shape}) do not fit its {documents} documents")
            )
        self._matrix = None
        self._lock = threading.Lock()
        # Past ANN_MIN documents no float copy of every row is made (4 bytes a number).
        self.by_slices = documents >= ann_min()
        self.graph = None
        if (generation / ANN_FILE).is_file() and ann_available():
            from searchengine.engines.whoosh.ann import Graph

            try:
                self.graph = Graph(generation / ANN_FILE)
            except (OSError, ValueError, RuntimeError) as exc:
                raise IndexDamagedError(damaged(generation.parent, f"its {ANN_FILE} cannot be read ({exc})")) from exc

    @property
    def matrix(self):
        """float32 ``(documents, 384)``: the unit vectors (deleted documents:
        zeros). Made on first use (4 bytes a number); a generation with a
        graph never needs it."""
        with self._lock:
            if self._matrix is None:
                import numpy as np

                self._matrix = np.multiply(self.rows, self.scales[:, None], dtype=np.float32)
            return self._matrix

    def similarities(self, query, docnums=None):
        """Cosine similarity of ``query`` (unit float32 ``(384,)``) to every
        document (``docnums=None``) or to the documents ``docnums`` (an int
        array): float32, one per document."""
        import numpy as np

        if self.by_slices or self.graph is not None:
            # Large: from the int8 rows, a slice at a time (no float copy of them all).
            wanted = np.arange(len(self.rows)) if docnums is None else np.asarray(docnums, dtype=np.int64)
            out = np.empty(len(wanted), dtype=np.float32)
            for start in range(0, len(wanted), ROWS_PER_STEP):
                part = wanted[start : start + ROWS_PER_STEP]
                rows = self.rows[part] if docnums is not None else self.rows[start : start + len(part)]
                out[start : start + len(part)] = (
                    np.einsum("ij,j->i", rows.astype(np.float32), query) * self.scales[part]
                )
            return out
        # einsum, not BLAS: BLAS's threads wait for a busy machine's other
        # core (a hybrid search took twice as long at load 3), and a server
        # answers its requests in parallel anyway.
        matrix = self.matrix if docnums is None else self.matrix[docnums]
        return np.einsum("ij,j->i", matrix, query)

    def nearest(self, query, count: int, pool=None, *, every=None):
        """``(docnums, similarities)`` of the ``count`` documents nearest to
        ``query`` (unit float32 ``(384,)``) among ``pool`` (ascending int
        array of document numbers; ``None``: every document), in no set
        order, deleted documents and those of cosine 0 or less left out.

        Exact (every row, or every row of the pool) without a graph and for
        pools of at most :data:`~.ann.EXACT_POOL` documents; else the
        graph's nearest candidates (more for a pool: those outside it are
        dropped), ranked again exactly. Should a pool's candidates be fewer
        than ``count``, the pool is searched exactly. ``every``: the
        similarities to every document, when the caller has them already.
        """
        import numpy as np

        from searchengine.engines.whoosh.ann import candidates_wanted

        count = max(0, count)
        if self.graph is not None and count:
            asked = candidates_wanted(count, None if pool is None else len(pool), self.graph.size)
            if asked is not None:
                found = self.graph.candidates(query, asked)
                if pool is not None:
                    at = np.minimum(np.searchsorted(pool, found), len(pool) - 1)
                    found = found[pool[at] == found]
                if pool is None or len(found) >= count:
                    return _best(found, self.similarities(query, found), count)
        if every is None and pool is None:
            every = self.similarities(query)
        if pool is None:
            return _best(np.arange(len(self.rows)), every, count)
        pool = np.asarray(pool, dtype=np.int64)
        return _best(pool, every[pool] if every is not None else self.similarities(query, pool), count)

    def vector(self, docnum: int):
        """The unit vector of one document (float32 ``(384,)``)."""
        import numpy as np

        return np.multiply(self.rows[docnum], self.scales[docnum], dtype=np.float32)


def _best(docnums, similarities, count: int):
    """``(docnums, similarities)`` of the ``count`` highest of ``similarities``
    (those above 0: deleted documents' rows are zeros)."""
    import numpy as np

    wanted = min(count, len(similarities))
    if not wanted:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    best = np.argpartition(-similarities, wanted - 1)[:wanted]
    best = best[similarities[best] > 0]
    return np.asarray(docnums)[best], similarities[best]
