"""Cold command-line lookups on the embedded engine, against a bare interpreter start, in one run.

    python benchmarks/cold.py [--size 10000] [--index DIR] [--runs 9] [--query "SpMV GPU"] [--repo DIR]...

Each row is a new process (the operating system's page cache is warm: one
unmeasured run of each comes first), run ``--runs`` times with the rows
interleaved, so that a change of load hits every row alike:

* ``python -c pass``: the bare interpreter start every row pays;
* ``searchengine search Q``: a plain keyword search (top 10 with snippets);
* ``searchengine search Q --facets year,author,category``: the same with
  exact facet counts over every hit;
* ``searchengine --help``.

Figures are medians of wall and CPU (user + system) time; "above bare" is
the row's median minus the bare start's. The index is that of the first
``--size`` records of ``../shared/data/arxiv/arxiv_listing_sample.jsonl.gz``
(0: all of them), built once into ``--work`` (or ``--index``, an existing
index). ``uptime`` is printed before and after, because the machine is
shared. Targets: faceted ≤ 0.35 s above bare, plain ≤ 0.25 s above bare.
``--repo`` measures another checkout's ``searchengine`` (e.g. an older
commit, for a before/after comparison on the same index); given more than
once, each checkout's rows are measured in the same interleaved runs and
tabled in turn. Each measured process may write bytecode in the unmeasured
runs (``PYTHONDONTWRITEBYTECODE`` is dropped), as an installed package has it.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from speed import REPO, subset, uptime  # noqa: E402

TARGETS = {"plain": 0.25, "faceted": 0.35}


def timed(command: list[str], env: dict) -> tuple[float, float]:
    """Wall and CPU seconds of ``command`` as a new process (it must succeed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, capture_output=True, check=True, env=env, cwd=env["PYTHONPATH"])
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def commands(index: Path, query: str) -> dict[str, list[str]]:
    """The rows' commands by name (``bare``, ``plain``, ``faceted``, ``help``), searching ``index``."""
    search = [sys.executable, "-m", "searchengine", "search", query, "--index", str(index)]
    return {
        "bare": [sys.executable, "-c", "pass"],
        "plain": search,
        "faceted": search + ["--facets", "year,author,category"],
        "help": [sys.executable, "-m", "searchengine", "--help"],
    }


def checkout_env(repo: Path) -> dict:
    """The environment of processes running ``repo``'s searchengine: bytecode is
    written, as an installed package has it (with ``PYTHONDONTWRITEBYTECODE``
    every process would compile the checkout's modules from source, 0.3 s more)."""
    env = {**os.environ, "PYTHONPATH": str(repo.resolve())}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def interleaved(rows: dict[str, list[str]], envs: list[dict], runs: int) -> list[tuple[dict, dict]]:
    """Median wall and CPU seconds of each command by name, per environment (a
    checkout, ``env["PYTHONPATH"]``), over ``runs`` rounds that run every
    command of every environment once in turn (after one unmeasured run of
    each: page cache, ``.pyc`` files), so that a change of load on a shared
    machine hits every row alike. Returns ``[(wall, cpu), ...]`` in the order of ``envs``."""
    for env in envs:
        for command in rows.values():
            timed(command, env)
    figures: list[dict[str, list[tuple[float, float]]]] = [{name: [] for name in rows} for _ in envs]
    for _ in range(runs):
        for env, figure in zip(envs, figures):
            for name, command in rows.items():
                figure[name].append(timed(command, env))
    return [
        (
            {name: statistics.median(w for w, _ in times) for name, times in figure.items()},
            {name: statistics.median(c for _, c in times) for name, times in figure.items()},
        )
        for figure in figures
    ]


def sample_index(args, env: dict) -> Path:
    """``args.index``, or the index of the first ``args.size`` listing records
    (0: all) in ``args.work``, built once by ``env``'s searchengine."""
    if args.index is not None:
        return args.index
    args.work.mkdir(parents=True, exist_ok=True)
    source, records = subset(args.size, args.work)
    index = args.work / f"index-{args.size or 'all'}"
    if not index.exists():
        print(f"building {index} from {records:,} records ...", flush=True)
        subprocess.run(
            [sys.executable, "-m", "searchengine", "index", str(source), "--index", str(index), "--quiet"],
            check=True,
            env=env,
            cwd=env["PYTHONPATH"],
        )
    return index


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000, help="listing records to index (0: all)")
    parser.add_argument("--index", type=Path, help="an existing index to search instead of building one")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "searchengine-cold")
    parser.add_argument("--runs", type=int, default=9, help="measured runs of each row")
    parser.add_argument("--query", default="SpMV GPU")
    parser.add_argument(
        "--repo", type=Path, action="append", help="a checkout whose searchengine runs (repeatable; default: this one)"
    )
    args = parser.parse_args()
    repos = args.repo or [REPO]

    print(f"uptime at start: {uptime()}")
    envs = [checkout_env(repo) for repo in repos]
    index = sample_index(args, envs[0])
    for repo, (wall, cpu) in zip(repos, interleaved(commands(index, args.query), envs, args.runs)):
        _table(wall, cpu, repo, index, args)
    print(f"\nuptime at end: {uptime()}")


def _table(wall: dict[str, float], cpu: dict[str, float], repo: Path, index: Path, args) -> None:
    print(f"\ncode: {repo}; index: {index}; query {args.query!r}; median of {args.runs} runs each, rows interleaved")
    print("| row | wall s | above bare, wall s | CPU s | above bare, CPU s | target above bare |")
    print("|---|---|---|---|---|---|")
    labels = {
        "bare": "python -c pass",
        "plain": f"search {args.query!r}",
        "faceted": f"search {args.query!r} --facets year,author,category",
        "help": "searchengine --help",
    }
    for name, label in labels.items():
        target = TARGETS.get(name)
        met = target is not None and wall[name] - wall["bare"] <= target
        verdict = "" if target is None else f"≤ {target:.2f} ({'met' if met else 'missed'})"
        above = "" if name == "bare" else f"{wall[name] - wall['bare']:.3f}"
        above_cpu = "" if name == "bare" else f"{cpu[name] - cpu['bare']:.3f}"
        print(f"| {label} | {wall[name]:.3f} | {above} | {cpu[name]:.3f} | {above_cpu} | {verdict} |")


if __name__ == "__main__":
    main()
