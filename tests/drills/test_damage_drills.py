"""Damage drill: every file of an index generation, damaged in each of many ways.

One index of the drills' arXiv records (at most :data:`RECORDS`, so that the
drill stays short) is built, and a fixed set of probes (a faceted search, an
author-filtered search, a category filter, ``stats()`` and ``record(id)``)
records its intact answers through the Python API.

Then every file of the current generation (segments, table of contents,
``facet.columns``, ``LAYOUT``, ``CHECKSUMS``, and the ``VERIFIED`` cache and
lock file too) is damaged, each time on a fresh copy of the index, in each of
these ways: 64 zero bytes at the start, at 1/8 ... 7/8 of its size and at its
end (offsets that coincide in a small file are tried once), 64 random bytes
at the middle, cut to half its size, removed. The damage is written in place
with ordinary writes (``truncate`` for a cut), as real damage is, so the
file's modification time changes.

The probes run twice on each damaged copy: through an index opened before
the damage (as a long-running server holds it) and through one opened after
it. Each probe must give the intact answer (zeros written over zeros, or a
file that no answer depends on) or raise ``IndexDamagedError``; a different
answer or any other exception is a failure. For one damage of each
checksummed file, ``searchengine search`` and ``searchengine check`` run as
processes: both must exit with status 3, naming the damage on one ``Error:``
line, without a traceback.

Environment: ``DRILL_RECORDS`` as for every drill, capped at :data:`RECORDS`.
"""

from __future__ import annotations

import dataclasses
import json
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from drills.conftest import REPO, drill_records
from shareddata import write_listing

RECORDS = 3_000
QUERY = "learning"
FACETS = ["year", "author", "category"]
# Searches may take their time here: an answer cut short by the clock would differ from the intact one.
BUDGET = 120.0
SEED = 20_251_203
DAMAGED = "the index is damaged"


@dataclasses.dataclass(frozen=True)
class Damage:
    """One way of damaging a file: ``kind`` is zeros, random, cut or remove."""

    kind: str
    offset: int = 0

    def __str__(self) -> str:
        return {
            "zeros": f"64 zero bytes at {self.offset:,}",
            "random": f"64 random bytes at {self.offset:,}",
            "cut": f"cut to {self.offset:,} bytes",
            "remove": "removed",
        }[self.kind]

    def apply(self, path: Path, rng: random.Random) -> None:
        """Damage ``path`` in place, with ordinary writes."""
        if self.kind == "remove":
            path.unlink()
            return
        with open(path, "r+b") as handle:
            if self.kind == "cut":
                handle.truncate(self.offset)
                return
            handle.seek(self.offset)
            before = handle.read(64)
            data = bytes(64)
            while self.kind == "random" and (data == bytes(64) or data == before):
                data = rng.randbytes(64)
            handle.seek(self.offset)
            handle.write(data)


def damages(size: int) -> list[Damage]:
    """The damages tried on a file of ``size`` bytes."""
    offsets = dict.fromkeys([0, *(size * part // 8 for part in range(1, 8)), max(size - 64, 0)])
    return [
        *(Damage("zeros", offset) for offset in offsets),
        Damage("random", size // 2),
        Damage("cut", size // 2),
        Damage("remove"),
    ]


def results_key(results) -> str:
    """A search's answer, all of it but the time it took."""
    found = results.to_dict()
    found.pop("took_ms")
    return json.dumps(found, sort_keys=True, default=str)


def probe_set(author: str, category: str, record_id: str) -> dict:
    """``{name: function of an open index giving a comparable answer}``."""
    return {
        "search with facets": lambda index: results_key(
            index.search(QUERY, limit=20, facets=FACETS, time_budget=BUDGET)
        ),
        "author filter": lambda index: results_key(index.search(QUERY, limit=20, author=author, time_budget=BUDGET)),
        "category filter": lambda index: results_key(
            index.search("model", limit=20, category=category, facets=["year"], time_budget=BUDGET)
        ),
        "stats": lambda index: json.dumps(index.stats(), sort_keys=True),
        "record": lambda index: json.dumps(dataclasses.asdict(index.record(record_id)), sort_keys=True, default=str),
    }


def open_fresh(path: Path):
    from searchengine import open_index

    index = open_index(path)
    index.time_budget = BUDGET  # stats() searches with the index's budget
    return index


def run_probes(index, probes: dict) -> dict:
    """``{probe: (outcome, detail)}``: ``("answer", the answer)``, ``("reported", message)``
    for ``IndexDamagedError``, or ``("error", what)`` for any other exception."""
    from searchengine import IndexDamagedError

    found = {}
    for name, probe in probes.items():
        try:
            found[name] = ("answer", probe(index))
        except IndexDamagedError as exc:
            found[name] = ("reported", str(exc))
        except Exception as exc:  # noqa: BLE001 (any other exception is what the drill looks for)
            found[name] = ("error", f"{type(exc).__name__}: {exc}")
    return found


@pytest.fixture(scope="module")
def intact(tmp_path_factory):
    """The built index, its probes and their intact answers."""
    from searchengine import build_index

    folder = tmp_path_factory.mktemp("damage")
    count = drill_records()
    count = RECORDS if count == 0 else min(count, RECORDS)
    source = folder / "arxiv.jsonl"
    write_listing(source, count)
    index_dir = folder / "index"
    build_index([source], index_dir)

    index = open_fresh(index_dir)
    try:
        broad = index.search(QUERY, facets=["author"], time_budget=BUDGET)
        assert broad.total > 0
        author = broad.facets["author"][0]["value"]
        category = next(iter(index.stats()["categories"]))
        record_id = index.search(QUERY, author=author, time_budget=BUDGET).hits[0].id
        probes = probe_set(author, category, record_id)
        answers = {name: probe(index) for name, probe in probes.items()}
    finally:
        index.close()
    return index_dir, probes, answers


def generation_of(index_dir: Path) -> Path:
    return index_dir / (index_dir / "CURRENT").read_text().strip()


def checksummed(generation: Path) -> list[str]:
    """The files ``CHECKSUMS`` lists, and ``CHECKSUMS`` itself."""
    lines = (generation / "CHECKSUMS").read_text().splitlines()[1:-1]
    return sorted([line.split(" ", 2)[2] for line in lines] + ["CHECKSUMS"])


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "searchengine", *args], capture_output=True, text=True, cwd=REPO, timeout=300
    )


def cli_problem(result: subprocess.CompletedProcess, one_line: bool) -> str | None:
    """What is wrong with a command's answer to a damaged index, or ``None``."""
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    if result.returncode != 3:
        return f"exit status {result.returncode}"
    if "Traceback" in result.stderr + result.stdout:
        return "a traceback"
    if not lines or not lines[-1].startswith("Error: ") or DAMAGED not in lines[-1]:
        return f"no 'Error: ... {DAMAGED}' line last"
    if one_line and len(lines) != 1:
        return f"{len(lines)} lines on stderr"
    if sum(line.startswith("Error: ") for line in lines) != 1:
        return "more than one 'Error:' line"
    return None


def test_damage_to_every_file(intact, tmp_path, figures):
    from searchengine import IndexDamagedError

    index_dir, probes, answers = intact
    names = sorted(entry.name for entry in generation_of(index_dir).iterdir() if entry.is_file())
    listed = checksummed(generation_of(index_dir))
    assert set(listed) <= set(names)
    assert any(name.endswith(".seg") for name in listed) and any(name.endswith(".toc") for name in listed)
    assert {"facet.columns", "LAYOUT", "CHECKSUMS"} <= set(listed)
    rng = random.Random(SEED)
    started = time.monotonic()

    # A plain copy answers as the original: "the intact answer" does not depend on where the index is.
    copy = tmp_path / "copy"
    shutil.copytree(index_dir, copy)
    index = open_fresh(copy)
    try:
        assert {name: outcome for name, outcome in run_probes(index, probes).items()} == {
            name: ("answer", answer) for name, answer in answers.items()
        }
    finally:
        index.close()
    shutil.rmtree(copy)

    counts = dict.fromkeys(["same", "reported", "different", "error"], 0)
    undamaged = dict.fromkeys(counts, 0)  # the opened-before index, before the damage
    failures: list[str] = []
    refused_opens = copies = 0
    reports_without_file: list[str] = []
    cli_runs = cli_exit_3 = 0
    cli_cycle = ["cut", "random", "remove"]
    sample: dict[str, Damage] = {}
    for number, name in enumerate(listed):
        size = (generation_of(index_dir) / name).stat().st_size
        sample[name] = next(d for d in damages(size) if d.kind == cli_cycle[number % len(cli_cycle)])

    def tally(where: str, outcomes: dict, name: str, counted: dict) -> None:
        for probe, (outcome, detail) in outcomes.items():
            if outcome == "answer":
                outcome = "same" if detail == answers[probe] else "different"
            counted[outcome] += 1
            if outcome == "reported" and name not in detail:
                reports_without_file.append(f"{where}, {probe}: {detail}")
            if outcome in ("different", "error"):
                shown = detail if outcome == "error" else "an answer unlike the intact one"
                failures.append(f"{where}, {probe}: {shown}")

    for name in names:
        size = (generation_of(index_dir) / name).stat().st_size
        for damage in damages(size):
            copy = tmp_path / "copy"
            shutil.copytree(index_dir, copy)  # copy2: the copy's files keep their modification times
            target = generation_of(copy) / name
            where = f"{name} {damage}"
            copies += 1

            # An index opened before the damage, as a server holds it; checked to answer as intact first.
            before = open_fresh(copy)
            try:
                tally(f"{where} (opened before, undamaged)", run_probes(before, probes), name, undamaged)
                damage.apply(target, rng)
                tally(f"{where} (opened before)", run_probes(before, probes), name, counts)
            finally:
                before.close()

            # An index opened after the damage.
            try:
                after = open_fresh(copy)
            except IndexDamagedError as exc:
                refused_opens += 1
                if name not in str(exc):
                    reports_without_file.append(f"{where} (open): {exc}")
            except Exception as exc:  # noqa: BLE001
                failures.append(f"{where} (open): {type(exc).__name__}: {exc}")
            else:
                try:
                    tally(f"{where} (opened after)", run_probes(after, probes), name, counts)
                finally:
                    after.close()

            if sample.get(name) == damage:
                for command, one_line in ((["search", "gpu"], True), (["check"], False)):
                    result = run_cli(*command, "--index-dir", str(copy))
                    cli_runs += 1
                    cli_exit_3 += result.returncode == 3
                    problem = cli_problem(result, one_line)
                    if problem:
                        failures.append(
                            f"{where}: searchengine {command[0]}: {problem}: {(result.stderr + result.stdout)[-2000:]}"
                        )
            shutil.rmtree(copy)

    elapsed = time.monotonic() - started
    figures.add("files damaged", len(names))
    figures.add("copies damaged", copies)
    figures.add("probes run on damaged copies", sum(counts.values()))
    figures.add("same answers", counts["same"])
    figures.add("damage reported", counts["reported"])
    figures.add("opens refused as damaged", refused_opens)
    figures.add("silently different answers", counts["different"])
    figures.add("other errors", counts["error"])
    figures.add("reports not naming the file", len(reports_without_file))
    figures.add("CLI runs", cli_runs)
    figures.add("CLI exit 3", cli_exit_3)
    figures.add("seconds", round(elapsed, 1))

    assert failures == [], "\n".join(failures[:40])
    assert undamaged == {**dict.fromkeys(counts, 0), "same": copies * len(probes)}
    assert cli_runs == cli_exit_3 == 2 * len(listed)
    # Every checksummed file damaged in a way that changes it is reported, so each was tried for real.
    assert counts["reported"] > 0 and refused_opens >= len(listed)
