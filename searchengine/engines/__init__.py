"""Index engines: the door between the engine-free pipelines and the engine that holds an index.

This package is the only code that chooses an engine for an index location
(:func:`check_location`, :func:`open_engine`, :func:`open_writer`,
:func:`needs_build`), each taking the text as given or the
:class:`~searchengine.engines.location.Location` it was read into once: a folder is the embedded engine
(:mod:`searchengine.engines.whoosh`, the only package that imports
Whoosh); an ``http(s)://host:port/NAME`` URL is an index on an OpenSearch
cluster (:mod:`searchengine.engines.opensearch`, the only package that
imports ``opensearchpy``). The CLI, the web front end and the Python API
hand a location over unread.

The search pipeline (:mod:`searchengine.search`) asks an :class:`Engine` for
:class:`Searcher` s and never holds an engine's objects; it passes back what
the engine returned (its matches). The ingest pipeline
(:mod:`searchengine.indexer`) hands a :class:`Writer` documents. These faces
are written down as protocols in :mod:`searchengine.engines.base` (and
importable from here); the behaviour they promise (hits, order, totals,
facet counts, paging, snippets, errors) is checked for every engine by the
same tests (``tests/contract/``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from searchengine.engines.base import Corrections, Engine, IndexCheck, Lexicon, Matches, PartCheck, Searcher, Writer
from searchengine.engines.location import Location, is_cluster

__all__ = [
    "Corrections",
    "Engine",
    "IndexCheck",
    "Lexicon",
    "Location",
    "Matches",
    "PartCheck",
    "Searcher",
    "Writer",
    "check_index",
    "check_location",
    "holds_index",
    "is_cluster",
    "needs_build",
    "open_engine",
    "open_writer",
]


def check_index(location: str | os.PathLike | Location) -> IndexCheck:
    """Verify the whole index at ``location``: every file's checksum and a
    full read of its documents (embedded), or the layout, health and shard
    copies (cluster). Damage is reported in the result, not raised.

    Raises:
        IndexNotFoundError: there is no index there.
        ClusterError: the cluster cannot be reached.
        InputError: a cluster location is malformed.
    """
    engine = open_engine(location, lazy=True)
    try:
        return engine.check()
    finally:
        engine.close()


def check_location(location: str | os.PathLike | Location) -> str | Path:
    """``location`` checked and in its working form: a cluster URL as text (a
    ``Path`` would fold its ``//``), a folder as a ``Path``
    (:attr:`searchengine.engines.location.Location.working`).

    Raises:
        InputError: the text is empty, a cluster URL is malformed (naming
            the part), text meant as a URL is not ``http(s)://`` (``htp://``,
            ``http:/``, ``host:9200/NAME``: never taken for a folder), or the
            folder is a file.
    """
    return Location.parse(location).working


def holds_index(folder: Path) -> bool:
    """Whether ``folder`` is an index folder of the embedded engine (readers skip it)."""
    from searchengine.engines.whoosh.store import holds_index

    return holds_index(folder)


def needs_build(location: str | os.PathLike | Location) -> bool:
    """Whether a first use should build the index at ``location``: a folder
    without an index of this version's layout (waiting for another process's
    build first). An index on a cluster is named by the user and never built
    implicitly: ``False``."""
    location = Location.parse(location)
    if location.is_cluster:
        return False
    from searchengine.engines.whoosh.store import needs_build

    return needs_build(location.path)


def open_writer(
    location: str | os.PathLike | Location,
    *,
    mode: str,
    lock_timeout: float,
    jobs: int | None = None,
    memory_mb: int = 512,
    vectors: bool | None = None,
    on_encode: Callable[[int, int], None] | None = None,
    vectors_from: str | os.PathLike[str] | None = None,
) -> Writer:
    """A :class:`Writer` for the index at ``location`` (not entered yet).

    Args:
        mode: ``"build"`` (a new index from scratch), ``"update"`` (documents
            added to the current index, or a build without one) or ``"remove"``.
        lock_timeout: seconds to wait for another writer.
        jobs: indexing processes (embedded) or bulk requests in flight (cluster).
        memory_mb: memory for posting buffers or bulk requests.
        vectors: keep record vectors for semantic search (``None``: as the
            index does now; see :mod:`searchengine.semantic`).
        on_encode: called with ``(encoded, to encode)`` while vectors are encoded.
        vectors_from: an embedded index whose vectors a cluster build takes
            for records of the same id and text instead of encoding them
            (:class:`~searchengine.engines.whoosh.lent.EmbeddedVectors`).

    Raises:
        InputError: the location is malformed (:func:`check_location`), or
            ``vectors_from`` is given for an index folder.
        SearchEngineError: opensearch-py is not installed.
    """
    location = Location.parse(location)
    if vectors_from is not None and location.cluster is None:
        from searchengine.errors import InputError

        raise InputError(
            "--vectors-from is for an index on a cluster (an index folder keeps the vectors "
            "of its own records from one build to the next)"
        )
    if location.cluster is not None:
        from searchengine.engines.opensearch.writer import ClusterWriter

        lent = None
        if vectors_from is not None:  # the embedded engine reads its own index
            from searchengine.engines.whoosh.lent import EmbeddedVectors

            lent = EmbeddedVectors(vectors_from)

        return ClusterWriter(
            location.cluster,
            mode=mode,
            lock_timeout=lock_timeout,
            jobs=jobs,
            memory_mb=memory_mb,
            vectors=vectors,
            on_encode=on_encode,
            vectors_from=lent,
        )
    from searchengine.engines.whoosh.writer import WhooshWriter

    return WhooshWriter(
        location.path,
        mode=mode,
        lock_timeout=lock_timeout,
        jobs=jobs,
        memory_mb=memory_mb,
        vectors=vectors,
        on_encode=on_encode,
    )


def open_engine(location: str | os.PathLike | Location, *, lazy: bool = False) -> Engine:
    """The engine holding the index at ``location``: an index folder, or an
    OpenSearch URL ``http(s)://[user:password@]host:port[,host:port…]/NAME``.
    With ``lazy``, nothing is opened before the first call (a cluster's
    engine never opens anything before it).

    Raises:
        IndexNotFoundError: there is no index there.
        IndexDamagedError: the index cannot be opened.
        InputError: a cluster location is malformed.
        SearchEngineError: opensearch-py is not installed.
    """
    location = Location.parse(location)
    if location.cluster is not None:
        from searchengine.engines.opensearch.engine import OpenSearchEngine

        return OpenSearchEngine(location.cluster)

    from searchengine.engines.whoosh.engine import WhooshEngine

    return WhooshEngine(location.path, lazy=lazy)
