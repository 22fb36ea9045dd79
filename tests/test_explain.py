"""Each hit says why it ranks where it does; the hybrid weight is one parameter in every front end."""

import json

import pytest
from click.testing import CliRunner

from searchengine import build_index, open_index, semantic
from searchengine.cli import main
from searchengine.errors import QueryError
from searchengine.web import create_app

from conftest import CORPUS

needs_semantic = pytest.mark.skipif(not semantic.available(), reason="needs the semantic extra")


@pytest.fixture(scope="module")
def plain_index(tmp_path_factory):
    folder = tmp_path_factory.mktemp("explain-plain")
    build_index([CORPUS], folder)
    return folder


@pytest.fixture(scope="module")
def vector_index(tmp_path_factory):
    if not semantic.available():
        pytest.skip("needs the semantic extra")
    folder = tmp_path_factory.mktemp("explain-vectors")
    build_index([CORPUS], folder, vectors=True)
    return folder


def test_a_keyword_hit_explains_its_score_by_words_and_the_fields_matched(plain_index):
    hits = open_index(plain_index).search("SpMV GPU", limit=3).hits
    for hit in hits:
        assert hit.explain["keyword"] == round(hit.score, 4) and hit.explain["meaning"] is None
    assert hits[0].to_dict()["explain"] == {
        "keyword": round(hits[0].score, 4),
        "meaning": None,
        "fields": ["title", "abstract"],
    }
    by_author = open_index(plain_index).search("Qian", limit=1).hits[0]
    assert "authors" in by_author.explain["fields"]


@needs_semantic
def test_hybrid_parts_follow_the_weight_in_python_cli_and_api(vector_index):
    index = open_index(vector_index)
    for weight in (0.0, 0.25, 1.0):
        top = index.search("sparse kernels on GPUs", semantic_weight=weight, limit=1).hits[0]
        assert top.explain["keyword"] + top.explain["meaning"] == pytest.approx(top.score, abs=1e-3)
        assert top.explain["keyword"] <= 1 - weight + 1e-3 and top.explain["meaning"] <= weight + 1e-3
    shown = CliRunner().invoke(
        main, ["search", "sparse kernels on GPUs", "--index", str(vector_index), "--semantic-weight", "0.25", "--json"]
    )
    first = json.loads(shown.stdout)["hits"][0]["explain"]
    assert first["meaning"] <= 0.25 + 1e-3 and set(first) == {"keyword", "meaning", "fields"}
    text = CliRunner().invoke(main, ["search", "sparse kernels on GPUs", "--index", str(vector_index), "--limit", "1"])
    assert " (words 0." in text.stdout and " + meaning 0." in text.stdout
    client = create_app(index_dir=vector_index).test_client()
    body = client.get("/api/search?q=sparse+kernels+on+GPUs&semantic_weight=0.25&limit=1").get_json()
    assert body["hits"][0]["explain"] == first
    page = client.get("/?q=sparse+kernels+on+GPUs&semantic_weight=0.25").get_data(as_text=True)
    assert page.count('<details class="why">') == 10 and 'name="semantic_weight"' in page
    assert 'value="0.25"' in page and "semantic_weight=0.25" in page  # kept in the page's links


@pytest.mark.parametrize("value", ["2", "-0.1", "abc", "nan", "inf"])
def test_a_weight_out_of_range_is_a_clear_error(plain_index, value):
    response = create_app(index_dir=plain_index).test_client().get(f"/api/search?q=GPU&semantic_weight={value}")
    assert response.status_code == 400
    assert response.get_json()["error"] == f"semantic_weight must be a number from 0 to 1, not {value!r}"
    with pytest.raises(QueryError, match="semantic_weight must be a number from 0 to 1"):
        open_index(plain_index).search("GPU", semantic_weight=1.5)
    result = CliRunner().invoke(main, ["search", "GPU", "--index", str(plain_index), "--semantic-weight", "1.5"])
    assert result.exit_code == 2 and "1.5 is not in the range 0.0<=x<=1.0" in result.stderr
