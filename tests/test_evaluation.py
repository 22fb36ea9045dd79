"""Evaluation on a hand-made collection whose measures were worked out by hand."""

from __future__ import annotations

import builtins
import json

import pytest
from click.testing import CliRunner

from searchengine import InputError, SearchEngineError
from searchengine.cli import main
from searchengine.evaluation import evaluate, load_collection

from conftest import write

CORPUS = [
    {"_id": "d1", "title": "Solar panels", "text": "Solar panels convert sunlight into electricity."},
    {
        "_id": "d2",
        "title": "Wind turbines",
        "text": "Wind turbines convert the kinetic energy of moving air into electricity for the grid.",
    },
    {"_id": "d3", "title": "Hydro power", "text": "Dams store water."},
]
QUERIES = [
    {"_id": "q1", "text": "solar electricity"},
    {"_id": "q2", "text": "wind", "metadata": {"ignored": True}},
    {"_id": "q3", "text": "electricity"},
    {"_id": "q4", "text": "hydro"},  # not judged: not evaluated
]
QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td3\t0\nq2\td2\t2\nq3\td2\t1\nq3\td1\t0\n"

# Worked out by hand. The product's rankings: q1 (both words required) → [d1];
# q2 → [d2]; q3 → [d1, d2] (both abstracts have "electricity" once; d1's is
# shorter, so BM25 ranks it first).
#   q1: nDCG@10 1, AP 1, P@10 1/10, R@100 1
#   q2: nDCG@10 1, AP 1, P@10 1/10, R@100 1
#   q3: relevant d2 at rank 2: DCG = 1/log2(3) = 0.63093, IDCG = 1 → nDCG@10 0.63093;
#       AP = (1/2)/1 = 0.5; P@10 1/10; R@100 1
# Means over 3 judged queries: nDCG@10 (1 + 1 + 0.63093)/3 = 0.87698; MAP 2.5/3 = 0.83333.
EXPECTED = {"ndcg@10": 0.877, "map": 0.8333, "p@10": 0.1, "recall@100": 1.0, "queries": 3, "mode": "lexical"}


@pytest.fixture
def beir(tmp_path):
    write(tmp_path / "corpus.jsonl", "".join(json.dumps(d) + "\n" for d in CORPUS))
    write(tmp_path / "queries.jsonl", "".join(json.dumps(q) + "\n" for q in QUERIES))
    write(tmp_path / "qrels" / "test.tsv", QRELS)
    return tmp_path


def test_measures_on_a_three_document_collection(beir):
    assert evaluate(beir) == EXPECTED


def test_eval_command_json(beir):
    result = CliRunner().invoke(main, ["eval", str(beir), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == EXPECTED


def test_eval_command_text(beir):
    result = CliRunner().invoke(main, ["eval", str(beir)])
    assert result.exit_code == 0
    assert result.stdout.splitlines()[1:] == [
        "  nDCG@10     0.8770",
        "  MAP         0.8333",
        "  P@10        0.1000",
        "  Recall@100  1.0000",
    ]


def test_cranfield_layout_numbers_queries_by_position_and_maps_codes(tmp_path):
    crlf = "\r\n"
    docs = (
        crlf.join(
            [
                ".I 1",
                ".T",
                "wing in a slipstream .",
                ".A",
                "brenckman,m.",
                ".B",
                "j. ae. scs. 25, 1958, 324.",
                ".W",
                "wing in a slipstream .",
                "lift increase .",
                ".I 2",
                ".T",
                "heat transfer .",
                ".A",
                ".B",
                ".W",
                "heat transfer in",
                ".A line inside the abstract .",
                ".I 3",
                ".T",
                ".A",
                ".B",
                ".W",
                "",
            ]
        )
        + crlf
    )
    write(tmp_path / "cran.all.1400", docs)
    write(
        tmp_path / "cran.qry",
        crlf.join([".I 001", ".W", "slipstream lift", ".I 004", ".W", "heat", "transfer ."]) + crlf,
    )
    write(tmp_path / "cranqrel", "1 1 2\r\n1 2 -1\r\n2 2 1 \r\n2 3 5\r\n")
    collection = load_collection(tmp_path)
    assert collection.documents == [
        ("1", "wing in a slipstream .", "wing in a slipstream . lift increase ."),
        ("2", "heat transfer .", "heat transfer in .A line inside the abstract ."),
        ("3", "", ""),
    ]
    assert collection.queries == {"1": "slipstream lift", "2": "heat transfer ."}
    assert collection.qrels == {"1": {"1": 3, "2": 0}, "2": {"2": 4, "3": 0}}
    # q1 → [1] (gain 3 of 3): all 1.0; q2 → [2] (gain 4 of 4): all 1.0.
    assert evaluate(tmp_path) == {
        "ndcg@10": 1.0,
        "map": 1.0,
        "p@10": 0.1,
        "recall@100": 1.0,
        "queries": 2,
        "mode": "lexical",
    }


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({}, "not a test collection"),
        (
            {"corpus.jsonl": '{"_id": "d1", "title": "x"}\n{oops\n', "queries.jsonl": "", "qrels/test.tsv": ""},
            "corpus.jsonl:2: invalid JSON",
        ),
        (
            {
                "corpus.jsonl": '{"_id": "d1", "title": "x"}\n',
                "queries.jsonl": '{"_id": "q1", "text": "x"}\n',
                "qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\td1\n",
            },
            "test.tsv:2: expected",
        ),
        (
            {
                "corpus.jsonl": '{"_id": "d1", "title": "x"}\n',
                "queries.jsonl": '{"_id": "q1", "text": "x"}\n',
                "qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\td1\t0\n",
            },
            "no query has a relevant document",
        ),
    ],
)
def test_bad_collections_are_input_errors(tmp_path, files, message):
    for name, text in files.items():
        write(tmp_path / name, text)
    with pytest.raises(InputError, match=message):
        evaluate(tmp_path)


def test_eval_command_reports_bad_path_in_one_line(tmp_path):
    result = CliRunner().invoke(main, ["eval", str(tmp_path / "missing")])
    assert result.exit_code == 1
    assert result.stderr == f"Error: {tmp_path / 'missing'}: not a folder (a test collection is a folder)\n"


def test_missing_evaluator_says_how_to_install_it(beir, monkeypatch):
    real_import = builtins.__import__

    def no_pytrec_eval(name, *args, **kwargs):
        if name == "pytrec_eval":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pytrec_eval)
    with pytest.raises(SearchEngineError, match=r"pip install 'searchengine\[eval\]'"):
        evaluate(beir)
