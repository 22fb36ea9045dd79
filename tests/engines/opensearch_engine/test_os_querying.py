"""The cluster's Query DSL from the product's own analysis (no cluster needed).

These pin what each kind of query asks the cluster for: the embedded
engine's terms, phrases as written, joined words split as the embedded
engine splits them, fuzzy words expanded as it expands them.
"""

from __future__ import annotations

from math import log

import pytest

from searchengine import querylang
from searchengine.engines.opensearch.expansion import fuzzy_expansion, name_fuzzy_expansion
from searchengine.engines.opensearch.querying import (
    fuzzy_words,
    marked_terms,
    split_joined,
    to_dsl,
)
from searchengine.engines.opensearch.scoring import Statistics
from searchengine.engines.opensearch.terms import NO_TERM, SAME_POSITION, term_text, word_text
from searchengine.querylang import tree as t


def plain(query):
    """``query`` without the length-norm wrappers of :func:`.scoring.normalised` (checked apart)."""
    if isinstance(query, list):
        return [plain(item) for item in query]
    if not isinstance(query, dict):
        return query
    inner = query.get("script_score")
    if inner and inner["script"]["source"].startswith("double length"):
        return plain(inner["query"])
    return {key: plain(value) for key, value in query.items()}


def dsl(text: str, stats: Statistics | None = None) -> dict | None:
    return plain(to_dsl(querylang.parse(text).tree, stats))


def idf(n: int, total: int = 1000) -> float:
    return log(1 + (total - n + 0.5) / (n + 0.5))


SATURATE = "params.idf * _score * 3.0 / (_score + 2.0)"


def test_a_word_is_one_bm25f_term_over_title_abstract_and_names_with_its_largest_frequency():
    stats = Statistics(1000, {("title", "gpu"): 10, ("abstract", "gpu"): 40, ("authors", "gpus"): 0})
    stats.averages = {"title": 10.0, "abstract": 150.0}
    assert dsl("GPUs", stats) == {
        "script_score": {
            "query": {
                "bool": {
                    "should": [
                        {"term": {"title_terms": {"value": "gpu", "boost": 2.0}}},
                        {"term": {"abstract_terms": {"value": "gpu", "boost": 1.0}}},
                        {"match": {"authors": {"query": "gpus", "operator": "and"}}},
                    ]
                }
            },
            "script": {"source": SATURATE, "params": {"idf": pytest.approx(idf(40))}},
        }
    }
    assert stats.missing == {}


def test_frequencies_not_yet_known_are_recorded_with_the_query_counting_them():
    stats = Statistics(1000)
    dsl("title:matrices", stats)
    assert stats.missing == {("title", "matrix"): {"term": {"title_terms": "matrix"}}, ("average", "title"): None}


def test_a_field_term_is_divided_by_the_length_norm_the_embedded_engine_keeps():
    stats = Statistics(1000, {("title", "matrix"): 5})
    stats.averages = {"title": 10.5, "abstract": 150.0}
    (clause,) = [to_dsl(querylang.parse("title:matrices").tree, stats)["script_score"]["query"]]
    script = clause["script_score"]["script"]
    assert clause["script_score"]["query"] == {"term": {"title_terms": {"value": "matrix", "boost": 2.0}}}
    assert script["params"] == {"average": 10.5}
    assert script["source"] == (
        "double length = doc['title_length'].size() == 0 ? 0 : doc['title_length'].value; "
        "return _score / (0.7 + 0.3 * length / params.average);"
    )


def test_a_compound_weighs_its_parts_idf_added_up_or_its_parts_in_sequence():
    stats = Statistics(1000, {("abstract", "flash"): 9, ("abstract", "attention"): 99})
    found = dsl("abstract:FlashAttention", stats)
    whole, apart = found["dis_max"]["queries"]
    assert whole["script_score"]["query"] == {"term": {"abstract_terms": {"value": "flashattention", "boost": 1.0}}}
    assert whole["script_score"]["script"]["params"]["idf"] == pytest.approx(idf(9) + idf(99))
    assert apart["bool"]["boost"] == 0.9
    assert apart["bool"]["must"][0]["bool"]["filter"] == [
        {"match_phrase": {"abstract_terms": {"query": "flash attention", "analyzer": "se_terms"}}}
    ]


def test_a_quoted_phrase_is_scored_by_its_stems_and_kept_where_the_words_stand_as_written():
    found = dsl('abstract:"large language models"', Statistics(1000))
    assert [q["script_score"]["query"]["term"]["abstract_terms"]["value"] for q in found["bool"]["must"]] == [
        "larg",
        "languag",
        "model",
    ]
    assert found["bool"]["filter"] == [
        {"match_phrase": {"abstract_terms": {"query": "larg languag model", "analyzer": "se_terms", "slop": 0}}},
        {"match_phrase": {"abstract_words": {"query": "large language models", "analyzer": "se_terms"}}},
    ]
    # Stop words keep their gaps: the stems may stand that far apart.
    art = dsl('title:"state of the art"')["bool"]["filter"][0]["match_phrase"]["title_terms"]
    assert (art["query"], art["slop"]) == ("state art", 2)
    # A phrase of stop words asks for nothing in a title (author names keep every word).
    assert to_dsl(t.Phrase("of the", "title")) is None
    assert dsl('"of the"')["script_score"]["query"] == {"match_phrase": {"authors": {"query": "of the"}}}


def test_the_proximity_bonus_is_a_pseudo_term_of_each_pair_with_the_idf_of_both_words():
    stats = Statistics(1000, {("title", "spars"): 5, ("abstract", "spars"): 50, ("abstract", "matrix"): 20})
    found = dsl("sparse matrices", stats)
    (bonus,) = found["bool"]["should"]
    assert bonus["script_score"]["query"]["bool"]["should"] == [
        {"match_phrase": {"title_terms": {"query": "spars matrix", "analyzer": "se_terms", "slop": 0, "boost": 1.0}}},
        {
            "match_phrase": {
                "abstract_terms": {"query": "spars matrix", "analyzer": "se_terms", "slop": 0, "boost": 0.5}
            }
        },
    ]
    assert bonus["script_score"]["script"]["params"]["idf"] == pytest.approx(2.0 * (idf(50) + idf(20)))


def test_term_texts_put_each_term_at_its_position():
    assert term_text("The fail-slow GPUs") == f"{NO_TERM} failslow{SAME_POSITION}fail slow gpu"
    assert word_text("The fail-slow GPUs, 语言") == "the fail slow gpus 语 言"


def test_a_joined_word_is_split_as_the_embedded_engine_splits_it():
    frequencies = {"flashattention": 3, "flash": 40, "attention": 900, "flashatt": 0}

    def asked(terms):
        return {term: frequencies.get(term, 0) for term in terms}

    tree = querylang.parse("flashattention kernel").tree
    split = split_joined(tree, asked)
    assert t.Word("flash-attention") in list(t.leaves(split))
    assert t.Word("kernel") in list(t.leaves(split))
    # Rarer parts than the joined word: left alone.
    rare = {"flashattention": 5, "flash": 1, "attention": 1}
    assert split_joined(tree, lambda terms: {term: rare.get(term, 0) for term in terms}) == tree


def test_a_long_question_is_not_split():
    tree = querylang.parse(
        "how do flashattention kernels use the memory of a gpu during long training "
        "runs on many devices with few errors"
    ).tree
    assert isinstance(tree.child if isinstance(tree, t.Proximity) else tree, t.MinMatch)
    assert split_joined(tree, lambda terms: dict.fromkeys(terms, 100)) is tree


def test_fuzzy_expansions_are_the_closest_then_the_most_frequent():
    stems = [("transform", 900), ("transformr", 0), ("transforma", 2), ("transit", 50)]
    written = [("transformer", 700), ("transforms", 50)]
    found = fuzzy_expansion("transformr", 1, stems, written)
    # One edit each (transforms as written stems to transform); the most frequent first.
    assert found == [("transform", 1), ("transformer", 1), ("transforma", 1)]


def test_fuzzy_terms_weigh_the_idf_of_the_most_frequent_times_the_share_of_the_word_kept():
    stats = Statistics(
        10_000,
        {("abstract", "transform"): 900, ("abstract", "transformer"): 700},
        expansions={("abstract", "transformr", 1): [("transform", 1), ("transformer", 1)]},
    )
    stats.averages = {"title": 10.0, "abstract": 150.0}
    found = to_dsl(querylang.parse("abstract:transformr~1").tree, stats)
    weights = [q["script_score"]["script"]["params"]["idf"] for q in found["bool"]["should"]]
    assert weights == pytest.approx([idf(900, 10_000) * 0.9] * 2)


def test_a_fuzzy_word_expands_to_whole_words_never_to_a_compounds_number_or_letter():
    stems = [("transformer", 600), ("transform", 900), ("2", 20_000), ("l", 3000), ("transformat", 400)]
    written = [("transformer-2", 3), ("l-transformer", 1), ("transformers", 700), ("2", 20_000), ("l", 3000)]
    found = fuzzy_expansion("transformer", 2, stems, written)
    # transformer-2 counts as transformer2 (a digit: never an expansion),
    # l-transformer as ltransformer; their parts never count.
    assert found == [("transformer", 0), ("transform", 2), ("transformat", 2), ("ltransformer", 2)]
    # The word itself is searched even when too short to be an expansion.
    assert fuzzy_expansion("gan", 1, [("gan", 50), ("ga", 9), ("gap", 90)], [("ga", 9)]) == [("gan", 0), ("gap", 1)]


def test_a_fuzzy_author_name_expands_to_names_of_three_letters_or_more():
    names = [("lee", 2), ("lei", 9), ("le", 30), ("li", 90), ("leo", 0)]
    assert name_fuzzy_expansion("lee", 1, names) == [("lee", 0), ("lei", 1)]
    stats = Statistics(
        1000,
        {("authors", "lee"): 2, ("authors", "lei"): 9},
        expansions={("authors", "lee", 1): [("lee", 0), ("lei", 1)]},
    )
    found = to_dsl(querylang.parse("lee~2").tree, stats)  # three letters: one edit
    authors = [clause for clause in found["bool"]["should"] if "'authors'" in str(clause)]
    assert authors == [
        {
            "bool": {
                "should": [
                    {
                        "script_score": {
                            "query": {"term": {"authors": "lee"}},
                            "script": {"source": SATURATE, "params": {"idf": idf(9)}},
                        }
                    },
                    {
                        "script_score": {
                            "query": {"term": {"authors": "lei"}},
                            "script": {"source": SATURATE, "params": {"idf": idf(9) * (1 - 1 / 3)}},
                        }
                    },
                ],
                "minimum_should_match": 1,
            }
        }
    ]


def test_a_fuzzy_word_of_five_letters_or_fewer_asks_for_one_edit():
    assert fuzzy_words(querylang.parse("graph~2").tree) == [
        ("title", "graph", 1),
        ("abstract", "graph", 1),
        ("authors", "graph", 1),
    ]
    assert fuzzy_words(querylang.parse("neural~").tree) == [
        ("title", "neural", 2),
        ("abstract", "neural", 2),
        ("authors", "neural", 2),
    ]
    # A part too short or with a digit is searched as typed, never expanded.
    assert fuzzy_words(querylang.parse("memroy.v2~1").tree) == [
        ("title", "memroy", 1),
        ("abstract", "memroy", 1),
        ("authors", "memroy", 1),
    ]


def test_fuzzy_words_name_each_field_and_word_and_the_dsl_uses_their_expansions():
    tree = querylang.parse("transformr~1 attention").tree
    assert fuzzy_words(tree) == [
        ("title", "transformr", 1),
        ("abstract", "transformr", 1),
        ("authors", "transformr", 1),
    ]
    stats = Statistics(
        1000,
        {("title", "transform"): 9, ("abstract", "transform"): 99},
        expansions={("title", "transformr", 1): [("transform", 1)], ("abstract", "transformr", 1): [("transform", 1)]},
    )
    text = str(plain(to_dsl(tree, stats)))
    assert (
        "{'term': {'title_terms': {'value': 'transform', 'boost': 2.0}}}, 'script': {'source': "
        f"'{SATURATE}', 'params': {{'idf': {idf(9) * 0.9!r}}}"
    ) in text
    assert "{'term': {'abstract_terms': {'value': 'transform', 'boost': 1.0}}}" in text


def test_marked_terms_are_the_stems_asked_for_never_the_excluded_ones():
    marked = marked_terms(dsl('GPUs "sparse matrices" -CPU spm*'))
    assert marked["title"] == marked["abstract"] == frozenset({"gpu", "spars", "matrix"})
    assert marked["prefixes"] == (("abstract", "spm"), ("title", "spm"))


def test_a_long_questions_repeated_words_weigh_more_as_on_the_embedded_engine():
    from searchengine.engines.opensearch.querying import repeated_weights

    parsed = querylang.parse("how do sparse solvers and sparse kernels share sparse matrix formats on gpus today")
    weights = repeated_weights(parsed.tree, parsed.words)
    # sparse three times: (K3 + 1) * 3 / (K3 + 3) with K3 = 8.
    assert weights == {t.Word("sparse"): pytest.approx(27 / 11)}
    assert repeated_weights(querylang.parse("sparse sparse").tree, ["sparse", "sparse"]) == {}


def test_spellings_that_ask_for_the_same_terms_are_one_clause_as_on_the_embedded_engine():
    # "Antimicrobial" and "antimicrobial" ask for the same terms: one clause
    # (so one match towards the share of words a hit needs), weighing both.
    parsed = querylang.parse("Antimicrobial agents are less effective due to the pressure of antimicrobial usage")
    from searchengine.engines.opensearch.querying import repeated_weights

    stats = Statistics(1000)
    stats.weights = repeated_weights(parsed.tree, parsed.words)
    should = to_dsl(parsed.tree, stats)["bool"]["should"]
    assert len(should) == 7
    assert should[0]["bool"]["boost"] == pytest.approx(9 * 2 / 10)


def test_the_spelling_words_are_those_the_embedded_index_keeps():
    from pathlib import Path

    from searchengine.engines.opensearch.terms import spelling_text
    from searchengine.engines.whoosh.schema import spelling_words
    from searchengine.readers import read_records

    corpus = Path(__file__).resolve().parents[3] / "corpus"
    checked = 0
    for record in read_records([corpus], []):
        expected = spelling_words(record.title) | spelling_words(record.abstract)
        assert spelling_text(record.title, record.abstract).split() == sorted(expected), record.id
        checked += 1
    assert checked == 24
    assert spelling_text("Fail-slow GPUs", "10,000 Schrödinger cats") == "10000 cats fail-slow gpus schrodinger"


def test_similar_papers_terms_are_weighed_by_bo1_as_whoosh_weighs_them():
    from whoosh.classify import Bo1Model

    from searchengine.engines.opensearch.scoring import key_terms

    counts = {"spars": 3.0, "matrix": 2.0, "gpu": 1.0, "unheld": 4.0}
    occurrences = {"spars": 120, "matrix": 900, "gpu": 2500}
    model = Bo1Model(10_000, 1_000_000)
    scores = {term: model.score(counts[term], held, 10.0) for term, held in occurrences.items()}
    norm = model.normalizer(max(scores.values()), 10.0)
    expected = sorted(((term, score / norm) for term, score in scores.items()), key=lambda item: (-item[1], item[0]))
    found = key_terms(counts, occurrences, 10_000, 2)
    assert [term for term, _ in found] == [term for term, _ in expected[:2]] == ["spars", "matrix"]
    assert [weight for _, weight in found] == pytest.approx([weight for _, weight in expected[:2]])


def test_a_long_question_that_excludes_a_word_is_not_re_ranked_by_feedback():
    # As on the embedded engine, whose scorer leaves such a question to Whoosh's matchers (no feedback).
    from searchengine.engines.opensearch.searcher import _excludes

    excluding = querylang.parse("Differentiated E2f-1, -2, -3 TKO cells in the intestine do not exhibit apoptosis.")
    plain = querylang.parse("Differentiated E2f-1 TKO cells in the intestine do not exhibit apoptosis.")
    assert isinstance(excluding.tree, t.MinMatch) and isinstance(plain.tree, t.MinMatch)
    assert _excludes(excluding.tree) and not _excludes(plain.tree)
