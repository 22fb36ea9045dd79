"""The engine-free query language (searchengine.querylang) and its Whoosh translation.

The parser that built Whoosh queries straight from text (searchengine.query)
is the reference: for every query string of the test suite, the query drill's
generated queries and a list of hard cases, the new path (querylang.parse,
then to_whoosh) must give an equal Whoosh query with the same str(), the same
text, words and notes, the same relaxed query, or the same QueryError message.
"""

from __future__ import annotations

import ast
import itertools
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from searchengine import query as old
from searchengine import querylang
from searchengine.engines.whoosh import querying as new
from searchengine.errors import QueryError
from searchengine.querylang import (
    And, FieldWord, Joined, MinMatch, Not, Or, Phrase, Prefix, Require, Word, parse, relaxed,
)

from conftest import REPO, corpus_records

TESTS = Path(__file__).resolve().parent

# --- the queries compared -------------------------------------------------------------

HAND_WRITTEN = [
    # words, compounds, camel case, identifiers
    "SpMV GPU", "GPUs", "fail slow", "fail-slow", "fail slow disks", "fail-slow disks in large clusters",
    "FlashAttention", "flash attention", "Flash Attention kernels", "k-means", "k-means clustering of GPUs",
    "SARS-CoV-2", "SARS-CoV-2 spike protein", "CB-SpMV:A", "CB-SpMV:A Data Aggregating and Balance Algorithm",
    "Mimose: An Input-Aware Checkpointing Planner", "NetWeaver: scalable layout", "C++ templates", "C# x",
    "C++ x", "802.11ax", "802.11ax wifi", "Bose–Einstein", "Schrödinger equation", "Vlček", "x²", "ＧＰＵ ｍｅｍｏｒｙ",
    "heat/transfer", "why?", "what is a GPU?", "HEr", "IT", "US it", "in-to", "OnTo", "IntoThe", "a b", "a b c d e",
    # quotes
    '"cache-friendly"', "“cache-friendly”", '"cache-friendly', '"sparse matrix', 'title:"sparse matrix',
    'title:"sparse matrix"', 'ti:"sparse matrix" GPU', 'abs:"sparse matrix"', 'abs:"in situ"', '"the"', '"the of"',
    '"?!"', 'NOT "?!"', 'gpu NOT "?!"', '"?!" OR gpu', '"?!" ANDNOT gpu', '"a b"~2', "'graph neural'",
    "title:'graph neural'", "title:''", "id:''", "categories:''", "x.categories:''", "'(a' b)", "Bob's paper",
    "‘single’ quotes", "«guillemets»", '"unbalanced quote', '""', '"' * 7, '"a" "b" "c" "d" "e" "f" "g" "h" "i"',
    '"alpha beta" ' * 8 + '"delta echo"', 'foo:"bar"', 'title:"the"', 'authors:"the"',
    # fields
    "title:gpu", "ti:gpu au:qian", "title:(graph neural)", "title:(graph OR neural)", "title:(graph neural) OR x",
    "abstract:memory", "abs:the", "title:the gpu", "id:2101.00001", "authors:qian", "categories:cs.DC",
    "title:abstract:x", "x.url:foo", "x.source:foo", "x.version:2", "x.facet_data:1", "x.sort_title:a",
    'x.url:"foo"', 'x.year:"2020"', 'x.year:"abc"', "x.year:2020", "x.year:abc", "x.year:*", "x.id:''",
    "x.author_keys:qian", "x.category_keys:cs", "x.spell_title:x", "gpu x.year:abc y", "a b c d x.year:abc",
    "über:x", "a1:b", "_title:gpu", "1title:gpu", "x.title:gpu", "a-bc:d", "-title:gpu", "-foo:bar",
    "auth:qian", "tilte:gpu memory", "Title:gpu", "TI:gpu", "year:", "gpu ti:", "id: x", "title:",
    "https://github.com/example/cb-spmv", "SpMV http://example.com/spmv",
    # operators
    "gpu -memory", "gpu NOT memory", "NOT gpu", "-gpu", "-", "+", "+gpu +memory", "gpu OR spmv",
    "(gpu OR spmv) memory", "gpu and memory", "gpu or memory", "(gpu memory", "gpu memory)", "NOT", "OR OR",
    "OR OR gpu OR", "AND gpu", "gpu AND", "NOT NOT NOT", "NOT NOT x", "x NOT OR y", "- - -", "gpu AND memory OR spmv",
    "gpu OR memory AND spmv", "gpu ANDNOT memory", "gpu ANDMAYBE memory", "gpu REQUIRE memory", "the ANDNOT gpu",
    "title:the ANDNOT gpu", "title:the ANDNOT title:of", "NOT (title:the ANDNOT title:of) a b c d",
    "(a b c d e) OR x", "(gpu OR spmv) (memory OR cache) (kernel OR matrix) sparse", "NOT (the)", "gpu NOT (the)",
    "gpu (NOT memory)", "(NOT x)", "x AND(y)", "x ( AND y )", "-gpu -memory -cache -spmv", "gpu && memory",
    "gpu || memory", "!gpu", "gpu AND NOT memory", "gpu OR NOT memory", "x OR y OR z OR w OR v",
    "gpu OR gpu", "GPU OR GPUs", "(gpu) (gpu)", "REQUIRE gpu", "gpu REQUIRE", "gpu ANDNOT", "ANDNOT gpu",
    # prefixes
    "spars*", "title:spar*", "s*", "*", "*foo", "spa*rse", "neur* net*", "gpu spars*",
    " ".join(w + "*" for w in ["alpha", "bravo", "charl", "delta", "echo", "foxtr", "golf", "hotel", "india", "julie"]),
    "gpu*" * 100, "x.year:20*", "ab* OR cd*", "NOT ab*", "x:ab*",
    # filters in the text
    "GPU year:2023-", 'GPU author:"Qian, D."', "cat:cs.DC memory", "gpu OR year:2023", "(year:2023 gpu)",
    "GPU AND year:2023", "year:abc", "year:[2020 TO", "x:year:2020", "title:year:2020", "::year:2020",
    # arXiv ids and links
    "2101.00001", "2101.00001v2", "arXiv:2101.00001", "https://arxiv.org/abs/2101.00001v3",
    "https://arxiv.org/pdf/2101.00001v1.pdf", "hep-th/9901001", "hep-th/9901001v2", "id:hep-th/9901001",
    "math.ag/0101001", "2101.00001 gpu", "see https://arxiv.org/abs/2101.00001",
    # scripts and hostile input
    "深度学习", "大規模言語モデル", "語言 模型", "深度 学习", "深度学习 gpu", "한국어 모델", "нейронные сети",
    "שלום עולם", "🙂 gpu", "gpu\x00\x07 memory\u200b", "  \x00 ", "\x1b[31mgpu\x1b[0m", "gpu\u202e", "\\",
    "gpu^", "gpu~", "[", "{gpu}", "title:(", "%s%s%n", "[a TO z]", "{a TO b}", "gpu [0 TO 9]", "title:[a TO z]",
    "a:b:c:d", ":::", "?", "??", "the of", "x" * 20_000, "gpu " * 5_000, "(" * 500 + "gpu" + ")" * 500,
    '"' * 101, "a" * 5000, "( " * 300 + "x OR y" + " )" * 300, "( " * 50 + "x y z w" + " )" * 50,
    # where analysis decides: one stem, a stop word in an Or, a chain of binary operators
    "NOT GPU OR NOT GPUs", "NOT gpu OR NOT GPU", "NOT Gpu AND NOT GPU", "x OR the", "NOT x OR the",
    "gpu OR title:the a b c",
    "a REQUIRE the", "(the) ANDNOT x", "x ANDNOT (the)", "a b c d NOT x.year:abc", "x.year:2020 x.year:2021",
    "a0 " + " ".join(f"ANDNOT w{i}" for i in range(8)), "a0 " + " ".join(f"REQUIRE w{i}" for i in range(6)),
]

# A pasted abstract with a DOI, links and colons (a long query: a share of its words).
ABSTRACT = (
    "Sparse Matrix-Sparse Vector Multiplication (SpMSpV) is a core primitive in graph traversal, sparse linear "
    "algebra, and sparse model inference. Its input vector is often dynamically sparse, so the best GPU execution "
    "path depends on both global sparsity and the local vector-block distribution. Code: "
    "https://github.com/example/db-spmspv and doi:10.1000/xyz; see also arXiv:2101.00001 note:see "
    "title:GPU (a) [b] {c} k-means SARS-CoV-2 FlashAttention C++ 802.11ax 深度学习 “quoted words” 'single quoted'"
)
HAND_WRITTEN += [
    ABSTRACT, ABSTRACT * 3, ABSTRACT + " OR gpu", "NOT " + ABSTRACT, ABSTRACT + " -memory", ABSTRACT[:5000],
    ("This paper presents CB-SpMV, a cache-friendly SpMV optimization algorithm. "
     "Code: https://github.com/example/cb-spmv and doi:10.1000/xyz note:see"),
    " ".join(["graph", "neural", "networks", "for", "sparse", "matrix", "multiplication", "on", "GPUs"] * 20),
]


def string_constants(path: Path) -> list[str]:
    """Every string literal of a Python file (queries, and much else that makes a fine query)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append(node.value)
    return found


def query_test_strings() -> list[str]:
    """The string literals of tests/test_query.py (its queries among them)."""
    return list(dict.fromkeys(string_constants(TESTS / "test_query.py")))


def suite_strings() -> list[str]:
    """The string literals of the search, command-line, web and spelling tests."""
    names = ["test_search.py", "test_cli.py", "test_web.py", "test_spelling.py", "test_feedback.py",
             "test_facets.py", "test_ranking.py"]
    seen = set(query_test_strings())
    return [s for s in dict.fromkeys(s for name in names for s in string_constants(TESTS / name)) if s not in seen]


FUZZ_EXAMPLES = 1000


def drill_vocabulary() -> tuple[list[str], list[str]]:
    """The query drill's title words and ids: from its arXiv subset when the
    shared data is there, else from the bundled corpus."""
    from drills.conftest import LISTING
    from drills.test_query_fuzzing import _TITLE_WORDS, subset_ids, title_vocabulary

    if LISTING.exists():
        import gzip
        import tempfile

        with tempfile.TemporaryDirectory() as folder:
            subset = Path(folder) / "subset.jsonl"
            with gzip.open(LISTING, "rt", encoding="utf-8") as lines:
                subset.write_text("".join(itertools.islice(lines, 2000)), encoding="utf-8")
            return title_vocabulary(subset), subset_ids(subset)
    records = corpus_records()
    words: dict[str, None] = {}
    for record in records:
        for word in re.findall(r"[^\W\d_][\w'-]{2,}", record.title):
            words.setdefault(word, None)
    return list(words)[:_TITLE_WORDS], [record.id for record in records[:50]]


def fuzzed_queries(count: int = FUZZ_EXAMPLES) -> list[str]:
    """``count`` queries from the query drill's generator, the same on every run."""
    from drills.test_query_fuzzing import query_strategy

    words, ids = drill_vocabulary()
    drawn: list[str] = []

    @settings(max_examples=count, derandomize=True, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(query=query_strategy(words, ids))
    def draw(query):
        drawn.append(query)

    draw()
    return drawn


# --- old and new, side by side ---------------------------------------------------------

def _outcome(step):
    """``("ok", value)`` or ``("error", type, message)`` of calling ``step``."""
    try:
        return ("ok", step())
    except Exception as exc:  # any exception must be the same on both sides
        return ("error", type(exc).__name__, str(exc))


def _query_facts(query):
    return None if query is None else (query, str(query), repr(query))


def old_path(text: str, schema) -> dict:
    """What the old parser makes of ``text``: parsed directly and as a search does."""
    facts = {}
    for allow_empty in (False, True):
        def run(allow_empty=allow_empty):
            parsed = old.parse(text, schema, allow_empty=allow_empty)
            again = old.relaxed(parsed, schema)
            return (parsed.text, _query_facts(parsed.query), parsed.words, parsed.notes, _query_facts(again))
        facts[f"parse allow_empty={allow_empty}"] = _outcome(run)

    def search_steps():
        notes: list[str] = []
        searched = old.clean(text, notes)
        rest, found = old.split_filters(searched)
        parsed = old.parse(rest, schema, allow_empty=True)
        return (notes, rest, found, parsed.text, _query_facts(parsed.query), parsed.words, parsed.notes,
                _query_facts(old.relaxed(parsed, schema)))
    facts["as searched"] = _outcome(search_steps)
    return facts


def new_path(text: str, schema) -> dict:
    """The same through querylang and the Whoosh translation."""
    facts = {}
    for allow_empty in (False, True):
        def run(allow_empty=allow_empty):
            parsed = new.parse(text, schema, allow_empty=allow_empty)
            again = new.relaxed(parsed, schema)
            return (parsed.text, _query_facts(parsed.query), parsed.words, parsed.notes, _query_facts(again))
        facts[f"parse allow_empty={allow_empty}"] = _outcome(run)

    def search_steps():
        notes: list[str] = []
        searched = querylang.clean(text, notes)
        rest, found = querylang.split_filters(searched)
        parsed = new.parse(rest, schema, allow_empty=True)
        return (notes, rest, found, parsed.text, _query_facts(parsed.query), parsed.words, parsed.notes,
                _query_facts(new.relaxed(parsed, schema)))
    facts["as searched"] = _outcome(search_steps)
    return facts


def mismatches(queries: list[str], schema) -> list[str]:
    """A line for each query (and way of parsing it) where old and new differ."""
    lines = []
    for text in queries:
        before, after = old_path(text, schema), new_path(text, schema)
        for step, expected in before.items():
            if after[step] != expected:
                lines.append(f"{text[:200]!r} [{step}]:\n  old {str(expected)[:600]}\n  new {str(after[step])[:600]}")
    return lines


@pytest.fixture(scope="module")
def schema(corpus_index):
    """The schema of a real index of the bundled corpus."""
    return corpus_index._current().schema


SOURCES = {
    "test_query.py strings": query_test_strings,
    "other test strings": suite_strings,
    "query drill generator": fuzzed_queries,
    "hand-written": lambda: HAND_WRITTEN,
}


@pytest.mark.parametrize("source", list(SOURCES))
def test_new_parser_and_translation_equal_the_old_parser(schema, source, capsys):
    queries = SOURCES[source]()
    if source == "query drill generator":
        assert len(queries) == FUZZ_EXAMPLES
    else:
        assert len(queries) > 50
    different = mismatches(queries, schema)
    with capsys.disabled():
        print(f"\n{source}: {len(queries)} queries compared, {len(different)} mismatches")
    assert not different, f"{len(different)} of {len(queries)} differ:\n" + "\n".join(different[:20])


def test_nesting_past_the_limit_is_refused(schema):
    """The one place the new parser parts from the old one on purpose: parentheses
    nested past 300 ran the old parser out of stack somewhere past 320 (how far
    depended on its caller), and a chain of ANDNOTs took it exponential time
    (16 took 40 s); both are now refused at 300 with one message."""
    deep = "( " * 400 + "x OR y" + " )" * 400
    with pytest.raises(QueryError, match="cannot parse the query"):
        old.parse(deep, schema)
    with pytest.raises(QueryError, match="parentheses nested more than 300 deep"):
        new.parse(deep, schema)
    assert new.parse("( " * 300 + "x OR y" + " )" * 300, schema).query == old.parse("x OR y", schema).query
    chain = "a0 " + " ".join(f"ANDNOT w{i}" for i in range(301))
    with pytest.raises(QueryError, match="ANDNOT, ANDMAYBE or REQUIRE chained more than 300 deep"):
        new.parse(chain, schema)
    assert new.parse(chain.rsplit(" ANDNOT ", 1)[0], schema).query is not None


def test_the_comparison_sees_differences(schema):
    """The comparison itself is not blind: a different query or message counts."""
    assert old_path("gpu", schema) != new_path("memory", schema)
    assert old_path("auth:qian", schema) != new_path("tilte:qian", schema)
    assert old_path("gpu", schema) == new_path("gpu", schema)


# --- the tree itself --------------------------------------------------------------------

def test_keyword_query_tree_is_both_words_or_them_joined():
    assert parse("SpMV GPU").tree == Or((And((Word("SpMV"), Word("GPU"))), Joined(("SpMV", "GPU"))))
    assert parse("fail slow disks").tree == Or((
        And((Word("fail"), Word("slow"), Word("disks"))),
        And((Word("fail"), Joined(("slow", "disks")))),
        And((Joined(("fail", "slow")), Word("disks"))),
    ))
    # A hyphenated word is searched whole (the engine tries joined and parts); no joining then.
    assert parse("fail-slow disks").tree == And((Word("fail-slow"), Word("disks")))
    assert parse("GPUs").tree == Word("GPUs")


def test_phrases_fields_and_prefixes():
    assert parse('title:"sparse matrix"').tree == Phrase("sparse matrix", "title")
    assert parse('"cache-friendly"').tree == Phrase("cache-friendly")
    assert parse('ti:"sparse matrix" GPU').tree == And((Phrase("sparse matrix", "title"), Word("GPU")))
    assert parse("title:gpu au:qian").tree == And((FieldWord("title", "gpu"), FieldWord("authors", "qian")))
    assert parse("spars*").tree == Prefix("spars")
    assert parse("title:spar* gpu").tree == And((Prefix("spar", "title"), Word("gpu")))
    assert parse("2101.00001v2").tree == FieldWord("id", "2101.00001")


def test_operators():
    assert parse("gpu -memory").tree == And((Word("gpu"), Not(Word("memory"))))
    assert parse("gpu NOT memory").tree == parse("gpu -memory").tree
    assert parse("gpu OR spmv").tree == Or((Word("gpu"), Word("spmv")))
    assert parse("(gpu OR spmv) memory").tree == And((Or((Word("gpu"), Word("spmv"))), Word("memory")))
    assert parse("gpu REQUIRE memory").tree == Require(Word("gpu"), Word("memory"))
    assert parse("gpu and memory").tree == parse("gpu memory").tree  # lower-case: stop words


def test_long_query_needs_a_share_of_its_words():
    # Seven words once "for" and "on" are dropped: 5 % of 7 rounded up is 1, at least 2.
    question = "graph neural networks for sparse matrix multiplication on GPUs"
    words = ["graph", "neural", "networks", "sparse", "matrix", "multiplication", "GPUs"]
    assert parse(question).tree == MinMatch(tuple(map(Word, words)), 2)
    # Sixty distinct words: 5 % is 3.
    many = [f"w{i}" for i in range(60)]
    assert parse(" ".join(many)).tree == MinMatch(tuple(map(Word, many)), 3)
    # In a long query a hyphenated word counts as its parts.
    assert parse("fail-slow disks in large clusters").tree == MinMatch(
        tuple(map(Word, ["fail", "slow", "disks", "large", "clusters"])), 2)
    # A phrase with no word counts towards the share, then matches nothing.
    assert parse('a1 b1 c1 "?!"').tree == MinMatch((Word("a1"), Word("b1"), Word("c1")), 2)


def test_parsed_query_carries_text_words_and_notes():
    parsed = parse("gpu -memory “cache-friendly”")
    assert (parsed.text, parsed.words, parsed.notes) == ('gpu NOT memory "cache-friendly"', ["gpu"], [])
    capped = parse(" ".join(f"ab{i}*" for i in range(10)))
    assert capped.notes == ["only the first 8 prefixes were expanded; the others were searched as words"]
    assert parse("the of", allow_empty=True).tree is None


@pytest.mark.parametrize(("text", "message"), [
    ("auth:qian", "unknown field 'auth:'"),
    ("the of", "the query 'the of' has no searchable words"),
    ("-gpu", "the query 'NOT gpu' only excludes words"),
    ("OR OR", "the query is empty"),
    ("s*", "'s*': a wildcard needs at least 2 letters before it"),
    ("year:", "'year:' has no value (write e.g. year:2023)"),
])
def test_errors_need_no_engine(text, message):
    with pytest.raises(QueryError, match=re.escape(message)):
        parse(text)


def test_relaxed_is_any_one_word():
    assert relaxed(parse("SpMV zebra")) == Or((Word("SpMV"), Word("zebra")))
    assert relaxed(parse("the SpMV of zebra")) == Or((Word("SpMV"), Word("zebra")))
    assert relaxed(parse("SpMV")) is None


def test_trees_are_frozen_and_hashable():
    tree = parse("SpMV GPU").tree
    assert hash(tree) == hash(parse("SpMV GPU").tree)
    with pytest.raises(AttributeError):
        tree.children = ()


def test_querylang_imports_no_search_engine():
    folder = REPO / "searchengine" / "querylang"
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(name.split(".")[0] == "whoosh" for name in names), path.name
    code = ("import sys, searchengine.querylang as q; q.parse('SpMV GPU -memory \"sparse matrix\" spars*'); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'whoosh'))")
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert json.loads(shown.stdout.replace("'", '"')) == []


def test_query_language_constants_match_the_index():
    from searchengine import analysis
    from searchengine.querylang import syntax, text
    from searchengine.schema import DEFAULT_FIELDS, build_schema

    schema = build_schema()
    assert set(schema.names()) == syntax.INDEX_FIELDS
    assert DEFAULT_FIELDS == querylang.DEFAULT_FIELDS
    for name in ("CJK_CHARS", "DASHES", "TOKEN_PATTERN", "STOP_WORDS"):
        assert getattr(text, name) == getattr(analysis, name), name
    assert (old.ALL_TERMS_UP_TO, old.MIN_SHOULD_MATCH, old.LONG_QUERY_MIN, old.MIN_PREFIX) == (
        syntax.ALL_TERMS_UP_TO, syntax.MIN_SHOULD_MATCH, syntax.LONG_QUERY_MIN, syntax.MIN_PREFIX)
    assert all(old.required_terms(n) == querylang.required_terms(n) for n in range(200))


SAMPLE_TEXTS = ["GPUs", "the", "IT", "it", "fail-slow", "In-To", "HEr", "C++", "深度学习", "深度", "FlashAttention",
                "IntoThe", "802.11ax", "Schrödinger", "x²", "½", "e\u0301\u0301", "Z\u0335\u0321", "①", "ﬁnance",
                "𝐆𝐏𝐔", "ǅ", "İstanbul", "C#x", "HE-r", "the of and", "fail-slow of GPUs"]


def test_text_tokens_follow_the_analyzer():
    """querylang.text keeps as many tokens as the index's analyzers (before
    stemming): for the samples, and for every 37th code point alone and in words."""
    from searchengine.analysis import name_analyzer, text_analyzer
    from searchengine.querylang.text import name_tokens, text_tokens

    text, names = text_analyzer(), name_analyzer()
    points = [chr(c) for c in range(0x20, 0x30000, 37) if not 0xD800 <= c <= 0xDFFF]
    for sample in SAMPLE_TEXTS + [w for ch in points for w in (ch, "a" + ch, "Ab" + ch + "-cd")]:
        assert len(text_tokens(sample)) == len(list(text(sample, mode="query"))), sample
        assert len(text_tokens(sample, phrase=True)) == len(list(text(sample, mode="phrase"))), sample
        assert len(name_tokens(sample)) == len(list(names(sample))), sample
