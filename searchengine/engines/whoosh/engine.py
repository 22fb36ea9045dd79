"""The embedded engine: an index folder of Whoosh generations, searched in this process.

:class:`WhooshEngine` is what :class:`searchengine.search.SearchIndex` holds
for an index folder: the generation lifecycle. It follows the folder's
``CURRENT`` pointer (a rebuild publishes a new generation, and the next call
uses it), verifies a generation's files when it opens it and before every
call, and runs each call on one
:class:`~searchengine.engines.whoosh.searcher.WhooshSearcher`, the engine's
view of one generation (:mod:`.searcher`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from searchengine.engines.whoosh import integrity, store
from searchengine.engines.whoosh.searcher import WhooshSearcher
from searchengine.errors import IndexDamagedError, IndexNotFoundError

if TYPE_CHECKING:
    from searchengine.engines.base import IndexCheck

T = TypeVar("T")


class WhooshEngine:
    """The embedded index in folder ``path``. Safe to share between threads
    (their calls take turns).

    It follows the folder's ``CURRENT`` pointer: after a rebuild publishes
    a new generation, the next call uses it, without a restart. A
    generation's files are verified against their checksums when it is
    opened (:mod:`.integrity`), and looked at (a ``stat`` each) before every
    call: a file written to, cut or removed under an open searcher is never
    read, and the call raises IndexDamagedError until the files are restored
    or a rebuild publishes a new generation.

    Args:
        path: the index folder.
        lazy: open the index at the first call instead of now (a server
            started again while its index is damaged answers 503 until it is
            rebuilt, instead of failing to start).

    Raises:
        IndexNotFoundError: (from any call) there is no index at ``path``.
        IndexDamagedError: the index exists but cannot be read, or is damaged.
    """

    name = "whoosh"

    def __init__(self, path: str | os.PathLike, *, lazy: bool = False) -> None:
        self.path = Path(path)
        # One call at a time: a Whoosh searcher reads its postings through
        # shared file positions, so two threads searching it at once read
        # each other's blocks (seen as zlib errors and "damaged postings").
        self._calls = threading.Lock()
        self._local = threading.local()
        self._generation: Path | None = None
        self._searcher: WhooshSearcher | None = None
        self._stamps: dict = {}  # the open generation's verified files
        # The last generation found damaged, its files' stamps then, and the
        # message: refused again at once until a file or CURRENT changes.
        self._refused: tuple[Path, object, str] | None = None
        self._network_checked = False
        if not lazy:
            self.call(lambda searcher: None)

    @property
    def location(self) -> str:
        """The index folder, as given."""
        return str(self.path)

    def call(self, work: Callable[[WhooshSearcher], T]) -> T:
        """Run ``work(searcher)`` on the current generation's :class:`WhooshSearcher`.

        Calls are serialised (see ``_calls``), so a searcher replaced by a
        newer generation is never in use when it is closed. A call made from
        inside ``work`` reuses the same searcher, so one call sees one
        generation. Searching is CPU-bound Python, so threads lose no
        throughput by taking turns.
        """
        held = getattr(self._local, "searcher", None)
        if held is not None:
            return work(held)
        with self._calls:
            searcher = self._switch()
            self._local.searcher = searcher
            try:
                return work(searcher)
            except Exception as exc:
                if store.is_damage(exc):
                    generation = self._generation  # set with the searcher by _switch
                    name = generation.name if generation is not None else "the open generation"
                    # Read the files afresh next time: they may be restored from a backup.
                    self._drop()
                    raise IndexDamagedError(
                        integrity.damaged(self.path, f"{name} cannot be read ({type(exc).__name__}: {exc})")
                    ) from exc
                raise
            finally:
                self._local.searcher = None

    def current(self) -> WhooshSearcher:
        """The current generation's searcher, for single-threaded tools and
        tests: unlike :meth:`call`, it is not held, so a rebuild noticed by
        another call may close it."""
        return self.call(lambda searcher: searcher)

    def _switch(self) -> WhooshSearcher:
        """The current generation's searcher, reopened when ``CURRENT`` or one of its files changed."""
        generation = store.current_generation(self.path)
        if generation is None:
            raise IndexNotFoundError(f"{self.path}: no index here (run 'searchengine index' first)")
        if generation == self._generation and self._searcher is not None:  # (both are set, or neither)
            if integrity.changed(generation, self._stamps) is None:
                return self._searcher
            self._drop()  # before anything reads the changed file
        refused = self._refused
        if refused is not None and refused[0] == generation and refused[1] == integrity.snapshot(generation):
            raise IndexDamagedError(refused[2])
        try:
            opened, stamps = self._open(generation)
        except IndexDamagedError as exc:
            self._refused = (generation, integrity.snapshot(generation), str(exc))
            raise
        self._drop()
        self._refused = None
        self._searcher, self._generation, self._stamps = opened, generation, stamps
        return opened

    def _open(self, generation: Path):
        """A searcher over ``generation``, verified, and its files' stamps."""
        from searchengine.engines.whoosh.bm25f import weighting
        from searchengine.engines.whoosh.facetcolumns import SearcherCache

        stamps = store.check_generation(generation, self.path)
        if not self._network_checked:
            self._network_checked = True
            kind = store.network_filesystem(self.path)
            if kind is not None:
                import logging

                logging.getLogger("searchengine").warning(
                    "warning: %s is on a network file system (%s): a rebuild from another machine can stop "
                    "this process; keep the index on a local disk",
                    self.path,
                    kind,
                )
        try:
            ix = store.open_generation(generation, mapped=True)
            searcher = ix.searcher(weighting=weighting())
        except Exception as exc:  # whoosh raises many kinds on damage
            raise store.open_failure(generation, exc) from exc
        return WhooshSearcher(searcher, SearcherCache(searcher, folder=generation)), stamps

    def _drop(self) -> None:
        """Close the open generation's searcher, if any."""
        if self._searcher is not None:
            self._searcher.searcher.close()
        self._searcher = self._generation = None
        self._stamps = {}

    def check(self) -> IndexCheck:
        """The :class:`~searchengine.engines.IndexCheck` of the folder's current
        generation: every file's checksum and a full read of its documents
        (:func:`.checking.check_folder`; it opens nothing of this engine's).

        Raises:
            IndexNotFoundError: there is no index in the folder.
        """
        from searchengine.engines.whoosh.checking import check_folder

        return check_folder(self.path)

    def close(self) -> None:
        """Release the open files; the engine must not be used afterwards."""
        with self._calls:  # after the running call, if any
            self._drop()
