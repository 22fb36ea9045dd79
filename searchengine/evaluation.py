"""Ranking quality on a test collection, measured through the product's own search.

A test collection is a folder in one of two layouts, recognised by its files:

* **Cranfield (classic SMART files):** ``cran.all.1400`` (documents: ``.I``
  id, ``.T`` title, ``.A`` authors, ``.B`` source, ``.W`` abstract),
  ``cran.qry`` (queries: ``.I``, ``.W``) and ``cranqrel`` (``query doc code``).
  ``cranqrel`` numbers the queries 1, 2, 3 ... by their position in
  ``cran.qry``, not by their ``.I`` value. Relevance codes 1 to 4 (1 = complete
  answer ... 4 = minimum interest) become graded gains 4 to 1; codes -1 and 5
  are not relevant. Lines may end in CRLF.
* **BEIR:** ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl``
  (``_id``, ``text``; other keys ignored) and ``qrels/test.tsv`` (header,
  then ``query-id``, ``corpus-id``, ``score``; the score is the gain).

:func:`evaluate` writes the documents as JSON lines in the
:class:`~searchengine.records.Record` format, indexes them with
:func:`searchengine.build_index` in a temporary directory (so they pass the
same reader, cleaning and analyzer as any input), runs every judged query
through :meth:`searchengine.SearchIndex.search` (the path behind
``searchengine search``), and scores the ranking with ``pytrec_eval``
(the trec_eval measures ``ndcg_cut_10``, ``map``, ``P_10`` and
``recall_100``; install it with ``pip install 'searchengine[eval]'``).

Authors and source lines of Cranfield documents are not indexed: the
measures judge titles and abstracts, as in the BEIR layout.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from searchengine import settings
from searchengine.errors import InputError, QueryError, SearchEngineError

if TYPE_CHECKING:
    from searchengine.search import SearchIndex

# How deep each query's ranking goes (MAP is computed over this depth).
DEPTH = 1000
# The four measures, as (output name, trec_eval measure).
MEASURES = (("ndcg@10", "ndcg_cut_10"), ("map", "map"), ("p@10", "P_10"), ("recall@100", "recall_100"))

CRANFIELD_FILES = ("cran.all.1400", "cran.qry", "cranqrel")
BEIR_FILES = ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv")


@dataclass
class Collection:
    """A test collection in memory.

    Attributes:
        name: ``"cranfield"`` or ``"beir"`` (the layout it was read from).
        documents: ``(id, title, abstract)`` per document, in file order.
        queries: query id → query text.
        qrels: query id → {document id → gain}; gain 0 means judged not relevant.
    """

    name: str
    documents: list[tuple[str, str, str]] = field(default_factory=list)
    queries: dict[str, str] = field(default_factory=dict)
    qrels: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def judged_queries(self) -> list[str]:
        """Ids of the queries with at least one relevant document, in query order."""
        return [q for q in self.queries if any(g > 0 for g in self.qrels.get(q, {}).values())]


def detect_layout(path: Path) -> str:
    """``"cranfield"`` or ``"beir"``, from the files in ``path``.

    Raises:
        InputError: ``path`` is not a folder, or holds neither layout.
    """
    if not path.is_dir():
        raise InputError(f"{path}: not a folder (a test collection is a folder)")
    if all((path / name).is_file() for name in CRANFIELD_FILES):
        return "cranfield"
    if all((path / name).is_file() for name in BEIR_FILES):
        return "beir"
    raise InputError(
        f"{path}: not a test collection (expected {', '.join(CRANFIELD_FILES)}, or {', '.join(BEIR_FILES)})"
    )


def load_collection(path: str | os.PathLike) -> Collection:
    """Read the test collection in folder ``path`` (either layout).

    Raises:
        InputError: the folder is not a test collection, or a file in it is
            malformed (the message names ``file:line``).
    """
    path = Path(path)
    if detect_layout(path) == "cranfield":
        return _load_cranfield(path)
    return _load_beir(path)


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        with open(path, encoding="utf-8-sig", newline=None) as handle:
            for number, line in enumerate(handle, start=1):
                yield number, line.rstrip("\r\n")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not valid UTF-8 ({exc.reason})") from None


def _smart_records(path: Path) -> list[tuple[int, str, dict[str, list[str]]]]:
    """``(line, .I value, {marker: lines})`` per record of a SMART-format file.

    Once a record's ``.W`` text has begun, later marker-like lines are text
    (Cranfield document 240 has lines starting with ``.A`` in its abstract).
    """
    records: list[tuple[int, str, dict[str, list[str]]]] = []
    current: dict[str, list[str]] | None = None
    marker = ""
    for number, line in _lines(path):
        if line.startswith(".I"):
            ident = line[2:].strip()
            if not ident:
                raise InputError(f"{path}:{number}: '.I' without an id")
            current = {}
            records.append((number, ident, current))
            marker = ""
            continue
        tag = line.strip()
        if current is not None and tag in (".T", ".A", ".B", ".W") and marker != ".W":
            marker = tag
            current.setdefault(marker, [])
            continue
        if tag == ".W" and current is not None:
            continue  # a second abstract section: keep appending to the first
        if current is None:
            if line.strip():
                raise InputError(f"{path}:{number}: text before the first '.I' line")
            continue
        if marker:
            current[marker].append(line)
    return records


def _join(lines: list[str]) -> str:
    return " ".join(" ".join(lines).split())


def _load_cranfield(path: Path) -> Collection:
    collection = Collection("cranfield")
    for _number, ident, fields in _smart_records(path / "cran.all.1400"):
        collection.documents.append((ident, _join(fields.get(".T", [])), _join(fields.get(".W", []))))
    # cranqrel numbers queries by position in cran.qry, not by their .I value.
    for position, (_number, _ident, fields) in enumerate(_smart_records(path / "cran.qry"), start=1):
        collection.queries[str(position)] = _join(fields.get(".W", []))
    qrels_path = path / "cranqrel"
    for number, line in _lines(qrels_path):
        parts = line.split()
        if not parts:
            continue
        try:
            query, doc, code = parts[0], parts[1], int(parts[2])
        except (IndexError, ValueError):
            raise InputError(f"{qrels_path}:{number}: expected 'query document code', found {line.strip()!r}") from None
        if len(parts) != 3:
            raise InputError(f"{qrels_path}:{number}: expected 'query document code', found {line.strip()!r}")
        gain = 5 - code if 1 <= code <= 4 else 0
        collection.qrels.setdefault(query, {})[doc] = gain
    return collection


def _json_objects(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, line in _lines(path):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{number}: invalid JSON ({exc.msg})") from None
        if not isinstance(obj, dict) or "_id" not in obj:
            raise InputError(f"{path}:{number}: expected an object with an '_id'")
        yield number, obj


def _load_beir(path: Path) -> Collection:
    collection = Collection("beir")
    for _number, obj in _json_objects(path / "corpus.jsonl"):
        collection.documents.append((str(obj["_id"]), str(obj.get("title") or ""), str(obj.get("text") or "")))
    for number, obj in _json_objects(path / "queries.jsonl"):
        if not isinstance(obj.get("text"), str):
            raise InputError(f"{path / 'queries.jsonl'}:{number}: query has no 'text'")
        collection.queries[str(obj["_id"])] = obj["text"]
    qrels_path = path / "qrels" / "test.tsv"
    for number, line in _lines(qrels_path):
        parts = line.split("\t")
        if number == 1 and not parts[-1].strip().lstrip("-").isdigit():
            continue  # the header
        if not line.strip():
            continue
        try:
            query, doc, score = parts[0].strip(), parts[1].strip(), int(parts[2])
        except (IndexError, ValueError):
            raise InputError(
                f"{qrels_path}:{number}: expected 'query-id<TAB>corpus-id<TAB>score', found {line!r}"
            ) from None
        collection.qrels.setdefault(query, {})[doc] = score
    return collection


def _evaluator(qrels: dict[str, dict[str, int]]) -> Any:  # pytrec_eval has no type hints
    try:
        import pytrec_eval
    except ImportError:
        raise SearchEngineError("evaluation needs pytrec-eval-terrier: pip install 'searchengine[eval]'") from None
    return pytrec_eval.RelevanceEvaluator(qrels, {measure for _name, measure in MEASURES})


def write_records(collection: Collection, path: Path) -> None:
    """Write the collection's documents as Record JSON lines (the product's input format)."""
    with open(path, "w", encoding="utf-8") as out:
        for ident, title, abstract in collection.documents:
            # Cranfield has two empty documents; the product needs a title.
            record = {"id": ident, "title": title or f"(untitled {ident})", "abstract": abstract}
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


def run_queries(
    index: SearchIndex, collection: Collection, depth: int = DEPTH, mode: str = "lexical"
) -> dict[str, dict[str, float]]:
    """Search every judged query in ``mode``; return ``{query id: {doc id: score}}`` (a trec run).

    Scores are ``depth - rank`` so that the evaluator keeps the product's order.
    A query the product refuses (:class:`QueryError`) has no hits.
    """
    from searchengine.limits import MAX_LIMIT

    run: dict[str, dict[str, float]] = {}
    for query_id in collection.judged_queries:
        ranked: list[str] = []
        page = 1
        try:
            while len(ranked) < depth:
                results = index.search(
                    collection.queries[query_id], limit=MAX_LIMIT, page=page, with_snippets=False, mode=mode
                )
                ranked.extend(hit.id for hit in results.hits)
                if page >= results.page["pages"]:
                    break
                page += 1
        except QueryError:
            ranked = []
        run[query_id] = {doc: float(depth - rank) for rank, doc in enumerate(ranked[:depth])}
    return run


def score_run(collection: Collection, run: dict[str, dict[str, float]]) -> dict[str, float | int]:
    """Mean of each measure over the judged queries (a query without hits scores 0).

    Returns ``{"ndcg@10", "map", "p@10", "recall@100": float, "queries": int}``.
    """
    judged = collection.judged_queries
    qrels = {q: collection.qrels[q] for q in judged}
    evaluator = _evaluator(qrels)
    per_query = evaluator.evaluate({q: docs for q, docs in run.items() if docs and q in qrels})
    result: dict[str, float | int] = {}
    for name, measure in MEASURES:
        total = sum(per_query.get(q, {}).get(measure, 0.0) for q in judged)
        result[name] = round(total / len(judged), 4) if judged else 0.0
    result["queries"] = len(judged)
    return result


def evaluate(
    path: str | os.PathLike, depth: int = DEPTH, mode: str = "lexical", index: str | None = None
) -> dict[str, float | int | str]:
    """Index the test collection at ``path`` in a temporary directory and measure the product.

    With ``index``, a cluster location (``http(s)://HOST:PORT/NAME``), the
    collection is built into that index instead (replacing what it held),
    so the cluster engine is measured the same way.

    ``mode`` ``semantic`` or ``hybrid`` indexes with vectors; they are kept
    by content in :func:`vector_cache` (shared by every collection), so a
    second run encodes nothing.

    Returns the dict of :func:`score_run` (the ``searchengine eval --json``
    output), with ``mode``.

    Raises:
        InputError: ``path`` is not a readable test collection, or ``index``
            is not a cluster location.
        QueryError: ``mode`` is not a mode.
        SearchEngineError: ``pytrec_eval`` or, for a semantic mode, the
            ``semantic`` extra is not installed (the message says how).
    """
    from searchengine.engines import is_cluster
    from searchengine.indexer import build_index
    from searchengine.search import open_index

    if index is not None and not is_cluster(index):
        raise InputError(
            f"--index {index}: evaluation builds into a cluster index only "
            "(http(s)://HOST:PORT/NAME); without it a temporary folder is used"
        )
    collection = load_collection(path)
    if not collection.judged_queries:
        raise InputError(f"{path}: no query has a relevant document")
    _evaluator({"q": {"d": 1}})  # fail early, before indexing, when pytrec_eval is missing
    from searchengine.request import check_mode

    check_mode(mode)
    vectors = mode != "lexical"
    if vectors:
        from searchengine.semantic.encoder import encoder

        encoder()  # the extra is installed, before anything is indexed
    with tempfile.TemporaryDirectory(prefix="searchengine-eval-") as tmp:
        records = Path(tmp) / "records.jsonl"
        write_records(collection, records)
        index_dir: str | Path
        if index is not None:
            index_dir = index
        else:
            index_dir = Path(tmp) / "index"
            if vectors:
                from searchengine.semantic import CACHE_DIR

                index_dir.mkdir()
                (index_dir / CACHE_DIR).symlink_to(vector_cache(), target_is_directory=True)
        build_index([records], index_dir, vectors=vectors)
        searched = open_index(index_dir)
        try:
            run = run_queries(searched, collection, depth, mode)
        finally:
            searched.close()
    return {**score_run(collection, run), "mode": mode}


def vector_cache() -> Path:
    """Where evaluation keeps record vectors between runs (created):
    ``$SEARCHENGINE_VECTOR_CACHE``, else ``searchengine/vectors`` under
    ``$XDG_CACHE_HOME`` (default ``~/.cache``)."""
    configured = settings.vector_cache()
    base = settings.cache_home() / "searchengine" / "vectors"
    folder = Path(configured) if configured else base
    folder.mkdir(parents=True, exist_ok=True)
    return folder
