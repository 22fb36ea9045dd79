"""The whole speed table in one run: every target row, measured beside its peer.

    python benchmarks/table.py [--size N] [--work DIR] [--rows ROW ...] [--memory-records N] [--query-runs N]

``--size N``: the first N records of
``../shared/data/arxiv/arxiv_listing_sample.jsonl.gz`` (0, the default: all
74,728), written as Record JSON lines (``facets.convert``: the year from the
new-style id) into ``--work`` and indexed there by this product, by SQLite
FTS5 and by plain Whoosh 2.7.4 with its defaults. Indexes are kept in
``--work`` and reused when their input file is unchanged, except that the
``build`` row always builds them again (its figures are of this run).
``--rows`` picks rows (default: all). Rows, by name:

* ``cold-facets``, ``cold-plain``: ``searchengine search "SpMV GPU" --facets
  year,author,category`` and the same without facets, each a new process,
  interleaved with a bare ``python -c pass`` over 9 rounds after one
  unmeasured run of each (``cold.interleaved``); medians of wall time.
  Target: ≤ 0.35 s and ≤ 0.25 s above the bare start.
* ``query``: the top 10 with snippets of 200 distinct queries of the kinds
  people type (``speed.typed_queries``: three fixed ones, then 1 to 6
  content words of random titles, some with a ``year:`` or ``cat:`` filter,
  and pasted titles; seed 42). The headline rows time each query once, in a
  new process that opened the index and ran 20 other queries first
  (``speed.first_pass``): what a query the process has not seen costs; the
  two engines take turns query by query in that process, so that both meet
  the same load, and it is done in ``--query-runs`` processes (default 3):
  the median of their percentiles, each run's ratio beside it. The
  second pair of rows is the same queries repeated in this process: each
  query's median of 3 passes after a first pass (``speed.latencies``). The
  peer is FTS5, timed the same way in the same run, answering the same
  queries with every word required (AND), a filter as a condition on its
  year or primary category column, ranked by bm25 with snippets
  (``speed.fts5_top10``). Target (the distinct queries): p50 ≤ 6× FTS5's
  p50 and p95 ≤ 3× FTS5's p95.
* ``build``: records/s over the wall time of the whole build process
  (``searchengine index FILE --quiet --json``, default options; FTS5's
  build, ``speed.fts5_build``; plain Whoosh: a script in a separate venv
  with Whoosh 2.7.4 (made in ``--work`` by ``python -m venv`` and pip, then
  reused), StandardAnalyzer TEXT fields title and abstract, stored, KEYWORD
  authors and categories, NUMERIC year, an ID, its own writer with ``procs``
  = the number of cores); peak RSS of each process tree sampled every 20 ms
  (``speed.measured``). Target: ≥ FTS5's records/s ÷ 10 and ≥ 1.65× plain
  Whoosh's.
* ``size``: bytes on disk of the three indexes. Target: ≤ plain Whoosh's.
* ``web``: ``searchengine serve --workers 2`` on 127.0.0.1, 8 concurrent
  clients sending 40 ``/api/search`` requests each (two-word queries from
  random titles; facets year, author and category are counted on every API
  search), after one client's 40 (``web_load.run_load``): p95 of client-side
  milliseconds. Target: ≤ 150 ms, no errors.
* ``serve``: the same server's start (``web_load.start_server``): the
  "ready in" time it reports, the first connection the port accepted
  (probed every 20 ms) and the first answer. Target: it listens only once
  ready, i.e. the first accepted connection is answered.
* ``pasted``: three 3,000-character queries made of abstracts that are not
  in the index (``speed.pasted_queries``; with the whole listing indexed,
  abstracts of its first records), top 10 with snippets, in this
  process: the largest wall time, and whether the time budget cut them
  (``timed_out``). Target: never past the 2 s budget.
* ``growth``: the records multiplied by 2 and by 4 (each copy after the
  first has new ids, ``ID~k``, and the words of its title and abstract
  shuffled, seed 42), built by this product and by FTS5 as in
  the ``build`` row, and the same 200 distinct queries (those of the
  ``query`` row, drawn from the records at 1×) timed once each as there,
  in one new process per size (``--query-runs`` of them at 1×, one at the
  other sizes). Rows: the distinct-query p50 at each size against the p50
  at 1× (FTS5's growth beside it), and the build's peak RSS likewise.
  Targets: at 4× the records, p50 ≤ 2.5× and peak RSS ≤ 1.5× those at 1×.
* ``memory``: ``searchengine index FILE --memory-mb 64`` on N and 4N
  synthetic records (``--memory-records N``, default 10,000: 150-word
  abstracts of words drawn from a Zipf-distributed vocabulary of 100,000,
  seed 42); peak RSS of the process and its workers. Target: 4× the records
  → ≤ 1.5× the peak.

Prints ``uptime`` at the start and the end, the date and the machine, then
one table: row, measured figure, peer (same run), ratio, target, met / not
met. Exit status 0 whether or not targets are met; 1 when a measurement
fails (the message says which) or the shared data is missing.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cold  # noqa: E402
import facets  # noqa: E402
import speed  # noqa: E402
import web_load  # noqa: E402
from speed import LISTING, REPO, disk_mb, measured, pct, uptime  # noqa: E402

ROWS = ("cold-facets", "cold-plain", "query", "build", "size", "web", "serve", "pasted", "growth", "memory")
COLD_QUERY = "SpMV GPU"
COLD_RUNS = 9
WHOOSH = "Whoosh==2.7.4"
CLIENTS, REQUESTS, SERVER_WORKERS = 8, 40, 2
MEMORY_MB = 64

# Plain Whoosh with its defaults, run by the throwaway venv's interpreter:
# argv[1] the Record JSON lines, argv[2] the index folder.
WHOOSH_BUILD = """
import json, os, sys, time
from whoosh import index
from whoosh.fields import ID, KEYWORD, NUMERIC, TEXT, Schema
schema = Schema(id=ID(stored=True, unique=True), title=TEXT(stored=True), abstract=TEXT(stored=True),
                authors=KEYWORD(commas=True), categories=KEYWORD, year=NUMERIC)
os.makedirs(sys.argv[2])
writer = index.create_in(sys.argv[2], schema).writer(procs=os.cpu_count())
count = 0
with open(sys.argv[1], encoding="utf-8") as lines:
    for line in lines:
        r = json.loads(line)
        writer.add_document(id=r["id"], title=r["title"], abstract=r["abstract"], authors=",".join(r["authors"]),
                            categories=" ".join(r["categories"]), year=r["year"])
        count += 1
writer.commit()
print(json.dumps({"documents": count}))
"""


# --- the table ---------------------------------------------------------------------


@dataclass
class Row:
    """One line of the table: ``met`` is None for a row without a target."""

    what: str
    measured: str
    peer: str
    ratio: str
    target: str
    met: bool | None

    def cells(self) -> list[str]:
        verdict = "" if self.met is None else ("met" if self.met else "NOT met")
        return [self.what, self.measured, self.peer, self.ratio, self.target, verdict]


def above_bare(what: str, wall: float, bare: float, limit: float, cpu_above: float | None = None) -> Row:
    """A cold-start row: ``wall`` and ``bare`` in seconds; met when ``wall - bare <= limit``.
    ``cpu_above`` (CPU seconds above the bare start's) is shown beside: on a busy machine
    wall time also counts waiting for a core."""
    cpu = "" if cpu_above is None else f"; CPU {cpu_above:.3f} s above bare"
    return Row(
        what,
        f"{wall:.3f} s ({wall - bare:.3f} s above bare{cpu})",
        f"{bare:.3f} s (python -c pass)",
        f"{wall / bare:.1f}×",
        f"≤ {limit:.2f} s above bare",
        wall - bare <= limit,
    )


def compared(
    what: str,
    value: float,
    peer: float,
    unit: str,
    peer_name: str,
    bound: float | None = None,
    at_least: bool = False,
    digits: int = 1,
) -> Row:
    """A row measured against a peer: the ratio is ``value / peer``; with ``bound`` the target is
    ratio ≤ bound (``at_least``: ≥ bound). Figures are shown with ``digits`` decimals and ``unit``."""
    ratio = value / peer

    def shown(number: float) -> str:
        return f"{number:,.{digits}f} {unit}"

    if bound is None:
        target, met = "", None
    else:
        target = f"{'≥' if at_least else '≤'} {bound:g}× {peer_name}"
        met = ratio >= bound if at_least else ratio <= bound
    return Row(what, shown(value), f"{shown(peer)} ({peer_name})", f"{ratio:.2f}×", target, met)


def format_table(rows: list[Row]) -> str:
    """The rows as a Markdown table (header included), one line per row."""
    lines = ["| row | measured | peer (same run) | ratio | target | verdict |", "|---|---|---|---|---|---|"]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in rows]
    return "\n".join(lines)


def machine() -> str:
    """Date (UTC), cores, RAM and Python of this machine, on one line."""
    with open("/proc/meminfo", encoding="ascii") as info:
        ram_kb = int(next(line for line in info if line.startswith("MemTotal:")).split()[1])
    return (
        f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; {os.cpu_count()} cores, "
        f"{ram_kb / 1024**2:.1f} GiB RAM; Python {platform.python_version()} on {platform.system()} "
        f"{platform.machine()}"
    )


# --- inputs and indexes ----------------------------------------------------------------


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def fingerprint(path: Path) -> str:
    """What identifies an input file for reuse: its size and modification time."""
    info = path.stat()
    return f"{info.st_size}:{info.st_mtime_ns}"


class Work:
    """The work folder: the records of one size and the indexes built from them (reused while
    the records file is unchanged; each index's ``.built.json`` says from what and how fast)."""

    def __init__(self, folder: Path, size: int, times: int = 1) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.name = f"{size or 'all'}" + (f"x{times}" if times > 1 else "")
        self.records_path = folder / f"records-{self.name}.jsonl"
        if not self.records_path.exists():
            partial = self.records_path.with_suffix(".partial")
            if times > 1:
                base = Work(folder, size).records_path
                say(f"writing {self.records_path} ({times} × {base.name}) ...")
                multiplied(base, times, partial)
            else:
                say(f"writing {self.records_path} ...")
                facets.convert(LISTING, partial, size)
            partial.replace(self.records_path)
        with open(self.records_path, encoding="utf-8") as lines:
            self.records = sum(1 for _ in lines)
        # Whether the index holds the whole listing (then no abstract is left outside it).
        self.whole = size == 0 or self.records < size

    def built(self, kind: str, command: list[str], target: Path, rebuild: bool) -> dict:
        """Build ``target`` with ``command`` unless it was built from the same records and
        ``rebuild`` is false; return the build's figures (``documents``, ``seconds`` of wall
        time of the whole process, ``peak_mb`` of its process tree, ``reused``)."""
        stamp = target.with_name(target.name + ".built.json")
        source = fingerprint(self.records_path)
        if not rebuild and target.exists() and stamp.exists():
            figures = json.loads(stamp.read_text(encoding="utf-8"))
            if figures.get("source") == source:
                return {**figures, "reused": True}
        if target.is_dir():
            shutil.rmtree(target)
        target.unlink(missing_ok=True)
        say(f"building {kind}: {target} ...")
        wall, peak, out, _ = measured(command, cwd=REPO)
        figures = {"source": source, "documents": json.loads(out)["documents"], "seconds": wall, "peak_mb": peak}
        stamp.write_text(json.dumps(figures), encoding="utf-8")
        return {**figures, "reused": False}

    def product(self, rebuild: bool) -> tuple[Path, dict]:
        target = self.folder / f"index-{self.name}"
        return target, self.built(
            "searchengine",
            [
                sys.executable,
                "-m",
                "searchengine",
                "index",
                str(self.records_path),
                "--index",
                str(target),
                "--quiet",
                "--json",
            ],
            target,
            rebuild,
        )

    def fts5(self, rebuild: bool) -> tuple[Path, dict]:
        target = self.folder / f"fts5-{self.name}.db"
        return target, self.built(
            "SQLite FTS5",
            [sys.executable, speed.__file__, "_fts5", str(self.records_path), str(target)],
            target,
            rebuild,
        )

    def whoosh(self, rebuild: bool) -> tuple[Path, dict]:
        target = self.folder / f"whoosh-defaults-{self.name}"
        return target, self.built(
            "plain Whoosh",
            [str(self.whoosh_python()), "-c", WHOOSH_BUILD, str(self.records_path), str(target)],
            target,
            rebuild,
        )

    def whoosh_python(self) -> Path:
        """The interpreter of a venv holding only Whoosh 2.7.4 (made once, kept in the folder)."""
        venv = self.folder / "whoosh-2.7.4-venv"
        python = venv / "bin" / "python"
        check = [str(python), "-c", "import whoosh, sys; sys.exit(whoosh.versionstring() != '2.7.4')"]
        if python.exists() and subprocess.run(check, capture_output=True).returncode == 0:
            return python
        say(f"making {venv} with {WHOOSH} ...")
        for command in (
            [sys.executable, "-m", "venv", "--clear", str(venv)],
            [str(python), "-m", "pip", "install", "--quiet", WHOOSH],
        ):
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                raise SystemExit(f"{' '.join(command)} failed: {done.stderr.strip()[-500:]}")
        return python


# --- synthetic records for the growth and memory rows ---------------------------------------


def multiplied(source: Path, times: int, path: Path, seed: int = 42) -> None:
    """Write the Record JSON lines of ``source`` ``times`` over to ``path``: as
    they are, then each copy ``k`` (1 to ``times - 1``) with the id ``ID~k`` and
    the words of its title and abstract shuffled, so the copies are new papers
    with the same words (the postings grow as with more papers of the field)."""
    rng = random.Random(seed)
    with open(source, encoding="utf-8") as lines:
        records = [json.loads(line) for line in lines]
    with open(path, "w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record) + "\n")
        for copy in range(1, times):
            for record in records:
                changed = dict(record, id=f"{record['id']}~{copy}")
                for field in ("title", "abstract"):
                    words = (record.get(field) or "").split()
                    rng.shuffle(words)
                    changed[field] = " ".join(words)
                out.write(json.dumps(changed) + "\n")


VOCABULARY = 100_000
ABSTRACT_WORDS = 150


def synthetic_records(count: int, path: Path, seed: int = 42) -> None:
    """Write ``count`` Record JSON lines with 8-word titles and :data:`ABSTRACT_WORDS`-word abstracts
    whose words are drawn from a vocabulary of :data:`VOCABULARY` made-up words with Zipf weights
    (rank r weighs 1/r), so that new records keep bringing new words as real text does."""
    rng = random.Random(seed)
    letters = "bcdfghjklmnpqrstvwxz"
    vowels = "aeiouy"
    words = [""] * VOCABULARY
    for rank in range(VOCABULARY):
        number, word = rank + 7, ""
        while number:
            number, digit = divmod(number, len(letters) * len(vowels))
            word += letters[digit % len(letters)] + vowels[digit // len(letters)]
        words[rank] = word
    weights = list(itertools.accumulate(1 / (rank + 1) for rank in range(VOCABULARY)))
    with open(path, "w", encoding="utf-8") as out:
        for number in range(count):
            drawn = rng.choices(words, cum_weights=weights, k=ABSTRACT_WORDS + 8)
            record = {
                "id": f"syn-{number}",
                "title": " ".join(drawn[:8]),
                "abstract": " ".join(drawn[8:]),
                "authors": [f"Author {rng.randrange(5000)}" for _ in range(rng.randint(1, 5))],
                "categories": [f"cs.{rng.choice(['AI', 'CL', 'CV', 'DC', 'LG', 'RO'])}"],
                "year": 2000 + rng.randrange(27),
            }
            out.write(json.dumps(record) + "\n")


# --- the rows ---------------------------------------------------------------------------


def cold_rows(index: Path, chosen: set[str]) -> list[Row]:
    commands = cold.commands(index, COLD_QUERY)
    del commands["help"]
    say(f"cold starts: {COLD_RUNS} rounds ...")
    [(wall, cpu)] = cold.interleaved(commands, [cold.checkout_env(REPO)], COLD_RUNS)
    rows = []
    if "cold-facets" in chosen:
        rows.append(
            above_bare(
                f"cold CLI `search {COLD_QUERY!r} --facets year,author,category`, wall (median)",
                wall["faceted"],
                wall["bare"],
                cold.TARGETS["faceted"],
                cpu["faceted"] - cpu["bare"],
            )
        )
    if "cold-plain" in chosen:
        rows.append(
            above_bare(
                f"cold CLI `search {COLD_QUERY!r}`, wall (median)",
                wall["plain"],
                wall["bare"],
                cold.TARGETS["plain"],
                cpu["plain"] - cpu["bare"],
            )
        )
    return rows


def query_rows(work: Work, index_dir: Path, database: Path, runs: int) -> list[Row]:
    from searchengine import open_index

    typed = speed.typed_queries(work.records_path, count=200 + speed.WARMUP)
    queries, warmup = typed[:200], typed[200:]
    say(
        f"query: {len(queries)} distinct queries once each, both engines taking turns in a new process, after "
        f"{len(warmup)} others ({runs} processes); then 3 repeated passes ..."
    )
    passes = speed.first_passes(index_dir, database, queries, warmup, runs)
    index = open_index(index_dir)
    connection = sqlite3.connect(database)
    try:
        ours = speed.latencies(lambda q: index.search(q, limit=10).to_dict(), queries)[0]
        theirs = speed.latencies(lambda q: speed.fts5_top10(connection, q), queries)[0]
    finally:
        index.close()
        connection.close()
    first = f"top 10 with snippets, {len(queries)} distinct queries, each once (new process), wall"
    repeated = f"top 10 with snippets, the same {len(queries)} queries repeated, median of 3 passes, wall"
    rows = []
    for label, q, bound in (("p50", 0.5, 6), ("p95", 0.95, 3)):
        # Each process's percentile; the median over the processes, and each run's ratio beside it.
        mine = [pct(run["searchengine"][0], q) for run in passes]
        peer = [pct(run["fts5"][0], q) for run in passes]
        row = compared(
            f"{first}, {label} (median of {runs} processes)",
            statistics.median(mine),
            statistics.median(peer),
            "ms",
            "FTS5",
            bound,
            digits=2,
        )
        row.ratio += " (runs: " + ", ".join(f"{m / p:.2f}×" for m, p in zip(mine, peer)) + ")"
        rows.append(row)
    return rows + [
        compared(f"{repeated}, p50", pct(ours, 0.5), pct(theirs, 0.5), "ms", "FTS5", digits=2),
        compared(f"{repeated}, p95", pct(ours, 0.95), pct(theirs, 0.95), "ms", "FTS5", digits=2),
    ]


def build_rows(ours: dict, fts: dict, whoosh: dict) -> list[Row]:
    def rate(figures: dict) -> float:
        return figures["documents"] / figures["seconds"]

    what = f"build {ours['documents']:,} records, whole process, records/s"
    return [
        compared(what, rate(ours), rate(fts), "records/s", "FTS5", 0.1, at_least=True, digits=0),
        compared(what, rate(ours), rate(whoosh), "records/s", "plain Whoosh", 1.65, at_least=True, digits=0),
        compared("build, peak RSS of the process tree", ours["peak_mb"], fts["peak_mb"], "MB", "FTS5", digits=0),
        compared(
            "build, peak RSS of the process tree", ours["peak_mb"], whoosh["peak_mb"], "MB", "plain Whoosh", digits=0
        ),
    ]


def size_rows(ours: Path, fts: Path, whoosh: Path) -> list[Row]:
    size = disk_mb(ours)
    return [
        compared("index size on disk", size, disk_mb(whoosh), "MB", "plain Whoosh", 1.0),
        compared("index size on disk", size, fts.stat().st_size / 1e6, "MB", "FTS5"),
    ]


def server_rows(index_dir: Path, chosen: set[str]) -> list[Row]:
    queries = web_load.two_word_queries(LISTING, (CLIENTS + 1) * REQUESTS)
    say(f"serve --workers {SERVER_WORKERS}: starting, then {CLIENTS} clients × {REQUESTS} requests ...")
    process, host, port, startup = web_load.start_server(index_dir, threads=4, workers=SERVER_WORKERS)
    try:
        load = web_load.run_load(host, port, queries, CLIENTS, REQUESTS) if "web" in chosen else None
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    rows = []
    if load is not None:
        p95, p50 = web_load.percentile(load["latencies"], 95), web_load.percentile(load["latencies"], 50)
        errors = len(load["errors"]) + len(load["single_errors"])
        rows.append(
            Row(
                f"web `/api/search` (facets), {CLIENTS} clients × {REQUESTS}, `serve --workers {SERVER_WORKERS}`, p95",
                f"{p95:.0f} ms (p50 {p50:.0f} ms; {errors} errors)",
                f"1 client: p95 {web_load.percentile(load['single'], 95):.0f} ms",
                "",
                "≤ 150 ms, no errors",
                p95 <= 150 and not errors,
            )
        )
    if "serve" in chosen:
        rows.append(
            Row(
                f"`serve --workers {SERVER_WORKERS}`: start to first answered request",
                f"{startup['first_answer']:.2f} s (ready in {startup['ready_in']:.1f} s as logged; first "
                f"connection accepted at {startup['first_connection']:.2f} s)",
                "",
                "",
                "listens only when ready",
                startup["answered_first"],
            )
        )
    return rows


def pasted_row(work: Work, index_dir: Path) -> Row:
    from searchengine import open_index
    from searchengine.limits import DEFAULT_TIME_BUDGET

    texts = speed.pasted_queries(work.records)
    say(f"pasted: {len(texts)} queries of {speed.PASTE_CHARS:,} characters ...")
    index = open_index(index_dir)
    try:
        found = speed.pasted(index, texts)
    finally:
        index.close()
    slowest = max(wall for _, wall, _ in found)
    cut = sum(timed_out for _, _, timed_out in found)
    source = "abstracts of indexed records" if work.whole else "abstracts not in the index"
    return Row(
        f"pasted {speed.PASTE_CHARS:,}-character query ({source}; top 10 with snippets), wall, slowest of {len(found)}",
        f"{slowest / 1000:.2f} s ({cut} of {len(found)} timed_out)",
        "",
        "",
        f"≤ {DEFAULT_TIME_BUDGET:g} s budget",
        slowest / 1000 <= DEFAULT_TIME_BUDGET,
    )


GROWTH = (2, 4)


def growth_rows(work: Work, size: int, runs: int, built_here: bool) -> list[Row]:
    """The growth rows (see the module's docstring): query p50 and build peak RSS at 2× and 4× the
    records. Every size is built in this run (at 1× by the ``build`` row when ``built_here``)."""
    typed = speed.typed_queries(work.records_path, count=200 + speed.WARMUP)
    queries, warmup = typed[:200], typed[200:]
    figures = {}
    for times in (1, *GROWTH):
        here = work if times == 1 else Work(work.folder, size, times)
        index_dir, ours = here.product(rebuild=not built_here or times > 1)
        database, fts = here.fts5(rebuild=not built_here or times > 1)
        say(
            f"growth: {here.records:,} records, {len(queries)} distinct queries once each "
            f"({runs if times == 1 else 1} process(es)) ..."
        )
        passes = speed.first_passes(index_dir, database, queries, warmup, runs if times == 1 else 1)
        figures[times] = {
            "records": here.records,
            "ours_peak": ours["peak_mb"],
            "fts_peak": fts["peak_mb"],
            "ours_p50": statistics.median(pct(run["searchengine"][0], 0.5) for run in passes),
            "fts_p50": statistics.median(pct(run["fts5"][0], 0.5) for run in passes),
        }
        if times > 1:  # the indexes of the larger sizes are big and rebuilt each run
            shutil.rmtree(index_dir, ignore_errors=True)
            database.unlink(missing_ok=True)
    base, rows = figures[1], []
    for times in GROWTH:
        at = figures[times]
        query = compared(
            f"distinct-query p50 (top 10 with snippets) at {times}× the records ({at['records']:,})",
            at["ours_p50"],
            base["ours_p50"],
            "ms",
            f"at 1×, {base['records']:,}",
            2.5 if times == 4 else None,
            digits=2,
        )
        query.ratio += (
            f" (FTS5: {at['fts_p50']:.2f} / {base['fts_p50']:.2f} ms, {at['fts_p50'] / base['fts_p50']:.2f}×)"
        )
        peak = compared(
            f"build peak RSS (process tree) at {times}× the records",
            at["ours_peak"],
            base["ours_peak"],
            "MB",
            "at 1×",
            1.5 if times == 4 else None,
            digits=0,
        )
        peak.ratio += f" (FTS5: {at['fts_peak']:.0f} / {base['fts_peak']:.0f} MB)"
        if times == 4:
            query.target, peak.target = "4× records → ≤ 2.5× p50", "4× records → ≤ 1.5× peak"
        rows += [query, peak]
    return rows


def memory_row(folder: Path, count: int) -> Row:
    peaks = []
    for records in (count, 4 * count):
        source = folder / f"synthetic-{records}.jsonl"
        if not source.exists():
            say(f"writing {source} ...")
            synthetic_records(records, source.with_suffix(".partial"))
            source.with_suffix(".partial").replace(source)
        target = folder / f"index-synthetic-{records}"
        shutil.rmtree(target, ignore_errors=True)
        say(f"memory: building {records:,} synthetic records with --memory-mb {MEMORY_MB} ...")
        peaks.append(
            measured(
                [
                    sys.executable,
                    "-m",
                    "searchengine",
                    "index",
                    str(source),
                    "--index",
                    str(target),
                    "--quiet",
                    "--json",
                    "--memory-mb",
                    str(MEMORY_MB),
                ],
                cwd=REPO,
            )[1]
        )
        shutil.rmtree(target, ignore_errors=True)
    row = compared(
        f"build peak RSS (process tree), `--memory-mb {MEMORY_MB}`, {4 * count:,} synthetic records",
        peaks[1],
        peaks[0],
        "MB",
        f"{count:,} records",
        1.5,
        digits=0,
    )
    row.target = "4× records → ≤ 1.5× peak"
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=0, help="listing records to index (0: all 74,728)")
    parser.add_argument(
        "--work",
        type=Path,
        default=Path(tempfile.gettempdir()) / "searchengine-table",
        help="folder for the records, the indexes (reused while their input is unchanged) and the plain-Whoosh venv",
    )
    parser.add_argument(
        "--rows",
        nargs="+",
        choices=ROWS,
        default=list(ROWS),
        metavar="ROW",
        help=f"rows to measure (default: all): {', '.join(ROWS)}",
    )
    parser.add_argument(
        "--memory-records", type=int, default=10_000, help="N of the memory row (synthetic records; built at N and 4N)"
    )
    parser.add_argument(
        "--query-runs", type=int, default=3, help="new processes timing the distinct queries (the query row; default 3)"
    )
    args = parser.parse_args()
    if args.size < 0 or args.memory_records < 1:
        parser.error("--size must be 0 or more and --memory-records 1 or more")
    if not LISTING.exists():
        raise SystemExit(
            f"{LISTING}: not found (the shared arXiv listing sample; put ../shared/data beside the checkout)"
        )
    chosen = set(args.rows)
    print(f"uptime at start: {uptime()}")
    print(f"machine: {machine()}", flush=True)
    started = time.perf_counter()
    rebuild = "build" in chosen
    rows: list[Row] = []
    work = None
    if chosen - {"memory"}:
        work = Work(args.work, args.size)
        index_dir, ours = work.product(rebuild)
    if chosen & {"query", "build", "size", "growth"}:
        database, fts = work.fts5(rebuild)
    if chosen & {"build", "size"}:
        whoosh_dir, whoosh = work.whoosh(rebuild)
    if chosen & {"cold-facets", "cold-plain"}:
        rows += cold_rows(index_dir, chosen)
    if "query" in chosen:
        rows += query_rows(work, index_dir, database, args.query_runs)
    if "build" in chosen:
        rows += build_rows(ours, fts, whoosh)
    if "size" in chosen:
        rows += size_rows(index_dir, database, whoosh_dir)
    if chosen & {"web", "serve"}:
        rows += server_rows(index_dir, chosen)
    if "pasted" in chosen:
        rows.append(pasted_row(work, index_dir))
    if "growth" in chosen:
        rows += growth_rows(work, args.size, args.query_runs, built_here=rebuild)
    if "memory" in chosen:
        rows.append(memory_row(args.work, args.memory_records))
    records = f"{work.records:,} records of {LISTING.name} (--size {args.size})" if work else "synthetic records"
    print(f"\n{records}; {time.perf_counter() - started:.0f} s in all\n")
    print(format_table(rows))
    print(f"\nuptime at end: {uptime()}")


if __name__ == "__main__":
    main()
