"""The analyzer and query rules, one table row per kind of technical text.

Each row is a query, the ids of the records it must find and whether their
order is fixed. The records are written out below; expected hits were worked
out by reading them, not by running the analyzer.
"""

from __future__ import annotations

import json

import pytest

from searchengine import QueryError, build_index, open_index
from searchengine.engines.whoosh.analysis import text_analyzer
from searchengine.querylang import required_terms
from searchengine.tex import tex_to_text

RECORDS = [
    # joined, hyphenated and spaced forms; dash variants
    ("fs-hyphen", "Detecting fail-slow disks in storage clusters", ""),
    ("fs-joined", "Failslow: a study of gray failures", ""),
    ("fs-spaced", "When hardware components fail slow", ""),
    ("fs-apart", "Slow recovery after disks fail", ""),
    ("fa-camel", "FlashAttention: fast exact attention with IO awareness", ""),
    ("fa-spaced", "Flash attention kernels for long sequences", ""),
    ("be-endash", "Bose\u2013Einstein condensation in optical lattices", ""),
    ("be-nbhyphen", "Bose\u2011Einstein statistics of photons", ""),
    ("be-ascii", "Bose-Einstein correlations in heavy-ion collisions", ""),
    # identifiers
    ("lang-cpp", "Porting numerical codes from C++ to Rust", ""),
    ("lang-csharp", "Type inference for C# generics", ""),
    ("lang-c", "A C compiler for microcontrollers", ""),
    ("wifi-ax", "Throughput of 802.11ax networks in dense deployments", ""),
    ("wifi-ac", "Beamforming measurements of 802.11ac links", ""),
    ("gpu-a100", "Training large models on A100 accelerators", "Mixed precision with FP16 halves memory."),
    ("gpu-a800", "Inference serving on the A800", "Weights are kept in FP32."),
    # singular and plural; unrelated words stay apart
    ("gpu-plural", "Sparse kernels for GPUs", ""),
    ("gpu-single", "A GPU hash table", ""),
    ("mat-plural", "Preconditioners for ill-conditioned matrices", ""),
    ("mat-single", "Sparse matrix reordering", ""),
    ("vtx-plural", "Ranking vertices by centrality", ""),
    ("vtx-single", "Vertex colouring heuristics", ""),
    ("idx-plural", "Learned indices for range queries", ""),
    ("idx-single", "A compressed index for genomes", ""),
    ("ana-plural", "Meta-analyses of clinical trials", ""),
    ("ana-single", "Analysis of variance for repeated measures", ""),
    ("univ", "Rankings of university research output", ""),
    ("cosmo", "The early universe after inflation", ""),
    ("chem", "Organic semiconductors for flexible displays", ""),
    ("org", "Organization of memory hierarchies", ""),
    # case and accents
    ("schr", "Schr\u00f6dinger bridges for generative modelling", ""),
    # acronyms that spell stop words
    ("acr-us", "Adoption of telehealth in the US", ""),
    ("acr-it", "IT governance in hospitals", ""),
    ("acr-as", "AS path inference on the Internet", ""),
    # TeX
    ("tex", "A 5$\\times$ faster \\textit{in situ} solver", "Runs in situ on the sensor."),
    # CJK
    ("cjk", "\u5927\u89c4\u6a21\u8bed\u8a00\u6a21\u578b\u7684\u7814\u7a76", ""),
    # exact phrases
    ("ph-objectivity", "Objectivity in peer review", ""),
    ("ph-objective", "Objective functions for ranking", ""),
    ("ph-situ-apart", "Sensor data: situ measurements in the field", ""),
    # joined words whose parts stem differently or hold a stop word
    ("t2i-hyphen", "Layout control", "Text-to-image diffusion with layout control."),
    ("t2i-apart", "Sketches", "An image with text beside it, and text about an image."),
    ("lm-hyphen", "Agents", "Language-model agents plan."),
    ("lm-spaced", "Proteins", "A language model for proteins, and a model of language."),
]

AUTHORS = {"schr": ["Jan Vl\u010dek"], "tex": ["Petr Vr\\v{c}ak"]}

# (query, expected ids, ordered?) — unordered rows list ids alphabetically.
CASES = [
    # Joined, hyphenated and spaced forms meet; a hyphenated query word wants
    # its parts in sequence, so fs-apart ("disks fail") is not a fail-slow hit.
    ("fail-slow", ["fs-hyphen", "fs-joined", "fs-spaced"], False),
    # Two keywords need not be adjacent: fs-apart has both words.
    ("fail slow", ["fs-apart", "fs-hyphen", "fs-joined", "fs-spaced"], False),
    ("failslow", ["fs-hyphen", "fs-joined"], False),
    # A lower-case joined word is also its indexed words in sequence, found by
    # their stems (language → languag), even with a stop word between them:
    # texttoimage is searched as text-to-image is.
    ("languagemodel", ["lm-hyphen", "lm-spaced"], False),
    ("texttoimage", ["t2i-hyphen"], True),
    ("text-to-image", ["t2i-hyphen"], True),
    ("FlashAttention", ["fa-camel", "fa-spaced"], False),
    ("flash attention", ["fa-camel", "fa-spaced"], False),
    ("Bose-Einstein", ["be-ascii", "be-endash", "be-nbhyphen"], False),
    ("Bose\u2013Einstein", ["be-ascii", "be-endash", "be-nbhyphen"], False),
    # Identifiers keep what distinguishes them.
    ("C++", ["lang-cpp"], True),
    ("C#", ["lang-csharp"], True),
    ("C", ["lang-c"], True),
    ("802.11ax", ["wifi-ax"], True),
    ("802.11ac", ["wifi-ac"], True),
    ("A100", ["gpu-a100"], True),
    ("A800", ["gpu-a800"], True),
    ("FP16", ["gpu-a100"], True),
    ("fp32", ["gpu-a800"], True),
    # Singular and plural meet; unrelated words stay apart.
    ("GPU", ["gpu-plural", "gpu-single"], False),
    ("GPUs", ["gpu-plural", "gpu-single"], False),
    ("matrix", ["mat-plural", "mat-single"], False),
    ("matrices", ["mat-plural", "mat-single"], False),
    ("vertex", ["vtx-plural", "vtx-single"], False),
    ("vertices", ["vtx-plural", "vtx-single"], False),
    ("index", ["idx-plural", "idx-single"], False),
    ("indices", ["idx-plural", "idx-single"], False),
    ("analysis", ["ana-plural", "ana-single"], False),
    ("analyses", ["ana-plural", "ana-single"], False),
    ("university", ["univ"], True),
    ("universe", ["cosmo"], True),
    ("organic", ["chem"], True),
    ("organization", ["org"], True),
    # Case and accents fold.
    ("schrodinger", ["schr"], True),
    ("SCHRÖDINGER", ["schr"], True),
    ("Vlcek", ["schr"], True),
    ("author:vlček", ["schr"], True),
    # Upper-case acronyms that spell stop words stay searchable.
    ("US", ["acr-us"], True),
    ("IT", ["acr-it"], True),
    ("AS", ["acr-as"], True),
    # TeX is neither indexed as words nor shown raw.
    ("times", [], True),
    ("textit", [], True),
    ("Vrčak", ["tex"], True),
    # CJK runs are searchable by their parts.
    ("\u8bed\u8a00\u6a21\u578b", ["cjk"], True),
    ("\u6a21\u578b\u8bed\u8a00", [], True),
    # Quoted phrases are exact: unstemmed words, in sequence.
    ('"objectivity"', ["ph-objectivity"], True),
    ('"objective"', ["ph-objective"], True),
    ("objectivity", ["ph-objective", "ph-objectivity"], False),
    ('"in situ"', ["tex"], True),
    ("situ", ["ph-situ-apart", "tex"], False),
]


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    folder = tmp_path_factory.mktemp("analysis")
    lines = [
        json.dumps({"id": ident, "title": title, "abstract": abstract, "authors": AUTHORS.get(ident, [])})
        for ident, title, abstract in RECORDS
    ]
    (folder / "records.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    build_index([folder / "records.jsonl"], folder / "index")
    opened = open_index(folder / "index")
    yield opened
    opened.close()


@pytest.mark.parametrize(("query", "expected", "ordered"), CASES, ids=[c[0] for c in CASES])
def test_query_finds_exactly_the_expected_records(index, query, expected, ordered):
    query = query.replace("author:", "authors:")
    hits = [hit.id for hit in index.search(query, limit=50).hits]
    assert (hits if ordered else sorted(hits)) == expected


@pytest.mark.parametrize(
    ("query", "parts"),
    [("languagemodel", ["languag", "model"]), ("texttoimage", ["text", "imag"]), ("diffusion", None)],
)
def test_a_joined_word_is_split_by_its_parts_stems_across_a_stop_word(index, query, parts):
    from whoosh import query as wq

    from searchengine.engines.whoosh.expansion import split_joined
    from searchengine.engines.whoosh.querying import parse

    searcher = index.engine.current().searcher
    split = split_joined(parse(query, searcher.schema).query, searcher.reader())
    phrases = [q for q in split.leaves() if isinstance(q, wq.Phrase)] if not split.is_leaf() else []
    assert sorted({tuple(q.words) for q in phrases}) == ([tuple(parts)] if parts else [])


def test_title_outranks_abstract_for_the_same_word(index):
    # "in situ" is in the title and the abstract of "tex" only; "situ" alone
    # is in the title of ph-situ-apart; the title-and-abstract record ranks first.
    assert [hit.id for hit in index.search("situ").hits] == ["tex", "ph-situ-apart"]


def test_display_keeps_the_original_text_with_tex_rendered(index):
    hit = index.search('"in situ"').hits[0]
    assert hit.title == "A 5\u00d7 faster in situ solver"
    assert hit.authors == ["Petr Vr\u010dak"]
    assert index.search("schrodinger").hits[0].title == "Schr\u00f6dinger bridges for generative modelling"


@pytest.mark.parametrize("query", ["C++", "C#", "802.11ax AND"])
def test_identifier_queries_never_match_everything_or_fail(index, query):
    results = index.search(query, limit=50)
    assert results.total <= 1


@pytest.mark.parametrize("query", ["++", "#", "*", "?", "the", "(", '""'])
def test_queries_without_words_get_a_message_not_everything(index, query):
    # Nothing to search for: a one-line QueryError (see the query language), never every document.
    with pytest.raises(QueryError):
        index.search(query, limit=50)


@pytest.mark.parametrize(
    ("count", "needed"),
    [(1, 1), (2, 2), (3, 3), (4, 2), (5, 2), (40, 2), (41, 3), (60, 3), (100, 5)],
)
def test_required_terms_rule(count, needed):
    # All terms up to three; then 5 % of them rounded up, at least two.
    assert required_terms(count) == needed


def test_long_question_needs_only_some_of_its_words(index):
    question = "which kernels and hash tables were written for the GPU in sparse settings recently"
    # Content terms: kernels, hash, tables, written, gpu, sparse, settings, recently
    # (8 terms, so 2 are needed): gpu-plural has kernels, gpu, sparse; gpu-single
    # has gpu, hash, table; mat-single has only sparse.
    assert sorted(h.id for h in index.search(question).hits) == ["gpu-plural", "gpu-single"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("5$\\times$ faster", "5\u00d7 faster"),
        ("\\textit{in situ}", "in situ"),
        ("Vr\\v{c}ak", "Vr\u010dak"),
        ("costs $5 and $10", "costs $5 and $10"),
        ("50% of snake_case names", "50% of snake_case names"),
        ("50% of cases with \\emph{x}", "50% of cases with x"),
        ("odd $5 with $x$ here", "odd $5 with x here"),
    ],
)
def test_tex_to_text(text, expected):
    assert tex_to_text(text) == expected


def test_analyzer_modes_on_one_compound():
    analyzer = text_analyzer()

    def tokens(mode):
        return [(t.text, t.pos) for t in analyzer("fail-slow GPUs in situ", mode=mode, positions=True)]

    # The joined word shares the first part's position; the stop word "in"
    # keeps its position (4) although it is not indexed.
    assert tokens("index") == [("failslow", 0), ("fail", 0), ("slow", 1), ("gpu", 2), ("situ", 4)]
    assert tokens("query") == tokens("index")
    assert tokens("phrase") == [("fail", 0), ("slow", 1), ("gpu", 2), ("situ", 4)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [(r"\frac", ""), (r"a \frac{1} b", "a 1 b"), (r"\widehat", ""), (r"x \widehat{} y", "x y")],
)
def test_tex_macro_missing_its_arguments_leaves_no_template_and_no_warning(text, expected, capfd):
    assert tex_to_text(text) == expected
    assert "WARNING" not in capfd.readouterr().err


def test_analyzer_loads_the_nltk_stemmer_without_the_rest_of_nltk():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from searchengine.engines.whoosh.analysis import text_analyzer\n"
        "print([t.text for t in text_analyzer()('GPUs running matrices')])\n"
        "print([name in sys.modules for name in ('nltk.collocations', 'scipy', 'nltk.tokenize', 'http.client')])\n"
        "import nltk\n"
        "from nltk.stem.porter import PorterStemmer\n"
        "print(hasattr(nltk, 'word_tokenize'), PorterStemmer().stem('running'))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.splitlines() == ["['gpu', 'run', 'matrix']", "[False, False, False, False]", "True run"]


def test_tokens_are_the_same_with_or_without_character_offsets():
    # Indexing asks for no offsets (one findall pass), highlighting for offsets.
    # The one-letter "A" and "on", "the" are stop words; their positions stay.
    text = "CB-SpMV:A C++ vs C# on 802.11ax; FlashAttention 大规模语言模型 e.g. the US"
    analyzer = text_analyzer()
    plain = [(t.text, t.pos) for t in analyzer(text, positions=True, mode="index")]
    located = [
        (t.text, t.pos, t.startchar, t.endchar) for t in analyzer(text, positions=True, chars=True, mode="index")
    ]
    assert plain == [(text, pos) for text, pos, _, _ in located]
    assert located == [
        ("cbspmv", 0, 0, 7),
        ("cb", 0, 0, 2),
        ("spmv", 1, 3, 7),
        ("c++", 3, 10, 13),
        ("vs", 4, 14, 16),
        ("c#", 5, 17, 19),
        ("802.11ax", 7, 23, 31),
        ("flashattention", 8, 33, 47),
        ("flash", 8, 33, 38),
        ("attention", 9, 38, 47),
        ("大规", 10, 48, 50),
        ("规模", 11, 49, 51),
        ("模语", 12, 50, 52),
        ("语言", 13, 51, 53),
        ("言模", 14, 52, 54),
        ("模型", 15, 53, 55),
        ("e", 16, 56, 57),
        ("g", 17, 58, 59),
        ("us", 19, 65, 67),
    ]


TRICKY = (
    "fail-slow FlashAttention 16GB 3,700x 10,000-GPU C++ C# 802.11ax IT it US AS GPUs GPUS matrices "
    "radii ﬁnite ＧＰＵ 语言模型 大规模语言模型的研究 zz ZZ Schrödinger e\u0301cole a-b-c-d the of and CB-SpMV:A"
)


def _token_stream_terms(field, text):
    from whoosh.formats import Positions

    return [
        (word.encode(), freq, weight, value)
        for word, freq, weight, value in Positions.word_values(field.format, text, field.analyzer, mode="index")
    ]


@pytest.mark.parametrize("cache_size", [100_000, 3])
def test_indexing_analyses_each_word_once_and_gives_the_token_streams_terms(monkeypatch, cache_size):
    from searchengine.analysis import analyzer as analysis
    from searchengine.engines.whoosh.schema import build_schema

    from conftest import corpus_records

    monkeypatch.setattr(analysis, "EXPANSION_CACHE_SIZE", cache_size)  # 3: the cache is emptied again and again
    schema = build_schema()
    texts = [TRICKY, "", "the of and"] + [t for r in corpus_records() for t in (r.title, r.abstract)]
    for name in ("title", "abstract"):
        field = schema[name]
        for text in texts:
            assert list(field.index(text)) == _token_stream_terms(field, text)
    words = analysis.index_positions(schema["title"].analyzer, "Fail-slow GPUs: the IT of 16GB GPUs")
    # Stop words take their position (the, of); a compound's parts take one each.
    assert words == {
        "failslow": [0],
        "fail": [0],
        "slow": [1],
        "gpu": [2, 8],
        "it": [4],
        "16gb": [6],
        "16": [6],
        "gb": [7],
    }
    # The title counts TITLE_BOOST times: 2 occurrences, weight 4.
    assert list(schema["title"].index("GPUs GPU"))[0][:3] == (b"gpu", 2, 4.0)


def test_indexing_uses_the_token_stream_for_a_filter_that_is_not_token_local():
    from whoosh.analysis import Filter

    from searchengine.analysis import analyzer as analysis
    from searchengine.engines.whoosh.schema import build_schema

    class Sentences(Filter):  # moves every token after a full stop: not a function of the token alone
        def __call__(self, tokens):
            yield from tokens

    field = build_schema()["abstract"]
    assert analysis.index_positions(field.analyzer, TRICKY) is not None
    field.analyzer = field.analyzer | Sentences()
    assert analysis.index_positions(field.analyzer, TRICKY) is None
    assert list(field.index(TRICKY)) == _token_stream_terms(field, TRICKY)


@pytest.mark.parametrize(
    "text",
    [
        "10,000 GPUs",
        "3,700x",
        "1,2 and 0,25",
        "1,234,567",
        "12,3456",
        "a,123",
        ",123",
        "9,99",
        "x" * 500 + ",000",
        "7,000,0000",
        "1,000.5",
    ],
)
def test_fold_drops_the_thousands_separators_the_shared_pattern_names(text):
    import re

    from searchengine.analysis.folding import fold
    from searchengine.analysis.tokens import THOUSANDS

    assert fold(text) == re.sub(THOUSANDS, "", text.lower())


@pytest.mark.parametrize(
    "text, found",
    [
        ("Large language models.", True),
        ("xlanguage models", False),
        ("language modelsx", False),
        ("language-models", True),
        ("language_models", True),
        ("the language model", False),
    ],
)
def test_a_phrase_pattern_finds_its_words_as_written_and_whole(text, found):
    import re

    from searchengine.analysis.folding import fold
    from searchengine.engines.whoosh.queries import exact_pattern

    assert (re.search(exact_pattern("language models"), fold(text)) is not None) is found


def test_latin_plurals_meet_their_singulars_and_nothing_else():
    from searchengine.analysis.stemming import InflectionStemmer

    stem = InflectionStemmer().stem
    groups = [
        ["index", "indexes", "indices", "indexed", "indexing"],
        ["matrix", "matrices", "matrixes"],
        ["vertex", "vertices"],
        ["complex", "complexes"],
        ["apex", "apices"],
        ["analysis", "analyses"],
        ["device", "devices"],
    ]
    stems = [{stem(word) for word in group} for group in groups]
    assert stems == [{"index"}, {"matrix"}, {"vertex"}, {"complex"}, {"apex"}, {"analys"}, {"devic"}]
    # Singulars once rewritten as -ices plurals met Porter's -icate and -ical stems.
    for word, other in [
        ("index", "indicate"),
        ("index", "indication"),
        ("complex", "complications"),
        ("vertex", "vertical"),
        ("basis", "based"),
        ("basis", "bases"),
    ]:
        assert stem(word) != stem(other), (word, other)


def test_the_engine_free_analyzer_gives_the_whoosh_chains_tokens_and_terms():
    from searchengine.analysis.analyzer import name_terms, term_positions
    from searchengine.analysis.analyzer import text_analyzer as free_analyzer
    from searchengine.engines.whoosh.analysis import name_analyzer

    free, chain = free_analyzer(), text_analyzer()
    for text in (TRICKY, "Fail-slow GPUs: the IT of 16GB GPUs", "", "ﬁnite ＧＰＵ 大规模语言模型 Müller"):
        assert term_positions(free, text) == term_positions(chain, text)
        for mode in ("index", "query", "phrase"):

            def tokens(analyzer):
                return [
                    (t.text, t.pos, t.startchar, t.endchar, t.stopped, t.joined)
                    for t in analyzer(text, positions=True, chars=True, mode=mode, removestops=False)
                ]

            assert tokens(free) == tokens(chain)
    names = "Jean-Pierre O'Brien, Vlček Müller, ＧＰＵ Søren"
    assert name_terms(names) == [t.text for t in name_analyzer()(names)]


def test_the_accent_table_and_the_kept_lengths_are_whooshs():
    from whoosh.support.charset import accent_map
    from whoosh.util.numeric import byte_to_length, length_to_byte

    from searchengine.analysis.accents import ACCENT_MAP
    from searchengine.engines.opensearch.terms import kept_length

    assert list(ACCENT_MAP.items()) == list(accent_map.items())
    for tokens in [*range(3000), 52061, 106373, 106374, 106375, 10**6]:
        assert kept_length(tokens) == byte_to_length(length_to_byte(tokens))


def test_an_index_schema_names_the_analyzer_classes_where_existing_indexes_find_them():
    import pickle

    from searchengine.engines.whoosh.schema import build_schema

    data = pickle.dumps(build_schema(), 2)
    for name in ("TechTokenizer", "CompoundFilter", "AcronymStopFilter", "UmlautFilter", "InflectionStemFilter"):
        assert b"searchengine.engines.whoosh.analysis\n" + name.encode() + b"\n" in data
    loaded = pickle.loads(data)
    assert loaded["title"].analyzer == text_analyzer()
    assert loaded["authors"].analyzer == build_schema()["authors"].analyzer


def test_the_engine_free_modules_import_no_engine():
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[3] / "searchengine"
    for path in [*(root / "analysis").glob("*.py"), *(root / "engines" / "opensearch").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            for name in names:
                assert not name.startswith(("whoosh", "searchengine.engines.whoosh")), (path, name)
