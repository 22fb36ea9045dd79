"""How hybrid ranking's choices score on the development collections, in one run.

    python benchmarks/fusion.py [--collections cranfield,cisi,scifact,known] [--gates]

Each collection (``../shared/data/cranfield``, ``cisi``, ``scifact-train``,
and ``known``: the arXiv known-item test of ``relevance.py``) is indexed
once with vectors (kept by content in ``searchengine.evaluation.vector_cache``,
so a second run encodes nothing) and every judged query is searched as
``searchengine eval`` searches it, under each variant:

* ``lexical``, ``semantic``, ``hybrid``: the product's modes as they are;
* ``… no feedback`` / ``… feedback always``: the same with
  ``FEEDBACK_WEIGHT = 0``, or with the feedback gate open for every
  question (``FEEDBACK_MIN_LEAD = 0``);
* ``hybrid w=0.4`` / ``w=0.6``: another keyword share of the fused score;
* ``hybrid min-max`` / ``z-score`` / ``raw cosine``: other ways to put the
  two scores on one scale (min-max over the candidates, w 0.5; standard
  scores over the candidates, w 0.4; the cosine itself beside BM25F divided
  by its best, w 0.3; the cosine above 0.1, as a typical unrelated paper's,
  divided by the best's, w 0.5).

It prints nDCG@10 per collection and variant, and each variant's change
against the same mode's product. With ``--gates``, it also prints what a
few rules for when feedback applies would score, from each question's
nDCG@10 without feedback and with it always, and its first ranking's
scores (lexical mode). Ranking settings are changed in
``searchengine.ranking`` for one variant at a time, then restored.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

COLLECTIONS = {"cranfield": "cranfield", "cisi": "cisi", "scifact": "scifact-train"}


def _min_max(lexical, similarities, weight):
    import numpy as np

    def scaled(values):
        values = np.asarray(values, dtype=np.float64)
        low, high = (values.min(), values.max()) if len(values) else (0.0, 0.0)
        return (values - low) / (high - low) if high > low else np.zeros_like(values)

    return weight * scaled(lexical) + (1 - weight) * scaled(similarities)


def _z_score(lexical, similarities, weight):
    import numpy as np

    def scaled(values):
        values = np.asarray(values, dtype=np.float64)
        spread = values.std() if len(values) else 0.0
        return (values - values.mean()) / spread if spread > 0 else np.zeros_like(values)

    return weight * scaled(lexical) + (1 - weight) * scaled(similarities)


def _raw_cosine(lexical, similarities, weight):
    import numpy as np

    lexical = np.asarray(lexical, dtype=np.float64)
    top = lexical.max() if len(lexical) else 0.0
    return weight * (lexical / top if top > 0 else lexical) + (1 - weight) * np.clip(similarities, 0.0, None)


def _cosine_floor(lexical, similarities, weight, floor=0.1):
    import numpy as np

    lexical = np.asarray(lexical, dtype=np.float64)
    similarities = np.asarray(similarities, dtype=np.float64)
    top = lexical.max() if len(lexical) else 0.0
    best = similarities.max() if len(similarities) else 0.0
    meaning = (
        np.clip((similarities - floor) / (best - floor), 0.0, None) if best > floor else np.zeros_like(similarities)
    )
    return weight * (lexical / top if top > 0 else lexical) + (1 - weight) * meaning


# name: (mode, ranking settings, fusion function or None for the product's)
VARIANTS = {
    "lexical": ("lexical", {}, None),
    "lexical no feedback": ("lexical", {"FEEDBACK_WEIGHT": 0}, None),
    "lexical feedback always": ("lexical", {"FEEDBACK_MIN_LEAD": 0}, None),
    "semantic": ("semantic", {}, None),
    "hybrid": ("hybrid", {}, None),
    "hybrid no feedback": ("hybrid", {"FEEDBACK_WEIGHT": 0}, None),
    "hybrid feedback always": ("hybrid", {"FEEDBACK_MIN_LEAD": 0}, None),
    "hybrid w=0.4": ("hybrid", {"HYBRID_LEXICAL_WEIGHT": 0.4}, None),
    "hybrid w=0.6": ("hybrid", {"HYBRID_LEXICAL_WEIGHT": 0.6}, None),
    "hybrid min-max": ("hybrid", {}, _min_max),
    "hybrid z-score": ("hybrid", {"HYBRID_LEXICAL_WEIGHT": 0.4}, _z_score),
    "hybrid raw cosine": ("hybrid", {"HYBRID_LEXICAL_WEIGHT": 0.3}, _raw_cosine),
    "hybrid cosine floor 0.1": ("hybrid", {}, _cosine_floor),
}


def collection_path(name: str, scratch: Path) -> Path:
    if name == "known":
        import relevance

        return relevance.known_item_collection(scratch / "arxiv-known-item")
    return REPO.parent / "shared" / "data" / COLLECTIONS[name]


def per_question(index, collection, mode: str, settings: dict, fuse=None):
    """``({query id: nDCG@10}, {query id: the first 10 scores})`` under ``settings``."""
    import searchengine.ranking as ranking
    import searchengine.semantic.fusion as fusion
    from searchengine.evaluation import _evaluator

    saved = {name: getattr(ranking, name) for name in settings}
    product_fuse = fusion.fuse
    try:
        for name, value in settings.items():
            setattr(ranking, name, value)
        if fuse is not None:
            fusion.fuse = fuse
        run, scores = {}, {}
        for query_id in collection.judged_queries:
            found = index.search(collection.queries[query_id], limit=100, with_snippets=False, mode=mode)
            run[query_id] = {hit.id: 100.0 - rank for rank, hit in enumerate(found.hits)}
            scores[query_id] = [hit.score for hit in found.hits[:10]]
    finally:
        for name, value in saved.items():
            setattr(ranking, name, value)
        fusion.fuse = product_fuse
    judged = {query_id: collection.qrels[query_id] for query_id in collection.judged_queries}
    measured = _evaluator(judged).evaluate({q: docs for q, docs in run.items() if docs})
    return {q: measured.get(q, {}).get("ndcg_cut_10", 0.0) for q in collection.judged_queries}, scores


def gates() -> dict:
    """Rules for when a question gets feedback, from its first ranking's 10 best scores."""

    def lead(ratio):
        return lambda s: len(s) > 1 and (s[-1] <= 0 or s[0] >= ratio * s[-1])

    found = {"never": lambda s: False, "always": lambda s: True}
    for ratio in (1.3, 1.5, 2.0):  # 1.5: the product's gate
        found[f"best >= {ratio} x 10th"] = lead(ratio)
    for gap in (1.05, 1.1, 1.2):
        found[f"best >= 1.5 x 10th, best < {gap} x 2nd"] = (
            lambda g: lambda s: lead(1.5)(s) and s[1] > 0 and s[0] < g * s[1]
        )(gap)
    for share in (0.7, 0.8, 0.9):
        found[f"5th >= {share} x best"] = (lambda r: lambda s: len(s) > 4 and s[0] > 0 and s[4] >= r * s[0])(share)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collections", default="cranfield,cisi,scifact,known")
    parser.add_argument("--gates", action="store_true", help="also score rules for when feedback applies")
    args = parser.parse_args()
    from searchengine.evaluation import load_collection, vector_cache, write_records
    from searchengine.indexer import build_index
    from searchengine.search import open_index
    from searchengine.semantic import CACHE_DIR

    names = args.collections.split(",")
    table: dict[str, dict[str, float]] = {}
    gate_rows: dict[str, tuple] = {}
    with tempfile.TemporaryDirectory(prefix="searchengine-fusion-") as scratch:
        for name in names:
            collection = load_collection(collection_path(name, Path(scratch)))
            records = Path(scratch) / f"{name}.jsonl"
            write_records(collection, records)
            index_dir = Path(scratch) / f"{name}-index"
            index_dir.mkdir()
            (index_dir / CACHE_DIR).symlink_to(vector_cache(), target_is_directory=True)
            build_index([records], index_dir, vectors=True)
            index = open_index(index_dir)
            try:
                for variant, (mode, settings, fuse) in VARIANTS.items():
                    scores, first = per_question(index, collection, mode, settings, fuse)
                    table.setdefault(variant, {})[name] = sum(scores.values()) / len(scores)
                    print(f"{name}: {variant} {table[variant][name]:.4f}", file=sys.stderr, flush=True)
                    if args.gates and variant == "lexical no feedback":
                        plain, plain_first = scores, first
                    if args.gates and variant == "lexical feedback always":
                        gate_rows[name] = (plain, scores, plain_first)
            finally:
                index.close()
    print("| variant | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for variant, (mode, _, _) in VARIANTS.items():
        cells = []
        for name in names:
            value, base = table[variant][name], table[mode][name]
            cells.append(f"{value:.4f}" if variant == mode else f"{value:.4f} ({value - base:+.4f})")
        print(f"| {variant} | " + " | ".join(cells) + " |")
    if args.gates:
        print("\n| feedback applies when (lexical) | " + " | ".join(names) + " |")
        print("|---|" + "---|" * len(names))
        for rule, applies in gates().items():
            cells = []
            for name in names:
                plain, always, first = gate_rows[name]
                value = sum(always[q] if applies(first[q]) else plain[q] for q in plain) / len(plain)
                cells.append(f"{value:.4f}")
            print(f"| {rule} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
