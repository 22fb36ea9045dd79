import pytest

from searchengine import RecordNotFoundError, build_index, open_index
from searchengine.records import arxiv_id

from conftest import corpus_records, write

CB_SPMV_ID = "t-30f1b8f5a2a1"


def marked(text, matches):
    return [text[start:end] for start, end in matches]


def test_snippet_marks_the_words_as_written_not_their_stems(corpus_index):
    hit = corpus_index.search("GPU checkpointing").hits[0]
    assert hit.title == "Mimose: An Input-Aware Checkpointing Planner for Efficient Training on GPU"
    assert marked(hit.title, hit.title_matches) == ["Checkpointing", "GPU"]
    words = set(marked(hit.snippet, hit.snippet_matches))
    assert words == {"checkpointing", "GPU"}
    assert hit.snippet in hit.snippet or " … " in hit.snippet


def test_plural_query_marks_the_plural_in_the_text(corpus_index):
    hit = corpus_index.search("SpMV GPU").hits[0]
    assert marked(hit.title, hit.title_matches) == ["SpMV", "SpMV", "GPUs"]


def test_snippet_fragments_come_from_the_abstract_in_order(corpus_index):
    hit = corpus_index.search("GPU memory").hits[0]
    abstract = corpus_index.document(hit.id)["abstract"]
    for fragment in hit.snippet.split(" … "):
        assert fragment in abstract


def test_record_without_abstract_still_appears_with_its_title(tmp_path):
    path = write(tmp_path / "r.jsonl", '{"id": "x1", "title": "Sparse kernels on GPUs"}\n')
    build_index([path], tmp_path / "ix")
    hit = open_index(tmp_path / "ix").search("GPU").hits[0]
    assert (hit.id, hit.snippet, hit.snippet_matches) == ("x1", "", [])
    assert marked(hit.title, hit.title_matches) == ["GPUs"]


def test_abstract_without_a_match_shows_its_start(tmp_path):
    abstract = "word " * 100
    path = write(tmp_path / "r.jsonl", f'{{"id": "x1", "title": "Sparse kernels", "abstract": "{abstract}"}}\n')
    build_index([path], tmp_path / "ix")
    hit = open_index(tmp_path / "ix").search("sparse").hits[0]
    assert hit.snippet == ("word " * 48).strip() + " …"
    assert hit.snippet_matches == []


def test_show_returns_the_full_record(corpus_index):
    record = corpus_index.document(CB_SPMV_ID)
    assert record["title"].startswith("CB-SpMV:A Data Aggregating")
    assert record["authors"] == ["Depei Qian"] and record["year"] == 2026
    assert record["categories"] == ["cs.DC"]
    assert record["abstract"].startswith("Sparse matrix-vector multiplication (SpMV) is crucial")
    assert record["source"].endswith("depei-qian.txt:41")


def test_unknown_record_id_is_reported(corpus_index):
    with pytest.raises(RecordNotFoundError, match="no record with id 'nope'"):
        corpus_index.document("nope")
    with pytest.raises(RecordNotFoundError):
        corpus_index.similar("nope")


def test_similar_papers_are_on_topic_and_exclude_the_record(corpus_index):
    results = corpus_index.similar(CB_SPMV_ID, limit=3)
    ids = [h.id for h in results.hits]
    assert CB_SPMV_ID not in ids
    # The other sparse-matrix kernel papers of the corpus come first.
    assert results.hits[0].title.startswith("DB-SpMSpV")
    titles = " ".join(h.title for h in corpus_index.similar(CB_SPMV_ID, limit=5).hits)
    assert "Sparse Matrix-Matrix Multiplication" in titles


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2101.00001", "2101.00001"),
        ("2101.00001v2", "2101.00001"),
        ("arXiv:0704.0001v1", "0704.0001"),
        ("hep-th/9901001", "hep-th/9901001"),
        ("math.ag/0101001v3", "math.AG/0101001"),
        ("https://arxiv.org/abs/2101.00001v2", "2101.00001"),
        ("https://arxiv.org/pdf/2101.00001v2.pdf", "2101.00001"),
        ("http://arxiv.org/abs/hep-th/9901001", "hep-th/9901001"),
        ("t-30f1b8f5a2a1", None),
        ("NetWeaver: scalable layout", None),
    ],
)
def test_arxiv_ids_are_recognised_in_every_written_form(text, expected):
    assert arxiv_id(text) == expected


def all_tokens(replay, text):
    found = replay.text(text)
    return [token for number in range(len(found)) for token in found.tokens(number)]


SNIPPET_TEXTS = [
    "FlashAttention on GPUs: C++ and C# in 大规模语言模型的研究, fail-slow Bose–Einstein; IT and it.",
    "ﬁnite eﬃcient Ｇｒａｐｈ neural-network, 10,000-GPU runs by Vlček (e\u0301te).",
]


def test_word_analysis_gives_the_analyzers_tokens_and_offsets():
    from searchengine.analysis.snippets import WordAnalysis
    from searchengine.engines.whoosh.schema import build_schema

    analyzer = build_schema()["abstract"].analyzer
    replay = WordAnalysis(analyzer, size=8)  # small: forgetting words must not change anything
    texts = [r.abstract for r in corpus_records()[:6]] + SNIPPET_TEXTS
    for text in texts:
        expected = [
            (t.text, t.startchar, t.endchar) for t in analyzer(text, chars=True, mode="query", removestops=False)
        ]
        assert all_tokens(replay, text) == expected
    assert all_tokens(replay, texts[-2])[:3] == [("flashattention", 0, 14), ("flash", 0, 5), ("attention", 5, 14)]
    # A ligature maps back to the characters as written.
    assert all_tokens(replay, texts[-1])[:2] == [("finit", 0, 5), ("efficient", 6, 13)]


def test_snippet_fragments_are_those_whooshs_highlighter_chooses():
    from whoosh import highlight

    from searchengine.analysis.snippets import (
        CONTEXT_CHARS,
        FRAGMENT_CHARS,
        FRAGMENTS,
        WordAnalysis,
        _best,
        _context_fragments,
    )
    from searchengine.engines.whoosh.schema import build_schema

    analyzer = build_schema()["abstract"].analyzer
    replay = WordAnalysis(analyzer)
    fragmenter = highlight.ContextFragmenter(maxchars=FRAGMENT_CHARS, surround=CONTEXT_CHARS)
    compared = 0
    for text in [r.abstract for r in corpus_records()] + SNIPPET_TEXTS + ["x" * 300 + " gpu model", "gpu " * 3000]:
        tokens = all_tokens(replay, text)
        # Single terms and pairs of neighbouring terms as the query's terms: 24 of them per text.
        candidates = sorted(
            {(a,) for a, _, _ in tokens} | {tuple(sorted((a[0], b[0]))) for a, b in zip(tokens, tokens[1:])}
        )
        for terms in map(frozenset, candidates[:: max(1, len(candidates) // 24)]):
            expected = highlight.top_fragments(
                fragmenter.fragment_tokens(
                    text,
                    highlight.set_matched_filter(analyzer(text, chars=True, mode="query", removestops=False), terms),
                ),
                FRAGMENTS,
                highlight.BasicFragmentScorer(),
                highlight.FIRST,
            )
            # Only the tokens near the matches: the same fragments.
            got = _best(_context_fragments(len(text), replay.text(text, terms), terms), FRAGMENTS)
            assert [(f.start, f.end, [m[1:] for m in f.matches]) for f in got] == [
                (f.startchar, f.endchar, [(m.startchar, m.endchar) for m in f.matches]) for f in expected
            ]
            compared += 1
    assert compared > 300


def test_a_match_far_into_a_long_text_is_marked_up_to_the_limit():
    from searchengine.analysis.snippets import CHAR_LIMIT, WordAnalysis, abstract_snippet, title_matches
    from searchengine.engines.whoosh.schema import build_schema

    replay = WordAnalysis(build_schema()["abstract"].analyzer)
    filler = "lorem " * 10_000  # 60,000 characters
    snippet = abstract_snippet(filler + "GPU kernels", frozenset({"gpu"}), replay)
    assert [snippet.text[a:b] for a, b in snippet.matches] == ["GPU"]
    assert title_matches(filler + "GPU", frozenset({"gpu"}), replay) == [(60_000, 60_003)]
    # Past the limit nothing is looked at: the text's start is shown, as for no match.
    far = "lorem " * (CHAR_LIMIT // 6 + 10) + "GPU"
    assert abstract_snippet(far, frozenset({"gpu"}), replay).matches == []
    # The word the limit cuts is not taken for a shorter word (gpu of gpus).
    cut = "x" * (CHAR_LIMIT - 2) + " gpus"
    assert title_matches(cut, frozenset({"gpu"}), replay) == []


def test_a_match_running_past_its_fragment_ends_the_fragment():
    from searchengine.analysis.snippets import _Fragment, _snippet

    text = "alpha Retrieval-Augmented beta gamma"
    # The joined compound spans 6..25 but the first fragment ends at 15.
    first = _Fragment(0, 15, [("retrievalaugment", 6, 25)])
    second = _Fragment(26, 36, [("gamma", 31, 36)])
    snippet = _snippet(text, [first, second])
    assert snippet.text == "alpha Retrieval-Augmented … beta gamma"
    assert snippet.matches == [(6, 25), (33, 38)]
    assert [snippet.text[a:b] for a, b in snippet.matches] == ["Retrieval-Augmented", "gamma"]
