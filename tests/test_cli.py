import json
import shutil

import pytest
from click.testing import CliRunner

from searchengine.cli import main

from conftest import CORPUS, write

CB_SPMV = "CB-SpMV:A Data Aggregating and Balance Algorithm for Cache-Friendly Block-Based SpMV on GPUs"


@pytest.fixture
def runner():
    return CliRunner()


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A fresh directory holding a copy of the corpus, as in a new checkout."""
    shutil.copytree(CORPUS, tmp_path / "corpus")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SEARCHENGINE_INDEX", raising=False)
    return tmp_path


def test_first_search_builds_the_index_and_says_so(runner, workdir):
    result = runner.invoke(main, ["search", "SpMV GPU"])
    assert result.exit_code == 0
    assert result.stderr.splitlines()[0] == "No index in index/; building it from corpus/ ..."
    assert result.stderr.splitlines()[1].startswith("Indexed 24 documents in ")
    lines = result.stdout.splitlines()
    assert lines[0].startswith("1 hit for 'SpMV GPU' (")
    assert lines[2] == f"  1. {CB_SPMV}"
    assert lines[3] == "     2026 · cs.DC · Depei Qian"
    assert lines[4].startswith("     id t-30f1b8f5a2a1 · score ")
    again = runner.invoke(main, ["search", "SpMV GPU"])
    assert again.stderr == ""


def test_search_json_has_the_documented_keys(runner, workdir):
    result = runner.invoke(main, ["search", "GPU memory", "--json", "--limit", "2"])
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["query"] == "GPU memory" and data["total"] == 5 and len(data["hits"]) == 2
    assert set(data["hits"][0]) >= {"id", "title", "authors", "year", "categories", "score", "snippet"}
    assert data["hits"][0]["score"] >= data["hits"][1]["score"]


def test_search_words_need_no_quotes(runner, workdir):
    quoted = runner.invoke(main, ["search", "GPU memory", "--json", "--limit", "3"])
    unquoted = runner.invoke(main, ["search", "GPU", "--limit", "3", "memory", "--json"])
    assert unquoted.exit_code == 0
    assert json.loads(unquoted.stdout)["query"] == "GPU memory"
    assert json.loads(unquoted.stdout)["hits"] == json.loads(quoted.stdout)["hits"]


def test_indexing_a_folder_that_holds_the_index_skips_the_index(runner, workdir):
    for _ in range(2):
        result = runner.invoke(main, ["index", "corpus", "--index-dir", "corpus/idx"])
        assert result.exit_code == 0 and result.stderr == ""
        assert result.stdout.startswith("Indexed 24 documents into corpus/idx (24 records read, 0 skipped) in ")


def test_index_command_prints_a_summary_and_reports_bad_records(runner, workdir):
    write(workdir / "extra" / "bad.jsonl", '{"title": "Good record", "abstract": "Good text."}\n{broken\n')
    result = runner.invoke(main, ["index", "corpus", "extra", "--index-dir", "idx"])
    assert result.exit_code == 0
    assert (
        result.stderr
        == "extra/bad.jsonl:2: invalid JSON (Expecting property name enclosed in double quotes at column 2) (skipped)\n"
    )
    assert result.stdout.startswith("Indexed 25 documents into idx (25 records read, 1 skipped) in ")
    stats = runner.invoke(main, ["stats", "--json", "--index-dir", "idx"])
    assert json.loads(stats.stdout)["documents"] == 25


def test_index_notes_records_without_an_abstract(runner, workdir):
    write(
        workdir / "titles.jsonl",
        '{"id": "t-000000000001", "title": "Qubit routing"}\n{"id": "t-000000000002", "title": "Qubit maps"}\n',
    )
    result = runner.invoke(main, ["index", "titles.jsonl", "--index-dir", "idx"])
    assert result.exit_code == 0
    assert result.stderr == "Note: 2 records have no abstract; they are found by title and authors only\n"


def test_index_dir_comes_from_the_environment(runner, workdir, monkeypatch):
    monkeypatch.setenv("SEARCHENGINE_INDEX", str(workdir / "env-index"))
    assert runner.invoke(main, ["index"]).exit_code == 0
    assert (workdir / "env-index" / "CURRENT").exists()
    stats = runner.invoke(main, ["stats", "--json"])
    assert json.loads(stats.stdout)["documents"] == 24


def test_stats_json_reports_24_documents(runner, workdir):
    runner.invoke(main, ["index"])
    data = json.loads(runner.invoke(main, ["stats", "--json"]).stdout)
    assert data["documents"] == 24
    assert data["years"] == {"2026": 7, "2025": 6, "2024": 4, "2023": 5, "2022": 2}
    assert data["categories"]["cs.DC"] == 12


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["index", "no-such-path"], 1, "Error: no-such-path: no such file or directory\n"),
        (
            ["stats", "--index-dir", "nowhere"],
            1,
            (
                "Error: nowhere: no index here (given by --index-dir); build one "
                "with 'searchengine index PATHS --index-dir nowhere'\n"
            ),
        ),
        (
            ["search", "   "],
            1,
            (
                "Error: the query is empty: give query text or a filter, or sort by newest, "
                "oldest or title to list every paper\n"
            ),
        ),
        (
            ["search", "interpretability~5"],
            1,
            (
                "Error: 'interpretability~5': the edit distance of a fuzzy word "
                "must be 0, 1 or 2 (write e.g. interpretability~2)\n"
            ),
        ),
        (
            ["search", '"sparse matrix"~3'],
            1,
            (
                "Error: '\"sparse matrix\"~3': proximity search is not supported; "
                "without the ~ the quotes find the exact phrase, and without the "
                "quotes the words are found anywhere in a paper\n"
            ),
        ),
        (["search", "GPU", "--limit", "0"], 2, None),
        (["search"], 2, None),
        (["frobnicate"], 2, None),
    ],
)
def test_errors_are_one_line_with_the_right_exit_code(runner, workdir, args, code, message):
    result = runner.invoke(main, args)
    assert result.exit_code == code
    assert "Traceback" not in result.output
    if message is not None:
        assert result.stderr.endswith(message)


def test_damaged_index_is_an_error_not_a_traceback(runner, workdir):
    (workdir / "index" / "gen-x").mkdir(parents=True)
    (workdir / "index" / "CURRENT").write_text("gen-x\n")
    result = runner.invoke(main, ["search", "GPU"])
    assert result.exit_code == 3
    assert result.stderr == (
        "Error: index: the index is damaged: gen-x/CHECKSUMS is missing; "
        "rebuild it with 'searchengine index PATH... --index-dir index'\n"
    )


def test_nothing_to_index_is_an_error(runner, workdir):
    write(workdir / "empty.txt", "")
    result = runner.invoke(main, ["index", "empty.txt"])
    assert result.exit_code == 1
    assert "nothing to index in empty.txt" in result.stderr


def test_python_dash_m_runs_the_same_command(workdir):
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "searchengine", "search", "SpMV GPU", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["hits"][0]["title"] == CB_SPMV


def test_show_prints_the_full_record(runner, workdir):
    result = runner.invoke(main, ["show", "t-30f1b8f5a2a1"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[:3] == [CB_SPMV, "Depei Qian", "2026 · cs.DC · id t-30f1b8f5a2a1"]
    assert lines[4].startswith("Sparse matrix-vector multiplication (SpMV) is crucial")
    data = json.loads(runner.invoke(main, ["show", "t-30f1b8f5a2a1", "--json"]).stdout)
    assert (data["id"], data["year"], data["authors"]) == ("t-30f1b8f5a2a1", 2026, ["Depei Qian"])
    # the file and line the record was read from, as given to `index` (the web API leaves it out)
    assert data["source"] == "corpus/depei-qian.txt:41"


def test_show_unknown_id_is_an_error(runner, workdir):
    runner.invoke(main, ["index"])
    result = runner.invoke(main, ["show", "nope"])
    assert (result.exit_code, result.stderr) == (1, "Error: no record with id 'nope'\n")


def test_show_looks_up_several_ids_and_names_each_missing_one(runner, workdir):
    runner.invoke(main, ["index"])
    (workdir / "ids.txt").write_text("# wanted\nt-031c0c403dfe\n\n  t-b275e169d4d6  \nmissing-2\n", encoding="utf-8")
    result = runner.invoke(
        main, ["show", "t-30f1b8f5a2a1", "missing-1", "t-30f1b8f5a2a1", "--ids-from", "ids.txt", "--json"]
    )
    assert result.exit_code == 1
    assert [r["id"] for r in json.loads(result.stdout)] == ["t-30f1b8f5a2a1", "t-031c0c403dfe", "t-b275e169d4d6"]
    assert result.stderr == "Error: no record with id 'missing-1'\nError: no record with id 'missing-2'\n"
    text = runner.invoke(main, ["show", "t-30f1b8f5a2a1", "t-031c0c403dfe"])
    assert text.exit_code == 0
    assert text.stdout.splitlines()[0] == CB_SPMV and "\n" + "-" * 40 + "\n" in text.stdout
    assert "Numerical stability analysis of large language models" in text.stdout
    bibtex = runner.invoke(main, ["show", "t-30f1b8f5a2a1", "t-031c0c403dfe", "--format", "bibtex"]).stdout
    assert bibtex.count("@misc{") + bibtex.count("@article{") == 2
    one = runner.invoke(main, ["show", "--ids-from", "-", "--json"], input="t-031c0c403dfe\n")
    assert [r["id"] for r in json.loads(one.stdout)] == ["t-031c0c403dfe"]  # from a file: always a list


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["show"], "give an id or DOI, or --ids-from FILE"),
        (["show", "--ids-from", "none.txt"], "'none.txt': No such file or directory"),
        (["show", "--ids-from", "blank.txt"], "Invalid value for --ids-from: blank.txt holds no id or DOI"),
        (
            ["show", "t-031c0c403dfe", "--json", "--format", "bibtex"],
            "--json and --format bibtex contradict each other",
        ),
        (["show", "--ids-from", "latin1.txt"], "latin1.txt, line 2: not UTF-8 text (invalid start byte at byte 5)"),
    ],
)
def test_show_without_ids_is_a_usage_error(runner, workdir, args, message):
    (workdir / "latin1.txt").write_bytes("abc\nMüller\n".encode("latin-1"))
    (workdir / "blank.txt").write_text("\n# nothing\n", encoding="utf-8")
    result = runner.invoke(main, args)
    assert result.exit_code == 2 and message in result.stderr


def test_similar_json_excludes_the_record(runner, workdir):
    runner.invoke(main, ["index"])
    data = json.loads(runner.invoke(main, ["similar", "t-30f1b8f5a2a1", "--json", "-n", "3"]).stdout)
    assert data["query"] == "similar:t-30f1b8f5a2a1"
    assert len(data["hits"]) == 3 and "t-30f1b8f5a2a1" not in [h["id"] for h in data["hits"]]
    assert data["hits"][0]["title"].startswith("DB-SpMSpV")


def test_search_exports_bibtex_and_csv(runner, workdir):
    import bibtexparser

    bib = runner.invoke(main, ["search", "SpMV GPU", "--format", "bibtex"])
    assert bib.exit_code == 0
    entries = bibtexparser.parse_string(bib.stdout).entries
    assert [e.key for e in entries] == ["qian2026cbspmva"]
    table = runner.invoke(main, ["search", "SpMV GPU", "--format", "csv"]).stdout.splitlines()
    assert table[0] == (
        "rank,id,title,authors,year,categories,score,"
        "url,pdf_url,doi,arxiv_doi,journal_ref,comments,license,submitted,updated,abstract"
    )
    assert table[1].startswith(f"1,t-30f1b8f5a2a1,{CB_SPMV},Depei Qian,2026,cs.DC,")


def test_contradicting_output_options_are_a_usage_error(runner, workdir):
    result = runner.invoke(main, ["search", "gpu", "--json", "--format", "csv"])
    assert result.exit_code == 2
    assert "--json and --format csv contradict each other" in result.stderr


def test_query_errors_and_suggestions_reach_the_terminal(runner, workdir):
    runner.invoke(main, ["index"])
    bad = runner.invoke(main, ["search", "auth:qian"])
    assert bad.exit_code == 1
    assert bad.stderr.startswith("Error: unknown field 'auth:'")
    typo = runner.invoke(main, ["search", "sparce matrix"])
    assert typo.stdout.splitlines()[:2] == [
        f"3 hits for 'sparse matrix' ({_took(typo.stdout)} ms)",
        "Showing results for 'sparse matrix'; search instead for 'sparce matrix' with --exact.",
    ]
    literal = runner.invoke(main, ["search", "sparce matrix", "--exact"])
    assert literal.stdout.splitlines()[1:4] == [
        "Did you mean: sparse matrix",
        "No paper has every word of the query; showing papers with some of them.",
        "'sparce' matched no paper.",
    ]
    relaxed = runner.invoke(main, ["search", "SpMV zebra"])
    assert relaxed.stdout.splitlines()[1:3] == [
        "No paper has every word of the query; showing papers with some of them.",
        "'zebra' matched no paper.",
    ]


def _took(stdout: str) -> str:
    """The milliseconds a table's heading reports."""
    return stdout.split(" ms)", 1)[0].rsplit("(", 1)[1]


@pytest.mark.parametrize("pointer", [b"", b"\xfe\xff\x00garbage", None], ids=["empty", "binary", "missing"])
def test_a_damaged_pointer_is_an_error_and_never_costs_the_index(runner, workdir, pointer):
    assert runner.invoke(main, ["index"]).exit_code == 0
    generations = sorted(p.name for p in (workdir / "index").glob("gen-*"))
    current = workdir / "index" / "CURRENT"
    if pointer is None:
        current.unlink()
    else:
        current.write_bytes(pointer)
    for args in (["search", "GPU"], ["stats"], ["index", "--update", "corpus"], ["remove", "t-30f1b8f5a2a1"]):
        result = runner.invoke(main, args)
        assert result.exit_code == 3, (args, result.output)
        assert "CURRENT" in result.stderr and "Traceback" not in result.output
        assert sorted(p.name for p in (workdir / "index").glob("gen-*")) == generations
    # A full rebuild repairs it.
    assert runner.invoke(main, ["index"]).exit_code == 0
    assert json.loads(runner.invoke(main, ["stats", "--json"]).stdout)["documents"] == 24


def test_a_named_index_directory_is_never_built_implicitly(runner, workdir):
    result = runner.invoke(main, ["search", "GPU", "--index-dir", "idnex"])
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: idnex: no index here (given by --index-dir); build one with "
        "'searchengine index PATHS --index-dir idnex'\n"
    )
    assert not (workdir / "idnex").exists()


def test_a_page_past_the_end_says_so_with_the_total(runner, workdir):
    runner.invoke(main, ["index"])
    result = runner.invoke(main, ["search", "GPU", "--limit", "5", "--page", "9"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].startswith("12 hits for 'GPU' (")
    assert lines[-1] == "Page 9 is past the end: there are 3 pages"
    one = runner.invoke(main, ["search", "SpMV GPU", "--page", "2"]).stdout.splitlines()
    assert one[0].startswith("1 hit for 'SpMV GPU' (") and one[-1] == "Page 2 is past the end: there is 1 page"


def test_an_empty_index_dir_is_a_usage_error(runner, workdir):
    result = runner.invoke(main, ["search", "gpu", "--index-dir", ""])
    assert result.exit_code == 2
    assert "Invalid value for '--index' / '--index-dir': the index location must not be empty" in result.output
    assert not (workdir / "CURRENT").exists()


def test_jobs_is_capped(runner, workdir):
    result = runner.invoke(main, ["index", "corpus", "--index-dir", "ix", "--jobs", "1000"])
    assert result.exit_code == 2
    assert "1000 is not in the range 1<=x<=64" in result.output


def test_search_exports_ris_with_crlf_line_ends(runner, workdir):
    result = runner.invoke(main, ["search", "SpMV GPU", "--format", "ris"])
    assert result.exit_code == 0
    assert result.stdout_bytes.split(b"\r\n")[:5] == [
        b"TY  - GEN",
        b"ID  - t-30f1b8f5a2a1",
        f"TI  - {CB_SPMV}".encode(),
        b"AU  - Qian, Depei",
        b"PY  - 2026",
    ]
    assert result.stdout_bytes.endswith(b"KW  - cs.DC\r\nER  - \r\n")
    shown = runner.invoke(main, ["show", "t-30f1b8f5a2a1", "--format", "ris"])
    assert shown.stdout_bytes == result.stdout_bytes


def test_search_all_pages_past_one_page_in_the_search_order(runner, workdir):
    paged = [
        json.loads(runner.invoke(main, ["search", "gpu", "--sort", "oldest", "--json", "--page", str(page)]).stdout)
        for page in (1, 2)
    ]
    assert paged[0]["total"] == 12 and len(paged[0]["hits"]) == 10
    ids = [hit["id"] for page in paged for hit in page["hits"]]
    table = runner.invoke(main, ["search", "gpu", "--sort", "oldest", "--all", "--format", "csv"])
    assert (table.exit_code, table.stderr) == (0, "")
    rows = table.stdout.splitlines()
    assert len(rows) == 13 and [row.split(",")[1] for row in rows[1:]] == ids
    assert [row.split(",")[0] for row in rows[1:]] == [str(rank) for rank in range(1, 13)]
    lines = runner.invoke(main, ["search", "gpu", "--sort", "oldest", "--all", "--format", "jsonl"]).stdout
    assert [json.loads(line)["id"] for line in lines.splitlines()] == ids


def test_search_all_says_on_stderr_when_the_cap_cut_the_export(runner, workdir, monkeypatch):
    from searchengine import limits

    monkeypatch.setattr(limits, "EXPORT_LIMIT", 5)
    result = runner.invoke(main, ["search", "gpu", "--all", "--format", "ris"])
    assert result.exit_code == 0
    assert result.stdout.count("ER  - ") == 5
    assert result.stderr.splitlines()[-1] == (
        "Exported the first 5 of 12 hits: an export holds at most 5; narrow the search with filters for the rest"
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--all"], "Error: --all exports with --format bibtex, csv, jsonl, ris, not table"),
        (["--all", "--json"], "Error: --all exports with --format bibtex, csv, jsonl, ris, not json"),
        (
            ["--all", "--format", "csv", "--page", "2", "--limit", "5"],
            "Error: --all exports every hit: --page, --limit cannot be given with it",
        ),
    ],
)
def test_search_all_with_paging_or_a_display_format_is_a_usage_error(runner, workdir, options, message):
    result = runner.invoke(main, ["search", "gpu", *options])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == message


def test_a_long_author_list_is_cut_in_the_table_and_whole_in_json(runner, tmp_path):
    authors = [f"Author Number{n:04d}" for n in range(1, 3006)]
    record = {
        "id": "big-1",
        "title": "A detector paper",
        "abstract": "Muon detector calibration.",
        "authors": authors,
        "year": 2024,
    }
    path = write(tmp_path / "big.jsonl", json.dumps(record) + "\n")
    assert runner.invoke(main, ["index", str(path), "--index", str(tmp_path / "ix")]).exit_code == 0
    table = runner.invoke(main, ["search", "detector", "--index", str(tmp_path / "ix")])
    shown = ", ".join(authors[:10])
    assert f"     2024 · - · {shown} … and 2,995 more" in table.stdout.splitlines()
    data = json.loads(runner.invoke(main, ["search", "detector", "--json", "--index", str(tmp_path / "ix")]).stdout)
    assert data["hits"][0]["authors"] == authors


def test_the_update_summary_writes_counts_with_thousands_separators(runner, tmp_path):
    path = write(
        tmp_path / "many.jsonl",
        "".join(
            json.dumps({"id": f"m{n}", "title": f"Record {n}", "abstract": "Detector calibration."}) + "\n"
            for n in range(1000)
        ),
    )
    index = str(tmp_path / "ix")
    assert runner.invoke(main, ["index", str(CORPUS), "--index", index]).exit_code == 0
    result = runner.invoke(main, ["index", "--update", str(path), "--index", index, "--quiet"])
    assert result.stdout.startswith(
        f"Updated {index}: 1,000 added, 0 replaced, 0 skipped (1,000 records read); 1,024 documents in "
    )


def test_show_prints_links_identifiers_and_finds_a_record_by_doi(runner, tmp_path):
    write(
        tmp_path / "linked.jsonl",
        json.dumps(
            {
                "id": "0705.1234",
                "title": "Magnons",
                "authors": ["A. One"],
                "year": 2007,
                "categories": ["cond-mat"],
                "abstract": "Spin waves.",
                "doi": "10.1103/PhysRevB.76.125117",
                "journal_ref": "Phys. Rev. B 76, 125117",
                "comments": "12 pages",
                "license": "http://creativecommons.org/licenses/by/4.0/",
            }
        )
        + "\n",
    )
    assert (
        runner.invoke(main, ["index", str(tmp_path / "linked.jsonl"), "--index-dir", str(tmp_path / "ix")]).exit_code
        == 0
    )
    expected = [
        "Magnons",
        "A. One",
        "2007 · cond-mat · id 0705.1234",
        "Abstract page: https://arxiv.org/abs/0705.1234",
        "PDF: https://arxiv.org/pdf/0705.1234",
        "DOI: 10.1103/PhysRevB.76.125117",
        "arXiv DOI: 10.48550/arXiv.0705.1234",
        "Journal: Phys. Rev. B 76, 125117",
        "Comments: 12 pages",
        "License: http://creativecommons.org/licenses/by/4.0/",
        "",
        "Spin waves.",
    ]
    for name in ("0705.1234", "https://doi.org/10.1103/physrevb.76.125117", "10.48550/arXiv.0705.1234"):
        result = runner.invoke(main, ["show", name, "--index-dir", str(tmp_path / "ix")])
        assert (result.exit_code, result.stdout.splitlines()) == (0, expected), name
    ris = runner.invoke(main, ["show", "0705.1234", "--format", "ris", "--index-dir", str(tmp_path / "ix")]).stdout
    assert "DO  - 10.1103/PhysRevB.76.125117\nJO  - Phys. Rev. B 76, 125117\n" in ris
    missing = runner.invoke(main, ["show", "10.1103/PhysRevB.00.000000", "--index-dir", str(tmp_path / "ix")])
    assert (missing.exit_code, missing.stderr) == (1, "Error: no record with id '10.1103/PhysRevB.00.000000'\n")


def test_search_where_there_is_no_index_nor_corpus_says_how_to_build_one(runner, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SEARCHENGINE_INDEX", raising=False)
    result = runner.invoke(main, ["search", "gpu"])
    assert (result.exit_code, result.stderr) == (
        1,
        (
            "Error: no index in index/ and no corpus/ folder here to build one from: build one with "
            "'searchengine index PATHS' (files or folders of papers), or name one with --index-dir LOCATION\n"
        ),
    )
    assert not (tmp_path / "index").exists()
    given = runner.invoke(main, ["search", "gpu", "--index-dir", "papers-ix"])
    assert (given.exit_code, given.stderr) == (
        1,
        (
            "Error: papers-ix: no index here (given by --index-dir); build one with "
            "'searchengine index PATHS --index-dir papers-ix'\n"
        ),
    )
    from_env = runner.invoke(main, ["show", "x"], env={"SEARCHENGINE_INDEX": "env-ix"})
    assert from_env.stderr == (
        "Error: env-ix: no index here (given by SEARCHENGINE_INDEX); build one with "
        "'searchengine index PATHS --index-dir env-ix'\n"
    )


def test_output_in_an_encoding_without_a_character_prints_a_replacement(tmp_path):
    import os
    import subprocess
    import sys

    write(
        tmp_path / "p.jsonl",
        json.dumps(
            {
                "id": "2101.00001",
                "title": "Šrámek’s kernels",
                "authors": ["Tomáš Vinař"],
                "year": 2021,
                "categories": ["cs.DC"],
            }
        )
        + "\n",
    )
    env = dict(os.environ, PYTHONIOENCODING="latin-1")
    command = [sys.executable, "-m", "searchengine"]
    assert (
        subprocess.run(
            command + ["index", "p.jsonl", "--index-dir", "ix"], cwd=tmp_path, env=env, capture_output=True, timeout=120
        ).returncode
        == 0
    )
    result = subprocess.run(
        command + ["search", "kernels", "--index-dir", "ix"], cwd=tmp_path, env=env, capture_output=True, timeout=120
    )
    assert (result.returncode, result.stderr) == (0, b"")
    lines = result.stdout.decode("latin-1").splitlines()
    assert lines[2:4] == ["  1. ?rámek?s kernels", "     2021 · cs.DC · Tomá? Vina?"]
    # JSON keeps every character, as \\u escapes
    shown = subprocess.run(
        command + ["show", "2101.00001", "--json", "--index-dir", "ix"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        timeout=120,
    )
    data = json.loads(shown.stdout.decode("latin-1"))
    assert (data["title"], data["authors"]) == ("Šrámek’s kernels", ["Tomáš Vinař"])
    assert b"\\u0160r\\u00e1mek" in shown.stdout


def test_a_missing_index_is_named_with_the_option_as_typed(tmp_path):
    import subprocess
    import sys

    for option in ("--index", "--index-dir"):
        result = subprocess.run(
            [sys.executable, "-m", "searchengine", "search", "gpu", option, "nope"],
            cwd=tmp_path,
            capture_output=True,
            timeout=120,
        )
        assert (result.returncode, result.stderr.decode()) == (
            1,
            f"Error: nope: no index here (given by {option}); build one with 'searchengine index PATHS "
            f"{option} nope'\n",
        )


def test_a_reader_that_goes_away_ends_the_command_with_status_141(workdir):
    import subprocess
    import sys

    command = [sys.executable, "-m", "searchengine"]
    assert subprocess.run(command + ["index"], capture_output=True, timeout=120).returncode == 0
    process = subprocess.Popen(command + ["search", "gpu", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()  # as `| head` does once it has its lines
    assert (process.wait(timeout=120), process.stderr.read()) == (141, b"")
    process.stderr.close()
    # an export larger than the pipe holds, whose reader stops after a few bytes
    write(
        workdir / "many.jsonl",
        "".join(
            json.dumps({"id": f"2101.{n:05d}", "title": f"Paper {n}", "abstract": "words " * 400}) + "\n"
            for n in range(200)
        ),
    )
    assert (
        subprocess.run(
            command + ["index", "many.jsonl", "--index-dir", "many"], capture_output=True, timeout=120
        ).returncode
        == 0
    )
    process = subprocess.Popen(
        command + ["search", "words", "--all", "--format", "ris", "--index-dir", "many"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout.read(10) == b"TY  - UNPB"
    process.stdout.close()
    assert (process.wait(timeout=120), process.stderr.read()) == (141, b"")
    process.stderr.close()


def test_a_category_no_paper_has_is_named_in_a_note(runner, workdir):
    result = runner.invoke(main, ["search", "gpu", "--category", "cs.XX"])
    assert result.exit_code == 0
    assert result.stdout.splitlines()[1:2] == ["Note: no paper has category cs.XX"]
    data = json.loads(runner.invoke(main, ["search", "gpu cat:cs.XX", "--json"]).stdout)
    assert (data["total"], data["notes"]) == (0, ["no paper has category cs.XX"])
    # a category some paper has, with no hit for the words: no such note
    known = json.loads(runner.invoke(main, ["search", "zebrafish", "--category", "cs.DC", "--json"]).stdout)
    assert (known["total"], known["notes"]) == (0, [])


def test_a_cut_off_gzip_file_fails_a_rebuild_which_is_not_published(runner, tmp_path):
    import gzip

    lines = "".join(
        json.dumps({"id": f"2101.{n:05d}", "title": f"Paper number {n}", "abstract": "x" * 400 + str(n)}) + "\n"
        for n in range(1, 301)
    )
    whole = gzip.compress(lines.encode(), compresslevel=1)
    old = write(tmp_path / "old.jsonl", lines[: lines.index("2101.00021") - 8])  # the first 20 records
    assert runner.invoke(main, ["index", str(old), "--index-dir", str(tmp_path / "ix")]).exit_code == 0
    [generation] = [p.name for p in (tmp_path / "ix").iterdir() if p.name.startswith("gen-")]
    cut = write(tmp_path / "cut.jsonl.gz", "")
    cut.write_bytes(whole[: len(whole) // 2])
    import zlib

    kept = zlib.decompressobj(31).decompress(cut.read_bytes()).count(b"\n")  # whole lines before the cut
    assert 50 < kept < 250
    result = runner.invoke(main, ["index", str(cut), "--index-dir", str(tmp_path / "ix")])
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr.splitlines() == [
        f"{cut}:{kept + 1}: the file ended early after {kept} records: the compressed data ends before its "
        "end-of-stream marker in this line; the rest of the file is missing",
        f"Error: {cut} stopped in line {kept + 1}: the rebuild was not published, the index in "
        f"{tmp_path / 'ix'} is as it was (run it again when the whole input can be read)",
    ]
    # the old generation is still the current one, whole; the unfinished one is gone
    assert [p.name for p in (tmp_path / "ix").iterdir() if p.name.startswith("gen-")] == [generation]
    stats = runner.invoke(main, ["stats", "--index-dir", str(tmp_path / "ix"), "--json"])
    assert json.loads(stats.stdout)["documents"] == 20
    assert runner.invoke(main, ["index", str(cut), "--index-dir", str(tmp_path / "ix"), "--json"]).exit_code == 1
    # an update keeps the whole records read before the cut, and fails
    result = runner.invoke(main, ["index", str(cut), "--update", "--index-dir", str(tmp_path / "ix")])
    assert result.exit_code == 1
    assert result.stdout.startswith(
        f"Updated {tmp_path / 'ix'}: {kept - 20} added, 20 replaced, 1 skipped ({kept} records read); "
        f"{kept} documents in "
    )
    assert result.stderr.splitlines() == [
        f"{cut}:{kept + 1}: the file ended early after {kept} records: the compressed data ends before its "
        "end-of-stream marker in this line; the rest of the file is missing",
        f"Error: {cut} ended early, in line {kept + 1}: the records after it are missing from the index",
    ]
    data = runner.invoke(main, ["index", str(cut), "--update", "--index-dir", str(tmp_path / "ix"), "--json"])
    assert data.exit_code == 1 and json.loads(data.stdout)["cut_off"] == [result.stderr.splitlines()[0]]
    # the same file whole, and two members one after another, read cleanly
    cut.write_bytes(whole + gzip.compress(b'{"id": "2101.99999", "title": "Second member", "abstract": "y"}\n'))
    again = runner.invoke(main, ["index", str(cut), "--index-dir", str(tmp_path / "ix")])
    assert (again.exit_code, again.stderr) == (0, "")
    assert again.stdout.startswith(f"Indexed 301 documents into {tmp_path / 'ix'} (301 records read, 0 skipped)")


def test_ctrl_c_while_indexing_stops_at_once_and_keeps_the_previous_index(tmp_path, shared_data):
    import os
    import signal
    import subprocess
    import sys
    import time

    command = [sys.executable, "-m", "searchengine", "index"]
    ix = tmp_path / "ix"
    assert (
        subprocess.run(command + [str(CORPUS), "--index-dir", str(ix)], capture_output=True, timeout=120).returncode
        == 0
    )
    # A terminal's Ctrl-C: SIGINT to the whole process group, workers included.
    running = subprocess.Popen(
        command + [str(shared_data / "arxiv" / "arxiv_listing_sample.jsonl.gz"), "--index-dir", str(ix), "--jobs", "2"],
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(6)  # past start-up, into reading and indexing with the workers
    assert running.poll() is None
    pressed = time.monotonic()
    os.killpg(running.pid, signal.SIGINT)
    out, err = running.communicate(timeout=60)
    assert time.monotonic() - pressed < 3
    assert (running.returncode, out, err.decode()) == (
        130,
        b"",
        f"\nInterrupted: nothing was written; the previous index in {ix} is intact\n",
    )
    after = subprocess.run(
        [sys.executable, "-m", "searchengine", "stats", "--index-dir", str(ix), "--json"],
        capture_output=True,
        timeout=120,
    )
    assert json.loads(after.stdout)["documents"] == 24
    assert len([p for p in ix.iterdir() if p.name.startswith("gen-")]) == 1  # the new one was removed


def test_the_index_progress_bar_shows_percentage_eta_records_and_the_commit(tmp_path):
    import io
    import re
    import time

    from searchengine.cli.progress import IndexProgress
    from searchengine.readers import read_records

    path = write(
        tmp_path / "many.jsonl",
        "".join(json.dumps({"title": f"Paper {n}", "abstract": "w " * 200}) + "\n" for n in range(2000)),
    )
    stream = io.StringIO()
    bar = IndexProgress(path.stat().st_size, stream)
    bar.bar.mininterval = 0  # draw every update
    for number, _ in enumerate(read_records([path], []), start=1):
        bar(1)
        if number == 1000:
            half = stream.getvalue().split("\r")[-1]
    bar(0)
    time.sleep(0.7)  # the commit's timer redraws its elapsed time
    bar.close()
    frames = [frame for frame in stream.getvalue().split("\r") if frame.strip()]
    # half-way through the file: the share of its bytes read (looked at every 64 lines), an ETA
    # and the records read
    lines = path.read_bytes().splitlines(keepends=True)
    share = round(100 * sum(map(len, lines[:896])) / path.stat().st_size)  # the look before record 897
    assert re.fullmatch(rf"Reading: +{share}%\|#+[#\d ]*\| [\d.]+k/858k \[00:0\d, ETA 00:0\d, 960 records\]", half), (
        half
    )
    assert re.fullmatch(
        r"Committing: 00:0\d, 2,000 records read; merging and writing the index",
        [f for f in frames if f.startswith("Committing")][-1],
    )
    assert len([f for f in frames if f.startswith("Committing")]) >= 2


def test_without_a_known_size_the_progress_bar_counts_records(tmp_path):
    import io

    from searchengine.cli.progress import IndexProgress

    stream = io.StringIO()
    bar = IndexProgress(None, stream)
    bar.bar.mininterval = 0
    for _ in range(5):
        bar(1)
    bar.close()
    frames = [frame for frame in stream.getvalue().split("\r") if frame.strip()]
    assert frames[-1].startswith("Reading: 5.00 records [")


def test_off_a_terminal_index_says_every_phase_with_the_time_left(monkeypatch):
    import io

    from searchengine.cli.progress import ProgressLines, encoding_estimate
    from searchengine.readers import POSITION

    now = [0.0]
    stream = io.StringIO()
    lines = ProgressLines(10_000_000, stream, every=30, clock=lambda: now[0], ticker=False)
    now[0] = 10.0
    for _ in range(63):
        lines(1)
    assert stream.getvalue() == ""  # under 30 s: nothing yet
    now[0] = 40.0
    monkeypatch.setattr(POSITION, "current", POSITION.current + 2_500_000)
    lines(1)
    # A quarter in 40 s: 120 s of reading left, and the commit's estimate (0.52 of the reading's 160 s).
    assert stream.getvalue().splitlines() == [
        "Reading and analysing: 25% of 10.0 MB, 64 records, 40 s so far; "
        "about 3 min left (2 min reading, 83 s merging and committing)"
    ]
    now[0] = 100.0
    lines(0)
    now[0] = 130.0
    said = lines.commit_line()
    now[0] = 140.0
    lines.phase("committing")
    now[0] = 170.0
    late = lines.commit_line()
    lines.close()
    assert stream.getvalue().splitlines()[1:] == [
        "Read 64 records in 2 min; merging the index (about 52 s with committing)",
        "Merged in 40 s; committing the new index",
    ]
    assert (said, late) == ("Merging: 30 s so far; about 22 s left", "Committing: 30 s so far; longer than estimated")
    assert encoding_estimate(74_728, cores=2) == (
        "Encoding vectors of 74,728 records: about 13 min (93 records/s on 2 cores)"
    )


def test_off_a_terminal_the_vector_graph_says_its_progress_after_encoding(monkeypatch, capsys):
    import io
    import time

    from searchengine.cli.progress import EncodeProgress

    now = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    stream = io.StringIO()
    progress = EncodeProgress(stream, None)
    progress.graph(0, 3_000_000)
    now[0] += 10
    progress.graph(100_000, 3_000_000)  # under 30 s since the last line: nothing
    now[0] += 50
    progress.graph(600_000, 3_000_000)  # a fifth in 60 s: 4 min left
    progress.close()
    assert capsys.readouterr().err.splitlines() == [
        "Building the vector graph of 3,000,000 documents",
        "Vector graph: 600,000 of 3,000,000 added, about 4 min left",
    ]
    assert stream.getvalue() == ""  # no bar off a terminal


def test_a_short_run_off_a_terminal_says_nothing_but_its_summary(runner, workdir):
    result = runner.invoke(main, ["index", "corpus", "--index", "idx"])
    assert result.exit_code == 0 and result.stderr == ""
