"""Do the embedded engine and a cluster answer the same? Totals, top 10s and a stable order.

    python benchmarks/parity.py --embedded DIR --cluster URL [--runs 5] [--queries FILE] [--json OUT]
    python benchmarks/parity.py --cluster URL --analysis FILE [--texts N]

Both locations must hold the same records (for example the 74,728-record
sample, built with ``searchengine index FILE --index LOCATION``). Each query
of :data:`QUERIES` (or of ``--queries``, one per line) is searched on both
through ``open_index(location).search(query, limit=10)``, and the cluster
``--runs`` times more; then the papers similar to each of :data:`SIMILAR`
(``similar ID`` in the table). Printed per query: both totals, how many of the
embedded top 10 the cluster's top 10 holds, whether the top 5 is in the same
order, and whether every cluster run gave the same order. The last lines
count the queries with equal totals, with at least 8 of the same top 10, and
with a stable cluster order.

With ``--analysis FILE`` (records, as ``searchengine index`` reads them) it
compares analysis instead: the titles and abstracts of the first ``--texts``
records (0: all) go through the embedded analyzer and through the cluster's
``_analyze`` of their term texts, and it prints how many texts, word types and
term occurrences differ.
"""

from __future__ import annotations

import argparse
import json
import sys

#: Queries of every kind: words, phrases, fields, prefixes, fuzzy words,
#: negation with filters, a pasted question, typos (did-you-mean), author
#: names (a surname alone, a full name).
QUERIES = (
    "SpMV GPU",
    "graph neural network",
    '"large language model" hallucination',
    'title:"diffusion model" video',
    "retrieval augmented generation",
    "quantiz* LLM 4-bit",
    "diffusion -video year:2026",
    "FlashAttention",
    "flashattention kernel",
    "fail-slow detection",
    '"state of the art" segmentation',
    "transformr~1 attention",
    "abstract:reinforcement title:robot",
    "author:bengio",
    "contrastive learn* -image",
    "mixture of experts routing",
    "How can large language models be made to reason about mathematics step by step?",
    "Schrödinger equation",
    "k-means clustering",
    "category:cs.CL prompt",
    "sparce matrix",
    "nueral network",
    "memroy bandwith",
    "reinforcment learning robot",
    "transformer atention",
    "Bengio",
    "Yoshua Bengio",
    "Vedaldi",
    "Andrea Vedaldi",
)

#: Papers whose similar papers (``similar ID``) are compared, after the queries.
SIMILAR = ("2601.08387", "2507.20226", "2606.13255")


def _answer(index, query: str) -> tuple[int, list[str], list[float]]:
    if query.startswith("similar "):
        results = index.similar(query.split(" ", 1)[1], limit=10)
    else:
        results = index.search(query, limit=10, with_snippets=False)
    return results.total, [hit.id for hit in results.hits], [round(hit.score, 4) for hit in results.hits]


def compare_analysis(cluster: str, path: str, limit: int) -> dict:
    """Texts, terms and word types whose cluster terms differ from the embedded ones."""
    from collections import Counter

    from searchengine.engines.opensearch import mapping
    from searchengine.engines.opensearch.client import connect
    from searchengine.engines.opensearch.location import parse_location
    from searchengine.engines.opensearch.terms import term_text
    from searchengine.engines.whoosh.analysis import text_analyzer
    from searchengine.readers import read_records

    location = parse_location(cluster)
    client = connect(location)
    name = "parity-analysis"
    if client.indices.exists(index=name):
        client.indices.delete(index=name)
    client.indices.create(index=name, body=mapping.index_body(name, shards=1))
    analyzer = text_analyzer()
    counts = Counter()
    differing_types: set[str] = set()
    types: set[str] = set()
    try:
        for number, record in enumerate(read_records([path], [])):
            if limit and number >= limit:
                break
            for text in (record.title, record.abstract):
                ours = sorted((token.text, token.pos) for token in analyzer(text, positions=True, mode="index"))
                found = client.indices.analyze(index=name, body={"analyzer": "se_terms", "text": term_text(text)})
                theirs = sorted((token["token"], token["position"]) for token in found["tokens"])
                counts["texts"] += 1
                counts["terms"] += len(ours)
                types.update(term for term, _ in ours)
                if ours != theirs:
                    counts["differing texts"] += 1
                    gone = Counter(ours) - Counter(theirs)
                    extra = Counter(theirs) - Counter(ours)
                    counts["differing terms"] += sum(gone.values()) + sum(extra.values())
                    differing_types.update(term for term, _ in gone)
                    differing_types.update(term for term, _ in extra)
    finally:
        client.indices.delete(index=name)
    return {
        **counts,
        "term types": len(types),
        "differing types": len(differing_types),
        "examples": sorted(differing_types)[:20],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedded", help="the embedded index folder")
    parser.add_argument("--cluster", required=True, help="the cluster index URL (http://HOST:PORT/NAME)")
    parser.add_argument("--runs", type=int, default=5, help="cluster repeats per query (default 5)")
    parser.add_argument(
        "--queries",
        help="a file of queries, one per line (default: the built-in ones; 'similar ID' compares similar papers)",
    )
    parser.add_argument("--json", help="write every answer to this file")
    parser.add_argument("--analysis", metavar="FILE", help="compare the analysis of these records' texts instead")
    parser.add_argument("--texts", type=int, default=0, help="with --analysis: the first N records (0: all)")
    args = parser.parse_args(argv)
    if args.analysis:
        found = compare_analysis(args.cluster, args.analysis, args.texts)
        for key, value in found.items():
            print(f"{key}: {value}")
        return 0
    if not args.embedded:
        parser.error("--embedded DIR is needed to compare answers")

    from searchengine.search import open_index

    queries = QUERIES + tuple(f"similar {paper}" for paper in SIMILAR)
    if args.queries:
        with open(args.queries, encoding="utf-8") as lines:
            queries = tuple(line.strip() for line in lines if line.strip())
    embedded, cluster = open_index(args.embedded), open_index(args.cluster)
    rows = []
    print(f"{'query':<44} {'embedded':>9} {'cluster':>9} {'top10':>6} {'top5 order':>10} {'stable':>6}")
    for query in queries:
        total_e, ids_e, scores_e = _answer(embedded, query)
        runs = [_answer(cluster, query) for _ in range(max(1, args.runs))]
        total_c, ids_c, scores_c = runs[0]
        shared = len(set(ids_e) & set(ids_c))
        same_top5 = ids_e[:5] == ids_c[:5]
        stable = all(run[1] == ids_c for run in runs)
        rows.append(
            {
                "query": query,
                "embedded": {"total": total_e, "ids": ids_e, "scores": scores_e},
                "cluster": {"total": total_c, "ids": ids_c, "scores": scores_c},
                "shared_top10": shared,
                "same_top5_order": same_top5,
                "stable": stable,
            }
        )
        print(
            f"{query[:44]:<44} {total_e:>9,} {total_c:>9,} {shared:>4}/{len(ids_e):<2}"
            f"{'yes' if same_top5 else 'no':>10} {'yes' if stable else 'no':>6}"
        )
    equal = sum(row["embedded"]["total"] == row["cluster"]["total"] for row in rows)
    close = sum(row["shared_top10"] >= min(8, len(row["embedded"]["ids"])) for row in rows)
    stable = sum(row["stable"] for row in rows)
    print(
        f"equal totals: {equal}/{len(rows)}; at least 8 of the same top 10: {close}/{len(rows)}; "
        f"same cluster order in {args.runs} runs: {stable}/{len(rows)}"
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(rows, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
