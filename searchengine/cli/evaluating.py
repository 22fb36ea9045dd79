"""``eval``: ranking quality on a test collection."""

from __future__ import annotations

import json
from pathlib import Path

import click

from searchengine.cli import main
from searchengine.cli.common import json_option
from searchengine.semantic import MODES


@main.command("eval")
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--mode",
    "-m",
    type=click.Choice(MODES, case_sensitive=False),
    default="lexical",
    show_default=True,
    help="Rank by words, by meaning or both; semantic and hybrid encode the collection's "
    "records first (needs the semantic extra; vectors are kept for the next run)",
)
@click.option(
    "--index",
    "index",
    metavar="URL",
    default=None,
    help="Build the collection into this cluster index (http(s)://HOST:PORT/NAME, replacing what it "
    "holds) and measure the cluster engine; default: a temporary folder",
)
@json_option
def eval_(path: Path, mode: str, index: str | None, as_json: bool) -> None:
    """Measure ranking quality on the test collection in folder PATH.

    PATH holds Cranfield's classic files (cran.all.1400, cran.qry, cranqrel)
    or the BEIR layout (corpus.jsonl, queries.jsonl, qrels/test.tsv). The
    documents are indexed in a temporary directory and every judged query
    runs through the same search as 'searchengine search'.
    """
    from searchengine.evaluation import evaluate

    result = evaluate(path, mode=mode, index=index)
    if as_json:
        click.echo(json.dumps(result))
        return
    click.echo(f"{path}: {result['queries']} judged queries, {mode} mode")
    for name, label in (("ndcg@10", "nDCG@10"), ("map", "MAP"), ("p@10", "P@10"), ("recall@100", "Recall@100")):
        click.echo(f"  {label:<11} {result[name]:.4f}")
