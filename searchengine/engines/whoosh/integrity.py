"""Checksums of a generation's files: written at commit, verified at open.

Each generation holds ``CHECKSUMS``, one line per index file::

    searchengine checksums 1: crc32 bytes name
    6f1c2a9e 11565771 MAIN_a3btwr6koebyjhb7.seg
    0b4d1e77 9568 _MAIN_1.toc
    end 5a0c33d1

(the last line: the checksum of the lines above it).

CRC-32 (zlib's, the ISO 3309 polynomial) as Lucene's file footers use it:
it finds any burst of damage up to 32 bits and all but one in 2^32 others,
at about 1.7 GB/s here. A cut, extended or removed file is found from its
size alone.

Hashing every file at every open would add ~25 ms per 40 MB of index to a
cold command-line search, so the bytes of a file are hashed again only when
the file may have changed since they were last verified: ``VERIFIED`` keeps
each verified file's inode, size and modification time (nanoseconds), as
the writer and every later verification saw them. Writing into a file
(zeros over a segment, a copy over it) changes its modification time, so
the next open hashes it and finds the damage; a file the file system never
touched is trusted. ``searchengine check`` hashes everything regardless.
``VERIFIED`` is a cache: when it is missing, stale or cannot be written (a
read-only index) every file is hashed, and nothing else changes.
"""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass
from pathlib import Path

from searchengine.errors import IndexDamagedError

CHECKSUMS = "CHECKSUMS"
VERIFIED = "VERIFIED"
_HEADER = "searchengine checksums 1: crc32 bytes name"
_CHUNK = 1 << 22


@dataclass(frozen=True)
class Stamp:
    """What the file system says of one file: inode, size in bytes and
    modification time in nanoseconds. Equal stamps: the bytes were not written since."""

    inode: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, path: Path) -> Stamp:
        """The stamp of ``path`` now. Raises ``OSError`` (``FileNotFoundError``) as ``os.stat``."""
        found = os.stat(path)
        return cls(found.st_ino, found.st_size, found.st_mtime_ns)


def indexed_files(generation: Path) -> list[str]:
    """The names of the files a checksum covers: every file of the
    generation but lock files, temporary files and the two lists themselves, sorted."""
    return sorted(
        entry.name
        for entry in generation.iterdir()
        if entry.is_file()
        and entry.name not in (CHECKSUMS, VERIFIED)
        and "LOCK" not in entry.name.upper()
        and not entry.name.endswith(".tmp")
        and not entry.name.startswith(".")
    )


def crc32(path: Path) -> int:
    """CRC-32 of the whole file at ``path``. Raises ``OSError``."""
    value = 0
    with open(path, "rb", buffering=0) as handle:
        while chunk := handle.read(_CHUNK):
            value = zlib.crc32(chunk, value)
    return value


def write_checksums(generation: Path, base: Path | None = None) -> None:
    """Write ``CHECKSUMS`` for every file of ``generation`` (after the last
    file is written, before the generation is published), and ``VERIFIED``
    for them. Written under a temporary name and renamed into place: an
    update's generation starts as links to the previous one's files.

    ``base``: the generation an update started from. A file of both that
    ``base`` verified with the stamp it has now (the same inode: a link
    never written since) keeps ``base``'s checksum instead of being read
    again, so an update hashes what it wrote, not the whole index.
    """
    known = _verified_checksums(base) if base is not None else {}
    lines, stamps = [_HEADER], {}
    for name in indexed_files(generation):
        path = generation / name
        stamp = Stamp.of(path)
        crc = known.get((name, stamp))
        lines.append(f"{crc32(path) if crc is None else crc:08x} {stamp.size} {name}")
        stamps[name] = stamp
    body = "\n".join(lines) + "\n"
    # The list's own checksum last: damage to the list is named as such.
    _replace(generation / CHECKSUMS, body + _end_line(body) + "\n")  # made durable by store.publish
    _write_verified(generation, stamps)


def _verified_checksums(generation: Path) -> dict[tuple[str, Stamp], int]:
    """``{(name, stamp): crc32}`` of the files of ``generation`` whose bytes
    were verified (or written) with that stamp; empty when either list is
    missing or damaged (then every file is hashed)."""
    try:
        sums = read_checksums(generation)
    except (IndexDamagedError, OSError):
        return {}
    return {
        (name, stamp): sums[name][0]
        for name, stamp in _read_verified(generation).items()
        if name in sums and sums[name][1] == stamp.size
    }


def read_checksums(generation: Path) -> dict[str, tuple[int, int]]:
    """``{name: (crc32, size)}`` from the generation's ``CHECKSUMS``.

    Raises:
        IndexDamagedError: the list is missing or not in its format.
    """
    try:
        text = (generation / CHECKSUMS).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise IndexDamagedError(_damaged(generation, CHECKSUMS, "is missing")) from None
    except PermissionError as exc:
        raise unreadable(exc) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise IndexDamagedError(_damaged(generation, CHECKSUMS, f"cannot be read ({exc})")) from None
    body, _, end = text[:-1].rpartition("\n")
    body += "\n"
    if not text.startswith(_HEADER + "\n") or not text.endswith("\n") or end != _end_line(body):
        raise IndexDamagedError(_damaged(generation, CHECKSUMS, "is damaged (not the list written)"))
    found = {}
    for number, line in enumerate(body.splitlines()[1:], start=2):
        parts = line.split(" ", 2)
        try:
            crc, size, name = int(parts[0], 16), int(parts[1]), parts[2]
        except (IndexError, ValueError):
            raise IndexDamagedError(_damaged(generation, CHECKSUMS, f"line {number} is not a checksum")) from None
        if not name.isprintable() or "/" in name or name in (".", "..", CHECKSUMS, VERIFIED) or name in found:
            raise IndexDamagedError(_damaged(generation, CHECKSUMS, f"line {number} names {name!r}"))
        found[name] = (crc, size)
    return found


def verify(generation: Path, *, everything: bool = False) -> dict[str, Stamp]:
    """Check every file ``CHECKSUMS`` lists: present, of its size, and (for a
    file whose stamp is not in ``VERIFIED``, or every file with ``everything``)
    of its checksum. Records what it hashed in ``VERIFIED`` (best effort).

    Returns:
        ``{name: Stamp}`` of the verified files, for :func:`changed`.

    Raises:
        IndexDamagedError: a file is missing, of another size or of another
            checksum, a file the list does not name is there, or
            ``CHECKSUMS`` itself is damaged; the message names the file and
            says how to rebuild.
    """
    expected = read_checksums(generation)
    stray = sorted(set(indexed_files(generation)) - expected.keys())
    if stray:
        # Whoosh opens the newest table of contents it finds, listed or not.
        raise IndexDamagedError(
            _damaged(generation, stray[0], "is not one of the index's files (the index did not write it)")
        )
    trusted = {} if everything else _read_verified(generation)
    stamps: dict[str, Stamp] = {}
    hashed = False
    for name, (crc, size) in expected.items():
        path = generation / name
        try:
            stamp = Stamp.of(path)
        except FileNotFoundError:
            raise IndexDamagedError(_damaged(generation, name, "is missing")) from None
        except PermissionError as exc:
            raise unreadable(exc) from None
        except OSError as exc:
            raise IndexDamagedError(_damaged(generation, name, f"cannot be read ({exc.strerror or exc})")) from None
        if stamp.size != size:
            how = "cut short" if stamp.size < size else "longer than written"
            raise IndexDamagedError(_damaged(generation, name, f"is {how} ({stamp.size:,} bytes, written as {size:,})"))
        if trusted.get(name) != stamp:
            try:
                found = crc32(path)
            except PermissionError as exc:
                raise unreadable(exc) from None
            except OSError as exc:
                raise IndexDamagedError(_damaged(generation, name, f"cannot be read ({exc.strerror or exc})")) from None
            if found != crc:
                raise IndexDamagedError(
                    _damaged(generation, name, "is damaged (its bytes differ from those written: checksum mismatch)")
                )
            hashed = True
        stamps[name] = stamp
    if hashed:
        _write_verified(generation, stamps)
    return stamps


def changed(generation: Path, stamps: dict[str, Stamp]) -> str | None:
    """The name of the first file of ``stamps`` whose stamp is no longer the
    same (written to, cut, replaced or removed), or ``None``: a few ``stat``
    calls, cheap enough before every search, so that a search never reads a
    file that changed under it (a memory-mapped read past a cut would kill
    the process)."""
    for name, stamp in stamps.items():
        try:
            if Stamp.of(generation / name) != stamp:
                return name
        except OSError:
            return name
    return None


def _end_line(body: str) -> str:
    return f"end {zlib.crc32(body.encode('utf-8')):08x}"


def snapshot(generation: Path) -> tuple:
    """The stamps of every file in ``generation`` now (a missing folder: empty),
    to tell whether anything in it changed since."""
    try:
        entries = sorted(os.scandir(generation), key=lambda entry: entry.name)
    except OSError:
        return ()
    found = []
    for entry in entries:
        try:
            stat = entry.stat()
        except OSError:
            continue
        found.append((entry.name, stat.st_ino, stat.st_size, stat.st_mtime_ns))
    return tuple(found)


def unreadable(exc: PermissionError):
    """The :class:`~searchengine.errors.IndexUnreadableError` for ``exc``, naming its file."""
    from searchengine.errors import IndexUnreadableError

    return IndexUnreadableError(
        f"{exc.filename}: permission denied: this user cannot read the index (it is not damaged)"
    )


def damaged(index_dir: Path, what: str) -> str:
    """The one form of every damage message: ``what`` is damaged in the index
    at ``index_dir``, and the command that rebuilds it."""
    return (
        f"{index_dir}: the index is damaged: {what}; rebuild it with "
        f"'searchengine index PATH... --index-dir {index_dir}'"
    )


def _damaged(generation: Path, name: str, what: str) -> str:
    return damaged(generation.parent, f"{generation.name}/{name} {what}")


def _read_verified(generation: Path) -> dict[str, Stamp]:
    try:
        text = (generation / VERIFIED).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    found = {}
    for line in text.splitlines():
        parts = line.split(" ", 3)
        try:
            found[parts[3]] = Stamp(int(parts[0]), int(parts[1]), int(parts[2]))
        except (IndexError, ValueError):
            return {}  # a damaged cache is no cache
    return found


def _write_verified(generation: Path, stamps: dict[str, Stamp]) -> None:
    text = "".join(f"{s.inode} {s.size} {s.mtime_ns} {name}\n" for name, s in stamps.items())
    try:
        _replace(generation / VERIFIED, text)
    except OSError:
        pass  # a read-only index: every open hashes its files, nothing else changes


def _replace(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file renamed into place."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
