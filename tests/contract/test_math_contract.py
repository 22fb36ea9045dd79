"""Both engines keep a record's TeX beside its text, for the page's formulas, and report undated documents."""

import json

import pytest

from .conftest import BUILDERS, ENGINES

TITLE = r"Sorting in $O(n^2)$ time with $\frac{a}{b}$ ratios"


@pytest.fixture(scope="module", params=ENGINES)
def math_index(request, tmp_path_factory):
    source = tmp_path_factory.mktemp("math") / "math.jsonl"
    records = [
        {"id": "2101.00001", "title": TITLE, "abstract": r"By $\alpha$-stable laws.", "date": "2021-01-04"},
        {"id": "2101.00002", "title": "Plain sorting", "year": 2021},
    ]
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    index, drop = BUILDERS[request.param](tmp_path_factory, source)
    yield index
    drop()
    index.close()


def test_the_tex_is_kept_beside_the_searched_text(math_index):
    record = math_index.record("2101.00001")
    assert (record.title, record.abstract) == ("Sorting in O(n^2) time with a/b ratios", "By α-stable laws.")
    assert record.tex == {"title": TITLE, "abstract": r"By $\alpha$-stable laws."}
    assert math_index.record("2101.00002").tex == {}
    hits = {hit.id: hit.tex for hit in math_index.search("sorting").hits}
    assert hits == {"2101.00001": {"title": TITLE, "abstract": r"By $\alpha$-stable laws."}, "2101.00002": {}}
    assert math_index.stats()["undated"] == 1 and math_index.has_dates
