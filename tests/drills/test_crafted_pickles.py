"""Crafted-pickle drill: an index folder made to run code, at every place it holds a pickle.

Whoosh keeps pickles in an index folder at these places, and each is
crafted here in turn (the build of ``corpus/depei-qian.txt`` with one
pickle replaced by a call of ``os.mkdir(marker)``, the folder's checksums
written to match, as whoever crafts a folder can):

- ``schema``: the table of contents' schema;
- ``segment list``: the table of contents' list of segments;
- ``column type``: a field's column type inside the schema;
- ``compound directory``: the directory at the end of a segment's compound file;
- ``block header``: each block of postings' header;
- ``block data``: each block of postings' data (these two in a folder of
  the segments written before every term's postings were arrays, which
  hold no pickle and are still read: the folder names their codec);
- ``stored fields``: each document's stored fields (a pickle column).

Each crafted folder is given to ``search``, ``show``, ``stats``, ``check``,
``index --update`` and ``serve`` (a process; then ``/api/search`` and
``/api/records/ID``). Asserted: the marker is never made; every command
that reads the crafted pickle refuses with the damage message ("... which
no index holds") and exit status 3, or 503 on the web; ``search`` (whose
hits read the blocks and the stored fields), ``check`` (which reads
everything) and the web always do; a command that never reads that pickle
(``stats`` on a crafted block) answers as on a sound index (exit 0).
"""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import threading
from contextlib import ExitStack
from pathlib import Path
from unittest import mock

import pytest
from click.testing import CliRunner

from searchengine.cli import main
from searchengine.engines.whoosh import integrity, store

from drills.conftest import REPO

SOURCE = REPO / "corpus" / "depei-qian.txt"
OTHER = REPO / "corpus" / "longbin-zeng.txt"
REFUSED = "which no index holds (the folder may have been made to run code)"
PLACES = ["schema", "segment list", "column type", "compound directory", "block header", "block data", "stored fields"]
COMMANDS = ["search", "show", "stats", "check", "index --update", "serve"]


class Payload:
    """Pickles as a call of os.mkdir(marker): what a crafted folder would run."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return os.mkdir, (self.marker,)


def build(folder: Path) -> None:
    from searchengine import build_index

    build_index([SOURCE], folder, jobs=1)  # one process: the patches below apply to the writer


def rewrite_toc(folder: Path, change) -> None:
    """Rewrite the table of contents of ``folder``'s generation after ``change(toc)``."""
    from whoosh.filedb.filestore import FileStorage
    from whoosh.index import TOC

    generation = store.current_generation(folder)
    storage = FileStorage(str(generation))
    toc = TOC.read(storage, "MAIN")
    (generation / f"_MAIN_{toc.generation}.toc").unlink()
    change(toc)
    toc.write(storage, "MAIN")


def craft(place: str, folder: Path, marker: Path) -> None:
    """Build an index in ``folder`` whose pickle at ``place`` runs ``os.mkdir(marker)``."""
    payload = Payload(marker)
    with ExitStack() as stack:
        if place == "compound directory":
            pass  # rewritten after the build, which reads its segments back
        if place in ("block header", "block data"):
            import whoosh.codec.whoosh3 as w3

            from searchengine.engines.whoosh import arraypostings, codec, writer

            # The segments of blocks (their codec still read), as an older index has them.
            stack.enter_context(mock.patch.object(arraypostings, "ArrayCodec", codec.DictionaryCodec))
            stack.enter_context(mock.patch.object(writer, "_WRITER_CLASSES", {}))

            size = 6 if place == "block header" else 3
            dumps = w3.dumps

            def crafted_dumps(value, protocol=2):
                if isinstance(value, tuple) and len(value) == size:
                    return dumps(payload, 2)
                return dumps(value, protocol)

            stack.enter_context(mock.patch.object(w3, "dumps", crafted_dumps))
        elif place == "stored fields":
            import whoosh.columns as columns

            dumps = columns.dumps
            stack.enter_context(mock.patch.object(columns, "dumps", lambda value, protocol=2: dumps(payload, 2)))
        build(folder)
    if place == "schema":
        rewrite_toc(folder, lambda toc: setattr(toc, "schema", _crafted_schema(payload)))
    elif place == "segment list":
        rewrite_toc(folder, lambda toc: setattr(toc, "segments", [payload]))
    elif place == "compound directory":
        _craft_directory(folder, payload)
    elif place == "column type":

        def change(toc):
            toc.schema["year"].column_type = payload

        rewrite_toc(folder, change)
    integrity.write_checksums(store.current_generation(folder))  # the checksums match the crafted files
    assert not marker.exists()


def _craft_directory(folder: Path, payload: Payload) -> None:
    """Replace the directory at the end of each compound segment file with ``payload``."""
    from whoosh.filedb.structfile import StructFile

    for segment in store.current_generation(folder).glob("*.seg"):
        with StructFile(open(segment, "r+b")) as dbfile:
            dirpos = dbfile.read_long()
            dbfile.seek(dirpos)
            dbfile.truncate()
            dbfile.write_pickle(payload)
            dbfile.write_pickle({})
            length = dbfile.tell() - dirpos
            dbfile.seek(8)
            dbfile.write_int(length)


def _crafted_schema(payload):
    from whoosh.fields import Schema

    class CraftedSchema(Schema):
        def __reduce__(self):
            return payload.__reduce__()

    return CraftedSchema()


def run(command: str, folder: Path, record_id: str) -> tuple[int, str]:
    args = {
        "search": ["search", "gpu"],
        "show": ["show", record_id],
        "stats": ["stats"],
        "check": ["check"],
        "index --update": ["index", str(OTHER), "--update", "-q", "-j", "1"],
    }[command]
    result = CliRunner().invoke(main, [*args, "--index-dir", str(folder)])
    return result.exit_code, result.stderr + result.stdout


def serve(folder: Path, record_id: str) -> tuple[int, str]:
    """``serve --workers 1`` of ``folder``: its exit status when it stops at
    its start, else the statuses of a search and a record (as ``(0, text)``
    when both are 200)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "searchengine", "serve", "--workers", "1", "--port", "0", "--index-dir", str(folder)]
        + ["--rate-limit", "off"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    log: list[str] = []
    try:
        port = None
        for line in iter(process.stderr.readline, ""):
            log.append(line)
            match = re.search(r"on http://127\.0\.0\.1:(\d+)/", line)
            if match:
                port = int(match.group(1))
                break
        if port is None:
            process.wait(30)
            return process.returncode, "".join(log)
        threading.Thread(target=lambda: log.extend(process.stderr), daemon=True).start()
        answers = []
        for path in ("/api/search?q=gpu", f"/api/records/{record_id}"):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            connection.request("GET", path)
            response = connection.getresponse()
            answers.append((response.status, response.read().decode()))
            connection.close()
        statuses = [status for status, _ in answers]
        text = " ".join(body for _, body in answers) + "".join(log)
        return (503 if 503 in statuses else 0 if statuses == [200, 200] else statuses[0]), text
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(30)


@pytest.fixture(scope="module")
def record_id(tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("sound") / "index"
    build(folder)
    found = CliRunner().invoke(main, ["search", "gpu", "--json", "--index-dir", str(folder)])
    assert found.exit_code == 0, found.output
    return json.loads(found.stdout)["hits"][0]["id"]


@pytest.mark.parametrize("place", PLACES)
def test_a_crafted_pickle_is_refused_and_runs_nothing(place, record_id, tmp_path, figure_totals):
    marker = tmp_path / "ran"
    outcomes = {}
    for command in COMMANDS:
        folder = tmp_path / command.replace(" ", "-").replace("--", "")
        craft(place, folder, marker)
        code, text = serve(folder, record_id) if command == "serve" else run(command, folder, record_id)
        outcomes[command] = code
        assert not marker.exists(), (place, command)
        assert "Traceback" not in text, (place, command, text)
        if code in (3, 503):
            assert REFUSED in text or (code == 503 and "the index is not available right now" in text), (
                place,
                command,
                text,
            )
        else:
            assert code == 0, (place, command, code, text)
    figure_totals[f"{place}: refused by"] = ", ".join(command for command, code in outcomes.items() if code)
    for command in ("search", "check", "serve"):
        assert outcomes[command] in (3, 503), (place, outcomes)
    assert not marker.exists()
