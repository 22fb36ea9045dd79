"""What a one-shot command-line search leaves out, and that leaving it out changes nothing.

A new process pays for every import and every first use: the shortcuts
tested here (the token pattern without CJK ranges and in Python's ``re``,
stemming in snippets only where a query term can match, NLTK and Whoosh
modules loaded on first use) must give exactly what the full path gives.
"""

import itertools
import json
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
import regex

from searchengine.analysis import snippets
from searchengine.analysis import tokens as text
from searchengine.analysis.folding import fold
from searchengine.engines.whoosh.analysis import text_analyzer

from conftest import corpus_records

REPO = Path(__file__).resolve().parent.parent

FULL_RE = re.compile(text.TOKEN_PATTERN)
FULL_REGEX = regex.compile(text.TOKEN_PATTERN, regex.UNICODE | regex.MULTILINE | regex.DOTALL)

TEXTS = [
    "CB-SpMV:A C++ vs C# on 802.11ax; 10,000-GPU e.g. the US",
    "Schrödinger's cat, naïve Bayes and Bose–Einstein condensates at 2×10^5 K ± 3%",
    "x ≤ y → z ≈ w; ∞-categories ∘ functors",
    "大规模语言模型的研究 and ハイパー parameters, 한국어 text",
    "ﬁnite ＧＰＵ 𝐱 values",
    "e\u0301te\u0301 (combining accents) and a stray \u0301mark",
    "the Orin GPU\u0301 92s pipeline, x\u0331 and q\u0303-deformed",  # marks NFKC leaves alone
    "x² + ½ y",  # other numbers: word characters in re, not in regex
    "snake\u203fcase and zero\u200dwidth",  # connector punctuation, a format character
    "Ⓐ circled and 🄰 squared letters",  # other symbols with the Alphabetic property
    "",
]


def _records(path: Path, limit: int) -> list[dict]:
    import gzip

    with gzip.open(path, "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in itertools.islice(lines, limit)]


def test_the_token_shortcuts_find_what_the_full_pattern_finds():
    for sample in TEXTS:
        for value in (sample, unicodedata.normalize("NFKC", sample)):
            assert text.word_pattern(value).findall(value) == FULL_RE.findall(value), value
            assert text.analyzed_pattern(value).findall(value) == FULL_REGEX.findall(value), value
    assert text.analyzed_pattern(TEXTS[1]) is text.analyzed_pattern(TEXTS[2])  # math symbols: the same engine
    assert text.analyzed_pattern(TEXTS[0]).flags & re.ASCII  # ASCII text: the ASCII spelling
    assert isinstance(text.analyzed_pattern(TEXTS[2]), re.Pattern)
    assert isinstance(text.analyzed_pattern(TEXTS[6]), re.Pattern)  # combining marks: re, counted as regex does
    assert not isinstance(text.analyzed_pattern(TEXTS[7]), re.Pattern)  # ² and ½: regex
    assert not isinstance(text.analyzed_pattern(TEXTS[3]), re.Pattern)  # CJK: the full pattern
    assert FULL_REGEX.findall(TEXTS[6])[:4] == ["the", "Orin", "GPU\u0301", "92s"]
    assert text.word_pattern(TEXTS[3]).pattern == text.TOKEN_PATTERN
    assert text.word_pattern(TEXTS[1]).pattern != text.TOKEN_PATTERN
    assert [text.is_cjk_run(w) for w in ("语言模型", "ハイパー", "한국어", "语a", "ab", "é")] == [
        True,
        True,
        True,
        False,
        False,
        False,
    ]


def test_re_and_regex_agree_on_word_characters_in_the_categories_said_to_agree():
    # The premise of analyzed_pattern's shortcut, for the installed Python and regex.
    plain_re, plain_regex = re.compile(r"[^\W_]|\d"), regex.compile(r"[^\W_]|\d", regex.UNICODE)
    disagree = [
        hex(cp)
        for cp in range(0x80, sys.maxunicode + 1)
        if unicodedata.category(chr(cp)) in text.SAME_IN_RE_AND_REGEX
        and bool(plain_re.match(chr(cp))) != bool(plain_regex.match(chr(cp)))
    ]
    assert disagree == []
    marks = [chr(cp) for cp in range(0x300, 0x370)]  # what analyzed_pattern's re pattern adds
    assert [m for m in marks if plain_re.match(m) or not plain_regex.match(m)] == []


def test_the_token_shortcuts_on_real_abstracts(shared_data):
    from shareddata import LISTING

    for record in _records(LISTING, 3000):
        for value in (record["title"], record["summary"], " ".join(record["authors"])):
            value = unicodedata.normalize("NFKC", value)
            assert text.analyzed_pattern(value).findall(value) == FULL_REGEX.findall(value)
            assert text.word_pattern(value).findall(value) == FULL_RE.findall(value)


def _highlights(records, queries) -> list:
    """``(Whoosh's fragments, the snippets' fragments)`` per query and text, as
    ``(start, end, [match spans])``: the whole analyzer against the shortcut."""
    from whoosh import highlight

    analyzer = text_analyzer()
    shortcut = snippets.WordAnalysis(analyzer)
    fragmenter = highlight.ContextFragmenter(maxchars=snippets.FRAGMENT_CHARS, surround=snippets.CONTEXT_CHARS)
    out = []
    for query in queries:
        terms = frozenset(t.text for t in analyzer(query, mode="query"))
        for record in records:
            for value in (record["title"], record["abstract"]):
                full = highlight.top_fragments(
                    fragmenter.fragment_tokens(
                        value,
                        highlight.set_matched_filter(
                            analyzer(value, chars=True, mode="query", removestops=False), terms
                        ),
                    ),
                    snippets.FRAGMENTS,
                    highlight.BasicFragmentScorer(),
                    highlight.FIRST,
                )
                found = snippets._context_fragments(len(value), shortcut.text(value, terms), terms)
                fast = snippets._best(found, snippets.FRAGMENTS)
                out.append(
                    (
                        [(f.startchar, f.endchar, [(m.startchar, m.endchar) for m in f.matches]) for f in full],
                        [(f.start, f.end, [m[1:] for m in f.matches]) for f in fast],
                    )
                )
    return out


def test_snippets_stemming_only_possible_matches_equal_those_of_the_whole_analyzer():
    records = [{"title": r.title, "abstract": r.abstract} for r in corpus_records()]
    found = _highlights(
        records,
        [
            "SpMV GPU",
            "sparse matrices",
            "fail-slow detection",
            "FlashAttention",
            "training large models",
            "cache-friendly",
            "graph neural networks",
        ],
    )
    assert [full for full, _ in found] == [fast for _, fast in found]
    assert sum(1 for full, _ in found if full) > 40  # the queries do match


def test_snippets_shortcut_on_real_abstracts(shared_data):
    from shareddata import LISTING

    records = [{"title": r["title"], "abstract": r["summary"]} for r in _records(LISTING, 300)]
    found = _highlights(
        records,
        [
            "SpMV GPU",
            "quantum error correction",
            "language models reasoning",
            "diffusion image",
            "reinforcement learning robots",
        ],
    )
    assert [full for full, _ in found] == [fast for _, fast in found]
    assert sum(1 for full, _ in found if full) > 200


def test_a_stem_starts_with_its_folded_word():
    # What the snippet shortcut relies on (InflectionStemFilter's docstring).
    stem = text_analyzer().items[-1].stem_text
    words = {w for r in corpus_records() for w in FULL_REGEX.findall(f"{r.title} {r.abstract}")}
    words |= {
        "ies",
        "ied",
        "dying",
        "skies",
        "axes",
        "corpora",
        "genera",
        "radii",
        "gases",
        "matrices",
        "GPUs",
        "AWS",
        "ﬁnite",
        "İstanbul",
        "Æther",
        "œuvre",
        "criteria",
        "schemata",
        "menus",
        "viruses",
    }
    assert len(words) > 1000
    assert [w for w in words if stem(w)[:1] != fold(w)[:1]] == []


def _run_search(index_dir: Path, *options: str) -> dict:
    code = (
        "import sys, runpy\n"
        f"sys.argv = ['searchengine', 'search', 'SpMV GPU', '--index', {str(index_dir)!r}, *{options!r}]\n"
        "try:\n    runpy.run_module('searchengine', run_name='__main__')\n"
        "except SystemExit as exc:\n    assert not exc.code, exc.code\n"
        "import types\n"
        "names = ('flask', 'waitress', 'opensearchpy', 'numpy', 'regex', 'nltk', 'nltk.redos', "
        "'whoosh.lang.morph_en', 'whoosh.qparser', 'searchengine.indexer', 'searchengine.readers')\n"
        "print({n: type(sys.modules[n]).__name__ if n in sys.modules else None for n in names}, "
        "file=sys.stderr)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert result.returncode == 0, result.stderr
    return eval(result.stderr.strip().splitlines()[-1])


def test_a_command_line_search_loads_no_server_cluster_or_indexing_module(corpus_index_dir):
    # Flask, waitress and opensearch-py belong to other commands; numpy to
    # facet counts over 50,000 hits or more; regex only to text that re cuts
    # differently; nltk's package and redos, Whoosh's English morphology,
    # Whoosh's query parser (for fields outside the query language) and the
    # indexer to no search at all.
    expected = {
        "flask": None,
        "waitress": None,
        "opensearchpy": None,
        "numpy": None,
        "regex": None,
        "nltk": None,
        "nltk.redos": None,
        "whoosh.lang.morph_en": "_Deferred",
        "whoosh.qparser": None,
        "searchengine.indexer": None,
        "searchengine.readers": None,
    }
    assert _run_search(corpus_index_dir) == expected
    assert _run_search(corpus_index_dir, "--facets", "year,author,category", "--json") == expected


def test_deferred_modules_are_the_real_ones_once_used():
    code = (
        "import sys\n"
        "import searchengine.engines.whoosh.engine\n"
        "from searchengine.engines.whoosh.analysis import text_analyzer\n"
        "print([t.text for t in text_analyzer()('GPUs running')])\n"
        "from whoosh import query\n"
        "kind = lambda name: type(sys.modules[name]).__name__\n"
        "before = kind('whoosh.lang.morph_en')\n"
        "print(before, sorted(query.terms.variations('rendering'))[:3], kind('whoosh.lang.morph_en'))\n"
        "porter = sys.modules['nltk.stem.porter']\n"
        "print('nltk.redos' in sys.modules, porter.redos.DEFAULT_TIMEOUT > 0, kind('nltk.redos'))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert result.stdout.splitlines() == [
        "['gpu', 'run']",
        "_Deferred ['render', 'rendering', 'renderinged'] module",
        "False True module",
    ], result.stderr


@pytest.mark.parametrize("name", ["open_index", "build_index", "QueryError", "Record", "SearchResults"])
def test_the_package_still_offers_its_public_names(name):
    import searchengine

    assert name in searchengine.__all__ and name in dir(searchengine)
    assert getattr(searchengine, name).__name__ == name
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        searchengine.nothing  # noqa: B018
