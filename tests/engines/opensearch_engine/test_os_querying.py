"""The cluster's Query DSL from the product's own analysis (no cluster needed).

These pin what each kind of query asks the cluster for: the embedded
engine's terms, phrases as written, joined words split as the embedded
engine splits them, fuzzy words expanded as it expands them.
"""

from __future__ import annotations

from math import log

import pytest

from searchengine import querylang
from searchengine.engines.opensearch.querying import (fuzzy_expansion, fuzzy_words, marked_terms, split_joined,
                                                      to_dsl)
from searchengine.engines.opensearch.terms import NO_TERM, SAME_POSITION, term_text, word_text
from searchengine.querylang import tree as t


def dsl(text: str, near: dict | None = None) -> dict | None:
    return to_dsl(querylang.parse(text).tree, near)


def test_a_word_asks_for_its_stem_in_title_and_abstract_and_for_the_name():
    assert dsl("GPUs") == {"bool": {"should": [
        {"term": {"text_terms": "gpu"}},
        {"match": {"authors": {"query": "GPUs", "operator": "and"}}}], "minimum_should_match": 1}}


def test_a_fielded_word_asks_for_its_stem_in_that_field_only():
    assert dsl("title:matrices") == {"term": {"title_terms": {"value": "matric", "boost": 2.0}}}
    assert dsl("abstract:FlashAttention") == {"dis_max": {"queries": [
        {"bool": {"must": [{"term": {"abstract_terms": {"value": "flashattention"}}}], "boost": 2.0}},
        {"bool": {"must": [{"bool": {
            "must": [{"term": {"abstract_terms": {"value": "flash"}}}, {"term": {"abstract_terms": {"value": "attention"}}}],
            "filter": [{"match_phrase": {"abstract_terms": {"query": "flash attention", "analyzer": "se_terms"}}}]}}],
            "boost": pytest.approx(0.9, abs=0.1)}}]}}


def test_a_quoted_phrase_is_scored_by_its_stems_and_kept_where_the_words_stand_as_written():
    found = dsl('abstract:"large language models"')
    assert found == {"bool": {
        "must": [{"match_phrase": {"abstract_terms": {"query": "larg languag model", "analyzer": "se_terms", "slop": 0}}}],
        "filter": [{"match_phrase": {"abstract_words": {"query": "large language models", "analyzer": "se_terms"}}}]}}
    # Stop words keep their gaps: the stems may stand that far apart.
    art = dsl('title:"state of the art"')["bool"]["must"][0]["match_phrase"]["title_terms"]
    assert (art["query"], art["slop"], art["boost"]) == ("state art", 2, 2.0)
    # A phrase of stop words asks for nothing in a title (author names keep every word).
    assert to_dsl(t.Phrase("of the", "title")) is None
    assert dsl('"of the"') == {"match_phrase": {"authors": {"query": "of the"}}}


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
    tree = querylang.parse("how do flashattention kernels use the memory of a gpu during long training "
                           "runs on many devices with few errors").tree
    assert isinstance(tree.child if isinstance(tree, t.Proximity) else tree, t.MinMatch)
    assert split_joined(tree, lambda terms: dict.fromkeys(terms, 100)) is tree


def test_fuzzy_expansions_are_the_closest_then_the_most_frequent_with_blended_weights():
    stems = [("transform", 900), ("transformr", 0), ("transforma", 2)]
    written = [("transformer", 700), ("transforms", 50)]
    found = fuzzy_expansion("transformr", 1, stems, written, 10_000)
    # One edit each (transforms as written stems to transform); the most frequent first.
    assert [term for term, _ in found] == ["transform", "transformer", "transforma"]

    def idf(n):
        return log(1 + (10_000 - n + 0.5) / (n + 0.5))

    blended = idf(900)
    assert found[0][1] == pytest.approx(blended / idf(900) * (1 - 1 / 10))
    assert found[2][1] == pytest.approx(blended / idf(2) * (1 - 1 / 10))


def test_fuzzy_words_name_each_field_and_word_and_the_dsl_uses_their_expansions():
    tree = querylang.parse("transformr~1 attention").tree
    assert fuzzy_words(tree) == [("title", "transformr", 1), ("abstract", "transformr", 1)]
    near = {("title", "transformr", 1): [("transform", 1.0)], ("abstract", "transformr", 1): [("transform", 0.5)]}
    text = str(to_dsl(tree, near))
    assert "'title_terms': {'value': 'transform', 'boost': 2.0}" in text
    assert "'abstract_terms': {'value': 'transform', 'boost': 0.5}" in text


def test_marked_terms_are_the_stems_asked_for_never_the_excluded_ones():
    marked = marked_terms(dsl('GPUs "sparse matrices" -CPU spm*'))
    assert marked["title"] == marked["abstract"] == frozenset({"gpu", "spars", "matric"})
    assert marked["prefixes"] == (("abstract", "spm"), ("title", "spm"))
