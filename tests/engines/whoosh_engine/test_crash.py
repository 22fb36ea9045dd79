"""Killing a writer at any moment leaves the previous index searchable; writers take turns.

Each run is a real ``searchengine`` process. A small driver wraps one function
of the writing path so that the process sends itself SIGKILL on its n-th call,
which stops it at a chosen point (mid-stream, inside Whoosh's commit, before
and inside the switch of ``CURRENT``, during clean-up).
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from searchengine import build_index, open_index
from searchengine.engines.whoosh import store
from searchengine.indexer import update_index

from conftest import child_processes
from shareddata import write_listing

REPO = Path(__file__).resolve().parents[3]

DRIVER = textwrap.dedent(
    """
    import os, signal, sys, time

    point, nth, args = sys.argv[1], int(sys.argv[2]), sys.argv[3:]

    def wrap(owner, name, action):
        original = getattr(owner, name)
        calls = [0]

        def wrapper(*a, **k):
            calls[0] += 1
            if calls[0] == nth:
                action()
            return original(*a, **k)

        setattr(owner, name, wrapper)

    def die():
        os.kill(os.getpid(), signal.SIGKILL)

    def linger():
        print("holding the lock", file=sys.stderr, flush=True)
        time.sleep(float(os.environ.get("LINGER", "3")))

    import searchengine.engines.whoosh.schema as schema
    import searchengine.engines.whoosh.store as store
    from whoosh import writing

    owner, name = {
        "record": (schema, "document_fields"),
        "commit": (writing.SegmentWriter, "_commit_toc"),
        "publish": (store, "publish"),
        "pointer": (store, "_fsync_dir"),
        "cleanup": (store, "remove_stale"),
    }[point.split(":")[0]]
    wrap(owner, name, linger if point.endswith(":linger") else die)

    from searchengine.cli import main
    main(args, prog_name="searchengine")
    """
)


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    path = tmp_path_factory.mktemp("driver") / "driver.py"
    path.write_text(DRIVER)
    return path


def run(driver, point, nth, *args, **popen):
    env = dict(os.environ, PYTHONPATH=str(REPO), **popen.pop("env", {}))
    return subprocess.run(
        [sys.executable, str(driver), point, str(nth), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        **popen,
    )


def records_file(path, count, start=0):
    """``count`` arXiv listing records after ``start`` (real or generated), as a file."""
    write_listing(path, count, start)
    return path


def assert_clean_and_intact(index_dir, documents):
    """The index opens with ``documents``, and holds no unfinished generation or stray pointer."""
    index = open_index(index_dir)
    assert index.doc_count == documents
    assert index.search("model").total > 0
    index.close()
    current = store.current_generation(index_dir)
    assert all(g.name <= current.name for g in index_dir.glob("gen-*"))
    assert list(index_dir.glob(".CURRENT.*")) == []


@pytest.fixture(scope="module")
def small_inputs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("inputs")
    old, new = records_file(folder / "old.jsonl", 300), records_file(folder / "new.jsonl", 200, start=250)
    build_index([old], folder / "index", jobs=1)
    return old, new, folder / "index"


def old_index(small_inputs, tmp_path):
    """A fresh copy of the index of the 300 old records."""
    import shutil

    return Path(shutil.copytree(small_inputs[2], tmp_path / "index"))


# (point, n-th call): where the kill lands.
KILL_POINTS = [
    ("record", 120),  # mid-stream, before anything is committed
    ("commit", 1),  # inside Whoosh's commit, before its table of contents
    ("publish", 1),  # committed, CURRENT not yet switched
    ("pointer", 1),  # new pointer written to a temporary file, not yet renamed
]


@pytest.mark.parametrize(("point", "nth"), KILL_POINTS)
@pytest.mark.parametrize("mode", ["rebuild", "update"])
def test_killed_writer_leaves_the_previous_index(driver, small_inputs, tmp_path, mode, point, nth):
    old, new, _ = small_inputs
    index_dir = old_index(small_inputs, tmp_path)
    before = store.current_generation(index_dir)
    args = ["index", str(new), "--index-dir", str(index_dir), "--jobs", "1"]
    if mode == "update":
        args.append("--update")
    result = run(driver, point, nth, *args)
    assert result.returncode == -signal.SIGKILL, result.stderr
    assert store.current_generation(index_dir) == before
    assert open_index(index_dir).doc_count == 300
    # The next run succeeds and cleans up: 300 + 200 - 50 shared ids for an update.
    (update_index if mode == "update" else build_index)([new], index_dir, jobs=1)
    assert_clean_and_intact(index_dir, 450 if mode == "update" else 200)


def test_kill_after_the_switch_leaves_the_new_index(driver, small_inputs, tmp_path):
    old, new, _ = small_inputs
    index_dir = old_index(small_inputs, tmp_path)
    # remove_stale runs before writing (1st call) and after the switch (2nd call).
    result = run(driver, "cleanup", 2, "index", str(new), "--update", "--index-dir", str(index_dir))
    assert result.returncode == -signal.SIGKILL
    assert_clean_and_intact(index_dir, 450)


def test_killed_remove_leaves_the_index(driver, small_inputs, tmp_path):
    old, _, _ = small_inputs
    index_dir = old_index(small_inputs, tmp_path)
    first_id = json.loads(old.read_text().splitlines()[0])["id"]
    result = run(driver, "publish", 1, "remove", first_id, "--index-dir", str(index_dir))
    assert result.returncode == -signal.SIGKILL
    assert open_index(index_dir).doc_count == 300
    again = subprocess.run(
        [sys.executable, "-m", "searchengine", "remove", first_id, "--index-dir", str(index_dir)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert again.returncode == 0, again.stderr
    assert_clean_and_intact(index_dir, 299)


def test_sigkill_during_a_parallel_build_leaves_no_workers_behind(driver, tmp_path):
    source = records_file(tmp_path / "big.jsonl", 2100)
    index_dir = tmp_path / "index"
    build_index([source], index_dir, jobs=1)
    before = store.current_generation(index_dir)
    process = subprocess.Popen(
        [sys.executable, "-m", "searchengine", "index", str(source), "--jobs", "2", "--index-dir", str(index_dir)],
        cwd=REPO,
        stderr=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    workers = []
    while time.monotonic() < deadline and len(workers) < 2:
        time.sleep(0.1)
        workers = child_processes(process.pid)
    assert len(workers) == 2, "the build did not start its two workers"
    process.send_signal(signal.SIGKILL)
    process.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(Path(f"/proc/{w}").exists() for w in workers):
        time.sleep(0.2)
    assert not any(Path(f"/proc/{w}").exists() for w in workers), "workers outlived their parent"
    assert store.current_generation(index_dir) == before
    assert open_index(index_dir).doc_count == 2100
    first_id = json.loads(source.read_text().splitlines()[0])["id"]
    again = subprocess.run(
        [sys.executable, "-m", "searchengine", "remove", first_id, "--index-dir", str(index_dir)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert again.returncode == 0, again.stderr
    assert_clean_and_intact(index_dir, 2099)
    assert len(list(index_dir.glob("gen-*"))) == 2


def test_two_writers_take_turns_or_the_second_gives_up(driver, small_inputs, tmp_path):
    old, new, _ = small_inputs
    index_dir = old_index(small_inputs, tmp_path)
    env = {"LINGER": "4"}
    first = subprocess.Popen(
        [
            sys.executable,
            str(driver),
            "publish:linger",
            "1",
            "index",
            str(new),
            "--update",
            "--index-dir",
            str(index_dir),
        ],
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(REPO), **env),
    )
    assert first.stderr.readline() == "holding the lock\n"
    # A reader is not blocked by the writer.
    started = time.monotonic()
    assert open_index(index_dir).search("model").total > 0
    assert time.monotonic() - started < 2
    impatient = subprocess.run(
        [sys.executable, "-m", "searchengine", "index", str(old), "--wait", "0.5", "--index-dir", str(index_dir)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert impatient.returncode == 1
    assert impatient.stderr == f"Error: {index_dir}: another process is writing this index (waited 0.5 s)\n"
    patient = subprocess.run(
        [
            sys.executable,
            "-m",
            "searchengine",
            "remove",
            json.loads(old.read_text().splitlines()[0])["id"],
            "--wait",
            "60",
            "--index-dir",
            str(index_dir),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert first.wait(timeout=60) == 0
    assert patient.returncode == 0, patient.stderr
    # The update (300 + 150 new) went first, then the remove.
    assert patient.stdout.startswith(f"Removed 1 document from {index_dir}; 449 documents in ")
    assert_clean_and_intact(index_dir, 449)


def _idle_worker(parent, storage, indexname, jobqueue, resultqueue, kwargs, multisegment):
    """A worker that takes every job and writes nothing, like one that died."""
    while jobqueue.get() is not None:
        pass


def test_a_failed_worker_is_an_error_not_a_smaller_index(small_inputs, tmp_path, monkeypatch):
    import searchengine.engines.whoosh.writer as indexer
    from searchengine import SearchEngineError

    old, _, _ = small_inputs
    index_dir = old_index(small_inputs, tmp_path)
    before = store.current_generation(index_dir)
    source = records_file(tmp_path / "big.jsonl", indexer.PARALLEL_MIN_RECORDS)
    monkeypatch.setattr(indexer, "_subwriter", _idle_worker)
    with pytest.raises(SearchEngineError, match=r"documents were not written \(an indexing process failed\)"):
        build_index([source], index_dir, jobs=2)
    assert store.current_generation(index_dir) == before
    assert open_index(index_dir).doc_count == 300


def test_an_index_being_built_for_the_first_time_is_busy_not_damaged(tmp_path):
    from click.testing import CliRunner

    from searchengine.cli import main
    from searchengine.errors import IndexBusyError, IndexDamagedError

    index_dir = tmp_path / "index"
    (index_dir / "gen-20260101T000000000000-1").mkdir(parents=True)  # a first build's generation
    with store.write_lock(index_dir):
        with pytest.raises(IndexBusyError, match="the index is being built"):
            store.current_generation(index_dir)
        result = CliRunner().invoke(main, ["search", "gpu", "--index-dir", str(index_dir)])
        assert result.exit_code == 1
        assert result.stderr == f"Error: {index_dir}: the index is being built; try again when the build has finished\n"
    # With no writer, a generation that never committed is a killed first build: no index yet.
    assert store.current_generation(index_dir) is None
    # One that committed may have been current: the missing pointer is damage.
    (index_dir / "gen-20260101T000000000000-1" / "_MAIN_1.toc").write_bytes(b"")
    with pytest.raises(IndexDamagedError, match="CURRENT is missing"):
        store.current_generation(index_dir)


@pytest.mark.parametrize("command", ["index", "update"])
def test_a_killed_first_build_leaves_no_index_and_the_next_run_builds_one(driver, small_inputs, tmp_path, command):
    from searchengine.errors import IndexNotFoundError

    old, new, _ = small_inputs
    index_dir = tmp_path / "index"
    killed = run(driver, "record", 120, "index", str(old), "--index-dir", str(index_dir), "--jobs", "1")
    assert killed.returncode == -signal.SIGKILL
    assert [p.name for p in index_dir.iterdir() if p.name.startswith("gen-")] != []  # left behind
    with pytest.raises(IndexNotFoundError, match="no index here"):
        open_index(index_dir).search("model")
    args = ["index", str(new)] if command == "index" else ["index", "--update", str(new)]
    done = run(driver, "record", 0, *args, "--index-dir", str(index_dir), "--jobs", "1")
    assert done.returncode == 0, done.stderr
    assert open_index(index_dir).doc_count == 200
    assert [g.name for g in index_dir.glob("gen-*")] == [store.current_generation(index_dir).name]
