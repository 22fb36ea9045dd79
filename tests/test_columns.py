"""The embedded index's facet and sort columns, stored with each generation.

Expected counts come from a brute-force count over the records written in
the test, never from the code under test.
"""

import json
import os
import socket
import subprocess
import sys
import threading
import urllib.request
from collections import Counter
from pathlib import Path

import pytest

from searchengine import IndexDamagedError, build_index, open_index, remove_documents, update_index
from searchengine.engines.whoosh import columns, integrity, store
from searchengine.engines.whoosh.columns import COLUMNS_FILE
from searchengine.engines.whoosh.facetcolumns import FacetColumns

REPO = Path(__file__).resolve().parent.parent
FACETS = "year,author,category"

RECORDS = [
    {
        "id": "c01",
        "title": "Sparse kernels on GPUs",
        "abstract": "Sparse kernels.",
        "year": 2023,
        "authors": ["Ada Lovelace", "Alan Turing"],
        "categories": ["cs.DC", "cs.LG"],
    },
    {
        "id": "c02",
        "title": "Graph networks",
        "abstract": "Sparse graphs.",
        "year": 2024,
        "authors": ["Alan Turing"],
        "categories": ["cs.LG"],
    },
    {
        "id": "c03",
        "title": "Alpha sparse solvers",
        "abstract": "Sparse solvers.",
        "year": 2024,
        "authors": ["Grace Hopper", "Ada Lovelace"],
        "categories": ["math.NA", "cs.DC"],
    },
    {"id": "c04", "title": "Dense matrices", "abstract": "Sparse or dense.", "authors": [], "categories": ["math.NA"]},
    {
        "id": "c05",
        "title": "Zeta sparse tensors",
        "abstract": "Sparse tensors.",
        "year": 2021,
        "authors": ["Grace Hopper"],
        "categories": [],
    },
]


def write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def expected(records: list[dict]) -> dict[str, dict]:
    """Brute-force facet counts of every record (all match "sparse")."""
    years = Counter(r.get("year") for r in records)
    authors = Counter(a for r in records for a in dict.fromkeys(r["authors"]))
    authors.update({None: sum(1 for r in records if not r["authors"])})
    categories = Counter(c for r in records for c in dict.fromkeys(r["categories"]))
    categories.update({None: sum(1 for r in records if not r["categories"])})
    return {"year": +years, "author": +authors, "category": +categories}


def counted(index) -> dict[str, dict]:
    results = index.search("sparse", facets=FACETS, facet_size=100)
    return {name: {v["value"]: v["count"] for v in values} for name, values in results.facets.items()}


def column_file(index_dir: Path) -> Path:
    return store.current_generation(index_dir) / COLUMNS_FILE


@pytest.fixture
def index_dir(tmp_path):
    folder = tmp_path / "index"
    build_index([write(tmp_path / "records.jsonl", RECORDS)], folder)
    return folder


def test_the_columns_are_written_with_the_generation(index_dir):
    path = column_file(index_dir)
    assert path.is_file()
    index = open_index(index_dir)
    try:
        searcher = index.engine.current().searcher
        mapped = FacetColumns.load(path, searcher.reader())
        assert mapped is not None and mapped.size == 5
        by_id = {}
        for docnum in range(mapped.size):
            stored = searcher.stored_fields(docnum)
            offsets = mapped.arrays["author.offsets"]
            authors = [
                mapped.name("author", int(v))
                for v in mapped.arrays["author.values"][offsets[docnum] : offsets[docnum + 1]]
            ]
            by_id[stored["id"]] = (int(mapped.arrays["year"][docnum]), authors)
        assert by_id == {
            "c01": (2023, ["Ada Lovelace", "Alan Turing"]),
            "c02": (2024, ["Alan Turing"]),
            "c03": (2024, ["Grace Hopper", "Ada Lovelace"]),
            "c04": (0, []),
            "c05": (2021, ["Grace Hopper"]),
        }
        assert counted(index) == expected(RECORDS)
        assert counted(index)["year"] == {2024: 2, 2023: 1, 2021: 1, None: 1}
        assert [h.id for h in index.search("sparse", sort="newest").hits] == ["c03", "c02", "c01", "c05", "c04"]
        assert [h.id for h in index.search("sparse", sort="oldest").hits] == ["c05", "c01", "c02", "c03", "c04"]
        assert [h.id for h in index.search("sparse", sort="title").hits] == ["c03", "c04", "c02", "c01", "c05"]
        assert [h.id for h in index.search("sparse", sort="newest", page=2, limit=2).hits] == ["c01", "c05"]
    finally:
        index.close()


def test_update_and_remove_change_the_counts_exactly(index_dir, tmp_path):
    before = column_file(index_dir)
    changed = [
        {
            "id": "c02",
            "title": "Graph networks v2",
            "abstract": "Sparse graphs again.",
            "year": 2025,
            "authors": ["Alan Turing", "Edsger Dijkstra"],
            "categories": ["cs.DS"],
            "version": 2,
        },
        {
            "id": "c06",
            "title": "New sparse work",
            "abstract": "Sparse.",
            "year": 2025,
            "authors": ["Edsger Dijkstra"],
            "categories": ["cs.DS", "cs.DC"],
        },
    ]
    update_index([write(tmp_path / "update.jsonl", changed)], index_dir)
    after = column_file(index_dir)
    assert after != before and before.is_file()  # the previous generation keeps its own file
    records = [RECORDS[0], changed[0], *RECORDS[2:], changed[1]]
    index = open_index(index_dir)
    try:
        assert counted(index) == expected(records)
        assert counted(index)["author"] == {
            "Alan Turing": 2,
            "Edsger Dijkstra": 2,
            "Ada Lovelace": 2,
            "Grace Hopper": 2,
            None: 1,
        }
        # The replaced c02 is a deleted document that keeps its docnum: never counted.
        assert counted(index)["year"] == {2025: 2, 2024: 1, 2023: 1, 2021: 1, None: 1}
        assert [h.id for h in index.search("sparse", sort="newest").hits] == ["c06", "c02", "c03", "c01", "c05", "c04"]
    finally:
        index.close()
    remove_documents(["c01", "c06"], index_dir)
    records = [changed[0], *RECORDS[2:]]
    index = open_index(index_dir)
    try:
        assert counted(index) == expected(records)
        assert counted(index)["category"] == {"math.NA": 2, "cs.DC": 1, "cs.DS": 1, None: 1}
    finally:
        index.close()


def test_an_index_without_the_column_file_is_searched_from_its_segments(index_dir):
    path = column_file(index_dir)
    path.unlink()
    integrity.write_checksums(path.parent)  # (so that no checksum names it)
    index = open_index(index_dir)
    try:
        assert index.engine.current().cache.columns().size == len(RECORDS)
        assert counted(index) == expected(RECORDS)
    finally:
        index.close()
    assert not path.exists()  # a published generation is never written to


@pytest.mark.parametrize("damage", ["garbage", "truncated", "other generation"])
def test_a_column_file_that_does_not_fit_is_damage(index_dir, tmp_path, damage):
    path = column_file(index_dir)
    if damage == "garbage":
        path.write_bytes(b"not columns at all")
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[:-64])
    else:  # the file of a generation with other documents
        other = tmp_path / "other"
        build_index([write(tmp_path / "other.jsonl", RECORDS[:2])], other)
        path.write_bytes(column_file(other).read_bytes())
    integrity.write_checksums(path.parent)  # damage the checksums cannot see
    index = open_index(index_dir)
    try:
        with pytest.raises(IndexDamagedError) as caught:
            counted(index)
    finally:
        index.close()
    assert str(caught.value) == (
        f"{index_dir}: the index is damaged: {path.parent.name}/facet.columns does not fit its generation's "
        f"documents; rebuild it with 'searchengine index PATH... --index-dir {index_dir}'"
    )


@pytest.fixture(scope="module")
def listing_index(tmp_path_factory):
    """An index of 900 arXiv listing records, and the records as read (fewer
    than the 1,000 hits a search pages to, so every hit of a query can be listed)."""
    from searchengine.readers import read_records

    import shareddata

    folder = tmp_path_factory.mktemp("listing")
    source = folder / "listing.jsonl"
    shareddata.write_listing(source, 900)
    build_index([source], folder / "index")
    return folder / "index", list(read_records([source], []))


@pytest.mark.parametrize("numpy", [False, True], ids=["stdlib", "numpy"])
def test_both_ways_of_counting_agree_with_a_brute_force_count(listing_index, monkeypatch, numpy):
    index_dir, records = listing_index
    monkeypatch.setattr(FacetColumns, "use_numpy", lambda self, hits: numpy)
    index = open_index(index_dir)
    try:
        for query, options in (("graph", {}), ("network", {}), ("learning", {"primary_only": True})):
            results = index.search(query, facets=FACETS, facet_size=1000, limit=1, **options)
            ids = {
                hit.id
                for page in range(1, results.total // 100 + 2)
                for hit in index.search(query, page=page, limit=100, **options).hits
            }
            chosen = [r for r in records if r.id in ids]
            assert results.total == len(chosen) > 20

            def ranked(counts: Counter, missing: int) -> list:
                top = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:1000]
                return top + ([(None, missing)] if missing else [])

            first = options.get("primary_only")
            categories = Counter(c for r in chosen for c in dict.fromkeys(r.categories[:1] if first else r.categories))
            assert [(v["value"], v["count"]) for v in results.facets["category"]] == ranked(
                categories, sum(1 for r in chosen if not r.categories)
            )
            authors = Counter(a for r in chosen for a in dict.fromkeys(r.authors))
            assert [(v["value"], v["count"]) for v in results.facets["author"]] == ranked(
                authors, sum(1 for r in chosen if not r.authors)
            )
            assert results.facets_remaining["author"] == max(0, len(authors) - 1000)
            years = Counter(r.year for r in chosen)
            assert [(v["value"], v["count"]) for v in results.facets["year"]] == sorted(
                years.items(), key=lambda item: (item[0] is None, -(item[0] or 0))
            )
            newest = [hit.id for hit in index.search(query, sort="newest", limit=20, **options).hits]
            assert newest == [r.id for r in sorted(chosen, key=lambda r: (r.year or 0, r.id), reverse=True)][:20]
    finally:
        index.close()


def _modules_after(args: list[str]) -> set[str]:
    code = (
        "import sys, runpy\n"
        f"sys.argv = ['searchengine', *{args!r}]\n"
        "try:\n    runpy.run_module('searchengine', run_name='__main__')\n"
        "except SystemExit as exc:\n    assert not exc.code, exc.code\n"
        "print(' '.join(sorted(sys.modules)), file=sys.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert result.returncode == 0, result.stderr
    return set(result.stderr.strip().splitlines()[-1].split())


HEAVY = {
    "nltk",
    "nltk.tokenize",
    "nltk.internals",
    "flask",
    "jinja2",
    "werkzeug",
    "opensearchpy",
    "urllib3",
    "waitress",
    "http.client",
    "ssl",
    "email",
    "xml.sax",
    "tqdm",
    "bibtexparser",
    "pylatexenc",
    "multiprocessing",
}


def test_a_command_line_search_loads_only_what_a_lookup_needs(index_dir):
    plain = _modules_after(["search", "sparse", "--index-dir", str(index_dir)])
    assert "searchengine.engines.whoosh.engine" in plain  # it did search
    assert plain & HEAVY == set()
    assert "numpy" not in plain  # no column is needed for a ranked page
    faceted = _modules_after(["search", "sparse", "--facets", FACETS, "--sort", "title", "--index-dir", str(index_dir)])
    assert faceted & HEAVY == set()
    assert "numpy" not in faceted  # few hits: counted over the mapped file without it


def test_serve_listens_only_once_the_index_is_ready(index_dir, monkeypatch):
    from searchengine.web import serve as serving

    index = open_index(index_dir)
    release = threading.Event()
    warm_up = index.warm_up
    monkeypatch.setattr(index, "warm_up", lambda: (release.wait(60), warm_up()))
    said: list[str] = []
    spoken = threading.Condition()

    def say(message: str) -> None:
        with spoken:
            said.append(message)
            spoken.notify_all()

    monkeypatch.setattr(serving, "_say", say)
    thread = threading.Thread(
        target=serving.serve,
        args=(index, index_dir),
        daemon=True,
        kwargs=dict(host="127.0.0.1", port=0, threads=2, workers=1, debug=False),
    )
    thread.start()
    with spoken:
        assert spoken.wait_for(lambda: said, timeout=60)
    port = int(said[0].split("port ")[1].split()[0])
    assert said == [f"Loading {index_dir}; port {port} accepts connections once the index is ready"]
    with pytest.raises(ConnectionRefusedError):  # bound, not listening: refused, not left hanging
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    release.set()
    with spoken:
        assert spoken.wait_for(lambda: len(said) == 2, timeout=60)
    assert said[1].startswith(f"Serving {index_dir} on http://127.0.0.1:{port}/, ready in ")
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/search?q=sparse", timeout=30) as answer:
        assert answer.status == 200
        assert json.loads(answer.read())["facets"]["year"][0] == {"value": 2024, "count": 2, "selected": False}


def test_the_column_file_holds_the_fuzzy_vocabulary_and_a_search_uses_it(index_dir, tmp_path, monkeypatch):
    from searchengine.engines.whoosh import expansion
    from searchengine.querylang.tree import DEFAULT_FIELDS

    assert columns.VOCABULARY_FIELDS == DEFAULT_FIELDS  # the fields fuzzy words expand in
    index = open_index(index_dir)
    try:
        reader = index.engine.current().searcher.reader()
        stored = FacetColumns.load(column_file(index_dir), reader)
        assert stored.vocabulary("title") == [
            "alpha",
            "dens",
            "gpu",
            "graph",
            "kernel",
            "matrix",
            "network",
            "solver",
            "spars",
            "tensor",
            "zeta",
        ]
        for fieldname in DEFAULT_FIELDS:
            assert stored.vocabulary(fieldname) == [
                reader.schema[fieldname].from_bytes(term) for term in reader.lexicon(fieldname)
            ]
        # A search takes the stored list: it never reads the term list from the index.
        monkeypatch.setattr(expansion._Vocabulary, "read", lambda *args: pytest.fail("read the term list"))
        assert sorted(hit.id for hit in index.search("title:sprase~2").hits) == ["c01", "c03", "c05"]
    finally:
        index.close()
    update_index([write(tmp_path / "more.jsonl", [dict(RECORDS[0], id="c06", title="Sparsity in zebras")])], index_dir)
    index = open_index(index_dir)
    try:  # a new generation: the stored list holds its terms
        assert [hit.id for hit in index.search("title:zebar~1").hits] == ["c06"]
    finally:
        index.close()


def test_a_column_file_without_the_vocabulary_is_used_and_fuzzy_words_still_expand(index_dir):
    path = column_file(index_dir)
    index = open_index(index_dir)
    try:  # as a column file written before it held the vocabulary
        reader = index.engine.current().searcher.reader()
        arrays = {
            name: values
            for name, values in FacetColumns.load(path, reader).arrays.items()
            if not name.startswith("vocabulary.")
        }
        numpy = pytest.importorskip("numpy")
        columns.write_columns(
            store.current_generation(index_dir),
            reader,
            {name: numpy.asarray(values) for name, values in arrays.items()},
        )
    finally:
        index.close()
    integrity.write_checksums(path.parent)
    index = open_index(index_dir)
    try:
        assert index.engine.current().cache.columns().vocabulary("title") is None
        assert sorted(hit.id for hit in index.search("title:sprase~2").hits) == ["c01", "c03", "c05"]
        assert counted(index) == expected(RECORDS)
    finally:
        index.close()


def test_author_filters_come_from_the_column_file_and_skip_replaced_documents(index_dir, tmp_path):
    def found(**filters) -> list[str]:
        index = open_index(index_dir)
        try:
            return sorted(h.id for h in index.search("", limit=20, **filters).hits)
        finally:
            index.close()

    index = open_index(index_dir)
    try:
        mapped = FacetColumns.load(column_file(index_dir), index.engine.current().searcher.reader())
        assert mapped.author_docs(["lovelace/a"]) == [0, 2]  # docnums, in record order here
        assert mapped.author_docs(["^lovelace"]) == [0]
        assert mapped.author_docs(["nobody", "^turing/alan"]) == [1]
        assert mapped.author_docs(["turing/b"]) == []
    finally:
        index.close()
    assert found(author=["Lovelace"]) == ["c01", "c03"]
    assert found(author=["^Lovelace, A."]) == ["c01"]
    assert found(author=["Turing, Alan", "Hopper"]) == ["c01", "c02", "c03", "c05"]
    assert found(author=["^Hopper"], year=["2024"]) == ["c03"]
    # c02 replaced (its old docnum is deleted, the new one in a second
    # segment), a new record in that segment, c05 removed.
    changed = [
        {
            "id": "c02",
            "title": "Graph networks v2",
            "abstract": "Sparse graphs again.",
            "year": 2025,
            "authors": ["Edsger Dijkstra", "Alan Turing"],
            "categories": ["cs.DS"],
            "version": 2,
        },
        {
            "id": "c06",
            "title": "New sparse work",
            "abstract": "Sparse.",
            "year": 2025,
            "authors": ["Grace M. Hopper"],
            "categories": ["cs.DS"],
        },
    ]
    update_index([write(tmp_path / "update.jsonl", changed)], index_dir)
    remove_documents(["c05"], index_dir)
    assert found(author=["Turing"]) == ["c01", "c02"]
    assert found(author=["^Turing"]) == []
    assert found(author=["^Dijkstra, E"]) == ["c02"]
    assert found(author=["Hopper, Grace"]) == ["c03", "c06"]
    index = open_index(index_dir)
    try:
        results = index.search("sparse", author=["Hopper"], facets="author")
        assert (results.total, {v["value"]: v["count"] for v in results.facets["author"]}) == (
            2,
            {"Grace Hopper": 1, "Ada Lovelace": 1, "Grace M. Hopper": 1},
        )
        assert "author_keys:hopper" in results.parsed
    finally:
        index.close()


def test_an_update_works_out_the_keys_of_new_author_names_only(index_dir, tmp_path, monkeypatch):
    from searchengine import filters

    held = columns.known_name_keys(column_file(index_dir))
    names = {a for r in RECORDS for a in r["authors"]}
    assert {name: set(keys) for name, keys in held.items()} == {name: set(filters.name_keys(name)) for name in names}
    worked_out = []
    real = filters.name_keys
    monkeypatch.setattr(filters, "name_keys", lambda name: worked_out.append(name) or real(name))
    new = {"id": "c06", "title": "Sparse tensors", "abstract": "x", "authors": ["Mary Somerville", "Alan Turing"]}
    update_index([write(tmp_path / "new.jsonl", [new])], index_dir)
    assert "Mary Somerville" in worked_out and "Alan Turing" not in worked_out
    assert counted(open_index(index_dir))["author"]["Mary Somerville"] == 1
    assert open_index(index_dir).search("sparse", author="Somerville").total == 1
    assert open_index(index_dir).search("sparse", author="Turing").total == 3
    # A file whose keys were read otherwise (another version) is not reused.
    monkeypatch.setattr(columns, "_NAME_KEY_PROBES", ("Somebody Else",))
    assert columns.known_name_keys(column_file(index_dir)) == {}
