"""``searchengine check`` on an index folder: every byte and every document of the current generation.

Searching trusts a file whose stamp is unchanged since it was last verified
(:mod:`.integrity`); a check trusts nothing. It hashes every file the
generation's ``CHECKSUMS`` lists, then opens the generation and reads every
stored document, the facet columns and each segment's term arrays, so that damage the checksums cannot
see (a file damaged before its checksum was taken) shows too.
"""

from __future__ import annotations

import os
from pathlib import Path

from searchengine.engines.base import IndexCheck, PartCheck
from searchengine.engines.whoosh import integrity, store
from searchengine.errors import IndexDamagedError, IndexNotFoundError, IndexOutdatedError


def check_folder(index_dir: Path) -> IndexCheck:
    """Check the index in ``index_dir`` (see the module docstring).

    Raises:
        IndexNotFoundError: there is no index in ``index_dir``.
    """
    report = IndexCheck(location=str(index_dir), engine="whoosh", version=None, documents=None)
    try:
        generation = store.current_generation(index_dir)
    except IndexDamagedError as exc:
        report.problem = str(exc)
        return report
    if generation is None:
        raise IndexNotFoundError(f"{index_dir}: no index here (run 'searchengine index' first)")
    report.version = generation.name
    outdated = None
    try:
        store.check_layout(generation, index_dir)
    except IndexOutdatedError as exc:
        if not os.path.exists(generation / integrity.CHECKSUMS):
            report.problem = str(exc)  # an index of an older layout, without checksums
            return report
        outdated = str(exc)  # unless its LAYOUT file is damaged: the checksums say
    try:
        expected = integrity.read_checksums(generation)
    except IndexDamagedError as exc:
        report.problem = str(exc)
        return report
    for name in sorted(set(integrity.indexed_files(generation)) - expected.keys()):
        report.parts.append(
            PartCheck(
                name=name,
                size=(generation / name).stat().st_size,
                problem="not one of the index's files (the index did not write it)",
            )
        )
    for name, (crc, size) in expected.items():
        path = generation / name
        part = PartCheck(name=name, size=size)
        try:
            found = path.stat().st_size
            if found != size:
                part.problem = f"{found:,} bytes, written as {size:,}"
            elif integrity.crc32(path) != crc:
                part.problem = "checksum mismatch"
        except FileNotFoundError:
            part.problem = "missing"
        except OSError as exc:
            part.problem = f"cannot be read ({exc.strerror or exc})"
        report.parts.append(part)
    damaged = [part for part in report.parts if part.problem]
    if damaged:
        shown = ", ".join(part.name for part in damaged)
        report.problem = integrity.damaged(
            index_dir, f"{len(damaged)} of {len(report.parts)} files of {generation.name} ({shown})"
        )
        return report
    if outdated is not None:
        report.problem = outdated
        return report
    try:
        report.documents = _read_everything(generation)
    except IndexDamagedError as exc:
        report.problem = str(exc)
    return report


def _read_term_arrays(reader) -> int:
    """Read every segment's term arrays whole (:mod:`.termarrays`); returns the terms read.

    Raises what a damaged file raises (``CorruptIndexError``, ``zlib.error``)."""
    from searchengine.engines.whoosh.termarrays import segment_term_arrays

    read = 0
    for segment, _ in reader.leaf_readers():
        arrays = segment_term_arrays(segment)
        if arrays is not None:
            read += arrays.verify(segment.doc_frequency)
    return read


def _read_postings(reader) -> int:
    """Decode every block of postings of every term of every segment written
    with them (their pickles go through the restricted unpickler,
    :mod:`.safepickle`); returns the blocks read. A segment whose postings
    are arrays (:mod:`.arraypostings`) has none.

    Raises what a damaged or crafted block raises (``UnpicklingError``, ``zlib.error``, ...)."""
    from searchengine.engines.whoosh import internals

    blocks = 0
    for segment, _ in reader.leaf_readers():
        if getattr(internals.terms_reader(segment), "pickle_free", False):
            continue  # its postings are arrays, every one read by _read_term_arrays
        for fieldname, text in segment.all_terms():
            matcher = segment.postings(fieldname, text)
            if not hasattr(matcher, "_read_data"):  # inlined postings: decoded with the term
                continue
            while matcher.is_active():
                matcher._read_data()  # the block's pickle, header read on the way here
                blocks += 1
                matcher._next_block()
    return blocks


def _read_everything(generation: Path) -> int:
    """Open ``generation``, read every stored document, the facet columns,
    the term arrays and every block of postings; returns the document count.

    Raises:
        IndexDamagedError: something cannot be read, or the counts disagree.
    """
    from searchengine.engines.whoosh import columns

    index_dir = generation.parent
    try:
        try:
            ix = store.open_generation(generation, mapped=True)
        except Exception as exc:  # Whoosh raises many kinds on damage
            raise store.open_failure(generation, exc) from exc
        with ix.reader() as reader:
            documents = reader.doc_count()
            stored = sum(1 for _ in reader.all_stored_fields())
            _read_term_arrays(reader)
            _read_postings(reader)
            try:
                arrays = columns.map_columns(generation / columns.COLUMNS_FILE, reader)
            except (ValueError, KeyError, TypeError) as exc:  # the column file's own checks
                raise IndexDamagedError(
                    integrity.damaged(index_dir, f"{generation.name}'s facet columns cannot be read ({exc})")
                ) from exc
            if arrays is None:
                raise IndexDamagedError(
                    integrity.damaged(index_dir, f"{generation.name}'s facet columns belong to another generation")
                )
            del arrays  # (views of a map: released before the reader closes)
    except IndexDamagedError:
        raise
    except Exception as exc:  # Whoosh raises many kinds on damage
        if not store.is_damage(exc):
            raise
        raise IndexDamagedError(
            integrity.damaged(index_dir, f"{generation.name} cannot be read ({type(exc).__name__}: {exc})")
        ) from exc
    if stored != documents:
        raise IndexDamagedError(
            integrity.damaged(index_dir, f"{generation.name} lists {documents:,} documents and holds {stored:,}")
        )
    return documents
