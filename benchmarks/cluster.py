"""The OpenSearch engine on one node and on three, beside the embedded engine, in one run.

    python benchmarks/cluster.py --start [--records N] [--work DIR] [--embedded-index DIR]
    python benchmarks/cluster.py --cluster1 URL --cluster3 URL [...]
    python benchmarks/cluster.py --file FILE --nodes 3 --cluster3 URL --queries 0 [--embedded-figures JSON]

The first ``--records`` records of the listing sample in
``../shared/data/arxiv/`` (0, the default: all 74,728) are written to a
JSON-lines file (as ``speed.py`` does) and indexed three times, one build
after the other, each by ``python -m searchengine index FILE --index LOCATION
--quiet --json`` as a new process:

* the embedded engine into a folder (or ``--embedded-index DIR``: an index of
  those records built earlier, reused, its build not timed);
* a one-node cluster and a three-node cluster, each into the alias
  ``--name`` (default ``bench-arxiv``), with ``--bulk-jobs`` bulk requests in
  flight. With ``--start`` the benchmark starts both clusters itself with
  ``scripts/dev-cluster.sh start --clean`` (HTTP ports ``--port1`` and
  ``--port3``, data under ``--cluster-dir`` + ``1`` / ``3``) and stops them
  with the same script at the end; otherwise ``--cluster1`` and
  ``--cluster3`` name running clusters (``http://HOST:PORT``, or every
  node: ``http://HOST:PORT,HOST:PORT,...``; statistics are read from the
  first).

With ``--file FILE`` that JSON-lines file is indexed instead (a large one
made by ``../shared/tools/arxiv-at-scale.py``, say); ``--nodes 3`` (or
``1``) builds on that cluster only, ``--queries 0`` skips the searches (a
build-only run), and ``--embedded-figures JSON`` takes the embedded
engine's row from an earlier run of this benchmark on the same file (each
run writes its embedded row to ``--work``/``embedded-<file>.json``) instead
of building it again.

Figures per engine:

* **build**: records/s over the wall time of the whole ``index`` process
  (reading, TeX conversion, analysis, writing, and on a cluster the replicas
  and the alias switch); CPU seconds of the client process and its worker
  processes; on a cluster also the CPU seconds its nodes spent
  (``_nodes/stats``, before and after), and the nodes' heap: the most any
  node used during the build (sampled every ``--sample`` seconds) and each
  node's maximum;
* **documents**: counted on the cluster after the build (``_count``), beside
  the records read less those merged or skipped: "lost" is the difference;
* **index size**: the embedded folder's bytes; on a cluster the primaries'
  store and the total with replicas (``GET /NAME/_stats/store``), read after
  the query passes (or, without queries, once no merge is running) so that
  background merges have settled, and both per document;
* **top 10 with snippets** and **faceted search** (top 10 with snippets plus
  facets year, author and category over all hits), both through
  ``searchengine.search.open_index(location).search(...)`` so that every
  engine is timed the same way, over ``speed.py``'s 200 keyword queries
  (three fixed ones plus consecutive content words of random titles, seed
  42): p50/p95 of wall milliseconds, each query's time the median of
  ``--passes`` timed passes after one untimed pass (warm); on a cluster
  also the time its shards spent in query and fetch phases per search
  (``_nodes/stats/indices/search``, summed over shards), the part of a
  search that grows with the documents per shard.

With ``--vectors`` every build also encodes each record (``index
--vectors``; the searches then default to hybrid ranking), and a second
table says how far each cluster's answers agree with the embedded engine's,
query by query, in each mode (``lexical``, ``semantic``, ``hybrid``): for
how many queries the top 10 hold the same papers (in any order), the mean
share of papers in common (of the longer of the two lists: a query may find
fewer than 10), and for how many the first hit is the same.

Every figure is printed beside the embedded engine's, with the ratio
cluster / embedded (records/s: above 1 means faster; sizes and times: above
1 means bigger or slower). The load average is printed at the start and the
end: on a shared machine only ratios within one run compare.
Exit status 0; 1 when a build, a cluster start or a query fails.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
REPO = BENCHMARKS.parent
sys.path.insert(0, str(BENCHMARKS))
sys.path.insert(0, str(REPO))

from speed import LISTING, disk_mb, make_queries, pct, subset  # noqa: E402

FACETS = "year,author,category"
DEV_CLUSTER = REPO / "scripts" / "dev-cluster.sh"


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def http_json(url: str) -> dict:
    """GET ``url`` and decode its JSON body (the local clusters need no credentials)."""
    with urllib.request.urlopen(url, timeout=60) as response:
        return json.load(response)


def cluster_cpu_seconds(base: str) -> float:
    """CPU seconds spent so far by every node of the cluster at ``base`` (``_nodes/stats``)."""
    nodes = http_json(f"{base}/_nodes/stats/process")["nodes"]
    return sum(node["process"]["cpu"]["total_in_millis"] for node in nodes.values()) / 1000


def shard_search_ms(base: str) -> float:
    """Milliseconds the cluster's shards have spent in the query and fetch phases of
    searches so far, summed over shards and nodes (``_nodes/stats/indices/search``)."""
    nodes = http_json(f"{base}/_nodes/stats/indices/search")["nodes"]
    return float(
        sum(
            node["indices"]["search"]["query_time_in_millis"] + node["indices"]["search"]["fetch_time_in_millis"]
            for node in nodes.values()
        )
    )


class HeapSampler:
    """The most heap any node of the cluster at ``base`` uses, sampled every
    ``every`` seconds in a thread while the ``with`` block runs (``peak``,
    bytes), and the largest node heap (``limit``, bytes)."""

    def __init__(self, base: str, every: float) -> None:
        self.base, self.every = base, every
        self.peak = self.limit = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        try:
            nodes = http_json(f"{self.base}/_nodes/stats/jvm")["nodes"]
        except OSError:  # a busy node answers next time
            return
        for node in nodes.values():
            memory = node["jvm"]["mem"]
            self.peak = max(self.peak, memory["heap_used_in_bytes"])
            self.limit = max(self.limit, memory["heap_max_in_bytes"])

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self._sample()

    def __enter__(self) -> HeapSampler:
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()


def settle(base: str, name: str, most: float = 300.0) -> None:
    """Wait (at most ``most`` seconds) until no merge runs on the alias ``name``'s shards."""
    deadline = time.monotonic() + most
    while time.monotonic() < deadline:
        if not http_json(f"{base}/{name}/_stats/merge")["_all"]["total"]["merges"]["current"]:
            return
        time.sleep(5)


def counted(base: str, name: str) -> int:
    """Documents the alias ``name`` holds (``_count`` after a refresh)."""
    request = urllib.request.Request(f"{base}/{name}/_refresh", method="POST")
    urllib.request.urlopen(request, timeout=300).close()
    return int(http_json(f"{base}/{name}/_count")["count"])


def cluster_sizes(base: str, name: str) -> tuple[int, int, int]:
    """(documents, primary store bytes, total store bytes with replicas) of the alias ``name``."""
    stats = http_json(f"{base}/{name}/_stats/store,docs")["_all"]
    return (
        stats["primaries"]["docs"]["count"],
        stats["primaries"]["store"]["size_in_bytes"],
        stats["total"]["store"]["size_in_bytes"],
    )


def build(source: Path, location: str, extra: list[str]) -> dict:
    """Run ``searchengine index`` as a new process; its summary plus wall and CPU seconds.

    Raises SystemExit with the command's error when it fails."""
    command = [
        sys.executable,
        "-m",
        "searchengine",
        "index",
        str(source),
        "--index",
        location,
        "--quiet",
        "--json",
        *extra,
    ]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, env=env, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr.strip()}")
    summary = json.loads(done.stdout)
    summary["wall"] = wall
    summary["client_cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return summary


def timings(run_query, queries: list[str], passes: int) -> list[float]:
    """Wall milliseconds per query: the median of ``passes`` timed passes after an untimed one."""
    for query in queries:
        run_query(query)
    times: list[list[float]] = [[] for _ in queries]
    for _ in range(passes):
        for i, query in enumerate(queries):
            started = time.perf_counter()
            run_query(query)
            times[i].append((time.perf_counter() - started) * 1000)
    return [statistics.median(t) for t in times]


def measure_queries(location: str, queries: list[str], passes: int, shard_ms=None, modes: tuple[str, ...] = ()) -> dict:
    """Search and faceted-search latencies of ``queries`` on the index at ``location``,
    and how many queries found nothing. With ``shard_ms`` (a reading of
    :func:`shard_search_ms`), also the shards' milliseconds per search of each kind;
    with ``modes``, each query's top-10 ids in each of those modes (``"top10"``)."""
    from searchengine.search import open_index

    index = open_index(location)
    row: dict = {}
    try:
        row["zero"] = sum(index.search(q, limit=10).total == 0 for q in queries)
        searches = len(queries) * (passes + 1)
        for key, options in (("search", {}), ("faceted", {"facets": FACETS})):
            before = shard_ms() if shard_ms else 0.0
            row[key] = timings(
                lambda q, options=options: index.search(q, limit=10, **options).to_dict(), queries, passes
            )
            if shard_ms:
                row[f"{key}_shard_ms"] = (shard_ms() - before) / searches
        row["documents"] = index.doc_count
        if modes:
            row["top10"] = {
                mode: [[hit.id for hit in index.search(q, limit=10, mode=mode).hits] for q in queries] for mode in modes
            }
    finally:
        index.close()
    return row


def agreement(rows: dict, modes: tuple[str, ...]) -> None:
    """How far each cluster's top 10s agree with the embedded engine's, per mode."""
    names = [name for name in rows if name != "embedded"]
    print("\n| mode | agreement with the embedded engine | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    for mode in modes:
        ours = rows["embedded"]["top10"][mode]
        same, shared, first = [], [], []
        for name in names:
            theirs = rows[name]["top10"][mode]
            pairs = list(zip(ours, theirs))
            same.append(sum(set(a) == set(b) for a, b in pairs))
            shared.append(statistics.fmean(len(set(a) & set(b)) / max(len(a), len(b), 1) for a, b in pairs))
            first.append(sum(a[:1] == b[:1] for a, b in pairs))
        count = len(ours)
        print(f"| {mode} | queries with the same top-10 papers (of {count}) | " + " | ".join(map(str, same)) + " |")
        print(
            f"| {mode} | share of the top 10 in common (mean; of the longer list) | "
            + " | ".join(f"{v:.1%}" for v in shared)
            + " |"
        )
        print(f"| {mode} | queries with the same first hit | " + " | ".join(map(str, first)) + " |")


class Clusters:
    """The two clusters: started here with ``scripts/dev-cluster.sh`` (``--start``) or given."""

    def __init__(self, args) -> None:
        self.args = args
        self.started: list[dict] = []
        self.bases = {1: args.cluster1, 3: args.cluster3}

    def _env(self, nodes: int) -> dict:
        port = self.args.port1 if nodes == 1 else self.args.port3
        return dict(
            os.environ, SEARCHENGINE_CLUSTER_PORT=str(port), SEARCHENGINE_CLUSTER_DIR=f"{self.args.cluster_dir}{nodes}"
        )

    def __enter__(self):
        if not self.args.start:
            return self
        for nodes in self.args.start_sizes:
            env = self._env(nodes)
            print(f"starting a {nodes}-node cluster on port {env['SEARCHENGINE_CLUSTER_PORT']} ...", flush=True)
            self.started.append(env)
            done = subprocess.run(
                [str(DEV_CLUSTER), "start", "--clean", str(nodes)], env=env, capture_output=True, text=True, check=False
            )
            if done.returncode != 0:
                # __exit__ does not run when __enter__ fails: stop what did start.
                self.__exit__(None, None, None)
                raise SystemExit(f"dev-cluster.sh start {nodes} failed: {done.stderr.strip()[-500:]}")
            port = int(env["SEARCHENGINE_CLUSTER_PORT"])
            # Every node listed: the client spreads requests over them.
            self.bases[nodes] = "http://" + ",".join(f"127.0.0.1:{port + i}" for i in range(nodes))
        return self

    def __exit__(self, *exc_info) -> None:
        for env in self.started:
            subprocess.run([str(DEV_CLUSTER), "stop"], env=env, capture_output=True, check=False)


def ratio(value: float, peer: float) -> str:
    return f"{value / peer:.2f}" if peer else "-"


def report(rows: dict, records: int, queries: int, passes: int) -> None:
    """The table: one column per engine, ratios to the embedded engine."""
    names = list(rows)
    searched = f", {queries} queries, warm (median of {passes} passes after one)" if queries else ", build only"
    print(f"\n{records:,} records{searched}\n")
    print("| metric | " + " | ".join(names) + " | " + " | ".join(f"{n} / embedded" for n in names[1:]) + " |")
    print("|---" * (2 * len(names)) + "|")

    def line(label: str, values: list[float | None], fmt: str, ratios: bool = True) -> None:
        cells = ["-" if v is None else format(v, fmt) for v in values]
        peer = values[0]
        extra = [ratio(v, peer) if ratios and v is not None and peer is not None else "-" for v in values[1:]]
        print(f"| {label} | " + " | ".join(cells) + " | " + " | ".join(extra) + " |")

    def get(key):
        return [rows[n].get(key) for n in names]

    line("build, records/s (wall, whole process)", get("rate"), ",.0f")
    line("build, wall s", get("wall"), ".1f")
    line("build, client CPU s (with its worker processes)", get("client_cpu"), ".1f")
    line("build, client CPU ms per record", get("client_ms"), ".3f")
    line("build, cluster CPU s (all nodes)", get("cluster_cpu"), ".1f", ratios=False)
    line("build, cluster CPU ms per record", get("cluster_ms"), ".3f", ratios=False)
    line("heap, most used by a node during the build, MB", get("heap_peak_mb"), ",.0f", ratios=False)
    line("heap, per node, MB", get("heap_max_mb"), ",.0f", ratios=False)
    line("records read", get("records"), ",d", ratios=False)
    line("documents (counted after the build)", get("documents"), ",d", ratios=False)
    line("documents lost (read less merged, skipped, counted)", get("lost"), ",d", ratios=False)
    line("index size, MB (embedded folder; cluster primaries)", get("primary_mb"), ".1f")
    line("index size with replicas, MB", get("total_mb"), ".1f")
    line("bytes per document (primaries)", get("per_doc"), ",.0f")
    line("bytes per document (with replicas)", get("total_per_doc"), ",.0f")
    if queries:
        for label, key in (("top 10 with snippets", "search"), ("faceted search (year, author, category)", "faceted")):
            if any(key not in rows[n] for n in names):
                continue
            for share, name in ((0.5, "p50"), (0.95, "p95")):
                line(f"{label}, {name} ms", [pct(rows[n][key], share) for n in names], ".1f")
            line(f"{label}, mean ms", [statistics.fmean(rows[n][key]) for n in names], ".1f")
            line(
                f"{label}, shard query+fetch ms per search (sum over shards)",
                get(f"{key}_shard_ms"),
                ".1f",
                ratios=False,
            )
        line("zero-hit queries", get("zero"), "d", ratios=False)
    layouts = ", ".join(f"{n}: {rows[n]['layout']}" for n in names[1:])
    taken = f" ({rows[names[0]]['from']})" if "from" in rows[names[0]] else ""
    print(f"\nembedded = searchengine's folder index{taken}; {layouts}")


def progress(name: str, row: dict) -> None:
    """One line of an engine's figures as soon as they are measured."""
    rate = f"{row['rate']:,.0f} records/s, " if row.get("rate") else ""
    searched = (
        f", top 10 p50/p95 {pct(row['search'], 0.5):.1f}/{pct(row['search'], 0.95):.1f} ms, "
        f"faceted {pct(row['faceted'], 0.5):.1f}/{pct(row['faceted'], 0.95):.1f} ms"
        if "search" in row
        else ""
    )
    print(f"{name}: {rate}{row['primary_mb']:.1f} MB{searched}; load average {load_average()}", flush=True)


def build_row(summary: dict) -> dict:
    """The build figures of an ``index --json`` summary (with ``wall`` and ``client_cpu``)."""
    return {
        "rate": summary["records"] / summary["wall"],
        "wall": summary["wall"],
        "client_cpu": summary["client_cpu"],
        "client_ms": summary["client_cpu"] * 1000 / max(1, summary["records"]),
        "records": summary["records"],
        "expected": summary["records"] - summary["merged"] - summary["skipped"],
    }


def embedded_row(args, source: Path, records: int, queries: list[str], modes: tuple[str, ...]) -> dict:
    """The embedded engine's figures: taken from ``--embedded-figures``, or measured
    (a build, unless ``--embedded-index`` gives one, then the searches)."""
    if args.embedded_figures is not None:
        row = json.loads(args.embedded_figures.read_text(encoding="utf-8"))
        row.setdefault("layout", "folder")
        row["from"] = f"figures of {args.embedded_figures.name}"
        return row
    embedded = args.embedded_index or args.work / f"index-{source.stem}"
    row: dict = {}
    if args.embedded_index is None:
        shutil.rmtree(embedded, ignore_errors=True)
        print(f"building the embedded index of {records:,} records ...", flush=True)
        row = build_row(build(source, str(embedded), ["--vectors"] if args.vectors else []))
    if queries:
        row.update(measure_queries(str(embedded), queries, args.passes, modes=modes))
    else:
        from searchengine.search import open_index

        index = open_index(str(embedded))
        try:
            row["documents"] = index.doc_count
        finally:
            index.close()
    if "expected" in row:
        row["lost"] = row["expected"] - row["documents"]
    row["primary_mb"] = row["total_mb"] = disk_mb(embedded)
    row["per_doc"] = row["total_per_doc"] = row["primary_mb"] * 1e6 / row["documents"]
    row["layout"] = "folder"
    saved = {key: value for key, value in row.items() if key not in ("search", "faceted", "top10")}
    (args.work / f"embedded-{source.stem}.json").write_text(json.dumps(saved, indent=1), encoding="utf-8")
    return row


def cluster_row(args, source: Path, hosts: str, queries: list[str], modes: tuple[str, ...]) -> dict:
    """Build ``source`` on the cluster ``hosts`` into ``--name`` and measure it."""
    location = f"{hosts}/{args.name}"
    base = hosts.split(",")[0]  # statistics come from the first node listed
    extra = (["--vectors"] if args.vectors else []) + (["--jobs", str(args.bulk_jobs)] if args.bulk_jobs else [])
    if args.vectors_from:
        extra += ["--vectors-from", str(args.vectors_from)]
    cpu_before = cluster_cpu_seconds(base)
    with HeapSampler(base, args.sample) as heap:
        summary = build(source, location, extra)
    row = build_row(summary)
    row.update(
        cluster_cpu=cluster_cpu_seconds(base) - cpu_before,
        heap_peak_mb=heap.peak / 2**20,
        heap_max_mb=heap.limit / 2**20,
        encoded=summary.get("encoded", 0),
    )
    row["cluster_ms"] = row["cluster_cpu"] * 1000 / max(1, row["records"])
    row["documents"] = counted(base, args.name)
    row["lost"] = row["expected"] - row["documents"]
    if queries:
        row.update(
            measure_queries(location, queries, args.passes, lambda base=base: shard_search_ms(base), modes=modes)
        )
    else:
        settle(base, args.name)
    _, primaries, total = cluster_sizes(base, args.name)
    health = http_json(f"{base}/_cluster/health/{args.name}")
    row.update(
        primary_mb=primaries / 1e6,
        total_mb=total / 1e6,
        per_doc=primaries / max(1, row["documents"]),
        total_per_doc=total / max(1, row["documents"]),
        layout=f"{health['number_of_nodes']} nodes, {health['active_primary_shards']} primary shards + "
        f"{health['active_shards'] - health['active_primary_shards']} replica shards",
    )
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=0, help="first N records of the sample; 0 means all")
    parser.add_argument("--file", type=Path, default=None, help="index this JSON-lines file instead of the sample")
    parser.add_argument(
        "--work",
        type=Path,
        default=Path(tempfile.gettempdir()) / "searchengine-cluster-bench",
        help="scratch directory for the records file and the embedded index",
    )
    parser.add_argument(
        "--embedded-index",
        type=Path,
        default=None,
        help="reuse this embedded index of the same records (its build is not timed)",
    )
    parser.add_argument(
        "--embedded-figures",
        type=Path,
        default=None,
        help="take the embedded row from this JSON file (written to --work by an earlier run) instead",
    )
    parser.add_argument(
        "--start",
        action="store_true",
        help="start a 1-node and a 3-node cluster with scripts/dev-cluster.sh, stop them at the end",
    )
    parser.add_argument("--nodes", choices=("1", "3", "both"), default="both", help="which clusters to build on")
    parser.add_argument("--port1", type=int, default=9280, help="HTTP port of the 1-node cluster (--start)")
    parser.add_argument("--port3", type=int, default=9270, help="first HTTP port of the 3-node cluster (--start)")
    parser.add_argument(
        "--cluster-dir",
        default=str(Path.home() / ".cache" / "searchengine" / "cluster-bench"),
        help="node data folder prefix for --start (1 or 3 is appended)",
    )
    parser.add_argument("--cluster1", default=None, help="URL of a running 1-node cluster (http://HOST:PORT)")
    parser.add_argument(
        "--cluster3", default=None, help="URL of a running 3-node cluster (http://HOST:PORT[,HOST:PORT...])"
    )
    parser.add_argument("--name", default="bench-arxiv", help="index alias on the clusters (rebuilt)")
    parser.add_argument("--bulk-jobs", type=int, default=None, help="searchengine index --jobs on the clusters")
    parser.add_argument("--queries", type=int, default=200, help="keyword queries (at least 200 for p95; 0: none)")
    parser.add_argument("--passes", type=int, default=3, help="timed passes over the queries")
    parser.add_argument("--sample", type=float, default=5.0, help="seconds between heap samples during a build")
    parser.add_argument(
        "--vectors",
        action="store_true",
        help="encode the records too (index --vectors) and compare the top 10s in each mode",
    )
    parser.add_argument(
        "--vectors-from",
        type=Path,
        default=None,
        help="with --vectors: the clusters take the vectors of this embedded index (index --vectors-from)",
    )
    args = parser.parse_args()
    sizes = (1, 3) if args.nodes == "both" else (int(args.nodes),)
    if not args.start and any(getattr(args, f"cluster{n}") is None for n in sizes):
        parser.error("give --start, or --cluster1 URL and --cluster3 URL (only the one --nodes names)")
    if args.file is None and not LISTING.exists():
        raise SystemExit(f"{LISTING}: not found (the shared arXiv sample is needed)")
    args.work.mkdir(parents=True, exist_ok=True)
    print(f"start: load average {load_average()}", flush=True)
    if args.file is not None:
        source = args.file
        with open(source, "rb") as handle:
            records = sum(1 for _ in handle)
    else:
        source, records = subset(args.records, args.work)
    queries = make_queries(source, count=args.queries) if args.queries else []
    rows: dict[str, dict] = {}
    modes = ("lexical", "semantic", "hybrid") if args.vectors and queries else ()
    args.start_sizes = sizes
    rows["embedded"] = embedded_row(args, source, records, queries, modes)
    progress("embedded", rows["embedded"])
    with Clusters(args) as clusters:
        for nodes in sizes:
            hosts = clusters.bases[nodes].rstrip("/")
            print(f"building on the {nodes}-node cluster {hosts.split(',')[0]} ...", flush=True)
            rows[f"cluster-{nodes}"] = row = cluster_row(args, source, hosts, queries, modes)
            progress(f"cluster-{nodes}", row)
    report(rows, records, len(queries), args.passes)
    if modes and "top10" in rows["embedded"]:
        agreement(rows, modes)
    print(f"\nend: load average {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
