"""Input fuzzing: damaged copies of input files of every supported format.

Each case starts from good input (arXiv listing lines, the Kaggle OAI
snapshot sample, arXiv API Atom responses, the author pages of ``corpus/``,
the JSON-lines fixture, and a CSV written from listing records), damages it
in known places, and records what a correct indexer must do: which lines
(``file:line``) are reported as bad records or files, and which ids end up
indexed. The expected values are computed here, from how each file was
built, never by the product's readers. Every case is indexed through the
Python API and through ``searchengine index --json``: no traceback, exactly
the damaged lines reported, exactly the good records indexed (repeated ids
collapse to one document; of two versions the higher wins). ``index
--update`` with damaged or unreadable files loses nothing already indexed.

Damage: truncated lines, invalid UTF-8, UTF-16 and UTF-8 with a byte-order
mark, CRLF, NUL bytes (raw and escaped), lines of megabytes, missing and
wrong-typed fields, repeated ids and versions, an empty file, a folder of
unrelated files (binary, image, prose, code, broken gzip), and combinations
(in a gzip file too).

The listing records, the OAI sample and the Atom responses are the real
samples in ``../shared/data``, or without them generated files of the same
formats (``tests/shareddata.py``): every case runs either way.

Environment: ``DRILL_HUGE_MB`` sets the size of the huge lines (default 3;
lines over the readers' 8 MB cap are reported, so keep it below 8).
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import random
import re
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner

from searchengine import build_index, open_index, update_index
from searchengine.cli import main
from searchengine.errors import InputError
from searchengine.readers import MAX_LINE_BYTES

from .conftest import REPO
from shareddata import arxiv_samples, write_listing

# The two author pages, in the order of their originals in ../shared/seeds/.
SEEDS = [REPO / "corpus" / "longbin-zeng.txt", REPO / "corpus" / "depei-qian.txt"]
FIXTURE = REPO / "tests" / "fixtures" / "facets.jsonl"
HUGE_MB = float(os.environ.get("DRILL_HUGE_MB", 3))
# Listing records of the sample used here: after the drills' search subset.
LISTING_START = 60_000


# --- building damaged files ---------------------------------------------------------


@dataclass
class Line:
    """One line of a damaged JSON-lines file: its bytes, and what the indexer must make of it."""

    data: bytes
    id: str | None = None  # the id (version removed) of a good record
    bad: bool = False  # must be reported as file:line
    version: int = 0


@dataclass
class Case:
    """Files to index and what must come of them."""

    files: list[Path]
    ids: set[str]  # exactly the ids indexed
    bad: set[tuple[str, int]] = field(default_factory=set)  # (file name, line); line 0: the whole file
    mutations: int = 1
    titles: dict[str, str] = field(default_factory=dict)  # id → title the index must hold
    title_keys: set[str] = field(default_factory=set)  # for pages without ids: the titles indexed
    # Files whose reading stops before their end (a record cut off, XML broken from a line on):
    # a rebuild of them is not published; an update keeps the records read.
    cut_off: set[str] = field(default_factory=set)

    @property
    def documents(self) -> int:
        return len(self.ids) + len(self.title_keys)


def bare_id(raw: str) -> tuple[str, int]:
    found = re.fullmatch(r"(.+?)v(\d+)", raw)
    return (found.group(1), int(found.group(2))) if found else (raw, 0)


def good(obj: dict, key: str = "id") -> Line:
    raw = obj[key] if isinstance(obj.get(key), str) else str(obj[key])
    found, version = bare_id(raw)
    return Line(json.dumps(obj, ensure_ascii=False).encode(), found, False, version)


def bad(data: bytes | str | dict | list | None) -> Line:
    if isinstance(data, bytes):
        return Line(data, None, True)
    return Line(json.dumps(data, ensure_ascii=False).encode(), None, True)


def write_lines(
    path: Path,
    lines: list[Line],
    *,
    newline: bytes = b"\n",
    bom: bytes = b"",
    encoding: str | None = None,
    compress: bool = False,
) -> tuple[set[str], set[tuple[str, int]]]:
    """Write ``lines``; return the ids that must be indexed and the (name, line) pairs to report."""
    data = bom + newline.join(line.data for line in lines) + newline
    if encoding:
        data = data.decode("utf-8").encode(encoding)
    if compress:
        data = gzip.compress(data, mtime=0)
    path.write_bytes(data)
    ids = {line.id for line in lines if line.id is not None}
    damaged = {(path.name, number) for number, line in enumerate(lines, start=1) if line.bad}
    return ids, damaged


def listing_objects(tmp: Path, count: int = 200, start: int = LISTING_START) -> list[dict]:
    path = tmp / "listing-source.jsonl"
    write_listing(path, count, start)
    objects = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    path.unlink()
    return objects


def with_title_bytes(obj: dict, insert: bytes) -> bytes:
    """The object's line with raw bytes put inside its title string."""
    text = json.dumps(obj, ensure_ascii=False).encode()
    title = json.dumps(obj["title"], ensure_ascii=False).encode()
    at = text.index(title) + len(title) // 2
    return text[:at] + insert + text[at:]


def changed(obj: dict, **values) -> dict:
    out = dict(obj)
    for key, value in values.items():
        if value is ...:
            out.pop(key, None)
        else:
            out[key] = value
    return out


# --- the cases ---------------------------------------------------------------------


def listing_truncated(tmp: Path) -> Case:
    lines = [good(o) for o in listing_objects(tmp)]
    for number in (17, 90, 200):
        lines[number - 1] = bad(lines[number - 1].data[: len(lines[number - 1].data) // 2])
    ids, damaged = write_lines(tmp / "truncated.jsonl", lines)
    assert len(ids) == 197
    return Case([tmp / "truncated.jsonl"], ids, damaged)


def listing_invalid_utf8(tmp: Path) -> Case:
    objects = listing_objects(tmp)
    lines = [good(o) for o in objects]
    # A stray byte, a cut sequence, a lone continuation, an overlong form, a UTF-8 encoded surrogate.
    for number, junk in ((5, b"\xff"), (60, b"\xc3("), (150, b"\x80"), (151, b"\xc0\xaf"), (199, b"\xed\xa0\x80")):
        lines[number - 1] = bad(with_title_bytes(objects[number - 1], junk))
    ids, damaged = write_lines(tmp / "invalid-utf8.jsonl", lines)
    return Case([tmp / "invalid-utf8.jsonl"], ids, damaged, mutations=5)


def listing_encodings(tmp: Path) -> Case:
    """The same 200 records as UTF-8 with a BOM, UTF-16 LE and BE (BOM), and CRLF: all good."""
    objects = listing_objects(tmp)
    files, all_ids = [], set()
    variants = {
        "bom.jsonl": dict(bom=b"\xef\xbb\xbf"),
        "crlf.jsonl": dict(newline=b"\r\n"),
        "bom-crlf.jsonl": dict(bom=b"\xef\xbb\xbf", newline=b"\r\n"),
        "utf16le.jsonl": dict(bom="\ufeff".encode(), encoding="utf-16-le"),
        "utf16be-crlf.jsonl": dict(bom="\ufeff".encode(), encoding="utf-16-be", newline=b"\r\n"),
    }
    for number, (name, options) in enumerate(variants.items()):
        # Each file its own 40 records, so every file's records must show up.
        chunk = objects[number * 40 : (number + 1) * 40]
        ids, damaged = write_lines(tmp / name, [good(o) for o in chunk], **options)
        assert not damaged
        files.append(tmp / name)
        all_ids |= ids
    return Case(files, all_ids, set(), mutations=len(variants))


def listing_nul_and_controls(tmp: Path) -> Case:
    objects = listing_objects(tmp)
    lines = [good(o) for o in objects]
    lines[2] = bad(with_title_bytes(objects[2], b"\x00"))  # raw NUL inside a string
    lines[32] = bad(lines[32].data.replace(b'", "', b'",\x00 "', 1))  # raw NUL between fields
    lines.insert(100, bad(b"\x00" * 512))  # a line of NULs
    # Escaped control characters and separators are valid JSON: good records.
    lines[7] = good(
        changed(
            objects[7],
            title=objects[7]["title"] + " \u0000\u001e\u001f\u0085\u2028 end",
            authors=["Zero\u0000 Width\u200b", "Sep\u001fArator \u001eName"],
        )
    )
    lines[8] = good(changed(objects[8], categories=["cs.CV\u001f", "\u0000cs.AI"], summary="\u0000" * 50))
    ids, damaged = write_lines(tmp / "nul.jsonl", lines)
    return Case([tmp / "nul.jsonl"], ids, damaged, mutations=5)


def listing_huge_lines(tmp: Path) -> Case:
    objects = listing_objects(tmp, 60)
    size = int(HUGE_MB * 1_000_000)
    lines = [good(o) for o in objects]
    summary = objects[10]["summary"]
    lines[10] = good(changed(objects[10], summary=(summary + " ") * (size // (len(summary) + 1))))
    lines[20] = good(changed(objects[20], title="Huge " + "x" * size))  # one word of megabytes
    lines.insert(30, bad(b"{" + b"a" * size))  # megabytes of broken JSON
    lines.insert(40, bad(b"\xff" * size))  # megabytes of non-UTF-8
    over = good(changed(objects[50], summary="y " * (MAX_LINE_BYTES // 2 + 1))).data
    lines.insert(50, bad(over))  # a whole record over the line cap
    ids, damaged = write_lines(tmp / "huge.jsonl", lines)
    return Case([tmp / "huge.jsonl"], ids, damaged, mutations=5)


def listing_missing_fields(tmp: Path) -> Case:
    objects = listing_objects(tmp, 60)
    o = objects
    lines = [good(x) for x in objects]
    # id and title are required; every other field may be missing.
    lines[9] = bad(changed(o[9], title=...))
    lines[10] = good(changed(o[10], summary=...))
    lines[11] = bad(changed(o[11], id=...))
    lines[12] = good(changed(o[12], authors=...))
    lines[13] = good(changed(o[13], categories=...))
    lines[14] = good(changed(o[14], abs=..., pdf=..., comment=...))
    lines[15] = bad({})
    lines[16] = bad([])
    lines[17] = bad("a string")
    lines[18] = bad(None)
    lines[19] = bad(42)
    lines[20] = good({"id": o[20]["id"], "title": o[20]["title"], "summary": o[20]["summary"], "abs": o[20]["abs"]})
    ids, damaged = write_lines(tmp / "missing.jsonl", lines)
    return Case([tmp / "missing.jsonl"], ids, damaged, mutations=12)


def listing_wrong_types(tmp: Path) -> Case:
    o = listing_objects(tmp, 60)
    lines = [good(x) for x in o]
    wrong = {  # line → (field, value, stays good?)
        5: ("title", 123, False),
        6: ("title", ["A title"], False),
        7: ("title", "", False),
        8: ("title", "   ", False),
        9: ("title", None, False),
        10: ("authors", "A. One, B. Two", False),
        11: ("authors", [1, 2], False),
        12: ("authors", None, True),
        13: ("categories", "cs.CV", False),
        14: ("categories", [None], False),
        15: ("summary", 42, False),
        16: ("summary", ["text"], False),
        17: ("summary", None, True),
        18: ("id", 2501, False),
        19: ("id", ["2501.00001"], False),
        20: ("id", "", False),
        21: ("abs", 5, False),
        22: ("comment", {"nested": [1]}, False),
        23: ("categories", None, True),
        24: ("summary", {"a": 1}, False),
        25: ("title", True, False),
        26: ("authors", {"name": "A"}, False),
    }
    for number, (key, value, stays_good) in wrong.items():
        obj = changed(o[number - 1], **{key: value})
        lines[number - 1] = good(obj) if stays_good else bad(obj)
    ids, damaged = write_lines(tmp / "wrong-types.jsonl", lines)
    return Case([tmp / "wrong-types.jsonl"], ids, damaged, mutations=len(wrong))


def listing_duplicates(tmp: Path) -> Case:
    o = listing_objects(tmp, 100)
    lines = [good(x) for x in o]
    lines += [good(x) for x in o[:10]]  # the same records again: merged
    # Versions: the highest wins whatever the order (no suffix counts as 0).
    lines.append(good(changed(o[10], id=o[10]["id"] + "v2", title="Second version title")))
    lines.append(good(changed(o[11], id=o[11]["id"] + "v3", title="Third version title")))
    lines.append(good(changed(o[11], id=o[11]["id"] + "v2", title="Older version title")))
    lines.append(good(changed(o[12], id=o[12]["id"] + "v1", title="First version title")))
    lines.append(bad(lines[13].data[:-5]))  # a damaged repeat changes nothing
    ids, damaged = write_lines(tmp / "duplicates.jsonl", lines)
    titles = {
        o[10]["id"]: "Second version title",
        o[11]["id"]: "Third version title",
        o[12]["id"]: "First version title",
        o[0]["id"]: o[0]["title"],
    }
    return Case([tmp / "duplicates.jsonl"], ids, damaged, mutations=5, titles=titles)


def listing_combined(tmp: Path) -> Case:
    """BOM, CRLF, truncation, bad bytes, NUL, wrong types, repeats and blank lines at once, gzip-compressed."""
    o = listing_objects(tmp, 150)
    lines = [good(x) for x in o]
    lines[16] = bad(lines[16].data[:40])
    lines[39] = bad(with_title_bytes(o[39], b"\xfe\xff"))
    lines[76] = bad(with_title_bytes(o[76], b"\x00"))
    lines[119] = bad(changed(o[119], authors="One, Two"))
    lines.insert(60, Line(b""))
    lines.insert(61, Line(b"   \t "))
    lines += [good(x) for x in o[:5]]
    ids, damaged = write_lines(tmp / "combined.jsonl.gz", lines, newline=b"\r\n", bom=b"\xef\xbb\xbf", compress=True)
    return Case([tmp / "combined.jsonl.gz"], ids, damaged, mutations=8)


def oai_damaged(tmp: Path) -> Case:
    sample = arxiv_samples(tmp / "samples").oai
    objects = [json.loads(line) for line in sample.read_text(encoding="utf-8").splitlines()]
    lines = [good(x) for x in objects]
    lines[16] = bad(lines[16].data[: len(lines[16].data) // 3])
    lines[89] = bad(lines[89].data[:-1])
    wrong = {
        30: ("categories", ["hep-ph"], False),
        31: ("abstract", 5, False),
        32: ("id", None, False),
        33: ("authors_parsed", "Balázs, C.", True),
        34: ("authors_parsed", [[1, 2]], False),
        35: ("versions", "v1", True),
        36: ("versions", [["v1"]], False),
        37: ("title", ..., False),
        38: ("abstract", ..., True),
        39: ("authors_parsed", ..., True),
        40: ("categories", None, True),
        41: ("title", {"t": 1}, False),
        42: ("authors", None, True),
        43: ("versions", None, True),
    }
    for number, (key, value, stays_good) in wrong.items():
        obj = changed(objects[number - 1], **{key: value})
        lines[number - 1] = good(obj) if stays_good else bad(obj)
    lines[120] = bad(with_title_bytes(objects[120], b"\x93"))
    lines.insert(150, bad(b"\x00\x00"))
    ids, damaged = write_lines(tmp / "oai.jsonl", lines, newline=b"\r\n", bom=b"\xef\xbb\xbf")
    return Case([tmp / "oai.jsonl"], ids, damaged, mutations=len(wrong) + 5)


def plain_jsonl_damaged(tmp: Path) -> Case:
    objects = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
    lines = [good(x) for x in objects]
    wrong = {
        1: ("year", "20x5", False),
        2: ("year", True, False),
        3: ("year", "2023", True),
        4: ("year", 99999, False),
        5: ("authors", "Ada Lovelace and Charles Babbage", True),
        6: ("categories", "cs.DC cs.LG", True),
        7: ("id", 5, True),
        8: ("title", ..., False),
        9: ("id", 1.5, False),
        10: ("year", None, True),
    }
    for number, (key, value, stays_good) in wrong.items():
        obj = changed(objects[number - 1], **{key: value})
        lines[number - 1] = good(obj) if stays_good else bad(obj)
    lines.append(bad(b'{"title": "unterminated'))
    ids, damaged = write_lines(tmp / "plain.jsonl", lines, encoding="utf-16-le", bom="\ufeff".encode())
    return Case([tmp / "plain.jsonl"], ids, damaged, mutations=len(wrong) + 2)


ATOM_ENTRY = re.compile(rb"<entry>")


def atom_ids(data: bytes) -> list[str]:
    return [
        bare_id(found.rsplit(b"/abs/", 1)[1].decode())[0] for found in re.findall(rb"<entry>\s*<id>([^<]+)</id>", data)
    ]


def atom_damaged(tmp: Path) -> Case:
    """The 10-entry feed of the older layout, whose abstracts are wrapped over lines."""
    data = arxiv_samples(tmp / "samples").atom_old.read_bytes()
    ids = atom_ids(data)
    lines = data.split(b"\n")
    entry_lines = [n for n, line in enumerate(lines, start=1) if ATOM_ENTRY.search(line)]
    # (1) CRLF and a BOM: every entry.
    (tmp / "crlf.xml").write_bytes(b"\xef\xbb\xbf" + b"\r\n".join(lines))
    # (2) A bad byte in a line of entry 2's abstract text (two lines after its
    # <summary> tag): that line is reported, the entry kept.
    summary_line = next(n for n in range(entry_lines[1], entry_lines[2]) if b"<summary>" in lines[n - 1])
    text_line = summary_line + 2
    assert b"<" not in lines[text_line - 1], lines[text_line - 1]
    broken = list(lines)
    broken[text_line - 1] = broken[text_line - 1] + b" \xff"
    (tmp / "badbyte.xml").write_bytes(b"\n".join(broken))
    # (3) Cut off inside entry 7: entries 1-6 are kept; entry 7 is reported at its <entry> line.
    (tmp / "cut.xml").write_bytes(b"\n".join(lines[: entry_lines[6] + 4]))
    files = [tmp / "crlf.xml", tmp / "badbyte.xml", tmp / "cut.xml"]
    damaged = {("badbyte.xml", text_line), ("cut.xml", entry_lines[6])}
    # The same ids in three files collapse: every id of the sample is indexed.
    return Case(files, set(ids), damaged, mutations=4, cut_off={"cut.xml"})


def atom_tag_damage(tmp: Path) -> Case:
    """A broken tag in entry 40 of the 100-entry feed: XML after it cannot be trusted, so
    (as documented) entries 1-39 are kept and the broken line is reported."""
    data = arxiv_samples(tmp / "samples").atom_new.read_bytes()
    lines = data.split(b"\n")
    entry_lines = [n for n, line in enumerate(lines, start=1) if ATOM_ENTRY.search(line)]
    title_line = next(n for n in range(entry_lines[39], entry_lines[40]) if b"</title>" in lines[n - 1])
    lines[title_line - 1] = lines[title_line - 1].replace(b"</title>", b"</titel>")
    (tmp / "tag.xml").write_bytes(b"\n".join(lines))
    return Case(
        [tmp / "tag.xml"], set(atom_ids(data)[:39]), {("tag.xml", title_line)}, mutations=1, cut_off={"tag.xml"}
    )


YEAR_LINE = re.compile(r"^arXiv\s*\d{4}$")


def page_records(lines: list[str]) -> list[tuple[int, str]]:
    """(year line number, title) of each record of an author page, read here by its layout."""
    found = []
    for number, line in enumerate(lines, start=1):
        if YEAR_LINE.match(line.strip()):
            title = next(t.strip() for t in lines[number:] if t.strip())
            found.append((number, title))
    return found


def title_key(title: str) -> str:
    import unicodedata

    return "".join(ch for ch in unicodedata.normalize("NFKD", title.casefold()) if ch.isalnum())


def author_pages_damaged(tmp: Path) -> Case:
    first, second = (seed.read_text(encoding="utf-8").split("\n") for seed in SEEDS)
    keys: dict[str, str] = {}
    bad_lines = set()
    # Page 1 with CRLF and a BOM: all its records.
    (tmp / "page1.txt").write_bytes(b"\xef\xbb\xbf" + "\r\n".join(first).encode())
    for _, title in page_records(first):
        keys[title_key(title)] = title
    # Page 2: record 3 loses its category line, and the page is cut inside its last record.
    records = page_records(second)
    category = next(n for n in range(records[2][0] + 1, records[3][0]) if second[n - 1].strip().endswith("↗"))
    damaged = second[: category - 1] + second[category:]
    last_year = records[-1][0] - 1  # one line earlier now
    damaged = damaged[: last_year + 2]
    (tmp / "page2.txt").write_text("\n".join(damaged), encoding="utf-8")
    bad_lines |= {("page2.txt", records[2][0]), ("page2.txt", last_year)}
    for number, (_, title) in enumerate(records):
        if number not in (2, len(records) - 1):
            keys.setdefault(title_key(title), title)
    return Case([tmp / "page1.txt", tmp / "page2.txt"], set(), bad_lines, mutations=3, title_keys=set(keys))


def csv_damaged(tmp: Path) -> Case:
    objects = listing_objects(tmp, 60, LISTING_START + 1000)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(["id", "title", "abstract", "authors", "year", "categories"])
    line = 2
    ids, damaged, rows = set(), set(), []
    for number, obj in enumerate(objects):
        row = [
            obj["id"],
            obj["title"],
            obj["summary"],
            "; ".join(obj["authors"]),
            "20" + obj["id"][:2],
            " ".join(obj["categories"]),
        ]
        is_bad = False
        if number == 5:
            row[4], is_bad = "20x5", True
        elif number == 9:
            row[1], is_bad = "", True
        elif number == 12:
            row.append("one value too many")
            is_bad = True
        elif number == 20:
            row[2] = row[2].replace("\n", " ")  # one line, then made invalid UTF-8 below
            is_bad = True
        elif number == 59:
            is_bad = True  # left with an open quote below
        start = out.tell()
        writer.writerow(row)
        text = out.getvalue()[start:]
        rows.append((line, text))
        if is_bad:
            damaged.add(("records.csv", line))
        else:
            ids.add(obj["id"])
        line += text.count("\n")  # quoted abstracts keep their own line breaks
    data = "".join(text for _, text in rows)
    header = out.getvalue()[: out.getvalue().index("\r\n") + 2]
    encoded = (header + data).encode()
    row20 = rows[20][1].encode()
    encoded = encoded.replace(row20, row20[:20] + b"\xff" + row20[20:])
    last = rows[59][1].encode()
    encoded = encoded[: len(encoded) - len(last)] + b'"' + last  # a quote left open to the end
    (tmp / "records.csv").write_bytes(encoded)
    return Case([tmp / "records.csv"], ids, damaged, mutations=5, cut_off={"records.csv"})


def png_bytes() -> bytes:
    """A real 2x2 PNG image."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    raw = b"".join(b"\x00" + b"\xff\x00\x00" * 2 for _ in range(2))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


def folder_with_unrelated_files(tmp: Path) -> Case:
    folder = tmp / "inbox"
    (folder / "nested" / "deeper").mkdir(parents=True)
    objects = listing_objects(tmp, 30, LISTING_START + 2000)
    ids, _ = write_lines(folder / "good.jsonl", [good(o) for o in objects])
    more, _ = write_lines(
        folder / "nested" / "deeper" / "more.jsonl", [good(o) for o in listing_objects(tmp, 20, LISTING_START + 3000)]
    )
    unrelated = {
        "empty.jsonl": b"",
        "blank.txt": b"\n\n   \n",
        "image.png": png_bytes(),
        "random.bin": random.Random(8).randbytes(20_000),
        "notes.md": b"# Reading list\n\nPapers to read next week: sparse kernels, GPUs.\n",
        "script.py": b'"""A helper."""\n\nimport sys\n\nprint(sys.argv)\n',
        "array.json": json.dumps([objects[0]]).encode(),
        "broken.gz": b"\x1f\x8b\x08\x00" + random.Random(9).randbytes(500),
        "nested/utf32.txt": "text in UTF-32".encode("utf-32"),
        "nested/deeper/table.tsv": b"id\tname\n1\tx\n",
    }
    for name, data in unrelated.items():
        (folder / name).write_bytes(data)
    bad_files = {(Path(name).name, 0) for name in unrelated}
    return Case([folder], ids | more, bad_files, mutations=len(unrelated))


def empty_file(tmp: Path) -> Case:
    (tmp / "empty.jsonl").write_bytes(b"")
    return Case([tmp / "empty.jsonl"], set(), {("empty.jsonl", 0)})


def only_bad_records(tmp: Path) -> Case:
    lines = [bad(line.data[:30]) for line in (good(o) for o in listing_objects(tmp, 10))]
    ids, damaged = write_lines(tmp / "all-bad.jsonl", lines)
    return Case([tmp / "all-bad.jsonl"], ids, damaged)


CASES: dict[str, Callable[[Path], Case]] = {
    "listing truncated lines": listing_truncated,
    "listing invalid UTF-8": listing_invalid_utf8,
    "listing BOM, CRLF, UTF-16": listing_encodings,
    "listing NUL and control characters": listing_nul_and_controls,
    "listing huge lines": listing_huge_lines,
    "listing missing fields": listing_missing_fields,
    "listing wrong types": listing_wrong_types,
    "listing duplicated ids": listing_duplicates,
    "listing combined, gzip": listing_combined,
    "OAI snapshot damaged": oai_damaged,
    "plain JSON lines damaged, UTF-16": plain_jsonl_damaged,
    "Atom CRLF, bad byte, cut": atom_damaged,
    "Atom broken tag": atom_tag_damage,
    "author pages damaged": author_pages_damaged,
    "CSV damaged": csv_damaged,
    "folder of unrelated files": folder_with_unrelated_files,
    "empty file": empty_file,
    "only bad records": only_bad_records,
}


# --- the checks --------------------------------------------------------------------


def reported(problems) -> set[tuple[str, int]]:
    """(file name, line) of each reported problem, from its ``file:line: reason`` text."""
    out = set()
    for problem in problems:
        found = re.match(r"(.+?):(\d+): \S", str(problem))
        assert found, f"not file:line: reason: {problem!r}"
        out.add((Path(found.group(1)).name, int(found.group(2))))
    return out


def indexed(index_dir: Path) -> dict[str, str]:
    """id → title of every document in the index."""
    index = open_index(index_dir)
    try:
        return {stored["id"]: stored.get("title", "") for stored in index.engine.current().searcher.all_stored_fields()}
    finally:
        index.close()


def check_no_traceback(result) -> None:
    output = result.stdout + result.stderr
    assert "Traceback" not in output and "internal error" not in output, output[-3000:]
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)


@pytest.mark.parametrize("name", list(CASES))
def test_damaged_input_is_reported_and_good_records_are_indexed(name, tmp_path, figure_totals):
    work = tmp_path / "files"
    work.mkdir()
    case = CASES[name](work)
    # Python API.
    if case.cut_off:
        # A file read only in part: the rebuild is not published (here: no index at all) ...
        with pytest.raises(InputError, match=r"stopped in line [\d,]+: the rebuild was not published") as raised:
            build_index(case.files, tmp_path / "api", jobs=1)
        assert {Path(p.path).name for p in raised.value.problems if p.cut_off} == case.cut_off
        assert not (tmp_path / "api" / "CURRENT").exists()
        # ... and an update keeps every good record read.
        summary = update_index(case.files, tmp_path / "api", jobs=1)
        problems = summary.problems
    elif case.documents:
        summary = build_index(case.files, tmp_path / "api", jobs=1)
        problems = summary.problems
    else:
        with pytest.raises(InputError) as raised:
            build_index(case.files, tmp_path / "api", jobs=1)
        assert "nothing to index" in str(raised.value) and "\n" not in str(raised.value)
        problems = raised.value.problems
    # Notes (a record kept without a part of it, a file without its dates) are no bad records.
    assert reported([p for p in problems if p.skipped]) == case.bad, [str(p) for p in problems]
    if case.documents:
        documents = indexed(tmp_path / "api")
        assert summary.documents == case.documents
        if case.title_keys:
            assert {title_key(title) for title in documents.values()} == case.title_keys
        else:
            assert set(documents) == case.ids
        for doc_id, title in case.titles.items():
            assert documents[doc_id] == title
    # Command line.
    command = ["index", *map(str, case.files), "--index-dir", str(tmp_path / "cli"), "--json", "--jobs", "1"]
    if case.cut_off:
        refused = CliRunner().invoke(main, command)
        check_no_traceback(refused)
        assert refused.exit_code == 1 and "the rebuild was not published" in refused.stderr.splitlines()[-1]
        command.insert(1, "--update")
    result = CliRunner().invoke(main, command)
    check_no_traceback(result)
    if case.documents:
        assert result.exit_code == (1 if case.cut_off else 0), result.output
        shown = json.loads(result.stdout)
        assert shown["documents"] == case.documents
        assert case.bad <= reported(shown["problems"])
        assert shown["skipped"] == len(case.bad)
    else:
        assert result.exit_code == 1
        assert result.stderr.splitlines()[-1].startswith("Error: nothing to index")
    notes = tuple(str(p) for p in problems if not p.skipped)
    stderr_problems = [
        line for line in result.stderr.splitlines() if not line.startswith(("Error:", "... and ", "Note:", *notes))
    ]
    assert reported(stderr_problems) <= case.bad
    figure_totals["files fuzzed"] = figure_totals.get("files fuzzed", 0) + sum(
        len([p for p in Path(f).rglob("*") if p.is_file()]) if Path(f).is_dir() else 1 for f in case.files
    )
    figure_totals["mutations"] = figure_totals.get("mutations", 0) + case.mutations
    figure_totals["bad records and files reported"] = figure_totals.get("bad records and files reported", 0) + len(
        case.bad
    )
    figure_totals["good records indexed (= expected)"] = (
        figure_totals.get("good records indexed (= expected)", 0) + case.documents
    )
    figure_totals.setdefault("crashes and tracebacks", 0)


def test_update_with_damaged_files_loses_nothing(tmp_path, figure_totals):
    runner = CliRunner()
    index_dir = tmp_path / "index"
    base = listing_objects(tmp_path, 100, LISTING_START + 4000)
    base_ids, _ = write_lines(tmp_path / "base.jsonl", [good(o) for o in base])
    result = runner.invoke(main, ["index", str(tmp_path / "base.jsonl"), "--index-dir", str(index_dir), "--jobs", "1"])
    assert result.exit_code == 0, result.output
    before = indexed(index_dir)
    assert set(before) == base_ids

    # New records with damaged lines, newer versions of five indexed ones, an
    # older version of one, an unrelated binary file and an empty file.
    new = listing_objects(tmp_path, 50, LISTING_START + 5000)
    lines = [good(o) for o in new]
    lines[2] = bad(lines[2].data[:25])
    lines[29] = bad(with_title_bytes(new[29], b"\xff"))
    newer = {o["id"]: f"Revised title {n}" for n, o in enumerate(base[:5])}
    lines += [good(changed(o, id=o["id"] + "v2", title=newer[o["id"]])) for o in base[:5]]
    new_ids, damaged = write_lines(tmp_path / "update.jsonl", lines, newline=b"\r\n")
    older = tmp_path / "older.jsonl"
    write_lines(older, [good(changed(base[0], id=base[0]["id"] + "v1", title="An older title"))])
    (tmp_path / "image.bin").write_bytes(png_bytes() + random.Random(3).randbytes(4000))
    (tmp_path / "empty.jsonl").write_bytes(b"")
    files = [tmp_path / "update.jsonl", older, tmp_path / "image.bin", tmp_path / "empty.jsonl"]
    result = runner.invoke(
        main, ["index", "--update", *map(str, files), "--index-dir", str(index_dir), "--json", "--jobs", "1"]
    )
    check_no_traceback(result)
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    # The v1 read in the same run as the v2 is merged into it (the higher version wins).
    expected_bad = damaged | {("image.bin", 0), ("empty.jsonl", 0)}
    assert expected_bad <= reported(shown["problems"]) and shown["skipped"] == len(expected_bad)
    after = indexed(index_dir)
    assert set(after) == base_ids | new_ids and shown["documents"] == len(base_ids) + 48
    assert {i: after[i] for i in newer} == newer  # v2 replaced; the older v1 did not
    assert all(after[i] == before[i] for i in base_ids - set(newer))

    # An older version than the indexed one, alone: reported and skipped.
    result = runner.invoke(main, ["index", "--update", str(older), "--index-dir", str(index_dir), "--json"])
    check_no_traceback(result)
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert ("older.jsonl", 1) in reported(shown["problems"]) and shown["skipped"] == 1
    assert indexed(index_dir) == after

    # An update from nothing but bad input fails with one line and changes nothing.
    write_lines(tmp_path / "all-bad.jsonl", [bad(b'{"id": "2601.99999", "title": '), bad(b"\x00\xff")])
    result = runner.invoke(
        main,
        [
            "index",
            "--update",
            str(tmp_path / "all-bad.jsonl"),
            str(tmp_path / "image.bin"),
            "--index-dir",
            str(index_dir),
        ],
    )
    check_no_traceback(result)
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1].startswith("Error: nothing to index")
    assert reported(result.stderr.splitlines()[:-1]) == {("all-bad.jsonl", 1), ("all-bad.jsonl", 2), ("image.bin", 0)}
    assert indexed(index_dir) == after

    # The Python API: the same.
    with pytest.raises(InputError):
        update_index([tmp_path / "all-bad.jsonl"], index_dir, jobs=1)
    assert indexed(index_dir) == after
    figure_totals["updates with bad files, documents lost"] = 0
