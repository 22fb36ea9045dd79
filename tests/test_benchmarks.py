"""The speed table's arithmetic and bookkeeping (``benchmarks/table.py``), on fixed numbers, and the everyday
queries' drawing and judging (``benchmarks/everyday.py``) on a tiny sample: no builds."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import everyday  # noqa: E402
import table  # noqa: E402


def test_cold_row_is_measured_above_the_bare_start():
    row = table.above_bare("cold", 0.412, 0.031, 0.35)
    assert row.cells() == [
        "cold",
        "0.412 s (0.381 s above bare)",
        "0.031 s (python -c pass)",
        "13.3×",
        "≤ 0.35 s above bare",
        "NOT met",
    ]
    assert table.above_bare("cold", 0.380, 0.031, 0.35).met is True
    assert (
        table.above_bare("cold", 0.380, 0.031, 0.35, 0.1234).measured
        == "0.380 s (0.349 s above bare; CPU 0.123 s above bare)"
    )
    assert table.above_bare("cold", 0.382, 0.031, 0.35).met is False


def test_ratio_bounds_at_most_and_at_least():
    query = table.compared("p50", 1.80, 0.30, "ms", "FTS5", 6, digits=2)
    assert query.cells() == ["p50", "1.80 ms", "0.30 ms (FTS5)", "6.00×", "≤ 6× FTS5", "met"]
    assert table.compared("p50", 1.81, 0.30, "ms", "FTS5", 6).met is False
    build = table.compared("build", 1200, 700, "records/s", "plain Whoosh", 1.65, at_least=True, digits=0)
    assert build.cells() == [
        "build",
        "1,200 records/s",
        "700 records/s (plain Whoosh)",
        "1.71×",
        "≥ 1.65× plain Whoosh",
        "met",
    ]
    assert table.compared("build", 1150, 700, "records/s", "plain Whoosh", 1.65, at_least=True).met is False
    info = table.compared("size", 30.0, 12.5, "MB", "FTS5")
    assert (info.ratio, info.target, info.met, info.cells()[-1]) == ("2.40×", "", None, "")


def test_table_is_markdown_with_one_line_per_row():
    rows = [
        table.compared("size", 30.0, 40.0, "MB", "plain Whoosh", 1.0),
        table.Row("pasted", "1.20 s (0 of 3 timed_out)", "", "", "≤ 2 s budget", True),
    ]
    assert table.format_table(rows).splitlines() == [
        "| row | measured | peer (same run) | ratio | target | verdict |",
        "|---|---|---|---|---|---|",
        "| size | 30.0 MB | 40.0 MB (plain Whoosh) | 0.75× | ≤ 1× plain Whoosh | met |",
        "| pasted | 1.20 s (0 of 3 timed_out) |  |  | ≤ 2 s budget | met |",
    ]


def test_synthetic_records_have_150_word_abstracts_and_repeat(tmp_path):
    table.synthetic_records(50, tmp_path / "a.jsonl")
    table.synthetic_records(50, tmp_path / "b.jsonl")
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    records = [json.loads(line) for line in (tmp_path / "a.jsonl").open(encoding="utf-8")]
    assert len(records) == 50
    assert {len(r["abstract"].split()) for r in records} == {150}
    assert {len(r["title"].split()) for r in records} == {8}
    assert [r["id"] for r in records[:2]] == ["syn-0", "syn-1"]


def test_an_index_is_reused_while_its_records_are_unchanged(tmp_path):
    (tmp_path / "records-5.jsonl").write_text("{}\n" * 5, encoding="utf-8")
    work = table.Work(tmp_path, 5)
    assert work.records == 5
    target = tmp_path / "index"
    builds = tmp_path / "builds"
    script = (
        "import json, os, sys; os.makedirs(sys.argv[1]); open(sys.argv[2], 'a').write('x');"
        " print(json.dumps({'documents': 5}))"
    )
    command = [sys.executable, "-c", script, str(target), str(builds)]
    first = work.built("test", command, target, rebuild=False)
    assert (first["documents"], first["reused"]) == (5, False)
    assert work.built("test", command, target, rebuild=False)["reused"] is True
    assert work.built("test", command, target, rebuild=True)["reused"] is False
    (tmp_path / "records-5.jsonl").write_text("{}\n" * 6, encoding="utf-8")
    assert work.built("test", command, target, rebuild=False)["reused"] is False
    assert builds.read_text() == "xxx"


def test_multiplied_records_are_new_papers_with_the_same_words(tmp_path):
    source = tmp_path / "records.jsonl"
    records = [
        {
            "id": "2501.00001",
            "title": "sparse matrix vector kernels",
            "abstract": "we multiply a sparse matrix by a vector on GPUs",
            "year": 2025,
        },
        {"id": "2501.00002", "title": "graph neural networks", "abstract": "", "year": 2025},
    ]
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    table.multiplied(source, 3, tmp_path / "x3.jsonl")
    out = [json.loads(line) for line in (tmp_path / "x3.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in out] == [
        "2501.00001",
        "2501.00002",
        "2501.00001~1",
        "2501.00002~1",
        "2501.00001~2",
        "2501.00002~2",
    ]
    assert out[:2] == records  # the first copy as it was
    for copy in out[2:]:
        original = records[0] if copy["id"].startswith("2501.00001") else records[1]
        assert copy["year"] == original["year"]
        for field in ("title", "abstract"):
            assert sorted(copy[field].split()) == sorted(original[field].split())
    assert out[2]["abstract"] != records[0]["abstract"]  # shuffled (seed 42)


# --- benchmarks/everyday.py: drawing and judging on a tiny sample ---------------------------------------------

TOPIC = "Sparse matrix vector kernels"
TINY = [
    (f"{TOPIC} on GPUs", "We multiply a sparse matrix by a vector.", ["Andrea Vedaldi", "Wei Li"]),
    (f"Fast {TOPIC}", "Kernels for sparse matrix vector products.", ["Andrea Vedaldi", "Wei Li", "J.-P. Müller"]),
    ("Lithium batteries", "Li ion cells and a Schmidt trigger.", ["Anna Schmidt"]),
    (f"Tuned {TOPIC}", "Autotuning sparse kernels.", ["Anna Schmidt", "John Smith Jr."]),
    (f"{TOPIC} in mixed precision", "Half precision matrix vector kernels.", ["Kiri Tane"]),
    (f"Distributed {TOPIC}", "Sparse matrix vector kernels across nodes.", ["Kiri Tane"]),
]


def tiny_sample() -> everyday.Sample:
    return everyday.Sample.of(SimpleNamespace(title=t, abstract=a, authors=n) for t, a, n in TINY)


def hit(authors, title="A paper", abstract="", paper="2501.00001"):
    return SimpleNamespace(id=paper, title=title, abstract=abstract, authors=authors)


def results(hits=(), corrected=None, suggestion=None, relaxed=False):
    return SimpleNamespace(hits=list(hits), corrected=corrected, suggestion=suggestion, relaxed=relaxed)


def test_names_are_compared_folded_by_surname_and_first_name_or_initial():
    assert everyday.fold("Vlček") == "vlcek"
    assert [everyday.surname(n) for n in ("Yann LeCun", "John Smith Jr.", "Juan Navarro III", "Plato")] == [
        "LeCun",
        "Smith",
        "Navarro",
        "Plato",
    ]
    assert everyday.is_initial("Y.") and everyday.is_initial("J.-P.") and not everyday.is_initial("Jean-Pierre")
    assert everyday.same_person("Yann LeCun", "Y. LeCun") and everyday.same_person("Yann LeCun", "Yann Lecun")
    assert everyday.same_person("Jean-Pierre Müller", "J.-P. Muller")
    assert not everyday.same_person("Yann LeCun", "Yves LeCun")
    assert not everyday.same_person("Yann LeCun", "LeCun Yann")


def test_lists_are_drawn_from_the_sample_as_documented():
    sample = tiny_sample()
    rng = random.Random(1)
    absent = sorted(item["query"] for item in everyday.draw_absent_surnames(sample, rng, 10))
    assert absent == ["Müller", "Smith", "Tane", "Vedaldi"]  # Schmidt is in an abstract, Li is too short
    every = sorted(item["query"] for item in everyday.draw_surnames(sample, rng, 10))
    assert every == ["Müller", "Schmidt", "Smith", "Tane", "Vedaldi"]
    # Two papers each: Vedaldi (never mentioned), Li (mentioned by a paper no Li wrote),
    # Schmidt (mentioned only in a paper by Schmidt), Kiri Tane (never mentioned).
    assert everyday.draw_full_names(sample, rng, 10) == [{"query": "Wei Li", "papers": 2, "mentioned": 1}]
    topics = everyday.draw_topics(sample, random.Random(2), 3, share=1.0, least=5)
    assert topics and all(len(topic["query"].split()) == 4 for topic in topics)
    assert all(topic["query"] in "sparse matrix vector kernels" and topic["papers"] == 5 for topic in topics)
    assert all(len(sample.holders(topic["terms"])) >= 5 for topic in topics)
    assert everyday.draw_topics(sample, random.Random(2), 3, share=1.0, least=6) == []
    words = everyday.draw_absent_words(sample, ["neutrino", "kernel", "vedaldi", "batteries"])
    assert words == [{"query": "neutrino"}]
    assert everyday.draw_surnames(sample, random.Random(3), 3) == everyday.draw_surnames(sample, random.Random(3), 3)


def test_answers_are_judged_as_documented():
    surname, full, topic = everyday.judge_surname, everyday.judge_full_name, everyday.judge_topic
    assert surname(None, {"query": "Muller"}, results([hit(["Ann Lee", "J.-P. Müller"])])) is None
    assert surname(None, {"query": "Muller"}, results([hit(["Muller Ann"])])).startswith("first hit")
    assert (
        surname(None, {"query": "Muller"}, results([hit(["Jo Muller"])], corrected="mullet")) == "corrected to 'mullet'"
    )
    assert surname(None, {"query": "Muller"}, results(suggestion="mullet")) == "no hits (suggested 'mullet')"
    assert full(None, {"query": "Jean-Pierre Müller"}, results([hit(["J.-P. Muller"])])) is None
    assert full(None, {"query": "Wei Li"}, results([hit(["Wei Chen", "Xin Li"])])).startswith("first hit")
    item = {"query": "sparse matrix vector kernels", "terms": ["spars", "matrix", "vector", "kernel"]}
    holding = hit([], title="Sparse matrices", abstract="Vector kernels.")
    assert set(item["terms"]) <= everyday.terms(everyday._analyzer(), "sparse matrices, vector kernels")
    assert topic(None, item, results([holding] * 5)) is None
    assert topic(None, item, results([holding] * 4)) == "4 hits"
    lacking = hit([], title="Sparse matrices", abstract="Kernels.", paper="2501.00009")
    assert topic(None, item, results([holding, lacking] * 3)) == "hit 2 (2501.00009) lacks vector"
    assert everyday.judge_absent_word(None, {"query": "pion"}, results(suggestion="pin")) is None
    assert everyday.judge_absent_word(None, {"query": "pion"}, results(corrected="pin")) == "replaced by 'pin'"


def test_typos_are_judged_as_the_corrections_benchmark_does():
    class Index:
        def __init__(self, suggestion, held):
            self.suggestion, self.held = suggestion, held

        def search(self, query, exact=False, **options):
            if exact:
                return SimpleNamespace(total=self.held, relaxed=False)
            return results(suggestion=self.suggestion)

    item = {"query": "tranformer", "meant": "transformer"}
    assert everyday.judge_typo(Index("transformer", 1), item, None) is None
    assert everyday.judge_typo(Index("transformed", 1), item, None) == "wrong: transformed"
    assert everyday.judge_typo(Index(None, 1), item, None) == "missed"
    left_out = everyday.judge_typo(Index(None, 0), item, None)
    assert isinstance(left_out, everyday.LeftOut) and left_out == "nothing to find"
    assert everyday.rate_row("6 typos", 3, 4, None, 1) == ["6 typos (1 left out)", "4", "3", "75.0%", "", ""]
    assert everyday.rate_row("5 absent", 4, 4, 1.0)[-2:] == ["100%", "met"]
    assert everyday.rate_row("1 names", 97, 100, 0.98)[-2:] == ["≥ 98%", "NOT met"]


def test_drawn_lists_are_saved_and_read_back_with_their_seed(tmp_path):
    source = tmp_path / "listing.jsonl"
    source.write_text(
        "".join(
            json.dumps({"id": f"2501.0000{i}", "abs": "", "title": t, "summary": a, "authors": n}) + "\n"
            for i, (t, a, n) in enumerate(TINY)
        ),
        encoding="utf-8",
    )
    folder = tmp_path / "lists"
    lists = everyday.load_lists(folder, 7, source)
    assert sorted(p.name for p in folder.iterdir()) == sorted(f"{spec.key}.json" for spec in everyday.LISTS)
    assert sorted(item["query"] for item in lists["absent-surnames"]) == ["Müller", "Smith", "Tane", "Vedaldi"]
    assert lists["typos"][0] == {"query": "tranformer", "meant": "transformer"}
    # Saved with the same seed: read, the source not opened again.
    assert everyday.load_lists(folder, 7, tmp_path / "gone.jsonl") == lists
    saved = json.loads((folder / "random-surnames.json").read_text(encoding="utf-8"))
    assert (saved["seed"], saved["papers"]) == (7, len(TINY))
    again = everyday.load_lists(folder, 8, source)
    assert json.loads((folder / "random-surnames.json").read_text(encoding="utf-8"))["seed"] == 8
    assert sorted(map(str, again["random-surnames"])) == sorted(map(str, lists["random-surnames"]))


def test_scale_build_rows_judge_time_rate_and_memory_against_their_targets():
    import scale

    ours = {"documents": 2_800_000, "seconds": 1500.0, "peak_mb": 2100, "cpu": 2900.0}
    fts = {"documents": 2_800_000, "seconds": 300.0, "peak_mb": 30, "cpu": 290.0}
    wall, rate, memory = scale.build_rows(ours, fts)
    assert (wall.measured, wall.met) == ("25.0 min", True)
    assert (rate.measured, rate.ratio, rate.met) == ("1,867 records/s", "0.20×", False)
    assert (memory.measured, memory.met) == ("2,100 MB", True)


def test_scale_reads_a_processes_proportional_and_private_memory():
    import os

    import scale

    pss, private = scale.memory_of(os.getpid())
    assert 1 < private <= pss < 10_000
