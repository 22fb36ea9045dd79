"""Query tree → Whoosh query.

:func:`to_whoosh` translates a tree of :mod:`searchengine.querylang.tree`
nodes into the Whoosh query the product searches with:

* :class:`~searchengine.querylang.tree.Word` → one BM25F term over the
  default fields (:func:`searchengine.ranking.bm25f_term`); a compound
  (``fail-slow``, ``FlashAttention``) → its joined form as one BM25F term OR
  its parts in sequence in each field.
* :class:`~searchengine.querylang.tree.Joined` → the joined word as one BM25F
  term, in the fields where it analyzes to one term.
* :class:`~searchengine.querylang.tree.Phrase` → the stemmed phrase as
  candidates, kept only where the stored text has the words as written
  (:class:`ExactText`); in each default field when unfielded.
* :class:`~searchengine.querylang.tree.Prefix` → ``Prefix`` of the folded
  text (expanded at search time by :func:`expand_wildcards`).
* :class:`~searchengine.querylang.tree.MinMatch` → :class:`MinShouldMatch`;
  the others → Whoosh's ``And``, ``Or``, ``Not``, ``AndNot``, ``AndMaybe``,
  ``Require``.

The result is normalized with Whoosh's ``normalize()``, as Whoosh's parser
did: it merges an ``Or`` inside an ``Or`` (a BM25F term or a
:class:`MinShouldMatch` included) and drops repeated subqueries.

:func:`parse` is the drop-in for the old ``searchengine.query.parse``
(text → :class:`WhooshParsedQuery`), :func:`relaxed` for ``query.relaxed``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from whoosh import query as wq
from whoosh.qparser import QueryParser
from whoosh.qparser.plugins import PhrasePlugin

from searchengine import querylang
from searchengine.analysis import fold
from searchengine.errors import QueryError
from searchengine.querylang import tree as t
from searchengine.ranking import bm25f_term

# The Whoosh query classes and the search-time steps still live in the old
# parser module; they move here when it is removed.
from searchengine.query import (  # noqa: F401  (re-exported for callers)
    MAX_EXPANSIONS, ExactText, MinShouldMatch, PhraseClock, exact_pattern, expand_wildcards, time_phrases,
)

__all__ = [
    "MAX_EXPANSIONS", "ExactText", "MinShouldMatch", "PhraseClock", "exact_pattern", "expand_wildcards",
    "time_phrases", "to_whoosh", "check_leaf", "parse", "relaxed", "WhooshParsedQuery",
]


def to_whoosh(tree: t.Node | None, schema) -> wq.Query | None:
    """The normalized Whoosh query for ``tree`` over ``schema`` (the index's
    Whoosh schema); ``None`` for no tree or a tree that matches nothing.

    Raises:
        Whatever Whoosh raises for a leaf it cannot search (a word or phrase
        in a stored-only field, a phrase in ``year`` that is not a number);
        :func:`parse` reports it as a :class:`~searchengine.errors.QueryError`.
    """
    if tree is None:
        return None
    query = _Translator(schema).translate(tree)
    if not query:  # None, or an empty And/Or
        return None
    query = query.normalize()
    return None if query is wq.NullQuery else query


def check_leaf(schema):
    """A ``check`` for :func:`searchengine.querylang.parse`: translates each leaf,
    so what Whoosh cannot search raises while parsing, as it always did."""
    translator = _Translator(schema)
    return translator.translate


class _Translator:
    """Tree nodes → Whoosh queries (not yet normalized), over one schema."""

    def __init__(self, schema) -> None:
        self.schema = schema
        self._plain_parser = None

    def plain_parser(self) -> QueryParser:
        """Whoosh's own parser, for the fields the product's rules do not cover."""
        if self._plain_parser is None:
            self._plain_parser = QueryParser(None, self.schema)
        return self._plain_parser

    def translate(self, node):
        if isinstance(node, t.Word):
            return self.multifield_term(node.text)
        if isinstance(node, t.Joined):
            return self.joined(node.text)
        if isinstance(node, t.FieldWord):
            return self.term_query(node.field, node.text)
        if isinstance(node, t.Phrase):
            if node.field is not None:
                return self.phrase(node.field, node.text)
            return wq.Or(self._present(self.phrase(name, node.text) for name in t.DEFAULT_FIELDS))
        if isinstance(node, t.Prefix):
            if node.field is not None:
                return wq.Prefix(node.field, fold(node.text))
            return wq.Or([wq.Prefix(name, fold(node.text)) for name in t.DEFAULT_FIELDS])
        if isinstance(node, t.And):
            return wq.And(self._present(map(self.translate, node.children)))
        if isinstance(node, t.Or):
            return wq.Or(self._present(map(self.translate, node.children)))
        if isinstance(node, t.MinMatch):
            return MinShouldMatch(self._present(map(self.translate, node.children)), minmatch=node.minimum)
        if isinstance(node, t.Not):
            child = self.translate(node.child)
            return wq.Not(child) if child else None  # None or an empty And/Or: nothing to exclude
        if isinstance(node, (t.AndNot, t.AndMaybe, t.Require)):
            a, b = self.translate(node.a), self.translate(node.b)
            if a is None and b is None:
                return wq.NullQuery
            if a is None or b is None:
                return b if a is None else a
            kind = {t.AndNot: wq.AndNot, t.AndMaybe: wq.AndMaybe, t.Require: wq.Require}[type(node)]
            return kind(a, b)
        raise TypeError(f"not a query tree node: {node!r}")

    @staticmethod
    def _present(queries) -> list:
        return [q for q in queries if q is not None]

    def multifield_term(self, text: str):
        """An unfielded word → a BM25F term over the default fields.

        A compound word (``fail-slow``) gives its joined form OR its parts in
        sequence in the title or the abstract.
        """
        per_field = {}
        for fieldname in t.DEFAULT_FIELDS:
            q = self.term_query(fieldname, text)
            if q is not None:
                per_field[fieldname] = q
        if not per_field:
            return None
        terms = [q for q in per_field.values() if type(q) is wq.Term]
        if len(terms) == len(per_field):
            return bm25f_term(terms)
        # Compounds: joined forms share one BM25F term; sequences stay per field.
        joined = [q.subqueries[0] for q in per_field.values() if isinstance(q, wq.Or)]
        sequences = [q.subqueries[1] if isinstance(q, wq.Or) else q for q in per_field.values()]
        parts = [bm25f_term(joined)] if joined else []
        return wq.Or(parts + sequences)

    def term_query(self, fieldname: str, text: str):
        """One word in one field → a term, or for a compound its joined form OR
        its parts in sequence; ``None`` when it analyzes to nothing."""
        schema = self.schema
        field = schema[fieldname] if schema and fieldname in schema else None
        if field is None or field.self_parsing() or not getattr(field, "analyzer", None):
            return self.plain_parser().term_query(fieldname, text, wq.Term)
        joined = None
        parts: list[str] = []
        for token in field.tokenize(text, mode="query", removestops=True):
            if getattr(token, "joined", False):
                joined = token.text
            else:
                parts.append(token.text)
        if not parts:
            return None
        if len(parts) == 1 and joined is None:
            return wq.Term(fieldname, parts[0])
        sequence = wq.Phrase(fieldname, parts) if len(parts) > 1 else wq.Term(fieldname, parts[0])
        if joined is None:
            return sequence
        return wq.Or([wq.Term(fieldname, joined), sequence])

    def joined(self, text: str):
        """Neighbouring words joined (``failslow``): one BM25F term over the
        default fields where the text analyzes to one term (its joined form,
        for a compound); ``None`` when it does in none."""
        terms = []
        for fieldname in t.DEFAULT_FIELDS:
            # Whoosh reuses one token object: copy what is needed as it goes.
            tokens = [(token.text, getattr(token, "joined", False))
                      for token in self.schema[fieldname].tokenize(text, mode="query")]
            joined = [word for word, is_joined in tokens if is_joined]
            texts = joined or [word for word, _ in tokens]
            if len(texts) == 1:
                terms.append(wq.Term(fieldname, texts[0]))
        return bm25f_term(terms) if terms else None

    def phrase(self, fieldname: str, text: str):
        """A quoted phrase in one field → :class:`ExactText` over the stemmed
        phrase; ``None`` when it has no word to search."""
        schema = self.schema
        field = schema[fieldname] if schema and fieldname in schema else None
        if field is None or not getattr(field, "analyzer", None) or field.self_parsing():
            # Whoosh's own phrase (a number field reads the text as a number).
            node = PhrasePlugin.PhraseNode(text, 0)
            node.fieldname, node.startchar, node.endchar = fieldname, 0, len(text)
            return node.query(self.plain_parser())
        pattern = exact_pattern(text)
        tokens = [(token.text, token.pos) for token in field.tokenize(text, mode="phrase", positions=True)]
        if pattern is None or not tokens:
            return None
        if len(tokens) == 1:
            candidates = wq.Term(fieldname, tokens[0][0])
        else:
            # Stop words are not indexed but keep their positions: allow their gaps.
            gap = max(b[1] - a[1] for a, b in zip(tokens, tokens[1:]))
            candidates = wq.Phrase(fieldname, [word for word, _ in tokens], slop=gap)
        return ExactText(candidates, fieldname, pattern)


@dataclass
class WhooshParsedQuery:
    """A query as understood, with its Whoosh query.

    Attributes:
        text: the cleaned query text that was parsed.
        query: the Whoosh query (``None`` for an empty query: browse by filters).
        words: the positive words of the query, as typed.
        notes: messages for the user about repairs made.
        tree: the engine-free query tree (``None`` with ``query``).
    """

    text: str
    query: wq.Query | None
    words: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    tree: t.Node | None = None


def parse(text: str, schema, *, allow_empty: bool = False) -> WhooshParsedQuery:
    """Parse query text (:func:`searchengine.querylang.parse`) and translate it
    for ``schema``: what the old ``searchengine.query.parse`` gave.

    Raises:
        QueryError: as :func:`searchengine.querylang.parse`, and for a word or
            phrase in a field Whoosh cannot search ("cannot parse the query ...").
    """
    parsed = querylang.parse(text, allow_empty=allow_empty, check=check_leaf(schema))
    try:
        query = to_whoosh(parsed.tree, schema)
    except RecursionError as exc:  # Whoosh's normalize recurses once per level of nesting
        raise QueryError(f"cannot parse the query {parsed.text!r}: {exc}") from None
    if parsed.tree is not None:
        # The parser decided emptiness and exclusion on the tree; here terms
        # that analyze alike (GPU, GPUs) are one, as they always were.
        if query is None:
            if allow_empty:
                return WhooshParsedQuery(text=parsed.text, query=None,
                                         notes=parsed.notes + ["the query has no searchable words"])
            raise QueryError(f"the query {parsed.text!r} has no searchable words "
                             "(only common words such as 'the' or 'of')")
        if _only_negative(query) and not allow_empty:
            raise QueryError(f"the query {parsed.text!r} only excludes words; add a word to search for")
    return WhooshParsedQuery(text=parsed.text, query=query, words=parsed.words, notes=parsed.notes,
                             tree=parsed.tree)


def _only_negative(query: wq.Query) -> bool:
    if isinstance(query, wq.Not):
        return True
    if isinstance(query, wq.And):
        return all(_only_negative(child) for child in query.subqueries)
    return False


def relaxed(parsed, schema) -> wq.Query | None:
    """Any one of the query's words (:func:`searchengine.querylang.relaxed`), for
    when no document has them all: an ``Or`` of each word's own normalized
    query, not merged further. ``parsed`` is a :class:`WhooshParsedQuery` or a
    :class:`searchengine.querylang.ParsedQuery`."""
    alternatives = querylang.relaxed(querylang.ParsedQuery(parsed.text, parsed.tree, parsed.words, parsed.notes))
    if alternatives is None:
        return None
    return relaxed_to_whoosh(alternatives, schema)


def relaxed_to_whoosh(alternatives: t.Or, schema) -> wq.Query:
    """The ``Or`` of :func:`searchengine.querylang.relaxed` → a Whoosh ``Or`` whose
    subqueries are each alternative's :func:`to_whoosh`, kept as they are."""
    return wq.Or([q for q in (to_whoosh(child, schema) for child in alternatives.children) if q is not None])
