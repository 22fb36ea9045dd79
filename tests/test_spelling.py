import pytest

from searchengine.engines.whoosh.lexicon import Lexicon
from searchengine.spelling import edit_distance

from conftest import CORPUS


@pytest.mark.parametrize(
    ("query", "suggestion"),
    [
        ("sparce matrix", "sparse matrix"),
        ("GPU memroy", "GPU memory"),
        ("checkpointng planer", "checkpointing planner"),
        ("LLM inferense", "LLM inference"),
        ("transfomer", "transformer"),
        ("GPU mmeory", "GPU memory"),
    ],
)
def test_misspelled_query_gets_a_suggestion_that_finds_more(corpus_index, query, suggestion):
    results = corpus_index.search(query, exact=True)
    assert results.suggestion == suggestion
    assert corpus_index.search(suggestion).total > (0 if results.relaxed else results.total)
    assert results.to_dict()["suggestion"] == suggestion


@pytest.mark.parametrize("query", ["SpMV GPU", "gpu", "sparse matrix", "ti:gpu au:qian", "zzzzqx"])
def test_well_spelled_or_hopeless_query_gets_no_suggestion(corpus_index, query):
    assert corpus_index.search(query).suggestion is None


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [
        ("sparce", "sparse", 1),
        ("memroy", "memory", 1),
        ("abc", "abc", 0),
        ("", "abc", 3),
        ("kitten", "sitting", 3),
        ("ca", "abc", 3),
        ("planer", "planner", 1),
    ],
)
def test_edit_distance_counts_transpositions_as_one(a, b, distance):
    assert edit_distance(a, b) == distance


def _corpus_words(records) -> set[str]:
    """Every word of the records' titles and abstracts as spelling cuts them
    (what the writers must store: this checks how words are kept, not cut)."""
    from searchengine.engines.whoosh.schema import spelling_words

    return set().union(*(spelling_words(r.title) | spelling_words(r.abstract) for r in records))


@pytest.mark.parametrize(
    "warmed,rapidfuzz_from", [(False, 10**9), (True, 10**9), (False, 0)], ids=["lazy", "warmed", "rapidfuzz"]
)
def test_close_words_are_every_indexed_word_within_the_distance(corpus_index_dir, warmed, rapidfuzz_from, monkeypatch):
    from searchengine import open_index, spelling
    from searchengine.spelling import SHARED_PREFIX, within

    # Distances computed here in Python, or by rapidfuzz, give the same words.
    monkeypatch.setattr(spelling, "RAPIDFUZZ_FROM", rapidfuzz_from)

    index = open_index(corpus_index_dir)
    try:
        searcher = index.engine.current()
        vocabulary = set(searcher.cache.columns().spelling_words())
        assert {"sparse", "matrix", "memory", "gpu", "transformer"} <= vocabulary
        assert "spars" not in vocabulary  # words as written, not stems
        lexicon = searcher.lexicon
        if warmed:
            assert lexicon().warm() == len(vocabulary)
        for word in [
            "sparce",
            "matirx",
            "memmory",
            "gpus",
            "tranformer",
            "laguage",
            "qian",
            "zzzz",
            "spmv",
            "mmeory",
            "lagnuage",
            "pgu",
        ]:
            # The prefix as typed, or with two of the first three letters swapped.
            prefixes = {word[:2], word[1] + word[0], word[0] + word[2]}
            for maxdist in (1, 2):
                expected = {
                    w for w in vocabulary if w[:SHARED_PREFIX] in prefixes and edit_distance(word, w) <= maxdist
                }
                assert within(lexicon(), word, maxdist) == expected, (word, maxdist)
        assert within(lexicon(), "matirx", 1) == {"matrix"}  # a transposition is one edit
        assert "sparse" in within(lexicon(), "sparce", 1)
        assert "memory" in within(lexicon(), "mmeory", 1)  # a swap in the prefix
        assert "gpu" in within(lexicon(), "pgu", 1)
    finally:
        index.close()


def _whoosh_reader(index_dir):
    from whoosh import index as whoosh_index

    from searchengine.engines.whoosh import store

    return whoosh_index.open_dir(str(store.current_generation(index_dir))).reader()


def _segment_words(index_dir) -> list[set[str]]:
    """The spelling words file of each segment of the index."""
    from searchengine.engines.whoosh.codec import segment_words

    return [segment_words(sub) for sub, _ in _whoosh_reader(index_dir).leaf_readers()]


def test_spelling_words_are_stored_once_per_segment_and_counted_from_stems(corpus_index_dir):
    from searchengine import open_index
    from searchengine.readers import read_records

    reader = _whoosh_reader(corpus_index_dir)
    # One segment, whose words file holds every word of the corpus as
    # written; the index has no spelling field and no spelling terms.
    assert _segment_words(corpus_index_dir) == [_corpus_words(read_records([CORPUS], []))]
    assert not any(name.startswith("spell_") for name in reader.schema.names())
    index = open_index(corpus_index_dir)
    try:
        searcher = index.engine.current()
        lexicon = Lexicon(searcher.searcher.reader(), searcher.cache.columns())
        # "sparse"'s frequency comes from the stem "spars": abstracts of
        # records 0, 4, 8 ("sparse") and 21 ("sparseness"); titles of 0 and 8 are fewer.
        assert lexicon.frequency("sparse") == 4
        # A word never written so has no frequency even when its stem is indexed.
        assert lexicon.frequency("sparses") == 0
        assert lexicon.words("spar") == ["sparse", "sparseness", "sparsities", "sparsity"]
        assert lexicon.words("zzz") == []
    finally:
        index.close()


def test_parallel_build_suggests_as_a_single_process_build(tmp_path, monkeypatch):
    from searchengine import build_index, open_index
    from searchengine.engines.whoosh import writer as indexer
    from searchengine.readers import read_records

    monkeypatch.setattr(indexer, "PARALLEL_MIN_RECORDS", 8)
    monkeypatch.setattr(indexer, "BATCH_SIZE", 5)
    build_index([CORPUS], tmp_path, jobs=2)
    reader = _whoosh_reader(tmp_path)
    assert len(reader.leaf_readers()) >= 2 and reader.doc_count() == 24
    # The segments' words together are the corpus's: each segment has its own.
    per_segment = _segment_words(tmp_path)
    assert set().union(*per_segment) == _corpus_words(read_records([CORPUS], []))
    assert all(words < set().union(*per_segment) for words in per_segment)
    index = open_index(tmp_path)
    assert [index.search(q).suggestion for q in ("sparce matrix", "checkpointng planer", "transfomer")] == [
        "sparse matrix",
        "checkpointing planner",
        "transformer",
    ]


def test_removal_keeps_the_words_of_live_documents_only(tmp_path):
    from searchengine import build_index, open_index, remove_documents
    from searchengine.readers import read_records

    records = list(read_records([CORPUS], []))
    ids = [record.id for record in records]
    build_index([CORPUS], tmp_path, jobs=1)
    # "planner" is in the abstracts of records 2 and 17; "transformer" only in 19.
    assert all({"planner", "transformer"} <= words for words in _segment_words(tmp_path))
    # Removing 13 of 24 documents (records 2 and 19 among them) rewrites the
    # segment without them.
    gone = (1, 2, 3, 5, 6, 7, 9, 10, 11, 12, 13, 15, 19)
    assert remove_documents([ids[i] for i in gone], tmp_path).documents == 11
    reader = _whoosh_reader(tmp_path)
    assert len(reader.leaf_readers()) == 1 and not reader.has_deletions()
    live = [record for i, record in enumerate(records) if i not in gone]
    assert _segment_words(tmp_path) == [_corpus_words(live)]
    assert "planner" in _corpus_words(live) and "transformer" not in _corpus_words(live)
    index = open_index(tmp_path)
    assert index.search("checkpointng planer").suggestion == "checkpointing planner"
    assert index.search("transfomer").suggestion is None


def test_update_replacing_most_documents_keeps_the_words_of_live_documents_only(tmp_path):
    import json

    from searchengine import build_index, open_index, update_index
    from searchengine.readers import read_records

    records = list(read_records([CORPUS], []))
    build_index([CORPUS], tmp_path / "index", jobs=1)
    # New versions of 13 of 24 records (record 19, the only one with
    # "transformer", among them); record 1's new abstract has a new word.
    replaced = (1, 2, 3, 5, 6, 7, 9, 10, 11, 12, 13, 15, 19)
    lines = [
        json.dumps(
            {
                "id": records[i].id,
                "title": records[i].title,
                "abstract": "A zymographic study." if i == 1 else "Replaced.",
            }
        )
        for i in replaced
    ]
    source = tmp_path / "new.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert update_index([source], tmp_path / "index", jobs=1).replaced == 13
    reader = _whoosh_reader(tmp_path / "index")
    # The old segment, more than half replaced, was merged into the new one.
    assert len(reader.leaf_readers()) == 1 and not reader.has_deletions()
    words = _segment_words(tmp_path / "index")[0]
    assert {"planner", "zymographic", "replaced"} <= words and "transformer" not in words
    index = open_index(tmp_path / "index")
    assert index.search("zymografic").suggestion == "zymographic"
    assert index.search("transfomer").suggestion is None


@pytest.fixture(scope="module")
def context_index(tmp_path_factory):
    """``space`` is the more common word, but ``sparse`` is the one seen next to ``matrix``;
    ``transfomer`` is a typo three abstracts share, each beside ``transformer``."""
    import json

    from searchengine import build_index, open_index

    abstracts = (
        ["Space and time bounds for matrix methods."] * 8
        + ["Sparse matrix kernels on accelerators."] * 3
        + ["A transformer study of attention."] * 150
        + ["A transfomer study of attention, as a transformer reads."] * 3
        + ["Balanced cuts of a graph."] * 300
    )
    folder = tmp_path_factory.mktemp("spelling-context")
    lines = [json.dumps({"id": f"d{i}", "title": f"Paper {i}", "abstract": text}) for i, text in enumerate(abstracts)]
    (folder / "records.jsonl").write_text("\n".join(lines), encoding="utf-8")
    build_index([folder / "records.jsonl"], folder / "index", jobs=1)
    index = open_index(folder / "index")
    yield index
    index.close()


def test_the_correction_seen_next_to_the_other_words_wins(context_index):
    assert context_index.search("space matrix").total == 8
    assert context_index.search("sparse matrix").total == 3
    assert context_index.search("sparce matrix").suggestion == "sparse matrix"
    assert context_index.search("sparce").suggestion == "space"  # alone, the more common word


def test_a_rare_word_beside_a_far_more_common_neighbour_is_suggested_not_replaced(context_index, monkeypatch):
    import searchengine.spelling as spelling

    assert context_index.search("transfomer study").total == 3  # not few hits: only rarity counts
    assert context_index.search("transfomer study").suggestion is None  # 3 of 464 is not rare
    monkeypatch.setattr(spelling, "RARE_SHARE", 1 / 150)  # rare: at most 3 documents
    monkeypatch.setattr(spelling, "RARE_FACTOR", 50)  # 153 >= 50 * 3
    results = context_index.search("transfomer study")
    # The index holds "transfomer": its papers are shown, the correction offered.
    assert (results.total, results.suggestion, results.corrected) == (3, "transformer study", None)
    monkeypatch.setattr(spelling, "RARE_FACTOR", 60)  # 153 < 60 * 3: not common enough
    assert context_index.search("transfomer study").suggestion is None


@pytest.mark.parametrize("query", ["SpMx kernels", "NeRF", "SPARCE matrix"])
def test_acronyms_and_names_as_written_are_not_corrected(context_index, query):
    assert context_index.search(query).suggestion is None


class Papers:
    """A lexicon and a hit oracle over papers given as lists of words, as
    :func:`searchengine.spelling.suggest` asks of an engine. A word's stem is
    the word without a final ``s`` and then ``e``; a paper holds the stems of
    its words and of their parts between hyphens, a query word the stem of
    its first part. A word's frequency is the number of papers holding its
    stem, if one holds it as written."""

    def __init__(self, *groups: tuple[int, str], names: dict[str, int] | None = None) -> None:
        self.names = names or {}  # author-name word -> papers whose author names hold it
        self.papers = [text.split() for count, text in groups for _ in range(count)]
        self.written = {word for paper in self.papers for word in paper}
        self.stems = [{self.stem(part) for word in paper for part in word.split("-")} for paper in self.papers]

    @staticmethod
    def stem(word: str) -> str:
        return word.removesuffix("s").removesuffix("e")

    def doc_count(self) -> int:
        return len(self.papers)

    @staticmethod
    def normalise(word: str) -> str | None:
        return None if word.lower() in {"of", "the"} else word.lower()

    def frequency(self, word: str) -> int:
        return self.hits(word) if word in self.written else 0

    def frequencies(self, words: list[str]) -> dict[str, int]:
        return {word: self.frequency(word) for word in words}

    def name_frequency(self, word: str) -> int:
        return self.names.get(word, 0)

    def near(self, word: str, maxdist: int) -> set[str]:
        return self.written

    def hits(self, text: str) -> int:
        import re

        text = re.sub(r"\(title:(\S+) OR abstract:\S+\)", r"\1", text)  # the fields are all there is
        wanted = {self.stem(word.split("-")[0]) for word in text.lower().split()}
        return sum(wanted <= stems for stems in self.stems)

    def correct(self, text: str):
        from searchengine.spelling import correct

        return correct(self, text, self.hits(text), self.hits)

    def suggest(self, text: str):
        found = self.correct(text)
        return None if found is None else found.text


def test_a_correction_is_a_plain_word_not_an_indexed_token_with_a_hyphen():
    # "graph-s" is two edits from "graphons" and counts as "graph" (its
    # first part's stem); "graphon", one edit away, finds no more than the query.
    papers = Papers((1, "graphon limits"), (40, "graph networks"), (1, "graph-s"))
    assert papers.hits("graphons") == 1 and papers.frequency("graph-s") == 41
    assert papers.suggest("graphons") is None
    assert papers.suggest("graphonz") == "graphon"


def test_a_typo_the_index_does_not_hold_is_corrected_for_sure_one_edit_away():
    from searchengine.spelling import Change, Correction

    papers = Papers((150, "transformer attention"), (5, "graph cuts"))
    assert papers.correct("transfomer") == Correction("transformer", (Change("transfomer", "transformer", False, 1),))
    assert papers.correct("transfomer").sure
    # Two edits away: offered, not sure.
    assert papers.correct("tarnsfomer") == Correction("transformer", (Change("tarnsfomer", "transformer", False, 2),))
    assert not papers.correct("tarnsfomer").sure


def test_a_word_of_an_author_name_is_never_corrected():
    # "fidler" is one edit from "filler" and finds nothing in titles or
    # abstracts; the author names hold it, so it is a name, not a typo.
    from searchengine.spelling import correct

    papers = Papers((150, "filler words"), (5, "graph cuts"), names={"fidler": 29})
    assert correct(papers, "fidler", 29, papers.hits) is None  # its 29 papers are found by author
    # A query that finds nothing as typed may be a typo of a name's word: suggested, never sure.
    papers = Papers((150, "markov chain"), (5, "graph cuts"), names={"chian": 1})
    assert papers.correct("markov chian").text == "markov chain" and not papers.correct("markov chian").sure
    assert Papers((150, "filler words"), (5, "graph cuts")).correct("fidler").text == "filler"


@pytest.mark.parametrize(("word", "suggestion"), [("neutrino", None), ("phonon", "photon"), ("axion", "axiom")])
def test_a_real_word_the_index_lacks_is_at_most_suggested_never_searched_instead(word, suggestion):
    # "neurino" (one edit from neutrino) is no English word: not even suggested.
    papers = Papers((1, "neurino segmentation"), (80, "photon counting"), (60, "axiom systems"))
    found = papers.correct(word)
    assert (found and found.text) == suggestion
    assert found is None or not found.sure


def test_a_typo_the_web_writes_too_is_still_corrected_for_sure():
    # "atention" is in the English word list (web text holds the typo) but
    # 3.7 Zipf units rarer than "attention", one edit away.
    from searchengine import realwords

    assert realwords.zipf("atention") > 0 and not realwords.is_real("atention", ["attention"])
    assert realwords.is_real("pion", ["pin"]) and realwords.is_real("inflaton", ["inflation"])
    assert not realwords.is_real("tranformer")
    papers = Papers((150, "attention models"), (5, "graph cuts"))
    assert papers.correct("atention").sure


def test_a_rare_typo_the_index_holds_and_english_does_not_is_suggested_without_company():
    # One abstract writes "tranformer", without "transformer" beside it.
    papers = Papers((1, "tranformer speech"), (150, "transformer attention"), (300, "graph cuts"))
    found = papers.correct("tranformer")
    assert found.text == "transformer" and not found.sure


@pytest.mark.parametrize("word", ["braid", "boson"])
def test_a_rare_word_the_index_holds_is_left_alone_beside_a_common_look_alike(word):
    # "brain" is one edit from "braid" and 150 times as common, but the braid
    # paper does not hold it; "boost" is two edits from "boson".
    papers = Papers((1, "braid groups"), (1, "boson higgs"), (150, "brain imaging"), (150, "boost trees"))
    assert papers.correct(word) is None


def test_a_rare_typo_the_index_holds_beside_the_word_it_misspells_is_suggested_not_sure():
    from searchengine.spelling import Change, Correction

    papers = Papers((1, "transfomer transformer attention"), (150, "transformer attention"), (300, "graph cuts"))
    assert papers.correct("transfomer") == Correction("transformer", (Change("transfomer", "transformer", True, 1),))
    assert not papers.correct("transfomer").sure


@pytest.mark.parametrize(("beside", "suggestion"), [(1, None), (2, "brain")])
def test_a_held_word_is_checked_when_its_papers_hold_the_correction_twice_as_often_as_chance(
    beside, suggestion, monkeypatch
):
    import searchengine.spelling as spelling

    monkeypatch.setattr(spelling, "RARE_SHARE", 1 / 100)  # rare: at most 4 of 400 papers
    monkeypatch.setattr(spelling, "RARE_FACTOR", 10)
    # 4 braid papers, of which 1 or 2 hold "brain", which a quarter of all papers hold.
    papers = Papers(
        (4 - beside, "braid groups"),
        (beside, "braid brain"),
        (100 - beside, "brain imaging"),
        (296 + beside, "graph cuts"),
    )
    assert papers.doc_count() == 400 and papers.frequency("brain") == 100
    assert papers.suggest("braid") == suggestion


def test_a_word_is_held_as_written_in_its_plural_or_singular_or_inside_a_compound():
    from searchengine.spelling import held

    papers = Papers(
        (1, "kaons decay"),
        (1, "quark-gluon jets"),
        (12, "sparc processors"),
        (150, "kan networks"),
        (150, "glue code"),
        (150, "sparse matrix"),
    )
    assert [held(papers, word, papers.hits) for word in ("kaons", "kaon", "gluon", "sparce", "glue")] == [
        1,
        1,
        1,
        0,
        150,
    ]
    assert held(papers, "gluon") == 0  # without hits, only written words and their forms count
    # "sparce" finds the papers of "sparc", one edit away, whose stem it shares: the index does not hold it.
    assert papers.hits("sparce") == 12
    assert [papers.suggest(word) for word in ("kaon", "gluon", "sparce matrix")] == [None, None, "sparse matrix"]
    assert papers.correct("sparce matrix").sure


def test_forms_are_the_regular_singular_and_plural():
    from searchengine.spelling import forms

    assert forms("kaon") == ["kaons", "kaones"]
    assert forms("isotopes") == ["isotopess", "isotopeses", "isotope", "isotop"]
    assert forms("topology") == ["topologys", "topologyes", "topologies"]
    assert forms("topologies") == ["topologiess", "topologieses", "topologie", "topologi", "topology"]
