"""Where an index lives on disk, and how a new one replaces the old atomically.

An index directory holds one or more *generations*, each a complete Whoosh
index in a sub-directory ``gen-<UTC time>-<pid>``, and a small text file
``CURRENT`` naming the generation readers should open::

    index/
      CURRENT            "gen-20261130T020000-4242"
      gen-20261130T020000-4242/   (complete Whoosh index, and facet.columns:
                                   its facet and sort columns, see columns.py)
      .writelock         (held by the one process that is writing)

A rebuild writes a new generation beside the old one and only then replaces
``CURRENT`` (``os.replace``, atomic on POSIX). A reader therefore sees either
the old index or the new one, never a half-written one, and a build killed at
any moment leaves the previous generation in place.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import os
import re
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, cast

from searchengine import settings
from searchengine.engines.whoosh import integrity
from searchengine.errors import IndexBusyError, IndexDamagedError

POINTER = "CURRENT"
LOCK = ".writelock"
PREFIX = "gen-"
# A generation's full name (new_generation): only these are ever removed.
_GENERATION_NAME = re.compile(r"gen-\d{8}T\d{12}-\d+")

#: The file in a generation naming the layout it was written with.
LAYOUT_FILE = "LAYOUT"
#: Version of what a generation holds: the schema's fields and the analysis
#: that made its terms. A generation of another layout is refused with a
#: rebuild hint (its hits would be wrong or missing), never searched.
#: Without a LAYOUT file: written before layouts were recorded.
#: 2: submitted days and dates, links and DOIs, NFKC folding and word forms.
#: 3: a checksum of every file (:mod:`.integrity`).
#: 4: Latin plurals in -ices made singular (index, indices, indexing: index)
#: instead of singulars made plural (index, indicate: indic); basis apart from base.
LAYOUT = 4


def current_generation(index_dir: Path, *, strict: bool = True, writer: bool = False) -> Path | None:
    """The generation ``CURRENT`` names, or ``None`` if there is no index yet.

    Args:
        strict: raise when the pointer is damaged (unreadable, not a
            generation name) or missing beside existing generations; with
            False such an index counts as having no current generation.
        writer: the caller holds the write lock (so no other build is under way).

    Raises:
        IndexDamagedError: (strict only) the pointer is damaged, or missing
            while committed generations exist, so which one is current is
            unknown. Generations that never committed (a killed first build)
            count as no index.
        IndexBusyError: (strict only) the pointer is missing beside
            generations while another process writes: a first build.
    """
    pointer = index_dir / POINTER
    try:
        raw = pointer.read_bytes()
    except FileNotFoundError:
        generations = [p for p in index_dir.glob(PREFIX + "*") if p.is_dir()]
        if strict and generations:
            if not writer and being_written(index_dir):  # the first build of this index is under way
                raise IndexBusyError(
                    f"{index_dir}: the index is being built; try again when the build has finished"
                ) from None
            # Generations that never committed are what a killed first build
            # leaves: there is no index yet. A committed one may have been
            # current, so which one is stays unknown.
            if any(committed(g) for g in generations):
                raise IndexDamagedError(
                    integrity.damaged(index_dir, f"{POINTER} is missing beside index generations")
                ) from None
        return None
    except OSError as exc:
        if not strict:
            return None
        if isinstance(exc, PermissionError):
            raise integrity.unreadable(exc) from None
        raise IndexDamagedError(
            integrity.damaged(index_dir, f"{POINTER} cannot be read ({exc.strerror or exc})")
        ) from None
    try:
        name = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        name = ""
    if not name.startswith(PREFIX) or "/" in name or "\x00" in name:
        if not strict:
            return None
        raise IndexDamagedError(integrity.damaged(index_dir, f"{POINTER} does not name an index generation"))
    return index_dir / name


def committed(generation: Path) -> bool:
    """Whether Whoosh committed to ``generation``: it holds a table of
    contents past generation 0, the empty one an index is created with."""
    return any(toc.stem.rsplit("_", 1)[-1] not in ("", "0") for toc in generation.glob("_*_*.toc"))


def being_written(index_dir: Path) -> bool:
    """Whether another process holds the index's write lock (see :func:`write_lock`)."""
    try:
        handle = open(index_dir / LOCK, "rb")  # noqa: SIM115 (held past this block)
    except OSError:
        return False
    with handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as exc:
            return exc.errno in (errno.EAGAIN, errno.EACCES)
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        return False


def open_generation(generation: Path, mapped: bool = False):
    """Open the Whoosh index in ``generation`` (a ``whoosh.index.FileIndex``).

    With ``mapped`` (searching), each file is read through a read-only memory
    map (:func:`mapped_storage`); otherwise (updating, which reads every
    segment whole once) with ordinary reads. Whoosh's own maps are not used:
    this Whoosh opens each part of a compound segment file from a map by
    copying it into memory, which for the 74,728-record sample cost 0.3 s
    and 750 MB per opened index.

    Raises whatever Whoosh raises for a missing or damaged index, and
    ``pickle.UnpicklingError`` for one whose pickles name what no index
    holds (:mod:`.safepickle`).
    """
    from whoosh.filedb.filestore import FileStorage

    from searchengine.engines.whoosh import safepickle

    safepickle.install()  # a crafted folder must not run code when opened
    storage = mapped_storage(generation) if mapped else FileStorage(str(generation), supports_mmap=False)
    return storage.open_index()


def mapped_storage(generation: Path):
    """A Whoosh ``FileStorage`` over ``generation`` whose files open as
    :func:`mapped_file_class`'s ``MappedFile`` (an empty file, which cannot be mapped, as an
    ordinary one)."""
    # supports_mmap stays False: the compound file then opens its parts with
    # MappedFile.subset, not with Whoosh's copying maps.
    return _mapped_storage_class()(str(generation), supports_mmap=False)


@functools.cache
def _mapped_storage_class():
    from whoosh.filedb.filestore import FileStorage

    class MappedStorage(FileStorage):
        def open_file(self, name, **kwargs):
            path = self._fpath(name)
            if os.path.getsize(path) == 0:
                return super().open_file(name, **kwargs)
            return mapped_file_class().open(path, name=name, **kwargs)

    return MappedStorage


# Bytes MappedFile.peek offers the unpickler at a time.
PEEK = 512


@functools.cache
def mapped_file_class():
    """The class ``MappedFile`` (made on first use: it extends Whoosh's
    ``StructFile``, and this module is imported before Whoosh is needed)."""
    from whoosh.filedb.structfile import _SIZEMAP, IS_LITTLE, StructFile

    class MappedFile(StructFile):
        """A read-only Whoosh ``StructFile`` over a range of a memory map.

        A search reads a posting block's header, its data and term infos as
        a few small reads at scattered offsets. Through an ordinary file each
        read is a seek and a read of a shared buffered file, wrapped by
        Whoosh in a Python sub-file per compound part (about 4 µs, 3,500 of
        them per faceted search of the whole sample); here it is a slice of
        the map. The parts of a compound file are views of its one map
        (:meth:`subset`), so nothing is copied and the pages are the
        operating system's cache. Only the file that made the map closes it.
        """

        @classmethod
        def open(cls, path: str, name: str | None = None, onclose=None) -> MappedFile:
            import mmap

            with open(path, "rb") as handle:
                mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
            return cls(mapped, 0, len(mapped), name=name, onclose=onclose, owner=True)

        def __init__(
            self, mapped, base: int, length: int, name: str | None = None, onclose=None, owner: bool = False
        ) -> None:
            # The map is its own file object: the file methods StructFile would call are overridden below.
            super().__init__(cast(BinaryIO, self), name=name, onclose=onclose)
            self.is_real = False  # StructFile reads arrays from files with fileno
            self._map, self._base, self._end, self._pos, self._owner = mapped, base, base + length, base, owner

        def read(self, size: int = -1) -> bytes:
            start = self._pos
            stop = self._end if size is None or size < 0 else min(start + size, self._end)
            self._pos = max(start, stop)
            return self._map[start:stop]

        def peek(self, size: int = 0) -> bytes:
            # The unpickler reads ahead through peek, then consumes what it
            # used in one read; without it, it reads each opcode separately.
            # Like a buffered file's, the bytes returned ignore ``size``: a
            # block header or term info is far shorter than PEEK.
            return self._map[self._pos : min(self._pos + PEEK, self._end)]

        def readline(self, size: int = -1) -> bytes:
            start = self._pos
            found = self._map.find(b"\n", start, self._end)
            stop = self._end if found < 0 else found + 1
            if size is not None and size >= 0:
                stop = min(stop, start + size)
            self._pos = stop
            return self._map[start:stop]

        def seek(self, where: int, whence: int = 0) -> int:
            origin = (self._base, self._pos, self._end)[whence]
            self._pos = max(self._base, origin + where)
            return self._pos - self._base

        def tell(self) -> int:
            return self._pos - self._base

        def get(self, position: int, length: int) -> bytes:
            start = self._base + position
            return self._map[start : min(start + length, self._end)]

        def get_array(self, position: int, typecode: str, length: int):
            from array import array

            found = array(typecode)
            found.frombytes(self.get(position, length * _SIZEMAP[typecode]))
            if IS_LITTLE:
                found.byteswap()
            return found

        def subset(self, offset: int, length: int, name: str | None = None) -> MappedFile:
            return type(self)(self._map, self._base + offset, length, name=name or self._name)

        def flush(self) -> None:
            pass

        def close(self) -> None:
            if self.is_closed:
                raise ValueError(f"{self._name}: already closed")
            if self.onclose:
                self.onclose(self)
            self.is_closed = True
            if self._owner:
                self._map.close()

    return MappedFile


def create_generation_index(generation: Path, schema):
    """A new, empty Whoosh index in ``generation``, read without memory maps
    as :func:`open_generation`'s: a build counts its documents and writes
    the facet columns from the segments it wrote, which through maps were
    copied into memory whole."""
    from whoosh.filedb.filestore import FileStorage

    from searchengine.engines.whoosh import safepickle

    safepickle.install()
    return FileStorage(str(generation), supports_mmap=False).create_index(schema)


def cannot_open(generation: Path, exc: BaseException) -> str:
    """The message for a generation that Whoosh could not open (``exc``)."""
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return integrity.damaged(generation.parent, f"{generation.name} cannot be opened ({detail})")


#: Packages the embedded engine imports to read an index: missing, no rebuild helps.
DEPENDENCIES = ("whoosh", "nltk", "numpy")


def open_failure(generation: Path, exc: BaseException):
    """The error to raise for a generation that could not be opened (``exc``):
    :class:`~searchengine.errors.IndexUnreadableError` when a package the
    engine needs cannot be imported in this Python (the index is not at
    fault), else :class:`~searchengine.errors.IndexDamagedError`."""
    from searchengine.errors import IndexDamagedError, IndexUnreadableError

    missing = getattr(exc, "name", None) if isinstance(exc, ImportError) else None
    if missing and missing.split(".")[0] in DEPENDENCIES:
        return IndexUnreadableError(
            f"{generation.parent}: cannot be read: the package {missing.split('.')[0]!r} is not installed "
            f"in this Python ({sys.executable}); install searchengine with its dependencies "
            f"(pip install searchengine, or pip install . in a clone)"
        )
    return IndexDamagedError(cannot_open(generation, exc))


def damage_errors() -> tuple[type[BaseException], ...]:
    """The exceptions reading an index file raises when its bytes are not
    what Whoosh wrote (a truncated or overwritten segment)."""
    import pickle
    import struct
    import zlib

    from whoosh.filedb.filetables import FileFormatError
    from whoosh.index import IndexError as WhooshIndexError
    from whoosh.reading import CorruptIndexError

    return (
        CorruptIndexError,
        FileFormatError,
        WhooshIndexError,
        EOFError,
        zlib.error,
        pickle.UnpicklingError,
        struct.error,
    )


def is_damage(exc: BaseException) -> bool:
    """Whether ``exc``, raised while reading an index, means its files are
    damaged: one of :func:`damage_errors`, an ``OSError`` ``EINVAL`` (a
    seek to an offset read from overwritten bytes), a ``UnicodeDecodeError``
    (text the index stores as UTF-8: facet values, names, words), or an
    ``IndexError``, ``KeyError`` or ``AssertionError`` raised inside Whoosh (a
    field number read from overwritten bytes in the term table, a table of
    contents of another generation number)."""
    import errno

    if isinstance(exc, damage_errors() + (UnicodeDecodeError,)) or (
        isinstance(exc, OSError) and exc.errno == errno.EINVAL
    ):
        return True
    return isinstance(exc, (IndexError, KeyError, AssertionError)) and _raised_in_whoosh(exc)


def _raised_in_whoosh(exc: BaseException) -> bool:
    """Whether the innermost frame of ``exc``'s traceback is Whoosh's code."""
    import whoosh

    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return Path(tb.tb_frame.f_code.co_filename).is_relative_to(Path(whoosh.__file__).parent)


def new_generation(index_dir: Path) -> Path:
    """Create and return an empty directory for a new generation."""
    index_dir.mkdir(parents=True, exist_ok=True)
    now = time.time()
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f"{int(now % 1 * 1e6):06d}"
    path = index_dir / f"{PREFIX}{stamp}-{os.getpid()}"
    path.mkdir()
    return path


def link_generation(source: Path, destination: Path) -> None:
    """Fill ``destination`` with hard links to the index files of ``source``.

    Whoosh never rewrites a finished file (a commit writes new segment files
    and a new table of contents, then deletes what it no longer needs), so a
    writer working on the links leaves ``source`` exactly as it was. Lock
    files and temporary directories are not carried over. Falls back to
    copying where the file system cannot link.
    """
    for entry in source.iterdir():
        if not entry.is_file() or "LOCK" in entry.name.upper() or entry.name.endswith(".tmp"):
            continue
        try:
            os.link(entry, destination / entry.name)
        except OSError:
            import shutil

            shutil.copy2(entry, destination / entry.name)


def write_layout(generation: Path) -> None:
    """Record :data:`LAYOUT` in ``generation`` (before it is published).

    Written under a temporary name and renamed into place: an update's
    generation starts as hard links to the previous one's files, so the
    file is replaced, never written into.
    """
    temporary = generation / f".{LAYOUT_FILE}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="ascii") as handle:
        handle.write(f"{LAYOUT}\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, generation / LAYOUT_FILE)


#: File system types whose locks and memory maps do not behave as a local
#: disk's (Linux names, as /proc/self/mountinfo gives them).
NETWORK_FILESYSTEMS = frozenset(
    {
        "nfs",
        "nfs4",
        "cifs",
        "smb3",
        "smbfs",
        "ncpfs",
        "afs",
        "9p",
        "ceph",
        "glusterfs",
        "fuse.glusterfs",
        "fuse.ceph",
        "fuse.sshfs",
        "fuse.rclone",
        "fuse.s3fs",
        "fuse.gcsfuse",
        "davfs",
        "fuse.davfs2",
    }
)
#: Set to 1 to write an index on a network file system anyway.
ALLOW_NETWORK_ENV = "SEARCHENGINE_ALLOW_NETWORK_FS"


def network_filesystem(path: Path, mountinfo: str | None = None) -> str | None:
    """The type of the network file system ``path`` is on (``"nfs4"``), or
    ``None`` for a local one or where mounts cannot be read (not Linux).

    The write lock (``flock``) is not shared between the machines of an NFS
    mount, or is emulated, and a file cut or replaced by another machine
    kills a process that has it memory-mapped; an index belongs on a local
    disk. ``mountinfo`` is the text of ``/proc/self/mountinfo`` (read when
    not given; see proc(5) for its format).
    """
    if mountinfo is None:
        try:
            mountinfo = Path("/proc/self/mountinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
    target = os.path.realpath(path)
    best, kind = "", None
    for line in mountinfo.splitlines():
        head, separator, tail = line.partition(" - ")
        fields = head.split()
        if not separator or len(fields) < 5 or not tail.split():
            continue
        point = fields[4].replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\")
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, kind = point, tail.split()[0]
    return kind if kind in NETWORK_FILESYSTEMS else None


def check_local(index_dir: Path) -> None:
    """Refuse to write an index on a network file system (see
    :func:`network_filesystem`) unless ``SEARCHENGINE_ALLOW_NETWORK_FS=1``.

    Raises:
        InputError: ``index_dir`` (or the folder it would be made in) is on one.
    """
    if settings.allow_network_fs():
        return
    existing = index_dir
    while not existing.exists() and existing.parent != existing:
        existing = existing.parent
    kind = network_filesystem(existing)
    if kind is not None:
        from searchengine.errors import InputError

        raise InputError(
            f"{index_dir} is on a network file system ({kind}): an index needs a local disk, whose "
            "locks and memory maps work across processes; build it on a local disk and copy it, or "
            f"set {ALLOW_NETWORK_ENV}=1 to write it there anyway (nothing was written)"
        )


def foreign_files(folder: Path) -> list[str]:
    """Names in ``folder`` that no index writes (its pointer, lock,
    generations; hidden files such as ``.gitkeep`` aside), sorted: a build
    must not take over a folder of other files."""
    if not folder.is_dir():
        return []
    ours = {POINTER, LOCK}
    return sorted(
        entry.name
        for entry in folder.iterdir()
        if entry.name not in ours
        and not entry.name.startswith(".")
        and not (entry.is_dir() and _GENERATION_NAME.fullmatch(entry.name))
    )


def holds_index(folder: Path) -> bool:
    """Whether ``folder`` is an index folder: its ``CURRENT`` pointer or its write lock is there."""
    return (folder / POINTER).is_file() or (folder / LOCK).exists()


def needs_build(index_dir: Path) -> bool:
    """Whether ``index_dir`` holds no index of this version's :data:`LAYOUT`
    (so a first use builds it); while another process is building it, wait
    for that build (up to two minutes) and look again."""
    try:
        current = current_generation(index_dir)
    except IndexBusyError:
        with write_lock(index_dir, timeout=120):
            pass
        current = current_generation(index_dir)
    if current is None:
        return True
    from searchengine.errors import IndexOutdatedError

    try:
        check_layout(current, index_dir)
    except IndexOutdatedError:
        return True  # the default index of an older version: built again, as at first use
    return False


def check_layout(generation: Path, index_dir: Path) -> None:
    """Refuse a generation written with another :data:`LAYOUT`.

    Raises:
        IndexOutdatedError: its layout differs (or was never recorded); the
            message names both layouts and the command that rebuilds it.
    """
    try:
        found: int | None = int((generation / LAYOUT_FILE).read_text(encoding="ascii").strip())
    except FileNotFoundError:
        if not any(generation.glob("_*.toc")):
            return  # no index files either: damage, which opening the index reports
        found = None
    except PermissionError as exc:
        raise integrity.unreadable(exc) from None
    except (OSError, ValueError):
        found = -1
    if found != LAYOUT:
        from searchengine.errors import IndexOutdatedError

        shown = "not recorded: an older version" if found is None else found
        raise IndexOutdatedError(
            f"{index_dir}: this index was built by another version of searchengine (layout {shown}, "
            f"this version reads layout {LAYOUT}); rebuild it with "
            f"'searchengine index PATHS --index-dir {index_dir}'"
        )


def check_generation(generation: Path, index_dir: Path, *, everything: bool = False):
    """Refuse a generation of another layout (:func:`check_layout`) or with a
    damaged file (:func:`.integrity.verify`, ``everything`` hashing every
    file); returns the verified files' stamps for :func:`.integrity.changed`.

    Raises:
        IndexOutdatedError: the generation was written with another layout.
        IndexDamagedError: a file is missing, cut short or damaged.
    """
    from searchengine.errors import IndexOutdatedError

    try:
        generation.stat()
    except PermissionError as exc:
        raise integrity.unreadable(exc) from None
    except OSError:
        pass
    if not generation.is_dir():
        what = "is missing" if not generation.exists() else "is not a folder"
        raise IndexDamagedError(integrity.damaged(index_dir, f"{POINTER} names {generation.name}, which {what}"))
    try:
        check_layout(generation, index_dir)
    except IndexOutdatedError:
        if os.path.exists(generation / integrity.CHECKSUMS):
            integrity.verify(generation)  # a damaged LAYOUT file is named as damage
        raise
    return integrity.verify(generation, everything=everything)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def publish(index_dir: Path, generation: Path) -> None:
    """Point ``CURRENT`` at ``generation``, atomically and durably."""
    for root, _dirs, files in os.walk(generation):
        for name in files:
            with open(Path(root) / name, "rb") as handle:
                os.fsync(handle.fileno())
    _fsync_dir(generation)
    temporary = index_dir / f".{POINTER}.{os.getpid()}"
    pointer = index_dir / POINTER
    if pointer.is_dir() and not pointer.is_symlink():  # damage in the pointer's place: the rebuild repairs it
        import shutil

        shutil.rmtree(pointer)
    try:
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(generation.name + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, pointer)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    _fsync_dir(index_dir)


def remove_stale(index_dir: Path, keep: int = 2) -> None:
    """Delete generations other than the current one and the ``keep - 1`` before it.

    The previous generation is kept so that a reader that opened it just
    before the switch can finish. Unfinished generations of killed builds,
    and stray pointer files, are removed too. Without a readable ``CURRENT``
    only generations that never committed are removed. Call only while
    holding the write lock.
    """
    current = current_generation(index_dir, strict=False)
    generations = sorted(
        (p for p in index_dir.glob(PREFIX + "*") if p.is_dir() and _GENERATION_NAME.fullmatch(p.name)),
        key=lambda p: p.name,
    )
    if current is None:
        # No readable pointer: which generations are complete is unknown, so
        # none is deleted (a damaged pointer must never cost the index), but
        # for those that never committed: a killed first build's.
        generations = [g for g in generations if not committed(g)]
    keep_names = set()
    if current is not None:
        finished = [g for g in generations if g.name <= current.name]
        keep_names = {g.name for g in finished[-keep:]}
    import shutil  # (here: a search, which never removes, does not load it)

    for generation in generations:
        if generation.name not in keep_names:
            shutil.rmtree(generation, ignore_errors=True)
    for stray in index_dir.glob(f".{POINTER}.*"):
        stray.unlink(missing_ok=True)


@contextmanager
def write_lock(index_dir: Path, timeout: float = 0.0) -> Iterator[None]:
    """Hold the index's exclusive write lock for the ``with`` block.

    The lock is an ``fcntl.flock`` on ``.writelock``: the kernel releases it
    when the holder exits, even by SIGKILL, so a crash never leaves a stale
    lock behind.

    Args:
        timeout: seconds to wait for another writer to finish; 0 fails at once.

    Raises:
        IndexBusyError: another process still holds the lock after ``timeout``.
    """
    index_dir.mkdir(parents=True, exist_ok=True)
    handle = open(index_dir / LOCK, "a+")  # noqa: SIM115 (held past this block)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if time.monotonic() >= deadline:
                    raise IndexBusyError(
                        f"{index_dir}: another process is writing this index"
                        + (f" (waited {timeout:g} s)" if timeout else "")
                    ) from None
                time.sleep(0.1)
        yield
    finally:
        handle.close()
