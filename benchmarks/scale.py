"""The whole of arXiv on one machine: build, size, queries, a daily update, serving and check, beside FTS5.

    python benchmarks/scale.py [--records 2800000] [--seed 11] [--work DIR] [--rows ROW ...]

The records are a stand-in for arXiv's metadata snapshot made by
``../shared/tools/arxiv-at-scale.py N`` (the Kaggle/OAI format that
``index`` reads; see its ``--help``), written once to ``--work`` and reused
while they exist. SQLite FTS5 indexes the same file in the same run
(``benchmarks/speed.py``'s build: the product's reader, one transaction,
``optimize``), and every row gives the product's figure beside FTS5's or
beside its target:

* ``build``: ``searchengine index FILE --quiet --json`` as a user runs it
  (default settings): wall time, records/s against FTS5's, peak RSS of the
  process tree;
* ``size``: the index folder against the FTS5 database;
* ``query``: 200 distinct queries of the kinds people type
  (``speed.typed_queries`` of 20,000 records of the file), each timed once in
  a new process after 20 others, top 10 with snippets, both engines taking
  turns: p50 and p95 against FTS5's;
* ``update``: a daily batch (2,000 new records and 1,000 new versions of
  indexed ones, from the same tool with other seeds) applied with
  ``index --update`` while ``serve --workers 2`` answers a steady stream of
  searches (4 clients): the update's wall time, and every request answered;
* ``serve``: after 1,000 distinct searches through ``serve --workers 2``,
  each worker's proportional set size (PSS: a mapped file shared by the
  workers counts once over them) and its private (unshared) memory;
* ``cold``: a cold command-line search with three facets against a bare
  interpreter start (``benchmarks/cold.py``'s rounds);
* ``check``: ``searchengine check`` (every file hashed, every part read).

The whole run at 2.8 million records takes about two hours on two cores,
most of it the two builds. ``uptime`` is printed before and after.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cold  # noqa: E402
import speed  # noqa: E402
import table  # noqa: E402
import web_load  # noqa: E402
from table import Row, compared, format_table, machine  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
TOOL = REPO.parent / "shared" / "tools" / "arxiv-at-scale.py"
ROWS = ("build", "size", "query", "update", "serve", "cold", "check")
QUERY_SOURCE_RECORDS = 20_000
UPDATE_NEW, UPDATE_VERSIONS = 2_000, 1_000
SERVE_QUERIES = 1_000
LOAD_CLIENTS = 4


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def made(records: int, seed: int, path: Path, *extra: str) -> Path:
    """``path``, written by the stand-in tool with ``records`` records unless it exists."""
    if not path.exists():
        say(f"writing {records:,} records to {path} ...")
        partial = path.with_suffix(".partial")
        done = subprocess.run(
            [sys.executable, str(TOOL), str(records), "--seed", str(seed), "--out", str(partial), *extra],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise SystemExit(f"{TOOL.name} failed: {done.stderr.strip()[-2000:]}")
        partial.rename(path)
    return path


def inputs(work: Path, records: int, seed: int) -> tuple[Path, Path]:
    """The records file and the daily update's file (new records, then new versions)."""
    source = made(records, seed, work / f"arxiv-{records}-seed{seed}.json")
    update = work / f"update-{records}-seed{seed}.json"
    if not update.exists():
        new = made(UPDATE_NEW, seed + 1, work / f"new-{seed + 1}.json", "--serial-start", "90000")
        versions = made(UPDATE_VERSIONS, seed + 2, work / f"versions-{seed + 2}.json")
        update.write_bytes(new.read_bytes() + versions.read_bytes())
    return source, update


def query_records(source: Path, work: Path) -> Path:
    """The first records of ``source`` as the JSON lines ``speed.typed_queries`` draws from
    (title, year, categories), read by the product's reader."""
    path = work / f"{source.stem}.queries.jsonl"
    if not path.exists():
        sys.path.insert(0, str(REPO))
        from itertools import islice

        from searchengine.readers import read_records

        with open(path, "w", encoding="utf-8") as out:
            for record in islice(read_records([source], []), QUERY_SOURCE_RECORDS):
                out.write(json.dumps({"title": record.title, "year": record.year, "categories": record.categories}))
                out.write("\n")
    return path


def build(source: Path, index: Path, database: Path, rebuild: bool) -> tuple[dict, dict]:
    """Build both (unless built and ``rebuild`` is false); the figures of each, kept beside them."""
    figures = []
    for path, command in (
        (index, [sys.executable, "-m", "searchengine", "index", str(source), "--index", str(index), "-q", "--json"]),
        (database, [sys.executable, str(REPO / "benchmarks" / "speed.py"), "_fts5", str(source), str(database)]),
    ):
        saved = path.parent / (path.name + ".built.json")
        if rebuild or not saved.exists():
            if path.is_dir():
                subprocess.run(["rm", "-rf", str(path)], check=True)
            path.unlink(missing_ok=True)
            say(f"building {path.name} ...")
            wall, peak, out, cpu = speed.measured(command, cwd=REPO)
            documents = json.loads(out)["documents"]
            saved.write_text(json.dumps({"seconds": wall, "peak_mb": peak, "cpu": cpu, "documents": documents}))
        figures.append(json.loads(saved.read_text()))
    return figures[0], figures[1]


def build_rows(ours: dict, fts: dict) -> list[Row]:
    rate = lambda f: f["documents"] / f["seconds"]  # noqa: E731
    what = f"build {ours['documents']:,} records, CLI, default settings"
    return [
        Row(f"{what}, wall", f"{ours['seconds'] / 60:.1f} min", f"{fts['seconds'] / 60:.1f} min (FTS5)",
            f"{ours['seconds'] / fts['seconds']:.2f}×", "≤ 30 min", ours["seconds"] <= 1800),
        compared(f"{what}, records/s", rate(ours), rate(fts), "records/s", "FTS5", 0.25, at_least=True, digits=0),
        Row(f"{what}, peak RSS of the process tree", f"{ours['peak_mb']:,} MB", f"{fts['peak_mb']:,} MB (FTS5)",
            f"{ours['peak_mb'] / max(fts['peak_mb'], 1):.1f}×", "≤ 3,000 MB", ours["peak_mb"] <= 3000),
    ]  # fmt: skip


def query_rows(records: Path, index: Path, database: Path, runs: int) -> list[Row]:
    typed = speed.typed_queries(records, count=200 + speed.WARMUP)
    queries, warmup = typed[:200], typed[200:]
    say(f"query: {len(queries)} distinct queries once each in {runs} new processes ...")
    passes = speed.first_passes(index, database, queries, warmup, runs)
    rows = []
    for label, q, bound in (("p50", 0.5, 6), ("p95", 0.95, 3)):
        mine = [speed.pct(run["searchengine"][0], q) for run in passes]
        peer = [speed.pct(run["fts5"][0], q) for run in passes]
        row = compared(
            f"top 10 with snippets, {len(queries)} distinct queries, each once (new process), wall, {label}",
            statistics.median(mine), statistics.median(peer), "ms", "FTS5", bound, digits=2,
        )  # fmt: skip
        row.ratio += " (runs: " + ", ".join(f"{m / p:.2f}×" for m, p in zip(mine, peer)) + ")"
        rows.append(row)
    return rows


class SearchLoad:
    """``clients`` threads sending distinct searches to a server until stopped; counts answers."""

    def __init__(self, host: str, port: int, queries: list[str], clients: int) -> None:
        self.url = f"http://{host}:{port}/api/search?"
        self.queries, self.answered, self.failed = queries, 0, []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._run, args=(n, clients), daemon=True) for n in range(clients)]

    def _run(self, first: int, step: int) -> None:
        n = first
        while not self._stop.is_set():
            query = self.queries[n % len(self.queries)]
            n += step
            try:
                with urllib.request.urlopen(self.url + urllib.parse.urlencode({"q": query}), timeout=60) as answer:
                    answer.read()
                with self._lock:
                    self.answered += 1
            except Exception as exc:  # noqa: BLE001 - every failure is counted and shown
                with self._lock:
                    self.failed.append(f"{query!r}: {exc}")

    def __enter__(self) -> SearchLoad:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=90)


def memory_of(pid: int) -> tuple[float, float]:
    """``(PSS, private)`` of process ``pid`` in MB, from ``/proc/PID/smaps_rollup``."""
    fields = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, value = line.split(":", 1)
        fields[name] = int(value.split()[0])
    return fields["Pss"] / 1024, (fields["Private_Clean"] + fields["Private_Dirty"]) / 1024


def workers_of(pid: int) -> list[int]:
    """The child processes of ``pid`` (the server's workers)."""
    children = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(n) for n in children.read_text().split()] if children.exists() else []


def server_rows(index: Path, update: Path, queries: list[str], chosen: set[str]) -> list[Row]:
    process, host, port, _ = web_load.start_server(index, threads=4, workers=2, seconds=600)
    rows = []
    try:
        if "serve" in chosen:
            say(f"serve: {SERVE_QUERIES} distinct searches ...")
            with SearchLoad(host, port, queries, 1) as load:
                while load.answered + len(load.failed) < SERVE_QUERIES:
                    time.sleep(0.5)
            figures = [memory_of(pid) for pid in workers_of(process.pid)]
            worst = max(figures)
            rows.append(Row(
                f"`serve --workers 2` after {SERVE_QUERIES:,} searches: memory per worker (PSS; private)",
                "; ".join(f"{pss:,.0f} MB ({private:,.0f} MB private)" for pss, private in figures),
                "", "", "≤ 1,024 MB each", worst[0] <= 1024,
            ))  # fmt: skip
        if "update" in chosen:
            say("update: a daily batch while the server answers searches ...")
            with SearchLoad(host, port, queries, LOAD_CLIENTS) as load:
                time.sleep(2)
                before = load.answered
                wall, peak, _, _ = speed.measured(
                    [
                        sys.executable,
                        "-m",
                        "searchengine",
                        "index",
                        "--update",
                        str(update),
                        "--index",
                        str(index),
                        "-q",
                    ],
                    cwd=REPO,
                )
                time.sleep(2)
            rows.append(Row(
                f"daily update ({UPDATE_NEW:,} new, {UPDATE_VERSIONS:,} new versions) while serving, wall",
                f"{wall:.1f} s (peak {peak:,} MB; {load.answered - before:,} searches answered meanwhile, "
                f"{len(load.failed)} failed)",
                "", "", "≤ 60 s, every search answered", wall <= 60 and not load.failed,
            ))  # fmt: skip
            for failure in load.failed[:5]:
                say(f"  failed: {failure}")
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return rows


COLD_LIMIT = 0.5  # seconds above a bare interpreter start


def cold_row(index: Path) -> Row:
    commands = cold.commands(index, table.COLD_QUERY)
    commands = {"bare": commands["bare"], "faceted": commands["faceted"]}
    say(f"cold starts: {table.COLD_RUNS} rounds ...")
    [(wall, cpu)] = cold.interleaved(commands, [cold.checkout_env(REPO)], table.COLD_RUNS)
    return table.above_bare(
        f"cold CLI `search {table.COLD_QUERY!r} --facets year,author,category`, wall (median)",
        wall["faceted"], wall["bare"], COLD_LIMIT, cpu["faceted"] - cpu["bare"],
    )  # fmt: skip


def check_row(index: Path) -> Row:
    say("check ...")
    wall, peak, _, _ = speed.measured([sys.executable, "-m", "searchengine", "check", "--index", str(index)], cwd=REPO)
    return Row("`searchengine check`, wall", f"{wall:.1f} s (peak {peak:,} MB)", "", "", "≤ 120 s", wall <= 120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=2_800_000, help="records to make and index (default 2.8M)")
    parser.add_argument("--seed", type=int, default=11, help="the stand-in tool's seed (the update uses the next two)")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "searchengine-scale")
    parser.add_argument("--rows", nargs="+", choices=ROWS, default=list(ROWS), metavar="ROW",
                        help=f"rows to measure (default: all): {', '.join(ROWS)}")  # fmt: skip
    parser.add_argument("--rebuild", action="store_true", help="build again even when built indexes are in --work")
    parser.add_argument("--query-runs", type=int, default=3, help="new processes timing the distinct queries")
    args = parser.parse_args()
    if args.records < 1:
        parser.error("--records must be 1 or more")
    if not TOOL.exists():
        raise SystemExit(f"{TOOL}: not found (the stand-in tool; put ../shared beside the checkout)")
    chosen = set(args.rows)
    args.work.mkdir(parents=True, exist_ok=True)
    print(f"uptime at start: {speed.uptime()}")
    print(f"machine: {machine()}", flush=True)
    started = time.perf_counter()
    source, update = inputs(args.work, args.records, args.seed)
    index, database = args.work / f"index-{args.records}", args.work / f"fts5-{args.records}.db"
    ours, fts = build(source, index, database, args.rebuild or "build" in chosen)
    records = query_records(source, args.work)
    rows: list[Row] = []
    if "build" in chosen:
        rows += build_rows(ours, fts)
    if "size" in chosen:
        rows.append(
            compared("index size on disk", speed.disk_mb(index), database.stat().st_size / 1e6, "MB", "FTS5", 1.0)
        )
    if "query" in chosen:
        rows += query_rows(records, index, database, args.query_runs)
    if "cold" in chosen:
        rows.append(cold_row(index))
    if "check" in chosen:
        rows.append(check_row(index))
    if chosen & {"serve", "update"}:  # last: the update changes the index
        rows += server_rows(index, update, speed.typed_queries(records, count=SERVE_QUERIES), chosen)
    print(f"\n{ours['documents']:,} records ({source.name}); {time.perf_counter() - started:.0f} s in all\n")
    print(format_table(rows))
    print(f"\nuptime at end: {speed.uptime()}")


if __name__ == "__main__":
    main()
