"""The speed table's arithmetic and bookkeeping (``benchmarks/table.py``), on fixed numbers: no builds."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import table  # noqa: E402


def test_cold_row_is_measured_above_the_bare_start():
    row = table.above_bare("cold", 0.412, 0.031, 0.35)
    assert row.cells() == ["cold", "0.412 s (0.381 s above bare)", "0.031 s (python -c pass)", "13.3×",
                           "≤ 0.35 s above bare", "NOT met"]
    assert table.above_bare("cold", 0.380, 0.031, 0.35).met is True
    assert table.above_bare("cold", 0.380, 0.031, 0.35, 0.1234).measured == \
        "0.380 s (0.349 s above bare; CPU 0.123 s above bare)"
    assert table.above_bare("cold", 0.382, 0.031, 0.35).met is False


def test_ratio_bounds_at_most_and_at_least():
    query = table.compared("p50", 1.80, 0.30, "ms", "FTS5", 6, digits=2)
    assert query.cells() == ["p50", "1.80 ms", "0.30 ms (FTS5)", "6.00×", "≤ 6× FTS5", "met"]
    assert table.compared("p50", 1.81, 0.30, "ms", "FTS5", 6).met is False
    build = table.compared("build", 1200, 700, "records/s", "plain Whoosh", 1.65, at_least=True, digits=0)
    assert build.cells() == ["build", "1,200 records/s", "700 records/s (plain Whoosh)", "1.71×",
                             "≥ 1.65× plain Whoosh", "met"]
    assert table.compared("build", 1150, 700, "records/s", "plain Whoosh", 1.65, at_least=True).met is False
    info = table.compared("size", 30.0, 12.5, "MB", "FTS5")
    assert (info.ratio, info.target, info.met, info.cells()[-1]) == ("2.40×", "", None, "")


def test_table_is_markdown_with_one_line_per_row():
    rows = [table.compared("size", 30.0, 40.0, "MB", "plain Whoosh", 1.0),
            table.Row("pasted", "1.20 s (0 of 3 timed_out)", "", "", "≤ 2 s budget", True)]
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
    script = ("import json, os, sys; os.makedirs(sys.argv[1]); open(sys.argv[2], 'a').write('x');"
              " print(json.dumps({'documents': 5}))")
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
    records = [{"id": "2501.00001", "title": "sparse matrix vector kernels", "abstract": "we multiply a sparse "
                "matrix by a vector on GPUs", "year": 2025},
               {"id": "2501.00002", "title": "graph neural networks", "abstract": "", "year": 2025}]
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    table.multiplied(source, 3, tmp_path / "x3.jsonl")
    out = [json.loads(line) for line in (tmp_path / "x3.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in out] == ["2501.00001", "2501.00002", "2501.00001~1", "2501.00002~1",
                                      "2501.00001~2", "2501.00002~2"]
    assert out[:2] == records  # the first copy as it was
    for copy in out[2:]:
        original = records[0] if copy["id"].startswith("2501.00001") else records[1]
        assert copy["year"] == original["year"]
        for field in ("title", "abstract"):
            assert sorted(copy[field].split()) == sorted(original[field].split())
    assert out[2]["abstract"] != records[0]["abstract"]  # shuffled (seed 42)
