"""The terms the cluster indexes against the embedded analyzer's, on a real cluster (``_analyze``).

The cluster indexes the product's own analysis (:mod:`searchengine.engines.opensearch.terms`):
each case is the embedded analyzer's tokens (term, position), and the
cluster's ``se_terms`` analyzer must give exactly those from the term text.
"""

from __future__ import annotations

import pytest

from searchengine.engines.opensearch import mapping
from searchengine.engines.opensearch.terms import term_text, word_text
from searchengine.engines.whoosh.analysis import name_analyzer, text_analyzer

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def analyzed(cluster_client, cluster_url):
    """``analyze(text, analyzer="se_terms")`` → [(term, position)] on an index made with the product's settings."""
    import uuid

    name = f"test-analysis-{uuid.uuid4().hex[:8]}"
    body = mapping.index_body(name, shards=1)
    cluster_client.indices.create(index=name, body=body)

    def analyze(text: str, analyzer: str = "se_terms") -> list[tuple[str, int]]:
        result = cluster_client.indices.analyze(index=name, body={"analyzer": analyzer, "text": text})
        return [(token["token"], token["position"]) for token in result["tokens"]]

    yield analyze
    cluster_client.indices.delete(index=name)


def embedded(text: str, mode: str = "index") -> list[tuple[str, int]]:
    return [(token.text, token.pos) for token in text_analyzer()(text, positions=True, mode=mode)]


def indexed(analyzed, text: str) -> list[tuple[str, int]]:
    """The cluster's terms of ``text``'s term text, in the embedded order (by position, joined word first)."""
    return sorted(analyzed(term_text(text)), key=lambda item: item[1])


# The examples of the documentation, with the tokens both engines index.
SAME = {
    "GPUs": [("gpu", 0)],
    "fail-slow": [("failslow", 0), ("fail", 0), ("slow", 1)],
    "CB-SpMV:A": [("cbspmv", 0), ("cb", 0), ("spmv", 1)],
    "matrices": [("matrix", 0)],
    "matrix": [("matrix", 0)],
    "k-means": [("kmean", 0), ("k", 0), ("mean", 1)],
    "SARS-CoV-2": [("sarscov2", 0), ("sars", 0), ("cov", 1), ("2", 2)],
    "C++ and C# 802.11ax A100 FP16": [("c++", 0), ("c#", 2), ("802.11ax", 3), ("a100", 4), ("fp16", 5)],
    "the US and IT": [("us", 1), ("it", 3)],
    "use used using": [("use", 0), ("use", 1), ("use", 2)],
    "analysis analyses indices vertex": [("analys", 0), ("analys", 1), ("index", 2), ("vertex", 3)],
    "AWS SpMV GraphSAGE": [("aws", 0), ("spmv", 1), ("graphsag", 2)],
    "ResNet": [("resnet", 0), ("re", 0), ("net", 1)],
    "Vision-Language state-of-the-art model": [
        ("visionlanguag", 0),
        ("vision", 0),
        ("languag", 1),
        ("stateoftheart", 2),
        ("state", 2),
        ("art", 5),
        ("model", 6),
    ],
    "Vlček naïve": [("vlcek", 0), ("naiv", 1)],
    "Bose–Einstein": [("boseeinstein", 0), ("bose", 0), ("einstein", 1)],
    "语言模型": [("语言", 0), ("言模", 1), ("模型", 2)],
    "大规模语言模型的研究 GPU 是": [
        ("大规", 0),
        ("规模", 1),
        ("模语", 2),
        ("语言", 3),
        ("言模", 4),
        ("模型", 5),
        ("型的", 6),
        ("的研", 7),
        ("研究", 8),
        ("gpu", 9),
        ("是", 10),
    ],
    "中 x 中文": [("中", 0), ("x", 1), ("中文", 2)],
    # Singular and plural meet where Porter alone parts them (PLURAL_REWRITES).
    "radius radii gas gases virus viruses axis axes": [
        ("radius", 0),
        ("radius", 1),
        ("gase", 2),
        ("gase", 3),
        ("virus", 4),
        ("virus", 5),
        ("ax", 6),
        ("ax", 7),
    ],
    "criterion criteria phenomenon phenomena spectrum spectra forums datum data": [
        ("criteria", 0),
        ("criteria", 1),
        ("phenomena", 2),
        ("phenomena", 3),
        ("spectra", 4),
        ("spectra", 5),
        ("fora", 6),
        ("data", 7),
        ("data", 8),
    ],
    "schema schemata corpus corpora genus genera nucleus nuclei lens lenses bias biases": [
        ("schema", 0),
        ("schema", 1),
        ("corpus", 2),
        ("corpus", 3),
        ("genus", 4),
        ("genus", 5),
        ("nucleus", 6),
        ("nucleus", 7),
        ("lens", 8),
        ("lens", 9),
        ("bias", 10),
        ("bias", 11),
    ],
    # Not merged: elements and their oxides, -u plurals, lower-case acronym plurals.
    "zirconium zirconia menus gpus plus": [("zirconium", 0), ("zirconia", 1), ("menu", 2), ("gpu", 3), ("pluse", 4)],
    # Acronyms are not rewritten (nor stemmed).
    "STATUS INDEX": [("status", 0), ("index", 1)],
    # Thousands separators go; a list's commas still separate (0,25 is not a thousand).
    "10,000-GPU 3,700x 1,700x 0,25 (1,2)": [
        ("10000gpu", 0),
        ("10000", 0),
        ("gpu", 1),
        ("3700x", 2),
        ("3700", 2),
        ("x", 3),
        ("1700x", 4),
        ("1700", 4),
        ("x", 5),
        ("0", 6),
        ("25", 7),
        ("1", 8),
        ("2", 9),
    ],
    # A number glued to a word is a compound; words with digits are not stemmed
    # (an acronym's plural s still goes).
    "16GB 100ms 1990s 10,000GPUs covid19s A100s": [
        ("16gb", 0),
        ("16", 0),
        ("gb", 1),
        ("100ms", 2),
        ("100", 2),
        ("ms", 3),
        ("1990s", 4),
        ("1990", 4),
        ("10000gpu", 6),
        ("10000", 6),
        ("gpu", 7),
        ("covid19s", 8),
        ("a100", 9),
    ],
    # NFKC: ligatures, full-width and mathematical letters, sub- and superscripts, decomposed accents.
    "\ufb01nite \ufb01ne-tuning \uff27\uff30\uff35s \U0001d431 H\u2082O Cafe\u0301 \uff34\uff48\uff45"
    " \uff11\uff0c\uff10\uff10\uff10": [
        ("finit", 0),
        ("finetun", 1),
        ("fine", 1),
        ("tune", 2),
        ("gpu", 3),
        ("x", 4),
        ("h2o", 5),
        ("cafe", 6),
        ("1000", 8),
    ],
    "\uff8a\uff9f\uff9d\uff76\uff9e": [("\u30d1\u30f3", 0), ("\u30f3\u30ac", 1)],  # half-width kana, voiced marks
    # An umlaut (composed or not) is indexed spelled out too; an oe that is none is not.
    "M\u00fcller So\u0308ren S\u00f8ren poet \u00c4ther": [
        ("muller", 0),
        ("mueller", 0),
        ("soren", 1),
        ("soeren", 1),
        ("soren", 2),
        ("soeren", 2),
        ("poet", 3),
        ("ather", 4),
        ("aether", 4),
    ],
}

# Where OpenSearch's own analyzers could not follow the embedded one (Porter's
# step 4, NLTK's irregular forms, CJK pairs across punctuation, folding):
# the cluster now indexes the embedded terms here too.
FORMERLY_DIFFERENT = {
    "FlashAttention": [("flashattention", 0), ("flash", 0), ("attention", 1)],
    "Schrödinger": [("schrodinger", 0), ("schroedinger", 0)],
    "university universe": [("universiti", 0), ("univers", 1)],
    "中文，英文": [("中文", 0), ("英文", 1)],
    "Straße æther": [("strase", 0), ("æther", 1)],
    "dying skies": [("die", 0), ("sky", 1)],
}


@pytest.mark.parametrize("text", sorted(SAME) + sorted(FORMERLY_DIFFERENT))
def test_same_terms_at_the_same_positions(analyzed, text):
    expected = SAME.get(text) or FORMERLY_DIFFERENT[text]
    assert embedded(text) == expected
    assert sorted(indexed(analyzed, text)) == sorted(expected)


def test_every_text_of_the_bundled_corpus_gives_the_embedded_terms(analyzed):
    from searchengine.readers import read_records

    texts = [text for record in read_records(["corpus"], []) for text in (record.title, record.abstract)]
    assert len(texts) == 48
    for text in texts:
        assert sorted(analyzed(term_text(text))) == sorted(embedded(text)), text[:60]


def test_written_words_keep_stop_words_and_cut_compounds_and_cjk_runs(analyzed):
    assert analyzed(word_text("The state-of-the-art GPUs, 语言")) == [
        ("the", 0),
        ("state", 1),
        ("of", 2),
        ("the", 3),
        ("art", 4),
        ("gpus", 5),
        ("语", 6),
        ("言", 7),
    ]


def test_a_text_without_terms_is_an_empty_term_text(analyzed):
    assert term_text("the of a") == ""
    assert analyzed(term_text("of the GPU")) == [("gpu", 2)]


def test_author_names_folded_not_stemmed(analyzed):
    text = "Jean-Pierre Sérré, Vlček"
    assert [t for t, _ in analyzed(text, "se_name")] == ["jean-pierre", "serre", "vlcek"]
    assert [t.text for t in name_analyzer()(text)] == ["jean-pierre", "serre", "vlcek"]
