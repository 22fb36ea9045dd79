"""Query text → Whoosh query: the query language users type.

The language (documented with examples in README.md, "Query language"):

* Words. How many a hit must contain (stop words do not count):
  keyword queries of up to :data:`ALL_TERMS_UP_TO` (3) words need every
  word (``SpMV GPU`` finds only papers with both); longer queries
  (questions, pasted abstracts) need a share :data:`MIN_SHOULD_MATCH` (5 %)
  of their terms, rounded up, and at least :data:`LONG_QUERY_MIN` (2); a
  hyphenated word counts as its parts. Hits are ranked by BM25F score either
  way (:mod:`searchengine.engines.whoosh.ranking`). A word may match in the title, the
  abstract or the author names, through the same analyzer as the indexed
  text (:mod:`searchengine.engines.whoosh.analysis`), so ``GPUs`` finds ``GPU``.
* Joined, hyphenated and spaced forms meet: a hyphenated or camel-case query
  word (``fail-slow``, ``FlashAttention``) matches its joined form or its
  parts in sequence, and in a keyword query two adjacent words (``fail
  slow``) also match their joined form (``failslow``).
* ``"exact phrase"`` (straight or typographic quotes): the words as written,
  unstemmed, in sequence (:class:`ExactText`).
* ``OR``, ``AND``, ``NOT`` (upper case only), ``-word`` (= ``NOT word``),
  ``+word`` (= ``word``), parentheses (only with an operator; otherwise they
  are punctuation). Lower-case ``and``/``or``/``not`` are stop words.
* Fields: ``title:``/``ti:``, ``abstract:``/``abs:``, ``id:``. An unknown
  lower-case ``name:`` is an error, not a word; a mixed-case word glued to a
  colon (``CB-SpMV:A``) and a colon followed by a space (``NetWeaver: ...``)
  are ordinary text.
* Filters: ``year:2023-2025``, ``year:>=2023``, ``author:"Qian, D."`` (or
  ``au:``), ``category:cs.DC`` (or ``cat:``) mean what the command-line
  options mean (:mod:`searchengine.filters`). :func:`split_filters` takes them
  out of the text before parsing; they apply to the whole query, so they
  cannot follow ``OR``/``NOT`` or stand inside parentheses.
* ``spars*``: a prefix, expanded to at most :data:`MAX_EXPANSIONS` terms (the
  most frequent); it needs :data:`MIN_PREFIX` letters before the ``*``. A
  ``?`` is punctuation, so a question's ``?`` does not change its meaning.
* A whole query that is an arXiv id (``2101.00001v2``, ``hep-th/9901001``)
  or an arXiv abs/pdf URL looks that paper up.

Hostile input is repaired rather than rejected where the intent is clear:
control characters are dropped, an unclosed quote runs to the end, an
unbalanced parenthesis is ignored,
dangling operators are ignored, a query longer than
:data:`MAX_QUERY_CHARS` is cut at a word boundary, and prefixes and phrases
past :data:`MAX_PREFIXES` and :data:`MAX_PHRASES` are searched as plain
words (each with a note). Everything
else that cannot be understood raises :class:`~searchengine.errors.QueryError`
with a message naming the offending part.
"""

from __future__ import annotations

import math
import re
import time
import unicodedata
from dataclasses import dataclass, field

from whoosh import query as wq
from whoosh.matching import NullMatcher
from whoosh import qparser
from whoosh.qparser import plugins, syntax
from whoosh.query.wrappers import WrappingQuery

from searchengine import filters as _filters
from searchengine.engines.whoosh import internals
from searchengine.engines.whoosh.analysis import CJK_CHARS, DASHES, TOKEN_PATTERN, fold
from searchengine.errors import QueryError
from searchengine.engines.whoosh.ranking import bm25f_term, scored_list
from searchengine.records import arxiv_id
from searchengine.engines.whoosh.schema import DEFAULT_FIELDS

# Longer queries are cut to this many characters: room for a pasted abstract
# (arXiv allows 1,920 characters) and a title, and for long test-collection
# questions; a longer paste is searched by its beginning rather than refused.
MAX_QUERY_CHARS = 4000
# Longer words are cut to this many characters.
MAX_WORD_CHARS = 100
# A prefix term matches at most this many index terms.
MAX_EXPANSIONS = 64
# Letters required before a wildcard ``*``.
MIN_PREFIX = 2
# Prefixes and quoted phrases past these counts in one query are searched as
# plain words: each prefix adds up to MAX_EXPANSIONS terms per field and each
# phrase a check of the stored text of every candidate, costs outside the
# time budget (a hundred of either took seconds on 10,000 records).
MAX_PREFIXES = 8
MAX_PHRASES = 8

# A query of this many terms or fewer needs all of them in a hit.
ALL_TERMS_UP_TO = 3
# A longer query needs this share of its terms in a hit (rounded up), and at
# least LONG_QUERY_MIN of them.
MIN_SHOULD_MATCH = 0.05
LONG_QUERY_MIN = 2

_WORDS = re.compile(TOKEN_PATTERN)
_DASH = re.compile(f"[{DASHES}]")
_CJK_CHAR = re.compile(f"[{CJK_CHARS}]")
# Whoosh's operators; without one, parentheses are punctuation, not grouping.
_OPERATOR = re.compile(r"\b(?:AND|OR|NOT|ANDNOT|ANDMAYBE)\b")
_OPERATOR_WORDS = {"AND", "OR", "NOT", "ANDNOT", "ANDMAYBE"}

# Field names users may type → schema field (the filters are taken out first).
FIELD_ALIASES = {
    "title": "title", "ti": "title",
    "abstract": "abstract", "abs": "abstract",
    "author": "authors", "authors": "authors", "au": "authors",
    "category": "categories", "categories": "categories", "cat": "categories",
    "year": "year",
    "id": "id",
}
KNOWN_FIELDS = "title/ti, abstract/abs, author/au, category/cat, year, id"

_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "‟": '"', "«": '"', "»": '"',
                         "‘": "'", "’": "'", "‚": "'", "‛": "'"})
# A field prefix: a name glued to a colon that is glued to a value.
# A field prefix: a name, a colon and a value (not "//": https://... is a link).
_FIELD = re.compile(r"(?<![\w.\-/])([A-Za-z][\w-]*):(?=[^\s:])(?!//)")
_FIELD_BEFORE_PHRASE = re.compile(r"(?<![\w.\-/])([A-Za-z][\w-]*):$")
# A word with a ``*`` in it (a prefix query, or a misplaced wildcard).
_WILDCARD_WORD = re.compile(r"[^\s()\"]*\*[^\s()\"]*")


# ``year:...``, ``author:...`` or ``category:...`` with a bare or quoted value.
_FILTER_CLAUSE = re.compile(r'(?<![\w:])(year|author|au|category|cat):(?:"([^"]*)"|(\S+))', re.IGNORECASE)
_FILTER_NAMES = {"year": "year", "author": "author", "au": "author", "category": "category", "cat": "category"}
_OPERATOR_BEFORE = re.compile(r"(?:\b(?:OR|NOT)\s+|(?:^|\s)-)$")
_OPERATOR_AFTER = re.compile(r"^\s*(?:OR\b|\))")
_AND_AT_END = re.compile(r"\bAND\s*$")
_AND_AT_START = re.compile(r"^AND\b\s*")


def split_filters(text: str) -> tuple[str, _filters.Filters]:
    """Take the filter clauses out of a query: ``(remaining text, Filters)``.

    ``"GPU year:2023- author:\"Qian, D.\""`` gives ``("GPU", Filters(...))``;
    the values are parsed by :mod:`searchengine.filters`, so the query syntax
    and the options mean the same.

    Raises:
        QueryError: a filter value is malformed, or a filter is combined with
            ``OR``/``NOT`` or put in parentheses (it would not mean what it says).
    """
    found = {"year": [], "author": [], "category": []}
    kept, last = [], 0
    for match in _FILTER_CLAUSE.finditer(text):
        clause = match.group(0)
        before, after = text[:match.start()], text[match.end():]
        if _OPERATOR_BEFORE.search(before) or _OPERATOR_AFTER.search(after) or before.count("(") > before.count(")"):
            raise QueryError(f"filter {clause!r} cannot be combined with OR, NOT or parentheses; it applies to the whole query")
        value = match.group(2) if match.group(2) is not None else match.group(3)
        found[_FILTER_NAMES[match.group(1).lower()]].append(value)
        kept.append(_AND_AT_END.sub("", text[last:match.start()]))  # "GPU AND year:2023"
        last = match.end()
    kept.append(text[last:])
    rest = _AND_AT_START.sub("", " ".join("".join(kept).split()))
    return rest, _filters.build_filters(found["year"], found["author"], found["category"])


@dataclass
class ParsedQuery:
    """A query as understood.

    Attributes:
        text: the cleaned query text that was parsed.
        query: the Whoosh query (``None`` for an empty query: browse by filters).
        words: the positive words of the query, as typed (for relaxing an
            AND query into OR, and for spelling suggestions).
        notes: messages for the user about repairs made (cut, capped, ...).
    """

    text: str
    query: wq.Query | None
    words: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def required_terms(count: int) -> int:
    """How many of ``count`` query terms a hit must contain (the documented rule)."""
    if count <= ALL_TERMS_UP_TO:
        return count
    return max(LONG_QUERY_MIN, math.ceil(MIN_SHOULD_MATCH * count))


class MinShouldMatch(wq.Or):
    """Documents matching at least ``minmatch`` of the subqueries, scored by their sum.

    Whoosh's ``Or`` accepts ``minmatch`` but ignores it; this query applies
    it. Matches are gathered up front (one pass over each subquery's
    postings), which suits the long queries it is used for.
    """

    JOINT = " MSM "

    def apply(self, fn):
        return self.__class__([fn(q) for q in self.subqueries], boost=self.boost, minmatch=self.minmatch)

    def _matcher(self, subs, searcher, context):
        needed = max(1, self.minmatch)
        scores: dict[int, float] = {}
        counts: dict[int, int] = {}
        scored = context.weighting is not None if context else True
        for sub in subs:
            matcher = sub.matcher(searcher, context)
            while matcher.is_active():
                doc = matcher.id()
                scores[doc] = scores.get(doc, 0.0) + (matcher.score() if scored else 1.0)
                counts[doc] = counts.get(doc, 0) + 1
                matcher.next()
        docs = sorted(doc for doc, count in counts.items() if count >= needed)
        if not docs:
            return NullMatcher()
        boost = self.boost
        return scored_list(docs, [scores[doc] * boost for doc in docs])


class TermsGroup(syntax.GroupNode):
    """The top-level group of a query: applies :func:`required_terms`."""

    qclass = wq.And

    def query(self, parser):
        subs = [q for q in (node.query(parser) for node in self.nodes) if q is not None]
        needed = required_terms(len(subs))
        if needed >= len(subs):
            q = wq.And(subs, boost=self.boost)
        else:
            q = MinShouldMatch(subs, boost=self.boost, minmatch=needed)
        return syntax.attach(q, self)


class PhraseClock:
    """The deadline (``time.monotonic()`` seconds) for checking one search's
    quoted phrases against the stored text; ``stopped`` tells whether it cut a check short."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.stopped = False


def time_phrases(query: wq.Query, clock: PhraseClock) -> None:
    """Give every :class:`ExactText` in ``query`` the ``clock`` of its search."""
    if isinstance(query, ExactText):
        query.clock = clock
    for child in query.children():
        time_phrases(child, clock)


class ExactText(WrappingQuery):
    """Keeps the hits of ``child`` whose stored ``fieldname`` text has ``pattern``.

    Quoted phrases are searched on the stemmed index (fast, positional) and
    then checked against the stored text as written, folded for case and
    accents: ``"objectivity"`` finds the stem ``objectiv`` in papers about
    objectives too, and the check keeps only those that say ``objectivity``.

    Reading stored text costs time per candidate (a second for ``"model"``
    on 10,000 abstracts), so the check is made once per searcher (counting
    and ranking reuse it) and stops at the deadline of its :class:`PhraseClock`
    (set by :func:`time_phrases`): the candidates checked by then are the hits.
    """

    def __init__(self, child, fieldname: str, pattern: str, clock: PhraseClock | None = None) -> None:
        super().__init__(child)
        self.fieldname = fieldname
        self.pattern = pattern
        self.clock = clock
        self._regex = re.compile(pattern)
        self._checked: dict[int, tuple] = {}  # id(searcher) → (searcher, documents with the text)

    def __eq__(self, other) -> bool:
        return (type(other) is type(self) and other.child == self.child
                and other.fieldname == self.fieldname and other.pattern == self.pattern)

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.child, self.fieldname, self.pattern))

    def __str__(self) -> str:
        return f"exact({self.child})"

    # The stemmed child does the scoring, so its boost is the phrase's.
    @property
    def boost(self) -> float:
        return self.child.boost

    @boost.setter
    def boost(self, value: float) -> None:
        self.child.boost = value

    def _rewrap(self, child):
        return ExactText(child, self.fieldname, self.pattern, self.clock)

    def holds(self, stored: dict) -> bool:
        """Whether a document's stored fields (``{field: value}``) have the text as written."""
        value = stored.get(self.fieldname) or ""
        if isinstance(value, list):
            value = "\n".join(value)
        return self._regex.search(fold(value)) is not None

    def out_of_time(self) -> bool:
        """Whether the clock of this phrase's search has run out (noted on the clock)."""
        if self.clock is not None and time.monotonic() > self.clock.deadline:
            self.clock.stopped = True
            return True
        return False

    def matcher(self, searcher, context=None):
        matcher = self.child.matcher(searcher, context)
        scored = context.weighting is not None if context else True
        known = self._checked.get(id(searcher))
        known = known[1] if known is not None and known[0] is searcher else None
        passed: set[int] = set()
        docs, scores = [], []
        while matcher.is_active():
            doc = matcher.id()
            if known is not None:
                found = doc in known
            else:
                if self.out_of_time():
                    break
                found = self.holds(searcher.stored_fields(doc))
                if found:
                    passed.add(doc)
            if found:
                docs.append(doc)
                scores.append(matcher.score() if scored else 1.0)
            matcher.next()
        if known is None:
            self._checked[id(searcher)] = (searcher, passed)
        return scored_list(docs, scores) if docs else NullMatcher()


def exact_pattern(text: str) -> str | None:
    """A regular expression for the words of ``text`` in sequence, as written.

    Words are cut as the tokenizer cuts them (a hyphenated word counts as its
    parts) and folded; anything that is not a letter or digit may separate
    them. ``None`` when ``text`` has no word.
    """
    words = [fold(part) for match in _WORDS.finditer(text) for part in _DASH.split(match.group()) if part]
    if not words:
        return None
    body = r"[\W_]+".join(re.escape(word) for word in words)
    start = "" if _CJK_CHAR.match(words[0][0]) else r"(?<![^\W_])"
    end = "" if _CJK_CHAR.match(words[-1][-1]) else r"(?![^\W_])"
    return start + body + end


class ExactPhrasePlugin(plugins.PhrasePlugin):
    """``"..."`` finds the words as written, in sequence (see :class:`ExactText`)."""

    class PhraseNode(plugins.PhrasePlugin.PhraseNode):
        def query(self, parser):
            fieldname = self.fieldname or parser.fieldname
            field = parser.schema[fieldname] if parser.schema and fieldname in parser.schema else None
            if field is None or not getattr(field, "analyzer", None) or field.self_parsing():
                return super().query(parser)
            pattern = exact_pattern(self.text)
            tokens = [(t.text, t.pos) for t in field.tokenize(self.text, mode="phrase", positions=True)]
            if pattern is None or not tokens:
                return None
            if len(tokens) == 1:
                candidates = wq.Term(fieldname, tokens[0][0], boost=self.boost)
            else:
                # Stop words are not indexed but keep their positions: allow their gaps.
                gap = max(b[1] - a[1] for a, b in zip(tokens, tokens[1:]))
                candidates = wq.Phrase(fieldname, [t for t, _ in tokens], slop=gap, boost=self.boost)
            return syntax.attach(ExactText(candidates, fieldname, pattern), self)

    def taggers(self, parser):
        return [(self.PhraseTagger(self.expr), 0)]

    class PhraseTagger(plugins.RegexTagger):
        def create(self, parser, match):
            return ExactPhrasePlugin.PhraseNode(match.group("text"), match.start("text"))


class KeywordPlugin(plugins.Plugin):
    """Drops unfielded stop words and tries adjacent keywords joined.

    Runs before the multi-field expansion, so that a stop word is dropped
    from every field (an author named ``What`` does not turn a question's
    first word into a term). Punctuation between words separates them. In a
    long query a hyphenated word counts as its parts. A keyword query of 2 to
    :data:`ALL_TERMS_UP_TO` words without hyphens is replaced by the
    alternatives of every way to join neighbouring pairs (``fail slow`` →
    ``fail slow`` or ``failslow``), each alternative requiring all its words.
    """

    def filters(self, parser):
        return [(self.do_keywords, 105)]

    @staticmethod
    def _plain(node) -> bool:
        return type(node) is syntax.WordNode and node.fieldname is None

    def do_keywords(self, parser, group, top=True):
        field = parser.schema["abstract"]
        out = group.empty_copy()
        for node in group:
            if isinstance(node, syntax.GroupNode):
                out.append(self.do_keywords(parser, node, top=False))
                continue
            if not self._plain(node):
                out.append(node)
                continue
            # Punctuation between words separates them (heat/transfer, "why?").
            for match in _WORDS.finditer(node.text):
                if not list(field.process_text(match.group(), mode="query")):
                    continue  # a stop word
                word = syntax.WordNode(match.group())
                word.startchar = node.startchar + match.start()
                word.endchar = node.startchar + match.end()
                word.boost = node.boost
                out.append(word)
        words = [node for node in out if not isinstance(node, syntax.Whitespace)]
        if top and len(words) > ALL_TERMS_UP_TO:
            # A long query ranks by many words: a hyphenated word counts as its parts.
            out = _split_compounds(out)
        if (not top or not 2 <= len(words) <= ALL_TERMS_UP_TO
                or not all(self._plain(n) and not _DASH.search(n.text) for n in words)):
            return out
        alternatives = syntax.OrGroup()
        for segmentation in _segmentations(words):
            alternatives.append(syntax.AndGroup([_word(nodes) for nodes in segmentation]))
        joined = group.empty_copy()
        joined.append(alternatives)
        return joined


def _split_compounds(group):
    out = group.empty_copy()
    for node in group:
        if KeywordPlugin._plain(node) and _DASH.search(node.text):
            offset = 0
            for part in _DASH.split(node.text):
                if part:
                    at = node.text.index(part, offset)
                    offset = at + len(part)
                    word = syntax.WordNode(part)
                    word.startchar, word.endchar, word.boost = node.startchar + at, node.startchar + offset, node.boost
                    out.append(word)
        else:
            out.append(node)
    return out


def _segmentations(words: list) -> list[list[tuple]]:
    """Every way to join neighbouring pairs: ``[a, b]`` → ``[[(a,), (b,)], [(a, b)]]``."""
    if len(words) < 2:
        return [[(word,) for word in words]]
    keep = [[(words[0],), *rest] for rest in _segmentations(words[1:])]
    joined = [[(words[0], words[1]), *rest] for rest in _segmentations(words[2:])]
    return keep + joined


def _word(nodes: tuple) -> syntax.WordNode:
    """One word node for ``nodes`` joined, spanning their characters in the query."""
    if len(nodes) == 1:
        word = syntax.WordNode(nodes[0].text)
    else:
        word = JoinedWordNode("".join(node.text for node in nodes))
    word.startchar, word.endchar = nodes[0].startchar, nodes[-1].endchar
    return word


class JoinedWordNode(syntax.WordNode):
    """Neighbouring query words joined (``fail slow`` → ``failslow``): one BM25F term.

    Only the joined form is searched. Its parts in sequence (what a compound
    word would also match) are left out: the alternative that keeps the
    words apart already finds every such document, and checking positions
    for a phrase of two common words is the slowest thing a query can do.
    """

    has_fieldname = False

    def query(self, parser):
        terms = []
        for fieldname in DEFAULT_FIELDS:
            # Whoosh reuses one token object: copy what is needed as it goes.
            tokens = [(t.text, getattr(t, "joined", False))
                      for t in parser.schema[fieldname].tokenize(self.text, mode="query")]
            joined = [text for text, is_joined in tokens if is_joined]
            texts = joined or [text for text, _ in tokens]
            if len(texts) == 1:
                terms.append(wq.Term(fieldname, texts[0]))
        if not terms:
            return None
        return syntax.attach(bm25f_term(terms, boost=self.boost), self)


class FieldsTermNode(syntax.WordNode):
    """An unfielded query word: searched in every default field at once (BM25F)."""

    has_fieldname = False

    def query(self, parser):
        return syntax.attach(parser.multifield_term(self.text, self.boost), self)


class BM25FPlugin(plugins.MultifieldPlugin):
    """Unfielded words become :class:`FieldsTermNode`; other unfielded nodes
    (phrases) are searched in each default field, as Whoosh's multi-field
    parser does."""

    def do_multifield(self, parser, group):
        for i, node in enumerate(group):
            if type(node) is syntax.WordNode and node.fieldname is None:
                word = FieldsTermNode(node.text)
                word.startchar, word.endchar, word.boost = node.startchar, node.endchar, node.boost
                group[i] = word
        return super().do_multifield(parser, group)


class AnyTermsGroup(syntax.GroupNode):
    """A top-level group where any one term is enough (relaxing a query that found nothing)."""

    qclass = wq.Or


class PrefixPlugin(plugins.TaggingPlugin):
    """``spars*``: a prefix of at least :data:`MIN_PREFIX` letters; no other wildcard.

    The prefix is folded for case and accents but not stemmed, and matched
    against the indexed terms (see :func:`expand_wildcards` for the cap).
    """

    class PrefixNode(syntax.TextNode):
        def query(self, parser):
            fieldname = self.fieldname or parser.fieldname
            return syntax.attach(wq.Prefix(fieldname, fold(self.text), boost=self.boost), self)

    nodetype = PrefixNode
    expr = rf"(?P<text>[^\s()\"*?:]{{{MIN_PREFIX},}})\*(?=[\s)]|$)"


class Parser(qparser.QueryParser):
    """Whoosh's multi-field parser with the product's term, phrase and group rules."""

    def __init__(self, schema, group=None) -> None:
        super().__init__(None, schema, group=group or TermsGroup)
        self.add_plugin(BM25FPlugin(list(DEFAULT_FIELDS)))
        self.remove_plugin_class(plugins.WildcardPlugin)
        self.remove_plugin_class(plugins.EveryPlugin)
        self.remove_plugin_class(plugins.BoostPlugin)
        # Term ranges ([a TO z]) would enumerate every term between the ends:
        # tens of seconds on a large index, past any time budget. Years have
        # their own range filter (year:2020-2024); brackets are punctuation.
        self.remove_plugin_class(plugins.RangePlugin)
        self.remove_plugin_class(plugins.PhrasePlugin)
        self.add_plugin(ExactPhrasePlugin())
        self.add_plugin(PrefixPlugin())
        self.add_plugin(KeywordPlugin())

    def multifield_term(self, text: str, boost: float = 1.0):
        """An unfielded word → a BM25F term over the default fields.

        A compound word (``fail-slow``) gives its joined form OR its parts in
        sequence in the title or the abstract.
        """
        per_field = {}
        for fieldname in DEFAULT_FIELDS:
            q = self.term_query(fieldname, text, wq.Term, boost)
            if q is not None:
                per_field[fieldname] = q
        if not per_field:
            return None
        terms = [q for q in per_field.values() if type(q) is wq.Term]
        if len(terms) == len(per_field):
            return bm25f_term(terms, boost=boost)
        # Compounds: joined forms share one BM25F term; sequences stay per field.
        joined = [q.subqueries[0] for q in per_field.values() if isinstance(q, wq.Or)]
        sequences = [q.subqueries[1] if isinstance(q, wq.Or) else q for q in per_field.values()]
        parts = [bm25f_term(joined, boost=boost)] if joined else []
        return wq.Or(parts + sequences)

    def term_query(self, fieldname, text, termclass, boost=1.0, tokenize=True, removestops=True):
        """One query word → a term, or for a compound its joined form OR its parts in sequence."""
        field = self.schema[fieldname] if self.schema and fieldname in self.schema else None
        if field is None or field.self_parsing() or not getattr(field, "analyzer", None):
            return super().term_query(fieldname, text, termclass, boost, tokenize, removestops)
        joined = None
        parts: list[str] = []
        for token in field.tokenize(text, mode="query", removestops=removestops):
            if getattr(token, "joined", False):
                joined = token.text
            else:
                parts.append(token.text)
        if not parts:
            return None
        if len(parts) == 1 and joined is None:
            return termclass(fieldname, parts[0], boost=boost)
        sequence = wq.Phrase(fieldname, parts, boost=boost) if len(parts) > 1 else termclass(fieldname, parts[0], boost=boost)
        if joined is None:
            return sequence
        return wq.Or([termclass(fieldname, joined, boost=boost), sequence])


def clean(text: str, notes: list[str]) -> str:
    """Typographic quotes to straight ones, control characters out, spaces collapsed, length capped."""
    text = text.translate(_QUOTES)
    text = "".join(
        " " if unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch
        for ch in text
        if unicodedata.category(ch) not in ("Cf", "Cs", "Co", "Cn") or ch in "\t\n"
    )
    words = text.split()
    if any(len(word) > MAX_WORD_CHARS for word in words):
        # No real word is this long; the parser's taggers also slow down
        # quadratically on one huge run of characters.
        words = [word[:MAX_WORD_CHARS] for word in words]
        notes.append(f"words longer than {MAX_WORD_CHARS} characters were cut")
    text = " ".join(words)
    if len(text) > MAX_QUERY_CHARS:
        cut = text.rfind(" ", 0, MAX_QUERY_CHARS)
        text = text[: cut if cut > 0 else MAX_QUERY_CHARS]
        notes.append(f"the query was cut to its first {len(text)} characters")
    return text


def _segments(text: str) -> list[tuple[bool, str]]:
    """Split into ``(quoted, part)`` pieces; an unmatched final quote runs to
    the end (``title:"sparse matrix``: a closing quote forgotten), or is
    dropped when nothing follows it."""
    pieces = text.split('"')
    if len(pieces) % 2 == 0 and not pieces[-1].strip():  # a final quote with nothing after it
        pieces[-2:] = [pieces[-2]]
    return [(i % 2 == 1, piece) for i, piece in enumerate(pieces)]


def _balance_parentheses(text: str) -> str:
    """Drop ``)`` without an opener and ``(`` never closed."""
    out: list[str] = []
    open_at: list[int] = []
    for ch in text:
        if ch == "(":
            open_at.append(len(out))
        elif ch == ")":
            if not open_at:
                out.append(" ")
                continue
            open_at.pop()
        out.append(ch)
    for index in open_at:
        out[index] = " "
    return "".join(out)


_EMPTY_FIELD = re.compile(r"(?<![\w.\-/])([A-Za-z][\w-]*):(?=\s|$|\))")


def _rewrite_fields(part: str, strict: bool = True) -> str:
    def replace(match: re.Match) -> str:
        name = match.group(1)
        canonical = FIELD_ALIASES.get(name.lower())
        if canonical:
            return canonical + ":"
        if strict and name.islower() and name.isalpha():
            raise QueryError(f"unknown field '{name}:' (fields are {KNOWN_FIELDS})")
        return name + " "  # mixed case, digits, or prose: text glued to a colon
    empty = next((m.group(1) for m in _EMPTY_FIELD.finditer(part)
                  if FIELD_ALIASES.get(m.group(1).lower())), None)
    if empty:
        example = {"year": "2023", "id": "2101.00001", "categories": "cs.DC", "authors": "Qian"}
        value = example.get(FIELD_ALIASES[empty.lower()], "gpu")
        raise QueryError(f"'{empty}:' has no value (write e.g. {empty}:{value})")
    return _FIELD.sub(replace, part)


def _rewrite_operators(part: str) -> str:
    """``-word`` → ``NOT word``, ``+word`` → ``word``; lone signs and dangling operators go."""
    part = re.sub(r"(?:(?<=\s)|^)-(?=[\w(\"])", "NOT ", part)
    part = re.sub(r"(?:(?<=\s)|^)\+(?=[\w(\"])", "", part)
    tokens = part.split(" ")
    kept: list[str] = []
    for token in tokens:
        if token in ("-", "+", "&&", "||", "!"):
            continue
        kept.append(token)
    return " ".join(kept)


def _check_wildcards(part: str) -> None:
    for word in _WILDCARD_WORD.findall(part):
        value = word.split(":", 1)[1] if ":" in word else word
        head = value.split("*", 1)[0]
        if len(head) < MIN_PREFIX:
            raise QueryError(
                f"'{word}': a wildcard needs at least {MIN_PREFIX} letters before it"
                " (a leading or bare wildcard would match almost everything)"
            )


def _drop_dangling_operators(text: str) -> str:
    """Remove AND/OR/NOT with nothing to apply to (``OR OR``, a final ``NOT``)."""
    tokens = text.split()
    operators = {"AND", "OR", "NOT", "ANDNOT", "ANDMAYBE"}
    changed = True
    while changed:
        changed = False
        for i, token in enumerate(tokens):
            following = tokens[i + 1] if i + 1 < len(tokens) else None
            binary = token in operators - {"NOT"}
            if token in operators and (
                following is None or following in operators - {"NOT"} or following == ")"
                or (binary and (i == 0 or tokens[i - 1] in operators or tokens[i - 1] == "("))
            ):
                del tokens[i]
                changed = True
                break
    return " ".join(tokens)


def _plain_prefixes(part: str, seen: list[int], notes: list[str]) -> str:
    """Drop the ``*`` of the wildcard words after the first :data:`MAX_PREFIXES` of the query.

    ``seen`` holds the count of wildcard words met so far (shared across parts).
    """
    def replace(match: re.Match) -> str:
        seen[0] += 1
        if seen[0] <= MAX_PREFIXES:
            return match.group()
        if seen[0] == MAX_PREFIXES + 1:
            notes.append(f"only the first {MAX_PREFIXES} prefixes were expanded; the others were searched as words")
        return match.group().replace("*", "")
    return _WILDCARD_WORD.sub(replace, part)


def prepare(text: str, notes: list[str]) -> str:
    """Repair and normalise raw query text into something Whoosh's parser accepts.

    Raises:
        QueryError: an unknown field name or a leading/bare wildcard.
    """
    text = clean(text, notes)
    segments = _segments(text)
    # Pasted prose (more words than a keyword query) uses colons as prose
    # does: an unknown "word:" there is text, not a mistyped field.
    strict = len(_words(" ".join(part for quoted, part in segments if not quoted))) <= ALL_TERMS_UP_TO
    out = []
    field = ""  # a field name written right before a quoted phrase: title:"..."
    phrases, prefixes = 0, [0]
    for number, (quoted, part) in enumerate(segments):
        if quoted:
            if part.strip():
                phrases += 1
                if phrases <= MAX_PHRASES:
                    out.append(f'{field}"{part.strip()}"')
                else:
                    if phrases == MAX_PHRASES + 1:
                        notes.append(f"only the first {MAX_PHRASES} quoted phrases were searched as phrases; "
                                     "the others as words")
                    out.append(" ".join(_WORDS.findall(part)))
            field = ""
            continue
        if number + 1 < len(segments):
            before = _FIELD_BEFORE_PHRASE.search(part)
            if before and FIELD_ALIASES.get(before.group(1).lower()):
                field, part = FIELD_ALIASES[before.group(1).lower()] + ":", part[:before.start()]
        part = _balance_parentheses(part)
        part = _rewrite_fields(part, strict)
        _check_wildcards(part)
        part = _plain_prefixes(part, prefixes, notes)
        out.append(_rewrite_operators(part))
    return _drop_dangling_operators(" ".join(p for p in out if p.strip()))


def _only_negative(query: wq.Query) -> bool:
    if isinstance(query, wq.Not):
        return True
    if isinstance(query, wq.And):
        return all(_only_negative(child) for child in query.subqueries)
    return False


def _prefix_frequencies(reader, fieldname: str, prefix: str) -> dict[bytes, int]:
    """Each indexed term of ``fieldname`` starting with ``prefix`` → its document
    frequency, read in one pass over each segment's term list (looking each
    term up again cost half a second for a few common prefixes)."""
    counts: dict[bytes, int] = {}
    for sub, _ in reader.leaf_readers():
        for text, info in sub.iter_prefix(fieldname, prefix):
            counts[text] = counts.get(text, 0) + info.doc_frequency()
    return counts


def expand_wildcards(query: wq.Query, reader, notes: list[str]) -> wq.Query:
    """Replace each prefix/wildcard node with an OR of at most :data:`MAX_EXPANSIONS` terms.

    The most frequent matching terms are kept, so ``s*`` cannot turn into a
    query over half the vocabulary. A note is added when terms were dropped.
    """
    if not any(isinstance(leaf, (wq.Prefix, wq.Wildcard)) for leaf in query.leaves()):
        return query

    def expand(node: wq.Query) -> wq.Query:
        if isinstance(node, (wq.Prefix, wq.Wildcard)):
            fieldname = node.field()
            if fieldname not in reader.schema:
                return wq.NullQuery
            if isinstance(node, wq.Prefix):
                frequency = _prefix_frequencies(reader, fieldname, node.text)
                candidates = sorted(frequency)
            else:
                candidates = internals.wildcard_terms(node, reader)
                frequency = None
            if len(candidates) > MAX_EXPANSIONS:
                candidates.sort(key=frequency.__getitem__ if frequency is not None
                                else lambda t: reader.doc_frequency(fieldname, t), reverse=True)
                notes.append(f"'{node.text}*' matches {len(candidates)} terms in {fieldname}; "
                             f"searched the {MAX_EXPANSIONS} most frequent")
                candidates = candidates[:MAX_EXPANSIONS]
            field = reader.schema[fieldname]
            return wq.Or([wq.Term(fieldname, field.from_bytes(t)) for t in candidates], boost=node.boost) \
                if candidates else wq.NullQuery
        if node.is_leaf():
            return node
        return node.apply(expand)

    return expand(query).normalize()




def _words(text: str) -> list[str]:
    """Words of the query outside quotes, operators and fields (for relaxing)."""
    plain = re.sub(r'\b\w+:"[^"]*"|"[^"]*"|\b\w+:\S+|\bNOT\s+\S+|(?<!\S)-\S+', " ", text)
    return [w for w in _WORDS.findall(plain) if w not in _OPERATOR_WORDS]


def make_parser(schema, group=None) -> Parser:
    """A parser over :data:`DEFAULT_FIELDS` applying :func:`required_terms`
    (or ``group``'s rule instead)."""
    return Parser(schema, group=group)


def parse(text: str, schema, *, allow_empty: bool = False) -> ParsedQuery:
    """Parse query text.

    Args:
        text: what the user typed.
        schema: the index's Whoosh schema.
        allow_empty: an empty query is fine (the caller browses by filters);
            otherwise it is an error.

    Raises:
        QueryError: the query is empty (unless allowed), names an unknown
            field, starts with a wildcard, has no searchable words (only stop
            words), or only excludes.
    """
    notes: list[str] = []
    raw = text if isinstance(text, str) else ""
    paper = arxiv_id(" ".join(raw.split())) if raw.strip() else None
    if paper:
        return ParsedQuery(text=paper, query=wq.Term("id", paper), notes=notes)
    cleaned = prepare(raw, notes)
    if not _OPERATOR.search(cleaned):
        cleaned = " ".join(cleaned.replace("(", " ").replace(")", " ").split())
    if not cleaned:
        if allow_empty:
            return ParsedQuery(text="", query=None, notes=notes)
        raise QueryError("the query is empty")
    try:
        query = make_parser(schema).parse(cleaned, normalize=True)
    except Exception as exc:  # Whoosh's parser errors have no common base class
        raise QueryError(f"cannot parse the query {cleaned!r}: {exc}") from None
    if query is None or query is wq.NullQuery:
        if allow_empty:
            return ParsedQuery(text=cleaned, query=None, notes=notes + ["the query has no searchable words"])
        raise QueryError(f"the query {cleaned!r} has no searchable words (only common words such as 'the' or 'of')")
    if _only_negative(query) and not allow_empty:
        raise QueryError(f"the query {cleaned!r} only excludes words; add a word to search for")
    return ParsedQuery(text=cleaned, query=query, words=_words(cleaned), notes=notes)


def relaxed(parsed: ParsedQuery, schema) -> wq.Query | None:
    """Any one of the query's words, for when no document has them all.

    Each word is parsed on its own (so it is analysed, and compounds are
    handled, as in the full query) and the words are combined with OR.
    """
    if len(parsed.words) < 2:
        return None
    parser = make_parser(schema)
    words = [q for q in (parser.parse(word, normalize=True) for word in parsed.words)
             if q is not None and q is not wq.NullQuery]
    return wq.Or(words) if len(words) > 1 else None


def filter_query(filters: _filters.Filters):
    """The Whoosh query that matches exactly the documents ``filters`` allow.

    Returns ``None`` when ``filters`` restrict nothing. Uses the ``year``,
    ``author_keys`` and ``category_keys`` fields of
    :func:`searchengine.engines.whoosh.schema.build_schema`.
    """
    def any_of(queries):
        return queries[0] if len(queries) == 1 else wq.Or(queries)

    mark = _filters.PRIMARY_MARK if filters.primary_only else ""
    parts = []
    if filters.years:
        # The year field is unsigned: a bound below 0 ("<0000") is out of its
        # range, and no record has a year below 1000, so 0 stands in for it.
        parts.append(any_of([wq.NumericRange("year", None if f.low is None else max(f.low, 0),
                                             None if f.high is None else max(f.high, 0)) for f in filters.years]))
    if filters.authors:
        parts.append(any_of([wq.Term("author_keys", f.key) for f in filters.authors]))
    if filters.categories:
        parts.append(any_of([wq.Term("category_keys", mark + f.key) for f in filters.categories]))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else wq.And(parts)
