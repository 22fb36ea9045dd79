"""Readers: input files in, :class:`~searchengine.records.Record` objects out.

Each supported format has one module here exposing ``NAME``, ``sniff(head)``
and ``read(path, lines)``. The format of a file is decided by its content (the
first few kilobytes), never by its extension alone, so a JSON-lines file named
``.txt`` is still read as JSON lines.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from searchengine import dates
from searchengine.errors import InputError
from searchengine.readers import arxivatom, arxivlisting, arxivoai, authorpage, csvfile, jsonlines
from searchengine.records import Problem, Record, has_name, split_authors
from searchengine.tex import detex_record

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

# Sniffing tries the formats in this order: the specific JSON-lines layouts
# before plain JSON lines, which accepts any object.
FORMATS = {module.NAME: module for module in (arxivoai, arxivlisting, arxivatom, csvfile, authorpage, jsonlines)}

#: The JSON-lines formats, each line of which is read by its own layout
#: (:func:`searchengine.readers.jsonlines.parse_any`) unless a format is forced.
JSON_LAYOUTS = (arxivoai.NAME, arxivlisting.NAME, jsonlines.NAME)

_SNIFF_BYTES = 8192


#: Why a gzip stream ended early when its file stops before the end-of-stream marker.
TRUNCATED = "the compressed data ends before its end-of-stream marker"


class _GzipRaw(io.RawIOBase):
    """The decompressed bytes of a gzip file (members one after another).

    Unlike :mod:`gzip`, a file that ends before its end-of-stream marker
    gives every byte that was there and then an ordinary end of file, with
    :attr:`cut` set: the lines before the cut are read, and the caller says
    where the file ended. A corrupt stream also ends it (``cut`` holds why).
    """

    _CHUNK = 64 * 1024

    def __init__(self, path: Path) -> None:
        self.file = open(path, "rb")  # noqa: SIM115 (held past this block)
        self.decompressor = zlib.decompressobj(zlib.MAX_WBITS | 16)
        self.pending = b""  # decompressed, not yet handed out
        self.input = b""  # compressed, not yet decompressed
        self.between_members = False
        self.done = False
        self.cut = ""  # why the stream ended early, or "" while it is whole

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        while not self.pending:
            if self.done:
                return 0
            data = self.input or self.file.read(self._CHUNK)
            self.input = b""
            if not data:
                if not self.between_members:
                    self.cut = TRUNCATED
                self.done = True
                return 0
            if self.between_members:
                if not data.strip(b"\x00"):  # padding after the last member
                    continue
                self.decompressor = zlib.decompressobj(zlib.MAX_WBITS | 16)
                self.between_members = False
            try:
                self.pending = self.decompressor.decompress(data, self._CHUNK * 4)
            except zlib.error as exc:
                self.cut, self.done = f"the compressed data is corrupt ({exc})", True
                return 0
            self.input = self.decompressor.unconsumed_tail
            if self.decompressor.eof:  # another member may follow
                self.input, self.between_members = self.decompressor.unused_data, True
        view = memoryview(buffer)
        size = min(len(view), len(self.pending))
        view[:size] = self.pending[:size]
        self.pending = self.pending[size:]
        return size

    def compressed_position(self) -> int:
        """Bytes of the compressed file read so far (for progress)."""
        return self.file.tell()

    def close(self) -> None:
        self.file.close()
        super().close()


def _open_binary(path: Path) -> io.BufferedReader:
    with open(path, "rb") as probe:
        magic = probe.read(2)
    if magic == b"\x1f\x8b":
        return io.BufferedReader(_GzipRaw(path))
    return open(path, "rb")


_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


# No paper's record is this long; a longer line is reported and passed over
# without being held in memory (a small gzip file can hold a huge one).
MAX_LINE_BYTES = 8 << 20


class CutOff(EOFError):
    """A compressed file that ends (or breaks) inside line ``line``: the rest is missing."""

    def __init__(self, line: int, detail: str) -> None:
        super().__init__(detail)
        self.line = line
        self.detail = detail


def numbered_lines(path: Path, problems: list[Problem]) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` for each line of a UTF-8 file (gzip allowed).

    Line numbers are 1-based. A byte-order mark and the line ending (LF or
    CRLF) are removed. A line that is not valid UTF-8 is not yielded; a
    :class:`Problem` naming it is appended to ``problems`` instead, and so
    is one longer than :data:`MAX_LINE_BYTES`. A gzip file that ends
    early raises :class:`CutOff` naming the line it ends in. A file
    that starts with a UTF-16 byte-order mark (as some Windows tools save
    "Unicode text") is read as UTF-16, undecodable bytes replaced.
    """
    with _open_binary(path) as stream:
        try:
            yield from _lines(path, stream, problems)
        finally:
            POSITION.finished += POSITION.current
            POSITION.current = 0


class ReadPosition:
    """How far this process has read its input, in bytes of the files as they
    are on disk (a ``.gz`` file's compressed bytes): :attr:`finished` for the
    files read to the end (or left), :attr:`current` in the file being read.
    For progress bars: compare :meth:`total` with :func:`input_size`."""

    def __init__(self) -> None:
        self.finished = 0
        self.current = 0

    def total(self) -> int:
        """Bytes read so far over all files."""
        return self.finished + self.current


#: This process's reading position (one reading at a time: the indexers read in their main process).
POSITION = ReadPosition()


def input_size(paths: Iterable[str | os.PathLike], skip_folder: Callable[[Path], bool] | None = None) -> int | None:
    """Bytes of all the input files under ``paths`` as on disk (see :func:`input_files`),
    or ``None`` when a path cannot be listed."""
    try:
        return sum(path.stat().st_size for path in input_files(paths, skip_folder))
    except (InputError, OSError):
        return None


def _lines(path: Path, stream: io.BufferedReader, problems: list[Problem]) -> Iterator[tuple[int, str]]:
    """The lines of an open file, for :func:`numbered_lines`; keeps :data:`POSITION` current."""
    gz = getattr(stream, "raw", None)
    where = gz.compressed_position if isinstance(gz, _GzipRaw) else stream.tell
    if stream.peek(2)[:2] in _UTF16_BOMS:
        decoded = io.TextIOWrapper(stream, encoding="utf-16", errors="replace", newline="\n")
        for number, line in enumerate(decoded, start=1):
            yield number, line.lstrip("\ufeff").rstrip("\r\n") if number == 1 else line.rstrip("\r\n")
        POSITION.current = path.stat().st_size
        return
    number = 0
    while True:
        if not number & 63:
            POSITION.current = where()
        raw = stream.readline(MAX_LINE_BYTES + 1)
        cut = getattr(getattr(stream, "raw", None), "cut", "")
        if cut and not raw.endswith(b"\n"):
            # A gzip file cut off: this line is its last, incomplete one (or none is left).
            raise CutOff(number + 1, cut)
        if not raw:
            POSITION.current = where()
            return
        number += 1
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            while raw and not raw.endswith(b"\n"):  # pass over the rest, a piece at a time
                raw = stream.readline(MAX_LINE_BYTES)
            problems.append(Problem(str(path), number, f"line longer than {MAX_LINE_BYTES >> 20} MB (skipped)"))
            continue
        if not raw.endswith(b"\n") and _unfinished_json(raw):
            # The file stops inside a JSON record (a copy or download cut short).
            raise CutOff(number, "a JSON record stops unfinished, without a line end,")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.append(Problem(str(path), number, f"not valid UTF-8 ({exc.reason} at byte {exc.start}) (skipped)"))
            continue
        if number == 1:
            text = text.lstrip("\ufeff")
        yield number, text.rstrip("\r\n")


def _unfinished_json(raw: bytes) -> bool:
    """Whether ``raw`` (a file's last line, without a line end) starts a JSON
    object and is not a whole JSON value: the file was cut inside it."""
    if raw.lstrip(b"\xef\xbb\xbf \t\r")[:1] != b"{":
        return False
    try:
        json.loads(raw)
    except ValueError:
        return True
    return False


def _head(path: Path) -> str:
    with _open_binary(path) as stream:
        head = stream.read(_SNIFF_BYTES)
        if head.removeprefix(b"\xef\xbb\xbf").lstrip()[:1] == b"{" and b"\n" not in head:
            # A JSON line longer than the sniff (a record with a very long
            # abstract): its keys may all come after it, so read the whole line.
            head += stream.readline(MAX_LINE_BYTES)
        cut = getattr(getattr(stream, "raw", None), "cut", "")
    if cut and not head:
        # A file that stops inside its first block is cut off (a download
        # interrupted early); one that does not decompress at all is not a
        # gzip file of records, and is skipped like any unreadable file.
        raise CutOff(1, cut) if cut == TRUNCATED else EOFError(cut)
    encoding = "utf-16" if head[:2] in _UTF16_BOMS else "utf-8"
    return head.decode(encoding, errors="replace").lstrip("\ufeff")


def detect_format(path: Path) -> str | None:
    """Name the format of ``path`` from its content, or ``None`` if no reader fits.

    JSON lines whose first lines are JSON values but not objects (a stray
    ``[1, 2]`` or ``null``) are known by the first object after them: those
    lines are then the reader's to report as bad records, and the rest of
    the file is read.
    """
    head = _head(path)
    for name, module in FORMATS.items():
        if module.sniff(head):
            return name
    lines = head.splitlines(keepends=True)
    for number, line in enumerate(lines):
        if line.lstrip().startswith("{"):
            rest = "".join(lines[number:])
            return next((name for name, module in FORMATS.items() if module.sniff(rest)), None)
        if line.strip() and not _json_value(line):
            break
    return None


def _json_value(text: str) -> bool:
    """True when ``text`` is one JSON value."""
    import json

    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def input_files(
    paths: Iterable[str | os.PathLike], skip_folder: Callable[[Path], bool] | None = None
) -> Iterator[Path]:
    """Expand files and directories (recursively, sorted; hidden entries,
    FIFOs, sockets and devices, and folders for which ``skip_folder`` is true
    skipped: given :func:`searchengine.engines.holds_index`, indexing a
    folder that holds its index does not read the index's own files).

    Raises:
        InputError: a path does not exist or is neither a file nor a directory.
    """
    for given in paths:
        path = Path(given)
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                if skip_folder is not None and skip_folder(Path(root)):
                    dirs[:] = []
                    continue
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    if not name.startswith(".") and not _special(Path(root) / name):
                        yield Path(root) / name
        elif path.is_file():
            yield path
        elif path.exists():
            raise InputError(f"{path}: not a regular file or directory")
        else:
            raise InputError(f"{path}: no such file or directory")


def _special(path: Path) -> bool:
    """A FIFO, socket or device: reading one could block forever or never end."""
    import stat

    try:
        return not stat.S_ISREG(path.stat().st_mode)
    except OSError:  # a dangling link: reported when it is read
        return False


#: Author entries that separate a group's name from its members in arXiv listings.
_SEPARATORS = (":", ";")


def _people(record: Record, problems: list[Problem]) -> Record:
    """``record`` with one name per person (:func:`~searchengine.records.split_authors`
    of each name: a list entry may still hold "A and B"), and without names
    that are only punctuation, each dropped with a note; a ``":"`` after a
    name (a listing's ``"NVIDIA", ":", "A. One"``: the group, then its
    members) is a separator, dropped without one."""
    names: list[str] = []
    for name in record.authors:
        for person in split_authors(name):
            if has_name(person):
                names.append(person)
            elif person.strip() in _SEPARATORS and names:
                continue  # "NVIDIA", ":", "A. One", ...: a group's name, then its members; nothing lost
            else:
                path, _, line = record.source.rpartition(":")
                problems.append(
                    Problem(
                        path,
                        int(line) if line.isdigit() else 0,
                        f"author {person!r} has no letter or digit (dropped)",
                        skipped=False,
                    )
                )
    record.authors = list(dict.fromkeys(names))
    return record


def _dated(record: Record, problems: list[Problem]) -> Record:
    """``record`` with its reading notes (a bad date) turned into problems,
    its year following its submitted day, and an implausible year or date
    (before 1900 or after next year: a typo such as ``2103``) made unknown
    with a note. The record is kept either way."""
    path, _, line = record.source.rpartition(":")
    number = int(line) if line.isdigit() else 0

    def note(reason: str) -> None:
        problems.append(Problem(path, number, reason, skipped=False))

    for reason in record.notes:
        note(reason)
    record.notes = []
    for name in ("submitted", "updated"):
        day = getattr(record, name)
        if day is not None and not dates.plausible_year(day.year):
            note(f"{name} date {day.isoformat()} is not plausible (stored as unknown)")
            setattr(record, name, None)
    record.versions = [(n, day) for n, day in record.versions if dates.plausible_year(day.year)]
    if record.submitted is not None:
        record.year = record.submitted.year
    elif record.year is not None and not dates.plausible_year(record.year):
        note(f"year {record.year} is not plausible (stored as unknown)")
        record.year = None
    return record


def read_records(
    paths: Iterable[str | os.PathLike],
    problems: list[Problem],
    format: str | None = None,
    skip_folder: Callable[[Path], bool] | None = None,
) -> Iterator[Record]:
    """Stream the records of every file under ``paths``.

    Args:
        paths: files or directories.
        problems: list that receives a :class:`Problem` for each skipped record
            and for each file no reader recognises. A table of listing dates
            (:data:`arxivlisting.DATES_FILES`) is not read as records: the
            listing reader reads it beside its input.
        format: force one reader (a key of :data:`FORMATS`) instead of detecting.
        skip_folder: folders not read (see :func:`input_files`).

    Raises:
        InputError: a path does not exist. A file that cannot be read is a
            problem (reported, skipped), not an error; one that ends early
            (a cut-off ``.gz``) is a problem marked ``cut_off``, after the
            records read before the cut.
    """
    for path in input_files(paths, skip_folder):
        if path.name in arxivlisting.DATES_FILES:
            continue  # the table of listing dates: read beside a listing, not a file of records
        try:
            name = format or detect_format(path)
        except (OSError, EOFError, zlib.error) as exc:
            # One unreadable or broken file (permission denied, a cut-off
            # gzip stream) is reported and skipped like a bad record.
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
            # A file that cannot be opened or read (not one that is not gzip at all)
            # is missing from the index as much as a cut-off one.
            unread = isinstance(exc, CutOff) or (isinstance(exc, OSError) and not isinstance(exc, gzip.BadGzipFile))
            problems.append(Problem(str(path), 0, f"cannot be read: {reason} (skipped)", cut_off=unread))
            continue
        if name is None:
            empty = not format and not _head(path).strip()
            reason = "empty file" if empty else "not a recognised input format"
            problems.append(Problem(str(path), 0, f"{reason} (skipped)"))
            continue
        count = 0
        try:
            # A forced JSON-lines format reads every line its way (else each line by its own layout).
            strict = {"strict": True} if format and name in JSON_LAYOUTS else {}
            for record in FORMATS[name].read(path, numbered_lines(path, problems), problems, **strict):
                # TeX → text for every format, at read time
                yield _dated(_people(detex_record(record), problems), problems)
                count += 1
        except CutOff as exc:
            problems.append(
                Problem(
                    str(path),
                    exc.line,
                    f"the file ended early after {count:,} records: "
                    f"{exc.detail} in this line; the rest of the file is missing",
                    cut_off=True,
                )
            )
        except (OSError, EOFError, zlib.error) as exc:
            # Stopped before the end of the file (an I/O error, a broken gzip stream).
            problems.append(Problem(str(path), 0, f"read failed after {count:,} records: {exc}", cut_off=True))
