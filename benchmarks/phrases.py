"""Quoted phrases on the embedded engine, read from the text store and from the stored records, in one run.

    python benchmarks/phrases.py [--size 0] [--index DIR] [--work DIR]

Each phrase is searched once (top 10 with snippets) in a new process that
opened the index and ran one other query first, once per way of checking the
words as written, the two ways taking turns phrase by phrase:

* ``text store``: titles and abstracts read from each segment's text store
  (``searchengine/engines/whoosh/textstore.py``), the candidates being the
  papers with every stem;
* ``stored records``: what a segment written without a text store does
  (each candidate's whole stored record read, the phrase's positions first).

A row gives the hits counted, the milliseconds and whether the search's 2 s
budget cut it (then fewer hits are counted). The index is that of the first
``--size`` records of ``../shared/data/arxiv/arxiv_listing_sample.jsonl.gz``
(0: all of them), built once into ``--work``, or ``--index``. ``uptime`` is
printed before and after, because the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cold import sample_index  # noqa: E402
from speed import REPO, uptime  # noqa: E402

PHRASES = [
    '"language models"',
    '"large language models"',
    '"state of the art"',
    '"diffusion models"',
    '"reinforcement learning"',
    '"neural network"',
    '"point cloud" segmentation',
    '"graph neural networks"',
    '"in-context learning"',
    '"mixture of experts"',
    '"vision transformer"',
    '"federated learning" privacy',
    '"model"',
    '"deep learning"',
    '"text-to-image"',
    '"Schr\\"odinger bridge"',
]
WAYS = ("text store", "stored records")
WARM_UP = "graph neural network"


def measure(index: str, phrase: str, way: str) -> dict:
    """Hits, milliseconds and cut of one search of ``phrase`` in this process."""
    import time

    if way == "stored records":
        import searchengine.engines.whoosh.queries as queries

        queries.segment_text_store = lambda reader: None
    from searchengine import open_index

    searcher = open_index(index)
    searcher.search(WARM_UP, limit=10)
    started = time.perf_counter()
    result = searcher.search(phrase, limit=10)
    elapsed = time.perf_counter() - started
    return {"hits": result.total, "ms": elapsed * 1000, "cut": bool(result.timed_out)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=0, help="listing records to index (0: all)")
    parser.add_argument("--index", type=Path, help="an existing index to search instead of building one")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "searchengine-phrases")
    parser.add_argument("--measure", nargs=3, metavar=("INDEX", "PHRASE", "WAY"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(*args.measure)))
        return

    env = dict(os.environ, PYTHONPATH=str(REPO))
    print(f"uptime at start: {uptime()}")
    index = sample_index(args, env)
    rows, totals = [], dict.fromkeys(WAYS, 0.0)
    for phrase in PHRASES:
        found = {}
        for way in WAYS:
            out = subprocess.run(
                [sys.executable, __file__, "--measure", str(index), phrase, way],
                capture_output=True,
                text=True,
                check=True,
                env=env,
                cwd=REPO,
            )
            found[way] = json.loads(out.stdout.strip().splitlines()[-1])
            totals[way] += found[way]["ms"]
        rows.append((phrase, found))
    print(f"\n{index}: each phrase once, top 10 with snippets\n")
    print("| phrase | " + " | ".join(f"{way}: hits, ms" for way in WAYS) + " |")
    print("|---|" + "---|" * len(WAYS))
    for phrase, found in rows:
        cells = [f"{f['hits']:,}, {f['ms']:,.0f}{' (cut)' if f['cut'] else ''}" for f in (found[w] for w in WAYS)]
        print(f"| `{phrase}` | " + " | ".join(cells) + " |")
    print("| all | " + " | ".join(f"{totals[way] / 1000:.1f} s" for way in WAYS) + " |")
    print(f"\nuptime at end: {uptime()}")


if __name__ == "__main__":
    main()
