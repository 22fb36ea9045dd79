"""Crash drills: SIGKILL a real rebuild and a real update at ten points each; two writers at once.

Every run is a real ``searchengine index`` process (``--jobs 2``, so records
go to two worker processes) over several hundred arXiv records. A small
driver runs the command-line program with stage markers: it appends one line,
with a timestamp, per stage it enters (see :data:`STAGES`: reading records and
queueing them for the workers, the commit, merging existing segments, waiting
for the workers' postings, Whoosh's table of contents, an update's second
commit, publishing, the switch of ``CURRENT``, clean-up), so the drill knows
where each kill landed. A kill is either *timed* (the drill sends SIGKILL a
given fraction into a stage, as long as that stage took in the latest
uninterrupted run) or *hooked* (the process kills itself on entering a stage,
for stages too short to hit by time).

After each kill the index must open with exactly the content it had before the
run (same document count, same ids, same results for sample queries), or,
when the kill came after ``CURRENT`` switched, exactly the new content; no
worker process may outlive the kill; and the same command, run again, must
complete with the expected ids and leave only the current generation and the
one before it.

Then two writers run at once, twice: two updates with different records, and
an update racing a rebuild. Neither may print a traceback, both must land (the
second waits for the first's lock), and the final ids are the union the order
of the two runs implies.

Environment: ``CRASH_RECORDS`` (default 600) sets the records per run. The
product indexes inputs of fewer than 2,000 records in one process; the driver
lowers that threshold to half of ``CRASH_RECORDS`` so that every run has its
worker processes (from ``CRASH_RECORDS=4000`` on, it stays 2,000).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from searchengine.readers.arxivlisting import NO_DATES

from drills.conftest import REPO
from shareddata import write_listing

RECORDS = int(os.environ.get("CRASH_RECORDS", 600))
# Runs of fewer records than the product's threshold for worker processes
# (2,000) get a threshold of half their size, so that they use workers too.
PARALLEL_MIN = min(2000, RECORDS // 2)
# Each update of the series starts this many records further into the listing:
# the rest of its records are already indexed and replace their documents.
UPDATE_STEP = RECORDS // 6
# Records the update aimed at the second commit repeats at the end of its
# file (same id, same version: folded into one document by that commit).
REPEATED = 20
QUERIES = ["neural network", "quantum", "graph", "galaxy cluster", "convex optimization"]

# The driver: the real command line, with a marker line per stage and an
# optional self-kill on the n-th entry into a stage.
DRIVER = textwrap.dedent(
    """
    import os, signal, sys, time

    log, kill_at, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    counts, state = {}, {"switched": False, "resolve": False}

    def mark(stage):
        os.write(fd, f"{time.time():.6f} {os.getpid()} {stage}\\n".encode())
        counts[stage] = counts.get(stage, 0) + 1
        if kill_at == f"{stage}:{counts[stage]}":
            os.kill(os.getpid(), signal.SIGKILL)

    mark("start")
    import whoosh.multiproc as multiproc
    import whoosh.writing as writing

    import searchengine.engines.whoosh.writer as indexer
    import searchengine.readers as readers
    import searchengine.engines.whoosh.store as store

    def hook(owner, name, stage):
        original = getattr(owner, name)

        def wrapper(*a, **k):
            mark(stage(*a) if callable(stage) else stage)
            return original(*a, **k)

        setattr(owner, name, wrapper)

    def inner(name):
        return lambda *a: ("resolve-" + name) if state["resolve"] else name

    def resolve(*a):
        state["resolve"] = True
        return "resolve"

    def fsync_dir(path):
        if path.name.startswith(store.PREFIX):
            return "publish-fsync"
        state["switched"] = True  # the pointer was renamed just before
        return "switched"

    hook(store, "new_generation", "prepare")
    hook(store, "link_generation", "link")
    hook(store, "remove_stale", lambda *a: "cleanup" if state["switched"] else "remove-stale")
    hook(store, "publish", "publish")
    hook(store, "_fsync_dir", fsync_dir)
    hook(readers, "read_records", "reading")
    hook(indexer, "_subwriter", "worker")
    second_pass = indexer.WhooshWriter._second_pass

    def opening_second_pass(self):
        if self._writer is None:  # the second commit's writer opens now
            mark(resolve())
        return second_pass(self)

    indexer.WhooshWriter._second_pass = opening_second_pass
    hook(multiproc.MpWriter, "commit", "commit")
    hook(writing.SegmentWriter, "_commit_toc", inner("toc"))
    original_policy = indexer.merge_policy

    def policy(writer, segments):
        mark(inner("merging")())
        kept = original_policy(writer, segments)
        if isinstance(writer, multiproc.MpWriter):
            mark("posting")  # the parent now waits for the workers' segments
        return kept

    indexer.merge_policy = policy

    indexer.PARALLEL_MIN_RECORDS = int(os.environ["PARALLEL_MIN"])

    from searchengine.cli import main
    try:
        main(args, prog_name="searchengine")
    except SystemExit as exc:
        if not exc.code:
            mark("done")
        raise
    """
)

# Stages of the parent process in order (workers only log "worker"); a
# rebuild skips "link" and the "resolve" stages.
STAGES = [
    "start",
    "remove-stale",
    "prepare",
    "link",
    "reading",
    "commit",
    "merging",
    "posting",
    "toc",
    "resolve",
    "resolve-merging",
    "resolve-toc",
    "publish",
    "publish-fsync",
    "switched",
    "cleanup",
    "done",
]


@dataclass(frozen=True)
class Point:
    """Where a kill lands: ``fraction`` of the measured duration of ``stage``
    after it starts (timed), or on the ``nth`` entry into ``stage`` (hooked)."""

    stage: str
    fraction: float | None = None
    nth: int = 1

    @property
    def label(self) -> str:
        return f"{self.stage}+{self.fraction:.0%}" if self.fraction is not None else f"{self.stage}#{self.nth}"


REBUILD_POINTS = [
    Point("start", 0.5),  # interpreter and imports
    Point("reading", 0.3),  # records read and queued for the two workers
    Point("reading", 0.8),
    Point("posting", 0.15),  # workers analysing their batches and writing segments
    Point("posting", 0.5),
    Point("posting", 0.85),
    Point("toc"),  # inside Whoosh's commit, before its table of contents
    Point("publish"),  # committed, files not yet synced, CURRENT not switched
    Point("publish-fsync"),  # files synced, new pointer not yet written
    Point("cleanup"),  # CURRENT switched, old generations being removed
]
UPDATE_POINTS = [
    Point("link"),  # the new generation being filled with hard links
    Point("reading", 0.3),  # each record's id looked up, records queued for the workers
    Point("reading", 0.8),
    Point("merging"),  # the existing segments being merged
    Point("posting", 0.3),
    Point("posting", 0.8),
    Point("toc"),
    Point("resolve-toc"),  # second commit: ids repeated in the input folded into one document
    Point("publish-fsync"),
    Point("cleanup"),
]


# --- the index as the drill sees it ---------------------------------------------------------


def listing_ids(path: Path) -> set[str]:
    """Ids of a listing JSON-lines file, read without the product's readers."""
    return {json.loads(line)["id"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}


def snapshot(index_dir: Path) -> dict:
    """Document count, sorted ids and the top ten ids (and totals) of :data:`QUERIES`."""
    from searchengine import open_index

    index = open_index(index_dir)
    try:
        ids = sorted(stored["id"] for stored in index.engine.current().searcher.all_stored_fields())
        results = {}
        for query in QUERIES:
            found = index.search(query, limit=10)
            results[query] = (found.total, [hit.id for hit in found.hits])
        return {"documents": index.doc_count, "ids": ids, "queries": results}
    finally:
        index.close()


def assert_tidy(index_dir: Path) -> None:
    """After a completed run: the pointer, the lock, the current generation and the one before, no more."""
    from searchengine.engines.whoosh import store

    current = store.current_generation(index_dir)
    generations = sorted(p.name for p in index_dir.glob(store.PREFIX + "*"))
    assert current.name == generations[-1], generations
    assert len(generations) <= 2, generations
    assert sorted(p.name for p in index_dir.iterdir() if not p.name.startswith(store.PREFIX)) == [
        store.LOCK,
        store.POINTER,
    ]
    assert [p.name for p in current.iterdir() if p.is_dir() or p.name.endswith(".tmp")] == []


def read_log(log: Path) -> list[tuple[float, int, str]]:
    rows = []
    for line in log.read_text().splitlines():
        stamp, pid, stage = line.split()
        rows.append((float(stamp), int(pid), stage))
    return rows


def parent_stages(rows, pid: int) -> list[tuple[float, str]]:
    return [(stamp, stage) for stamp, who, stage in rows if who == pid]


def alive(pid: int) -> bool:
    """Running (a zombie waiting to be reaped by init has already exited)."""
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return status.rsplit(")", 1)[1].split()[0] != "Z"


# --- running the driver ---------------------------------------------------------------------


class Runner:
    """Runs ``searchengine index`` through the driver and kills it where asked."""

    def __init__(self, driver: Path, logs: Path) -> None:
        self.driver, self.logs, self.runs = driver, logs, 0

    def start(self, args: list[str], kill_at: str = "") -> tuple[subprocess.Popen, Path]:
        self.runs += 1
        log = self.logs / f"run-{self.runs}.log"
        process = subprocess.Popen(
            [sys.executable, str(self.driver), str(log), kill_at, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ, PYTHONPATH=str(REPO), PARALLEL_MIN=str(PARALLEL_MIN)),
        )
        return process, log

    def complete(self, args: list[str]) -> list[tuple[float, str]]:
        """Run to the end; return the parent's stages with their times."""
        process, log = self.start(args)
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        assert "Traceback" not in err
        stages = parent_stages(read_log(log), process.pid)
        assert stages[-1][1] == "done"
        return stages

    def kill(self, args: list[str], point: Point, timeline: dict[str, float], scale: float = 1.0) -> dict:
        """Run and kill at ``point`` (timed points ``scale`` times as far into their stage).

        Returns the return code, the parent's stages with their times, the
        stage the kill landed in and the worker processes' ids.
        """
        if point.fraction is None:
            process, log = self.start(args, f"{point.stage}:{point.nth}")
        else:
            process, log = self.start(args)
            delay = point.fraction * scale * timeline[point.stage]
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and process.poll() is None:
                if log.exists() and any(stage == point.stage for _, _, stage in read_log(log)):
                    break
                time.sleep(0.005)
            time.sleep(delay)
            process.send_signal(signal.SIGKILL)
        out, err = process.communicate(timeout=120)
        assert "Traceback" not in err
        rows = read_log(log)
        stages = parent_stages(rows, process.pid)
        return {
            "returncode": process.returncode,
            "timeline": stages,
            "stages": [stage for _, stage in stages],
            "landed": stages[-1][1],
            "workers": [pid for _, pid, stage in rows if stage == "worker"],
        }


def durations(stages: list[tuple[float, str]]) -> dict[str, float]:
    """Seconds from each stage's first marker to the next marker."""
    found = {}
    for (stamp, stage), (after, _) in zip(stages, stages[1:]):
        found.setdefault(stage, after - stamp)
    return found


@pytest.fixture(scope="module")
def runner(tmp_path_factory) -> Runner:
    folder = tmp_path_factory.mktemp("crash-driver")
    (folder / "driver.py").write_text(DRIVER)
    return Runner(folder / "driver.py", folder)


@pytest.fixture(scope="module")
def tally():
    return {"landed": 0, "survived": 0, "completed": 0, "retried": 0, "left behind": 0, "phases": {}}


# Timed kills tried before falling back to a hooked kill at the stage's entry.
TIMED_ATTEMPTS = 3


def drill(runner: Runner, index_dir: Path, points: list[Point], plan, tally: dict) -> list[tuple[str, str]]:
    """Kill a run at each point, check the index, run it again; return the stages hit.

    ``plan(n, point)`` gives the arguments of the ``n``-th run (aimed at
    ``point``, ``None`` for the measured run) and the ids the index
    must hold once it completes. Timed kills are placed in the stage timings of
    the latest uninterrupted run; when the machine runs faster than that and the
    run's work is over first, the point is tried again half as far into its
    stage, and after :data:`TIMED_ATTEMPTS` misses the process kills itself
    on entering the stage.
    """
    run = 0
    args, expected = plan(run, None)
    timeline = durations(runner.complete(args))  # the measured uninterrupted run
    before = snapshot(index_dir)
    assert before["ids"] == sorted(expected)
    landed = []
    for point in points:
        scale = 1.0
        entries = set(os.listdir(index_dir))
        for attempt in range(TIMED_ATTEMPTS + 1):
            run += 1
            args, expected = plan(run, point)
            # When timing keeps missing, the process kills itself on entering the stage.
            aimed = point if attempt < TIMED_ATTEMPTS else Point(point.stage)
            outcome = runner.kill(args, aimed, timeline, scale)
            if aimed.fraction is not None and (outcome["returncode"] == 0 or "done" in outcome["stages"]):
                # Its work was over before the kill: an uninterrupted run after all.
                timeline = durations(outcome["timeline"])
                before = snapshot(index_dir)
                assert before["ids"] == sorted(expected), point
                scale /= 2
                tally["retried"] += 1
                entries = set(os.listdir(index_dir))
                continue
            break
        # The kill landed: the run neither finished nor failed on its own.
        assert outcome["returncode"] == -signal.SIGKILL, (point, outcome)
        assert "done" not in outcome["stages"], (point, outcome)
        landed.append((aimed.label, outcome["landed"]))
        tally["landed"] += 1
        tally["phases"][outcome["landed"]] = tally["phases"].get(outcome["landed"], 0) + 1
        # No worker outlives its parent (they watch it twice a second).
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(alive(pid) for pid in outcome["workers"]):
            time.sleep(0.1)
        assert not any(alive(pid) for pid in outcome["workers"]), (point, outcome)
        # What the kill left (an unfinished generation, a pointer file not yet
        # renamed) must not stop the index from opening; the next run removes it.
        tally["left behind"] += len(set(os.listdir(index_dir)) - entries)
        # The previous content exactly, or the new one once CURRENT switched.
        after = snapshot(index_dir)
        if "switched" in outcome["stages"]:
            assert after["ids"] == sorted(expected), point
        else:
            assert after == before, (point, outcome["landed"])
        tally["survived"] += 1
        # The same command again completes, with the expected ids, and tidies up.
        timeline = durations(runner.complete(args))
        before = snapshot(index_dir)
        assert before["ids"] == sorted(expected), point
        assert before["documents"] == len(expected)
        assert_tidy(index_dir)
        tally["completed"] += 1
    return landed


def test_kills_during_a_rebuild(runner, tmp_path, figures, tally):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_listing(first, RECORDS)
    write_listing(second, RECORDS + RECORDS // 8, start=RECORDS)
    sets = [(first, listing_ids(first)), (second, listing_ids(second))]
    index_dir = tmp_path / "index"

    def plan(number, point):
        source, ids = sets[number % 2]  # alternate, so old and new content differ
        return ["index", str(source), "--jobs", "2", "--quiet", "--index-dir", str(index_dir)], ids

    landed = drill(runner, index_dir, REBUILD_POINTS, plan, tally)
    stages = {stage for _, stage in landed}
    # Timed points may drift a little with the machine's load; hooked ones cannot.
    assert {"toc", "publish", "publish-fsync", "cleanup"} <= stages
    assert {"reading", "posting"} & stages, landed
    assert len(stages) >= 6, landed
    report(figures, "rebuild", landed)


def test_kills_during_an_update(runner, tmp_path, figures, tally):
    base = tmp_path / "base.jsonl"
    write_listing(base, RECORDS)
    index_dir = tmp_path / "index"
    subprocess.run(
        [sys.executable, "-m", "searchengine", "index", str(base), "--quiet", "--index-dir", str(index_dir)],
        check=True,
        capture_output=True,
        cwd=REPO,
    )
    indexed = set(listing_ids(base))

    def plan(number, point):
        source = tmp_path / f"update-{number}.jsonl"
        if not source.exists():
            write_listing(source, RECORDS, start=RECORDS // 2 + number * UPDATE_STEP)
            if point is not None and point.stage.startswith("resolve"):
                # Only these runs make the second commit: it merges the segments again.
                lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
                source.write_text("".join(lines + lines[:REPEATED]), encoding="utf-8")
            indexed.update(listing_ids(source))
        return ["index", "--update", str(source), "--jobs", "2", "--quiet", "--index-dir", str(index_dir)], set(indexed)

    landed = drill(runner, index_dir, UPDATE_POINTS, plan, tally)
    stages = {stage for _, stage in landed}
    assert {"link", "merging", "toc", "resolve-toc", "publish-fsync", "cleanup"} <= stages
    assert {"reading", "posting"} & stages, landed
    assert len(stages) >= 7, landed
    report(figures, "update", landed)
    figures.add("kills landed", tally["landed"])
    figures.add("phases hit", len(tally["phases"]))
    figures.add("kills survived", tally["survived"])
    figures.add("next runs completed", tally["completed"])
    figures.add("timed kills retried (run finished first)", tally["retried"])
    figures.add("files left by kills, removed by the next run", tally["left behind"])


def report(figures, run: str, landed: list[tuple[str, str]]) -> None:
    figures.add(f"{run}: kills landed", len(landed))
    hit = {stage for _, stage in landed}
    figures.add(f"{run}: phases hit", ", ".join(stage for stage in STAGES if stage in hit))
    figures.add(f"{run}: point -> phase", ", ".join(f"{label}->{stage}" for label, stage in landed))


def race(runner: Runner, *commands: list[str]) -> list[tuple[float, dict]]:
    """Start the commands at once; return per command, in the order given, when it took
    the write lock and its ``--json`` summary."""
    started = [runner.start([*args, "--json", "--wait", "120"]) for args in commands]
    finished = []
    for process, log in started:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        # Only notes of authors the readers drop, or of a listing without its dates, may be said.
        assert all(line.endswith(("has no letter or digit (dropped)", NO_DATES)) for line in err.splitlines()), err
        locked = next(stamp for stamp, stage in parent_stages(read_log(log), process.pid) if stage == "remove-stale")
        finished.append((locked, json.loads(out)))
    return finished


def test_two_writers_at_once(runner, tmp_path, figures):
    base, first, second, fresh = (tmp_path / f"{name}.jsonl" for name in ("base", "first", "second", "fresh"))
    write_listing(base, RECORDS)
    write_listing(first, RECORDS, start=RECORDS // 2)  # half replaces, half adds
    write_listing(second, RECORDS, start=2 * RECORDS)  # all new
    write_listing(fresh, RECORDS + RECORDS // 4, start=3 * RECORDS)
    ids = {path: listing_ids(path) for path in (base, first, second, fresh)}
    index_dir = tmp_path / "index"
    runner.complete(["index", str(base), "--quiet", "--index-dir", str(index_dir)])
    writers, lost = 0, 0

    # Two updates with different records: both land, whichever goes first.
    updates = race(
        runner, *(["index", "--update", str(path), "--index-dir", str(index_dir)] for path in (first, second))
    )
    writers += 2
    (one, one_summary), (two, two_summary) = sorted(updates, key=lambda item: item[0])
    assert one < two
    union = ids[base] | ids[first] | ids[second]
    assert two_summary["documents"] == len(union)
    assert one_summary["documents"] in (len(ids[base] | ids[first]), len(ids[base] | ids[second]))
    final = set(snapshot(index_dir)["ids"])
    lost += sum(not ids[path] <= final for path in (first, second))
    assert final == union

    # An update racing a rebuild: the update lands on the rebuilt index, or the
    # rebuild (which replaces everything by definition) comes after it.
    (update_locked, update_summary), (rebuild_locked, rebuild_summary) = race(
        runner,
        ["index", "--update", str(first), "--index-dir", str(index_dir)],
        ["index", str(fresh), "--index-dir", str(index_dir)],
    )
    writers += 2
    final = set(snapshot(index_dir)["ids"])
    if rebuild_locked < update_locked:
        expected = ids[fresh] | ids[first]
        lost += not ids[first] <= final
        assert update_summary["documents"] == len(expected)
    else:
        expected = ids[fresh]
        assert update_summary["documents"] == len(union)
    assert rebuild_summary["documents"] == len(ids[fresh])
    assert final == expected
    assert_tidy(index_dir)
    figures.add("writers raced", writers)
    figures.add("update vs rebuild: first", "rebuild" if rebuild_locked < update_locked else "update")
    figures.add("lost updates", lost)
