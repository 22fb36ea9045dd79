"""Word forms that must meet on every engine: Latin, Greek and -s plurals,
numbers with thousands separators or glued to a unit, Unicode compatibility forms.

The records are written out below; the expected hits were worked out by
reading them. Each engine indexes the same small file (the embedded engine
into a folder, OpenSearch on the cluster of ``SEARCHENGINE_TEST_CLUSTER``).
"""

from __future__ import annotations

import json
import os
import uuid

import pytest

from searchengine import build_index, open_index

ENGINES = ["whoosh", "opensearch"]
CLUSTER_VARIABLE = "SEARCHENGINE_TEST_CLUSTER"

RECORDS = [
    # singulars and plurals Porter alone parts
    ("radius", "The radius of convergence of power series", ""),
    ("radii", "Atomic radii from electron densities", ""),
    ("gas", "A gas of hard spheres", ""),
    ("gases", "Noble gases in porous solids", ""),
    ("virus", "Virus spread on contact networks", ""),
    ("viruses", "Giant viruses and their hosts", ""),
    ("axis", "Rotation about a fixed axis", ""),
    ("axes", "Principal axes of inertia", ""),
    ("criterion", "A stopping criterion for conjugate gradients", ""),
    ("criteria", "Selection criteria for clinical trials", ""),
    ("spectrum", "The spectrum of the Laplacian on graphs", ""),
    ("spectra", "Infrared spectra of water ice", ""),
    ("corpus", "A corpus of legal documents", ""),
    ("corpora", "Parallel corpora for translation", ""),
    ("zirconia", "Sintering of zirconia ceramics", ""),
    ("zirconium", "Zirconium alloys in reactors", ""),
    # numbers
    ("gpu-10k", "Training on a 10,000-GPU cluster", ""),
    ("gpu-10k-plain", "Scheduling jobs for 10000 GPUs", ""),
    ("speed-3700", "A 3,700x faster solver", ""),
    ("speed-1700", "A 1,700x faster sampler", ""),
    ("pairs", "Weights of (1,2) pairs", ""),
    ("mem-glued", "Fitting in 16GB of memory", ""),
    ("mem-spaced", "A 16 GB memory budget", ""),
    # Unicode compatibility forms (ligatures from PDFs, full-width, NFD accents)
    ("lig-finite", "\ufb01nite element methods", "E\ufb03cient solvers for \ufb01nite elements."),
    ("plain-finite", "Finite volume schemes", "Efficient and accurate."),
    ("lig-compound", "Parameter-e\ufb03cient \ufb01ne-tuning of language models", ""),
    ("fullwidth", "\uff27\uff30\uff35 kernels for sorting", ""),
    ("nfd", "Cafe\u0301 au lait spots in children", ""),
    ("nfc", "The caf\u00e9 as a workplace", ""),
    # umlauts and their transliterations (ü = ue), composed and decomposed
    ("umlaut", "M\u00fcller matrices in polarimetry", "Measured M\u00fcller matrices."),
    ("umlaut-nfd", "The Mo\u0308bius band", ""),
    ("spelled-out", "Mueller calculus for partially polarized light", ""),
    ("plain-u", "Muller's method for polynomial roots", ""),
    ("danish", "S\u00f8ren's lemma", ""),
    ("poetry", "A poet and a pot", ""),
    # Greek letters by symbol and by name
    ("greek-symbol", "Half-lives of the \u03b1 decay chain", ""),
    ("greek-name", "Alpha decay of heavy nuclei", ""),
]


def _write(folder):
    lines = [
        json.dumps({"id": ident, "title": title, "abstract": abstract, "authors": []})
        for ident, title, abstract in RECORDS
    ]
    path = folder / "records.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module", params=ENGINES)
def forms_index(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp("word-forms")
    records = _write(folder)
    if request.param == "whoosh":
        location = folder / "index"
    else:
        url = os.environ.get(CLUSTER_VARIABLE, "").strip().rstrip("/")
        if not url:
            if os.environ.get("CI", "").lower() == "true":
                pytest.fail(f"{CLUSTER_VARIABLE} is not set under CI=true", pytrace=False)
            pytest.skip(f"needs an OpenSearch cluster: {CLUSTER_VARIABLE}=http://127.0.0.1:9200")
        location = f"{url}/word-forms-{uuid.uuid4().hex[:8]}"
    build_index([records], location)
    index = open_index(location)
    yield index
    if request.param == "opensearch":
        from searchengine.engines.opensearch.writer import aliased_indexes

        engine = index.engine
        for name in aliased_indexes(engine.client, engine.cluster) or []:
            engine.client.indices.delete(index=name, ignore_unavailable=True)
    index.close()


CASES = [
    ("radius", ["radii", "radius"]),
    ("radii", ["radii", "radius"]),
    ("gas", ["gas", "gases"]),
    ("gases", ["gas", "gases"]),
    ("virus", ["virus", "viruses"]),
    ("viruses", ["virus", "viruses"]),
    ("axis", ["axes", "axis"]),
    ("axes", ["axes", "axis"]),
    ("criterion", ["criteria", "criterion"]),
    ("criteria", ["criteria", "criterion"]),
    ("spectrum", ["spectra", "spectrum"]),
    ("spectra", ["spectra", "spectrum"]),
    ("corpus", ["corpora", "corpus"]),
    ("corpora", ["corpora", "corpus"]),
    # an element and its oxide stay apart
    ("zirconia", ["zirconia"]),
    ("zirconium", ["zirconium"]),
    # a thousands separator is dropped; a number glued to a hyphen is its own word
    ("10000 GPUs", ["gpu-10k", "gpu-10k-plain"]),
    ("10,000-GPU", ["gpu-10k", "gpu-10k-plain"]),
    ("10,000", ["gpu-10k", "gpu-10k-plain"]),
    ("3,700x", ["speed-3700"]),
    ("3700x", ["speed-3700"]),
    ("1,700x", ["speed-1700"]),
    # a number glued to a unit meets it spaced, both ways
    ("16GB", ["mem-glued", "mem-spaced"]),
    ("16 GB", ["mem-glued", "mem-spaced"]),
    # a comma that does not separate thousands still separates words
    ("1,2", ["pairs"]),
    ("12", []),
    # ligatures, full-width letters and decomposed accents, in documents and queries
    ("finite", ["lig-finite", "plain-finite"]),
    ("\ufb01nite", ["lig-finite", "plain-finite"]),
    ("efficient", ["lig-compound", "lig-finite", "plain-finite"]),
    ("GPU kernels", ["fullwidth"]),
    ("\uff27\uff30\uff35 kernels", ["fullwidth"]),
    ("\U0001d406\U0001d40f\U0001d414 kernels", ["fullwidth"]),  # mathematical bold
    ("caf\u00e9", ["nfc", "nfd"]),
    ("cafe\u0301", ["nfc", "nfd"]),
    ('"cafe\u0301 au lait"', ["nfd"]),
    ('"caf\u00e9 au lait"', ["nfd"]),
    ('"\ufb01nite element"', ["lig-finite"]),
    ('"finite elements"', ["lig-finite"]),
    ('"10000-GPU cluster"', ["gpu-10k"]),
    # a word typed with an umlaut finds all three spellings; typed spelled out,
    # the umlaut and that spelling; typed plain, the umlaut and the plain one
    ("M\u00fcller", ["plain-u", "spelled-out", "umlaut"]),
    ("Mu\u0308ller", ["plain-u", "spelled-out", "umlaut"]),
    ("mueller", ["spelled-out", "umlaut"]),
    ("muller", ["plain-u", "umlaut"]),
    ("title:M\u00fcller", ["plain-u", "spelled-out", "umlaut"]),
    ("moebius", ["umlaut-nfd"]),
    ("M\u00f6bius band", ["umlaut-nfd"]),
    ("soeren", ["danish"]),
    ("poet", ["poetry"]),  # an oe that is no umlaut stays as typed
    # a quoted phrase is matched as written: the umlaut folded, not spelled out
    ('"M\u00fcller matrices"', ["umlaut"]),
    ('"muller matrices"', ["umlaut"]),
    ('"mueller matrices"', []),
    # a Greek letter's name finds its symbol and the symbol its name
    ("alpha decay", ["greek-name", "greek-symbol"]),
    ("\u03b1 decay", ["greek-name", "greek-symbol"]),
    ("\u0391 decay", ["greek-name", "greek-symbol"]),
]


@pytest.mark.parametrize(("query", "expected"), CASES, ids=[c[0] for c in CASES])
def test_word_forms_meet(forms_index, query, expected):
    assert sorted(hit.id for hit in forms_index.search(query, limit=50).hits) == expected


def test_offsets_point_into_the_text_as_written(forms_index):
    hit = forms_index.search("finite efficient").hits
    hit = next(h for h in hit if h.id == "lig-finite")
    assert [hit.title[a:b] for a, b in hit.title_matches] == ["\ufb01nite"]
    assert [hit.snippet[a:b] for a, b in hit.snippet_matches] == ["E\ufb03cient", "\ufb01nite"]
    # A compound's part in a word whose NFKC form is longer (ﬁne-tuning: 10
    # characters as written, 11 in NFKC): the part alone is marked.
    tuned = forms_index.search("tuning").hits[0]
    assert tuned.id == "lig-compound"
    assert [(a, b, tuned.title[a:b]) for a, b in tuned.title_matches] == [(22, 28, "tuning")]
    # Records are read in NFC (records.clean_text): the decomposed accent is shown composed.
    by_id = {h.id: h for h in forms_index.search("cafe\u0301").hits}
    assert [by_id["nfd"].title[a:b] for a, b in by_id["nfd"].title_matches] == ["Caf\u00e9"]
    wide = forms_index.search("gpu kernels").hits[0]
    assert [wide.title[a:b] for a, b in wide.title_matches] == ["\uff27\uff30\uff35", "kernels"]
    big = forms_index.search("10000").hits
    assert {h.id: [h.title[a:b] for a, b in h.title_matches] for h in big} == {
        "gpu-10k": ["10,000"],
        "gpu-10k-plain": ["10000"],
    }
