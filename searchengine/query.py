"""Query text → Whoosh query.

How many query terms a hit must contain (stop words do not count):

* **Keyword queries** of up to :data:`ALL_TERMS_UP_TO` (3) words: every
  term (``SpMV GPU`` finds only papers with both words).
* **Longer queries** (natural-language questions, pasted abstracts): a share
  :data:`MIN_SHOULD_MATCH` (5 %) of the terms, rounded up, and at least
  :data:`LONG_QUERY_MIN` (2); a hyphenated word counts as its parts.

Hits are ranked by BM25F score either way. A term may match in the title,
the abstract or the author names. The query text passes through the same
analyzer as the indexed text (:mod:`searchengine.analysis`), so ``GPUs``
finds ``GPU``.

Joined, hyphenated and spaced forms meet: a hyphenated or camel-case query
word (``fail-slow``, ``FlashAttention``) matches its joined form or its parts
in sequence, and in a keyword query two adjacent words (``fail slow``) also
match their joined form (``failslow``).

Syntax: ``"exact phrase"`` (matches the words as written, unstemmed, in
sequence; see :class:`ExactText`), ``OR``, ``AND``, ``NOT``, parentheses
(only with an operator; otherwise they are punctuation) and ``field:term``
for the fields in :mod:`searchengine.schema`. Wildcards are not supported: ``?``
and ``*`` are punctuation, so a question's ``?`` does not change its meaning.
"""

from __future__ import annotations

import math
import re

from whoosh import qparser
from whoosh import query as wq
from whoosh.matching import NullMatcher
from whoosh.qparser import plugins, syntax
from whoosh.query import Query
from whoosh.query.wrappers import WrappingQuery

from searchengine.analysis import CJK_CHARS, DASHES, TOKEN_PATTERN, fold
from searchengine.errors import QueryError
from searchengine.ranking import bm25f_term, scored_list
from searchengine.schema import DEFAULT_FIELDS

# Queries longer than this are refused rather than parsed (characters); room
# for a pasted abstract (arXiv allows 1,920 characters) and a title.
MAX_QUERY_LENGTH = 4000

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


class ExactText(WrappingQuery):
    """Keeps the hits of ``child`` whose stored ``fieldname`` text has ``pattern``.

    Quoted phrases are searched on the stemmed index (fast, positional) and
    then checked against the stored text as written, folded for case and
    accents: ``"objectivity"`` finds the stem ``objectiv`` in papers about
    objectives too, and the check keeps only those that say ``objectivity``.
    """

    def __init__(self, child, fieldname: str, pattern: str) -> None:
        super().__init__(child)
        self.fieldname = fieldname
        self.pattern = pattern
        self._regex = re.compile(pattern)

    def __eq__(self, other) -> bool:
        return (type(other) is type(self) and other.child == self.child
                and other.fieldname == self.fieldname and other.pattern == self.pattern)

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.child, self.fieldname, self.pattern))

    def __str__(self) -> str:
        return f"exact({self.child})"

    def _rewrap(self, child):
        return ExactText(child, self.fieldname, self.pattern)

    def matcher(self, searcher, context=None):
        matcher = self.child.matcher(searcher, context)
        scored = context.weighting is not None if context else True
        docs, scores = [], []
        while matcher.is_active():
            doc = matcher.id()
            value = searcher.stored_fields(doc).get(self.fieldname) or ""
            if isinstance(value, list):
                value = "\n".join(value)
            if self._regex.search(fold(value)):
                docs.append(doc)
                scores.append(matcher.score() if scored else 1.0)
            matcher.next()
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
    word = syntax.WordNode("".join(node.text for node in nodes))
    word.startchar, word.endchar = nodes[0].startchar, nodes[-1].endchar
    return word


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


class Parser(qparser.QueryParser):
    """Whoosh's multi-field parser with the product's term, phrase and group rules."""

    def __init__(self, schema) -> None:
        super().__init__(None, schema, group=TermsGroup)
        self.add_plugin(BM25FPlugin(list(DEFAULT_FIELDS)))
        self.remove_plugin_class(plugins.WildcardPlugin)
        self.remove_plugin_class(plugins.EveryPlugin)
        self.remove_plugin_class(plugins.PhrasePlugin)
        self.add_plugin(ExactPhrasePlugin())
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


def make_parser(schema) -> Parser:
    """A parser over :data:`DEFAULT_FIELDS` applying :func:`required_terms`."""
    return Parser(schema)


def parse(text: str, schema) -> Query:
    """Parse ``text`` into a Whoosh query.

    Raises:
        QueryError: the query is empty after removing whitespace, or too long.
    """
    text = " ".join(text.split())
    if not text:
        raise QueryError("the query is empty")
    if len(text) > MAX_QUERY_LENGTH:
        raise QueryError(f"the query is {len(text)} characters long; at most {MAX_QUERY_LENGTH} are searched")
    if not _OPERATOR.search(text):
        text = text.replace("(", " ").replace(")", " ")
    return make_parser(schema).parse(text)
