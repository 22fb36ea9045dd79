"""Papers found by their identifiers, on every engine: DOIs (bare, ``doi:``,
``https://doi.org/`` links, any case), arXiv's own DOIs, arXiv ids and abs
links; and the links and identifiers a hit and a record carry.

The corpus is written out below (``IDENTIFIER_RECORDS``): five arXiv papers,
two with a journal's DOI and one whose own DOI is arXiv's, and one paper
that has no arXiv id.
"""

from __future__ import annotations

import json

import pytest

from searchengine.errors import QueryError

from .conftest import BUILDERS, ENGINES

IDENTIFIER_RECORDS = [
    {
        "id": "0705.1234",
        "title": "Spin waves in layered antiferromagnets",
        "abstract": "Magnons.",
        "doi": "10.1103/PhysRevB.76.125117",
        "journal_ref": "Phys. Rev. B 76, 125117 (2007)",
        "comments": "12 pages, 4 figures",
        "license": "http://arxiv.org/licenses/nonexclusive-distrib/1.0/",
    },
    {
        "id": "2503.11742",
        "title": "Sparse kernels for graph learning",
        "abstract": "GPU kernels.",
        "pdf": "https://arxiv.org/pdf/2503.11742v2",
    },
    {
        "id": "hep-th/9901001",
        "title": "Strings on orbifolds",
        "abstract": "Orbifolds.",
        "doi": "https://doi.org/10.1088/1126-6708/1999/01/001",
    },
    {
        "id": "report-7",
        "title": "A technical report on magnons",
        "abstract": "Magnons again.",
        "doi": "10.5281/zenodo.12345",
        "url": "https://example.org/report-7",
    },
    # An old-style id with a subject class; a paper whose own DOI is arXiv's.
    {"id": "math.AG/0101001", "title": "Moduli of curves", "abstract": "Sheaves."},
    {
        "id": "2101.00002",
        "title": "Preprints as their own record",
        "abstract": "Citations.",
        "doi": "10.48550/arXiv.2101.00002",
    },
]


@pytest.fixture(scope="module", params=ENGINES)
def id_index(request, tmp_path_factory):
    """A SearchIndex of ``IDENTIFIER_RECORDS`` on each engine."""
    source = tmp_path_factory.mktemp("identifiers") / "identifiers.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in IDENTIFIER_RECORDS), encoding="utf-8")
    index, drop = BUILDERS[request.param](tmp_path_factory, source)
    yield index
    drop()
    index.close()


@pytest.mark.parametrize(
    "query, expected",
    [
        ("10.1103/PhysRevB.76.125117", ["0705.1234"]),
        ("10.1103/physrevb.76.125117", ["0705.1234"]),
        ("doi:10.1103/PhysRevB.76.125117", ["0705.1234"]),
        ("DOI:10.1103/PHYSREVB.76.125117", ["0705.1234"]),
        ("https://doi.org/10.1103/PhysRevB.76.125117", ["0705.1234"]),
        ("http://dx.doi.org/10.1103/PhysRevB.76.125117", ["0705.1234"]),
        ("doi:10.48550/arXiv.2503.11742", ["2503.11742"]),
        ("10.48550/ARXIV.0705.1234", ["0705.1234"]),
        ("10.48550/arXiv.hep-th/9901001", ["hep-th/9901001"]),
        ("10.1088/1126-6708/1999/01/001", ["hep-th/9901001"]),
        ("doi:10.5281/zenodo.12345", ["report-7"]),
        ("doi:10.5281/zenodo.12345 magnons", ["report-7"]),
        ("doi:10.5281/zenodo.12345 OR doi:10.1103/PhysRevB.76.125117", ["0705.1234", "report-7"]),
        ("doi:10.5281/zenodo.99999", []),
        ("2503.11742v2", ["2503.11742"]),
        ("https://arxiv.org/abs/hep-th/9901001v3", ["hep-th/9901001"]),
        ("arXiv:0705.1234", ["0705.1234"]),
        ("id:report-7", ["report-7"]),
        ("10.48550/arXiv.math.AG/0101001", ["math.AG/0101001"]),
        ("doi:10.48550/arxiv.math.ag/0101001", ["math.AG/0101001"]),
        ("10.48550/arXiv.2101.00002", ["2101.00002"]),
    ],
)
def test_an_identifier_finds_its_paper(id_index, query, expected):
    results = id_index.search(query)
    assert sorted(hit.id for hit in results.hits) == expected
    assert results.total == len(expected)


@pytest.mark.parametrize(
    "query, message",
    [
        (
            "doi:nonsense",
            "'doi:nonsense' is not a DOI (a DOI starts with '10.', its registrant's number, then '/': "
            "e.g. doi:10.1103/PhysRevB.76.125117)",
        ),
        ("doi:10.1103 magnons", "'doi:10.1103' is not a DOI"),
    ],
)
def test_a_malformed_doi_is_refused_by_name(id_index, query, message):
    with pytest.raises(QueryError) as caught:
        id_index.search(query)
    assert str(caught.value).startswith(message)


def test_hits_and_records_carry_links_and_identifiers(id_index):
    hit = id_index.search("10.1103/PhysRevB.76.125117").to_dict()["hits"][0]
    expected = {
        "url": "https://arxiv.org/abs/0705.1234",
        "pdf_url": "https://arxiv.org/pdf/0705.1234",
        "doi": "10.1103/PhysRevB.76.125117",
        "arxiv_doi": "10.48550/arXiv.0705.1234",
        "journal_ref": "Phys. Rev. B 76, 125117 (2007)",
        "comments": "12 pages, 4 figures",
        "license": "http://arxiv.org/licenses/nonexclusive-distrib/1.0/",
    }
    assert {key: hit[key] for key in expected} == expected
    record = id_index.document("0705.1234")
    assert {key: record[key] for key in expected} == expected
    # a source's PDF link is kept; a DOI link is stored as the bare DOI
    assert id_index.document("2503.11742")["pdf_url"] == "https://arxiv.org/pdf/2503.11742v2"
    assert id_index.document("hep-th/9901001")["doi"] == "10.1088/1126-6708/1999/01/001"
    # no arXiv id: nothing derived
    other = id_index.document("report-7")
    assert {key: other[key] for key in ("url", "pdf_url", "doi", "arxiv_doi")} == {
        "url": "https://example.org/report-7",
        "pdf_url": "",
        "doi": "10.5281/zenodo.12345",
        "arxiv_doi": "",
    }
    # arXiv's DOI is never the paper's own, unless the source gave it as such.
    assert {key: id_index.document("math.AG/0101001")[key] for key in ("doi", "arxiv_doi")} == {
        "doi": "",
        "arxiv_doi": "10.48550/arXiv.math.AG/0101001",
    }
    assert {key: id_index.document("2101.00002")[key] for key in ("doi", "arxiv_doi")} == {
        "doi": "10.48550/arXiv.2101.00002",
        "arxiv_doi": "10.48550/arXiv.2101.00002",
    }
