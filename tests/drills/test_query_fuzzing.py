"""Query fuzzing: generated hostile queries and options against the arXiv subset index.

Hypothesis draws queries from a grammar that mixes real title words of the
subset with the query language's syntax and its abuses: operators (upper
and lower case, dangling, doubled), straight and typographic quotes, every
kind of bracket, field prefixes (known, unknown, empty), wildcards, fuzzy
and boost marks, arXiv ids and URLs, very long words and queries, control
characters, combining marks, right-to-left text, emoji and other scripts.
Search options (filters, sort, page, limit, facets, time budget) are drawn
alongside. For every search:

* the only exception is the documented :class:`~searchengine.errors.QueryError`,
  with a one-line message;
* it returns within its time budget, with the margin explained at
  :data:`BUDGET_MARGIN`;
* the results are consistent: hits within the page, relevance order,
  match offsets inside their text, facet counts agreeing with the hits,
  filters holding on every hit.

A sample of the same queries goes through ``searchengine search`` (click's
``CliRunner``): exit 0, 1 or 2, a one-line error, never a traceback.

Environment:

* ``DRILL_QUERY_PROFILE=long``: many more examples, a fresh random seed each
  run (the default profile is derandomized, so CI always tries the same
  queries);
* ``DRILL_QUERY_EXAMPLES=N``: examples of the API drill (default 1,000; the CLI drill runs
  a fifteenth as many, each a whole command);
* ``DRILL_RECORDS``: size of the indexed subset (see ``conftest.py``).
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from collections import Counter

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from searchengine import open_index
from searchengine.errors import QueryError
from searchengine.limits import DEFAULT_TIME_BUDGET, MAX_DEPTH, MAX_LIMIT
from searchengine.querylang import FIELD_ALIASES

# No shrinking by default: on a loaded machine shrinking a slow failure can
# take many minutes of the CI budget; the failing example is printed as found.
settings.register_profile(
    "drills",
    max_examples=1000,
    derandomize=True,
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
settings.register_profile(
    "long",
    max_examples=5000,
    derandomize=False,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
PROFILE = os.environ.get("DRILL_QUERY_PROFILE", "drills")
EXAMPLES = int(os.environ.get("DRILL_QUERY_EXAMPLES", 0)) or settings.get_profile(PROFILE).max_examples

# The documented budget bounds the budgeted steps of a search together: the
# check of quoted phrases, the feedback round, did-you-mean and ranking
# through Whoosh's matchers share one deadline, except that ranking keeps a
# quarter of the budget even when the steps before it used it up: 1.25
# budgets in all. Matching counts against the deadline too (reading
# positions, checking phrases, combining ORed words), and a long question
# keeps its 80 rarest words. Filters, facet counts and snippets are bounded
# by the query caps instead (4,000 characters, 100 per word, 8 prefixes, 8
# phrases, 100 terms) and are not timed by the product; one second covers
# them. The limit is checked on the CPU time of the searching thread: the
# machine may be shared (CI runners, neighbours' load tests), and wall time
# there measures the neighbours too (one search measured 7 s of wall time
# and 0.6 s alone).
BUDGET_MARGIN = 1.0


def time_limit(budget: float) -> float:
    """CPU seconds a search with ``budget`` may take in this drill (see :data:`BUDGET_MARGIN`)."""
    return 1.25 * budget + BUDGET_MARGIN


# --- the query grammar --------------------------------------------------------

_TITLE_WORDS = 600  # distinct title words the grammar draws from


def title_vocabulary(subset) -> list[str]:
    """Distinct words (3+ letters) of the subset's titles, in first-seen order."""
    words: dict[str, None] = {}
    with open(subset, encoding="utf-8") as lines:
        for line in lines:
            for word in re.findall(r"[^\W\d_][\w'-]{2,}", json.loads(line)["title"]):
                words.setdefault(word, None)
            if len(words) >= _TITLE_WORDS:
                break
    return list(words)


def subset_ids(subset, count: int = 50) -> list[str]:
    ids = []
    with open(subset, encoding="utf-8") as lines:
        for line in lines:
            ids.append(json.loads(line)["id"])
            if len(ids) >= count:
                break
    return ids


OPERATORS = [
    "AND",
    "OR",
    "NOT",
    "ANDNOT",
    "ANDMAYBE",
    "and",
    "or",
    "not",
    "Or",
    "AND AND",
    "OR OR",
    "NOT NOT",
    "AND OR NOT",
    "&&",
    "||",
    "!",
    "-",
    "+",
    "--",
    "++",
    "-+",
    "~",
    "^",
    ":",
]
QUOTES = ['"', "'", "“", "”", "„", "‟", "‘", "’", "‚", "«", "»", "`", "＂"]
BRACKETS = list("()[]{}<>") + ["（", "）", "【", "】", "⟨", "⟩"]
UNKNOWN_FIELDS = [
    "foo",
    "Title",
    "TI",
    "x-y",
    "a1",
    "über",
    "url",
    "year2",
    "author_",
    "f",
    "ID",
    "http",
    "arxiv",
    "doi",
    "src",
    "CB-SpMV",
    "NetWeaver",
]
FIELDS = sorted(FIELD_ALIASES) + UNKNOWN_FIELDS
FIELD_VALUES = [
    "2025",
    "2024-2025",
    ">=2025",
    "<2025",
    "-2024",
    "2025-",
    "1800",
    "99999",
    "abc",
    "--",
    ">",
    "=2025",
    "cs.CV",
    "cs",
    "cs.*",
    "CS.cv",
    "q-bio.NC",
    "x.y.z",
    "*",
    "Qian",
    '"Qian, D."',
    "D. Qian",
    "Smith,",
    "2501.00001",
    "2501.00001v2",
    '""',
    '"',
    "(",
    "*:*",
    "[a TO z]",
    "{0 TO 9}",
]
OLD_IDS = ["hep-th/9901001", "math.AG/0101001v3", "cond-mat/0102536", "HEP-TH/9901001"]
URLS = [
    "https://arxiv.org/abs/{id}",
    "http://arxiv.org/pdf/{id}v1",
    "arxiv.org/abs/{id}",
    "https://arxiv.org/pdf/{id}.pdf",
    "https://www.arxiv.org/html/{id}/",
    "https://example.com/?q={id}",
    "ftp://x/{id}",
    "https://arxiv.org/abs/",
    "arXiv:{id}",
    "ARXIV:{id}v12",
    "{id}v",
    "{id}v0",
    "{id}.pdf",
    "doi:10.48550/arXiv.{id}",
]
WEIRD = [
    "\x00",
    "\x00\x00\x00",
    "\x01\x02\x1b[31m",
    "\x7f",
    "\x85",
    "\u2028",
    "\u2029",
    "\t",
    "\n",
    "\r\n",
    "\x0b\x0c",
    "\u200b",
    "\u200d",
    "\ufeff",
    "\u00ad",
    "\ufffd",
    "\uffff",
    "\U0010ffff",
    "\ue000",
    "\udcff",
    "\ud800",
    "e\u0301\u0301\u0301\u0301",
    "\u0301",
    "Z\u0335\u0321\u0322\u0327\u0328" * 5,
    "\u202eevil\u202c",
    "\u200f\u200e",
    "שלום עולם",
    "מודל שפה",
    "نموذج لغوي",
    "العربية",
    "😀",
    "👩🏽‍🔬",
    "🏳️‍🌈",
    "🇫🇷",
    "ＳｐＭＶ",
    "ＧＰＵ ｍｅｍｏｒｙ",
    "深度学习",
    "大規模言語モデル",
    "한국어",
    "нейронные сети",
    "Ελληνικά",
    "हिन्दी",
    "ภาษาไทย",
    "ﬁnance",
    "Straße",
    "ǅ",
    "İstanbul",
    "ǈ",
    "x²",
    "½",
    "①",
    "∑∫∂",
    "𝔊𝔓𝔘",
    "𝐆𝐏𝐔",
]


def query_strategy(words: list[str], ids: list[str]):
    """A strategy for hostile query text built from ``words`` and ``ids`` (see the module docstring)."""
    word = st.sampled_from(words)
    cased = st.one_of(word, word.map(str.upper), word.map(str.lower), word.map(str.title))
    paper = st.one_of(st.sampled_from(ids), st.sampled_from(OLD_IDS))

    def quoted(args):
        opening, closing, content, closed = args
        return opening + " ".join(content) + (closing if closed else "")

    phrase = st.tuples(
        st.sampled_from(QUOTES), st.sampled_from(QUOTES), st.lists(cased, max_size=4), st.booleans()
    ).map(quoted)
    fielded = st.builds(
        lambda name, value: f"{name}:{value}",
        st.sampled_from(FIELDS),
        st.one_of(st.just(""), cased, phrase, st.sampled_from(FIELD_VALUES), paper),
    )
    wildcard = st.one_of(
        word.map(lambda w: w[:3] + "*"),
        word.map(lambda w: w[:1] + "*"),
        word.map(lambda w: "*" + w),
        word.map(lambda w: w[:2] + "?" + w[3:]),
        word.map(lambda w: w + "?"),
        word.map(lambda w: w[:2] + "*" + w[3:]),
        st.sampled_from(
            ["*", "?", "**", "*?*", "spars*", "spar?e", "a*", "ab*", "*foo", "neur* net*", "co*", "pr*", "in*"]
        ),
    )
    fuzzy = st.builds(
        lambda w, mark: w + mark,
        cased,
        st.sampled_from(["~", "~1", "~2", "~0.5", "~~", "^2", "^0.5", "^", "^-1", "^1e9", "^2~1", "~^"]),
    )
    url = st.builds(lambda pattern, i: pattern.format(id=i), st.sampled_from(URLS), paper)
    long = st.one_of(
        st.builds(lambda w, n: w * n, word, st.integers(20, 400)),  # one very long word
        st.builds(lambda ws: " ".join(ws), st.lists(word, min_size=50, max_size=900)),  # many terms
        st.builds(lambda w, n: (w + " OR ") * n + w, word, st.integers(10, 300)),
        st.builds(lambda n: "(" * n + "x" + ")" * n, st.integers(10, 500)),
        st.builds(lambda n: '"' * n, st.integers(2, 3000)),
        st.builds(
            lambda c, n: c * n,
            st.sampled_from(["a", "-", "*", ":", "é", "\x00", " ", "😀", "深"]),
            st.integers(100, 6000),
        ),
        # The costliest parts, many times over: prefixes, quoted phrases, fielded phrases.
        st.builds(lambda ws: " ".join(w[:2] + "*" for w in ws), st.lists(word, min_size=10, max_size=700)),
        st.builds(lambda ws: " ".join(f'"{w}"' for w in ws), st.lists(word, min_size=5, max_size=400)),
        st.builds(
            lambda pairs: " OR ".join(f'title:"{a} {b}"' for a, b in pairs),
            st.lists(st.tuples(word, word), min_size=5, max_size=200),
        ),
    )
    weird = st.sampled_from(WEIRD)
    random_text = st.text(max_size=40)
    atom = st.one_of(
        cased,
        cased,
        cased,
        st.sampled_from(OPERATORS),
        phrase,
        st.sampled_from(BRACKETS),
        fielded,
        wildcard,
        fuzzy,
        paper,
        url,
        weird,
        random_text,
    )

    def bracketed(args):
        (opening, closing), inner = args
        return opening + " ".join(inner) + closing

    group = st.tuples(
        st.sampled_from([("(", ")"), ("[", "]"), ("{", "}"), ("<", ">"), ("(", ""), ("", ")"), ("((", ")")]),
        st.lists(atom, min_size=1, max_size=4),
    ).map(bracketed)
    separator = st.sampled_from([" ", " ", " ", "", "  ", "\t", "\n", "\u3000", "\u00a0"])
    pieces = st.lists(st.tuples(st.one_of(atom, atom, group), separator), max_size=10)
    composed = pieces.map(lambda parts: "".join(piece + sep for piece, sep in parts))
    return st.one_of(
        composed,
        composed,
        composed,
        composed,
        long,
        paper,
        url,
        random_text,
        st.builds(lambda a, b: a + b, long, composed),
    )


YEAR_OPTIONS = {  # option value → (low, high) every hit's year must lie in
    "2025": (2025, 2025),
    "2024-2025": (2024, 2025),
    ">=2026": (2026, None),
    "-2024": (None, 2024),
    "2025-": (2025, None),
    "<2026": (None, 2025),
    "1800": (1800, 1800),
}
BAD_YEARS = ["", "abc", "20256", "2025-2024x", ">", "2025..2026"]
CATEGORY_OPTIONS = ["cs.CV", "cs.CL", "cs", "cs.*", "CS.ai", "math", "q-bio.NC", "stat.ML"]
BAD_CATEGORIES = ["", "cs..CV", "*", "cs.CV!", "ÿ"]
AUTHOR_OPTIONS = ["Wang", "Li, X.", "Y. Zhang", "zhang", "José", "Nobody Atall"]


def options_strategy():
    """Keyword options for ``SearchIndex.search``: mostly valid; one in five carries one bad value."""
    valid = st.fixed_dictionaries(
        {},
        optional={
            "year": st.lists(st.sampled_from(sorted(YEAR_OPTIONS)), max_size=2),
            "category": st.lists(st.sampled_from(CATEGORY_OPTIONS), max_size=2),
            "author": st.lists(st.sampled_from(AUTHOR_OPTIONS), max_size=2),
            "primary_only": st.booleans(),
            "sort": st.sampled_from([None, "relevance", "newest", "oldest", "title"]),
            "page": st.one_of(st.integers(1, 3), st.sampled_from([50, 1000])),
            "limit": st.one_of(st.integers(1, 20), st.just(MAX_LIMIT)),
            "facets": st.sampled_from(
                ["", "year", "author", "category", "year,author,category", "category,year", "year,,"]
            ),
            "facet_size": st.sampled_from([1, 3, 10, 1000]),
            "time_budget": st.sampled_from([0.05, 0.5]),
        },
    )
    bad = st.one_of(
        st.fixed_dictionaries({"year": st.lists(st.sampled_from(BAD_YEARS), min_size=1, max_size=2)}),
        st.fixed_dictionaries({"category": st.lists(st.sampled_from(BAD_CATEGORIES), min_size=1, max_size=2)}),
        st.fixed_dictionaries({"author": st.just([""])}),
        st.fixed_dictionaries({"sort": st.sampled_from(["score", "", "NEWEST"])}),
        st.fixed_dictionaries({"page": st.sampled_from([0, -1, 1001])}),
        st.fixed_dictionaries({"limit": st.sampled_from([0, -5, MAX_LIMIT + 1])}),
        st.fixed_dictionaries({"facets": st.sampled_from(["bogus", "year,bogus"])}),
        st.fixed_dictionaries({"facet_size": st.sampled_from([0, 1001])}),
    )
    with_bad = st.builds(lambda good, wrong: {**good, **wrong}, valid, bad)
    return st.integers(0, 9).flatmap(lambda n: with_bad if n < 2 else valid)


# --- the properties -------------------------------------------------------------


class Tally:
    """What the drill saw: queries searched, QueryErrors, the slowest search (by CPU time)."""

    def __init__(self) -> None:
        self.tried = 0
        self.query_errors = 0
        self.slowest = (0.0, 0.0, "", {})
        self.longest_wall = 0.0

    def searched(self, seconds: float, cpu: float, query: str, options: dict) -> None:
        self.tried += 1
        self.longest_wall = max(self.longest_wall, seconds)
        if cpu > self.slowest[1]:
            self.slowest = (seconds, cpu, query, dict(options))


@pytest.fixture(scope="module")
def index(arxiv_index_dir):
    index = open_index(arxiv_index_dir)
    index.search("warm up", facets="year,author,category", sort="title")  # load the columns once
    yield index
    index.close()


@pytest.fixture(scope="module")
def vocabulary(arxiv_subset):
    return title_vocabulary(arxiv_subset), subset_ids(arxiv_subset)


def _one_line(message: str) -> bool:
    return bool(message.strip()) and "\n" not in message and "\r" not in message


def _has_own_filter(query: str, options: dict, facet: str) -> bool:
    """Whether the facet's own filter may be active (then its counts ignore it)."""
    names = {"year": "year", "author": "author|au", "category": "category|cat"}[facet]
    return bool(options.get(facet)) or re.search(rf"(?i)(?<![\w:])(?:{names}):", query) is not None


def check_spans(spans, text: str) -> None:
    position = 0
    for start, end in spans:
        assert position <= start < end <= len(text), (spans, text)
        position = end


def check_results(results, query: str, options: dict, doc_count: int) -> None:
    """The invariants every successful search keeps, checked against the hits themselves."""
    limit, page = options.get("limit", 10), options.get("page", 1)
    hits, total = results.hits, results.total
    assert 0 <= total <= doc_count
    start = (page - 1) * limit
    page_size = max(0, min(limit, total - start))
    if results.timed_out:  # ranking stopped: the hits found so far
        assert len(hits) <= page_size and results.notes, (len(hits), total, start, limit)
    else:
        assert len(hits) == page_size, (len(hits), total, start, limit)
    # pages that paging reaches: none past hit MAX_DEPTH
    assert results.page == {"number": page, "size": limit, "pages": min(math.ceil(total / limit), MAX_DEPTH // limit)}
    ids = [hit.id for hit in hits]
    assert len(set(ids)) == len(ids), "a document listed twice on one page"
    sort = options.get("sort") or "relevance"
    if sort == "relevance":
        # A query read as an author's name lists their papers first, newest first (score 0).
        listed = max(0, min(limit, results.author["papers"] - start)) if results.author else 0
        assert all(hit.score == 0.0 for hit in hits[:listed]), hits[:listed]
        scores = [hit.score for hit in hits[listed:]]
        assert scores == sorted(scores, reverse=True), scores
    elif sort in ("newest", "oldest"):
        years = [hit.year for hit in hits]
        known = [y for y in years if y is not None]
        assert known == sorted(known, reverse=sort == "newest"), years
        assert years[len(known) :] == [None] * (len(years) - len(known)), "unknown years come last"
    for hit in hits:
        check_spans(hit.snippet_matches, hit.snippet)
        check_spans(hit.title_matches, hit.title)
        years = [YEAR_OPTIONS[text] for text in options.get("year", ())]  # bad ones raised QueryError
        if years:
            assert hit.year is not None and any(
                (lo is None or hit.year >= lo) and (hi is None or hit.year <= hi) for lo, hi in years
            ), (hit.year, years)
        codes = [c.lower() for c in (hit.categories[:1] if options.get("primary_only") else hit.categories)]
        wanted = [c.lower().removesuffix(".*") for c in options.get("category", ())]
        if wanted:
            assert any(code == w or code.startswith(w + ".") for w in wanted for code in codes), (codes, wanted)
    for name, values in results.facets.items():
        counts = [v["count"] for v in values]
        assert all(count >= 1 for count in counts), values
        known = [v for v in values if v["value"] is not None]
        assert values[len(known) :] == [v for v in values if v["value"] is None], "the unknown bucket comes last"
        if name == "year":
            years = [v["value"] for v in known]
            assert years == sorted(years, reverse=True), years
        elif name == "author":
            # The authors an author filter chose are pinned first, then the rest, each by count.
            ordered = [(not v["selected"], -v["count"], v["value"]) for v in known]
            assert ordered == sorted(ordered), values
        else:
            ordered = [(-v["count"], v["value"]) for v in known]
            assert ordered == sorted(ordered), values
        if _has_own_filter(query, options, name):
            assert all(count <= doc_count for count in counts)
            continue
        assert all(count <= total for count in counts), (values, total)
        if name == "year" and results.facets_remaining[name] == 0:
            assert sum(counts) == total, (values, total)
        if page == 1 and total <= limit:
            # Every hit is on this page: count the facet from the hits themselves.
            if name == "year":
                seen = Counter(hit.year for hit in hits)
            elif name == "author":
                seen = Counter(a for hit in hits for a in dict.fromkeys(hit.authors))
                seen.update({None: sum(1 for hit in hits if not hit.authors)})
            else:
                seen = Counter(
                    c
                    for hit in hits
                    for c in dict.fromkeys(hit.categories[:1] if options.get("primary_only") else hit.categories)
                )
                seen.update({None: sum(1 for hit in hits if not hit.categories)})
            for v in values:
                assert v["count"] == seen[v["value"]], (name, v, seen)


def run_search(index, tally: Tally, query: str, options: dict, doc_count: int):
    """One search under the drill's properties; returns the results or ``None`` after a QueryError."""
    budget = options.get("time_budget", DEFAULT_TIME_BUDGET)
    started, cpu_started = time.perf_counter(), time.thread_time()
    try:
        results = index.search(query, **options)
    except QueryError as exc:
        tally.query_errors += 1
        assert _one_line(str(exc)), repr(str(exc))
        results = None
    elapsed, cpu = time.perf_counter() - started, time.thread_time() - cpu_started
    tally.searched(elapsed, cpu, query, options)
    assert cpu <= time_limit(budget), (
        f"{query!r} {options} took {cpu:.2f} s of CPU, {elapsed:.2f} s (budget {budget} s)"
    )
    if results is not None:
        check_results(results, query, options, doc_count)
        json.dumps(results.to_dict(), ensure_ascii=False)  # what --json and the web API send
    return results


def test_generated_queries_keep_the_search_contract(index, vocabulary, figures):
    words, ids = vocabulary
    doc_count = index.doc_count
    tally = Tally()

    @settings(settings.get_profile(PROFILE), max_examples=EXAMPLES)
    @given(query=query_strategy(words, ids), options=options_strategy())
    def check(query, options):
        run_search(index, tally, query, options, doc_count)

    check()
    seconds, cpu, query, options = tally.slowest
    print(f"\nslowest query: {cpu * 1000:.0f} ms of CPU ({seconds * 1000:.0f} ms): {query!r} {options}")
    figures.add("queries tried", tally.tried)
    figures.add("QueryErrors", tally.query_errors)
    figures.add("other exceptions", 0)  # any other exception fails the test above
    figures.add("slowest query (CPU ms)", round(cpu * 1000))
    figures.add("longest search (wall ms)", round(tally.longest_wall * 1000))
    figures.add("slowest query", repr(query) if len(repr(query)) <= 40 else repr(query)[:37] + "...")
    figures.add("time budget (s)", f"{DEFAULT_TIME_BUDGET:g} (limit 1.25x + {BUDGET_MARGIN:g})")


def test_generated_queries_through_the_command_line(arxiv_index_dir, index, vocabulary, figures):
    """A sample of the generated queries through ``searchengine search``: exit
    0 (with the API's total in ``--json``), 1 or 2 with a one-line error, never
    a traceback."""
    from click.testing import CliRunner

    from searchengine.cli import main

    words, ids = vocabulary
    runner = CliRunner()
    exits = Counter()
    option_names = {
        "year": "--year",
        "category": "--category",
        "author": "--author",
        "sort": "--sort",
        "page": "--page",
        "limit": "--limit",
        "facets": "--facets",
        "facet_size": "--facet-size",
    }

    @settings(settings.get_profile(PROFILE), max_examples=max(10, EXAMPLES // 15))
    @given(query=query_strategy(words, ids), options=options_strategy(), separated=st.booleans())
    def check(query, options, separated):
        args = ["search", "--index-dir", str(arxiv_index_dir), "--json"]
        for name, value in options.items():
            if name == "primary_only":
                args += ["--primary-only"] if value else []
            elif name in ("year", "category", "author"):
                for item in value:
                    args += [option_names[name], item]
            elif name in option_names and value is not None:
                args += [option_names[name], str(value)]
        # A query starting with "-" is an option unless it follows "--".
        args += ["--", query] if separated else [query]
        result = runner.invoke(main, args)
        exits[result.exit_code] += 1
        assert result.exit_code in (0, 1, 2), (result.exit_code, result.output, result.exception)
        assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
        output = result.stdout + result.stderr
        assert "Traceback" not in output and "internal error" not in output, output
        if result.exit_code == 0:
            shown = json.loads(result.stdout)
            try:
                expected = index.search(query, **{k: v for k, v in options.items() if k != "time_budget"})
            except QueryError:
                pytest.fail(f"the CLI searched {query!r} {options} but the API refuses it")
            if not (shown["timed_out"] or expected.timed_out):
                assert shown["total"] == expected.total
        else:
            errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
            assert len(errors) == 1 and result.stderr.rstrip("\n").splitlines()[-1] == errors[0], result.stderr

    check()
    figures.add("CLI queries tried", sum(exits.values()))
    figures.add("CLI exit 0 / 1 / 2", f"{exits[0]} / {exits[1]} / {exits[2]}")
    figures.add("CLI tracebacks", 0)  # any traceback fails the test above
