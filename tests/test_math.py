"""Formulas on the web page: a record's inline TeX as MathML, its text kept for search and exports."""

import json

import pytest

from searchengine import build_index, open_index
from searchengine.readers import read_records
from searchengine.web import create_app
from searchengine.web.mathml import formula, with_math

from conftest import write

TITLE = r"Sorting in $O(n^2)$ time with $\frac{a}{b}$ ratios"
ABSTRACT = r"We bound the cost by $\mathcal{O}(n \log n)$ and $\alpha$-stable laws, so $x$ grows."


@pytest.fixture(scope="module")
def math_index(tmp_path_factory):
    folder = tmp_path_factory.mktemp("math")
    path = folder / "math.jsonl"
    path.write_text(
        json.dumps({"id": "2101.00001", "title": TITLE, "abstract": ABSTRACT, "year": 2021}) + "\n"
        + json.dumps({"id": "2101.00002", "title": "Plain sorting", "abstract": "No formula.", "year": 2021}) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    build_index([path], folder / "idx")
    return folder / "idx"


def test_the_record_keeps_its_tex_and_its_text():
    records = list(read_records([write_records()], []))
    record = records[0]
    assert record.title == "Sorting in O(n^2) time with a/b ratios"
    assert record.tex == {"title": TITLE, "abstract": ABSTRACT}
    assert records[1].tex == {}


def write_records():
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp())
    return write(
        folder / "r.jsonl",
        json.dumps({"title": TITLE, "abstract": ABSTRACT}) + "\n" + json.dumps({"title": "Plain"}) + "\n",
    )


def test_formulas_become_mathml_and_the_rest_stays_marked_text():
    shown = with_math("Sorting in O(n^2) time with a/b ratios", [(0, 7)], TITLE)
    assert shown.startswith("<mark>Sorting</mark> in <math ")
    assert "<mfrac><mrow><mi>a</mi></mrow><mrow><mi>b</mi></mrow></mfrac>" in shown
    assert shown.endswith("</math> ratios")
    assert shown.count("<math ") == 2
    # Each formula's text found in order, a letter only as a word of its own (not the "x" of "exp").
    snippet = "exp bound the cost by 𝒪(n log n) and α-stable laws, so x grows."
    drawn = with_math(snippet, [], ABSTRACT)
    assert drawn.count("<math ") == 3 and drawn.startswith("exp bound") and drawn.endswith("</math> grows.")
    # A record without math is the marked text as before.
    assert with_math("a <b>", [(0, 1)], None) == "<mark>a</mark> &lt;b&gt;"


@pytest.mark.parametrize(
    "tex",
    [
        r"\text{<script>alert(1)</script>}",  # latex2mathml would pass the element through
        r"\frac{a",  # unbalanced
        r"\unknowncmd x",  # a command it does not know
    ],
)
def test_a_formula_that_is_not_plain_mathml_keeps_its_text(tex):
    assert formula(tex) is None
    assert "<math" not in with_math("see q here", [], f"see ${tex}$ here")


def test_links_and_styles_are_dropped_from_mathml():
    assert formula(r"\style{color:red}{x}") == (
        '<math xmlns="http://www.w3.org/1998/Math/MathML" display="inline"><mrow><mrow><mi>x</mi></mrow></mrow></math>'
    )
    assert "href" not in formula(r"\href{javascript:alert(1)}{x}")


def test_both_the_page_and_the_stored_record_keep_the_tex(math_index):
    index = open_index(math_index)
    assert index.record("2101.00001").tex == {"title": TITLE, "abstract": ABSTRACT}
    hits = {hit.id: hit for hit in index.search("sorting").hits}
    assert {key: bool(hit.tex) for key, hit in hits.items()} == {"2101.00001": True, "2101.00002": False}
    # The JSON keeps the text that is searched and exported.
    shown = hits["2101.00001"].to_dict()
    assert shown["title"] == "Sorting in O(n^2) time with a/b ratios" and "tex" not in shown
    html = create_app(index_dir=math_index).test_client().get("/?q=sorting").get_data(as_text=True)
    assert html.count("<mfrac>") == 1 and "<mark>Sorting</mark> in <math" in html


def test_the_record_page_draws_its_formulas(math_index):
    html = create_app(index_dir=math_index).test_client().get("/records/2101.00001").get_data(as_text=True)
    assert "<title>Sorting in O(n^2) time with a/b ratios" in html  # the tab's title is text
    assert html.count("<mfrac>") == 1 and html.count("<math ") == 5
