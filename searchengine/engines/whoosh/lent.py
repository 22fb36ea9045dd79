"""The embedded index's record vectors lent by id to another engine's build
(``searchengine index --index URL --vectors-from INDEX_DIR``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from searchengine.errors import IndexDamagedError, IndexNotFoundError, InputError, SearchEngineError


class EmbeddedVectors:
    """The record vectors an embedded index holds, by id (``index --vectors-from``).

    Opens the current generation of an embedded index folder (or the
    generation folder given, or the one holding the ``vectors.npy`` file
    given) and reads, for each id asked, its document's stored title and
    abstract and its vector row. A vector is taken only when the text the
    record is encoded from (:func:`~searchengine.semantic.encoder.record_text`)
    is the same, compared by its content key. Rows are int8 with a scale
    (:mod:`searchengine.engines.whoosh.vectors`): a vector taken from them is
    scaled back and made unit length again (cosine similarity within about
    0.002 of the encoded one).

    Use it as a context manager (the index is closed with it).

    Raises (on entering):
        InputError: the path is not an index with vectors.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._stack: list[Any] = []
        self._searcher: Any = None
        self._rows: Any = None
        self._scales: Any = None
        self.taken = 0

    def _generation(self) -> Path:
        from searchengine.engines.whoosh import store
        from searchengine.engines.whoosh.vectors import VECTORS_FILE

        path = self.path
        if path.is_file() and path.name == VECTORS_FILE:
            return path.parent
        if (path / VECTORS_FILE).is_file():
            return path
        if not path.is_dir():
            raise InputError(f"{path}: no such index folder (--vectors-from takes an embedded index)")
        try:
            generation = store.current_generation(path)
        except (IndexDamagedError, SearchEngineError) as exc:
            raise InputError(f"{path}: cannot read its vectors: {exc}") from None
        if generation is None:
            raise InputError(f"{path}: no index here (--vectors-from takes an embedded index)")
        return generation

    def __enter__(self) -> EmbeddedVectors:
        import numpy as np

        from searchengine.engines.whoosh import store
        from searchengine.engines.whoosh.vectors import SCALES_FILE, VECTORS_FILE, has_vectors

        generation = self._generation()
        if not has_vectors(generation):
            raise InputError(f"{self.path}: this index keeps no vectors (build it with 'searchengine index --vectors')")
        try:
            ix = store.open_generation(generation)
            searcher = ix.searcher()
            rows = np.load(generation / VECTORS_FILE, mmap_mode="r")
            scales = np.load(generation / SCALES_FILE, mmap_mode="r")
        except (OSError, ValueError, IndexNotFoundError) as exc:
            raise InputError(f"{self.path}: cannot read its vectors ({exc})") from None
        except Exception as exc:  # noqa: BLE001 - Whoosh's errors for a damaged index are many
            if not store.is_damage(exc):
                raise
            raise InputError(f"{self.path}: {store.cannot_open(generation, exc)}") from None
        if len(rows) != searcher.doc_count_all() or len(scales) != len(rows):
            searcher.close()
            raise InputError(f"{self.path}: its vector files do not match its documents (damaged)")
        self._searcher, self._rows, self._scales = searcher, rows, scales
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._searcher is not None:
            self._searcher.close()
            self._searcher = None

    def vectors(self, keys: dict[str, str]) -> dict[str, list[float]]:
        """``{id: unit vector}`` of the ids of ``keys`` (``{id: content key, hex}``)
        that the index holds with the same content key."""
        import numpy as np

        from searchengine.semantic.encoder import content_key, record_text

        searcher, found = self._searcher, {}
        for doc_id, key in keys.items():
            docnum = searcher.document_number(id=doc_id)
            if docnum is None:
                continue
            stored = searcher.stored_fields(docnum)
            if content_key(record_text(stored.get("title", ""), stored.get("abstract", ""))).hex() != key:
                continue
            vector = self._rows[docnum].astype(np.float32) * float(self._scales[docnum])
            norm = float(np.linalg.norm(vector))
            if norm > 0:
                found[doc_id] = (vector / norm).tolist()
        self.taken += len(found)
        return found
