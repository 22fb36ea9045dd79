"""Query tree → Whoosh query.

:func:`to_whoosh` translates a tree of :mod:`searchengine.querylang.tree`
nodes into the Whoosh query the product searches with:

* :class:`~searchengine.querylang.tree.Word` → one BM25F term over the
  default fields (:func:`searchengine.engines.whoosh.bm25f.bm25f_term`); a compound
  (``fail-slow``, ``FlashAttention``) → its joined form as one BM25F term OR
  its parts in sequence in each field.
* :class:`~searchengine.querylang.tree.Joined` → the joined word as one BM25F
  term, in the fields where it analyzes to one term.
* :class:`~searchengine.querylang.tree.Phrase` → the stemmed phrase as
  candidates, kept only where the stored text has the words as written
  (:class:`~searchengine.engines.whoosh.queries.ExactText`); in each
  default field when unfielded.
* :class:`~searchengine.querylang.tree.Prefix` → ``Prefix`` of the folded
  text (expanded at search time:
  :func:`searchengine.engines.whoosh.expansion.expand_wildcards`).
* :class:`~searchengine.querylang.tree.Fuzzy` → a ``FuzzyTerm`` for each
  term the field's analyzer makes of the word (stemmed, as indexed), in
  each default field when unfielded (expanded at search time to the
  closest index terms).
* :class:`~searchengine.querylang.tree.MinMatch` →
  :class:`~searchengine.engines.whoosh.queries.MinShouldMatch`;
  the others → Whoosh's ``And``, ``Or``, ``Not``, ``AndNot``, ``AndMaybe``,
  ``Require``.

The result is normalized with Whoosh's ``normalize()``, as Whoosh's parser
did: it merges an ``Or`` inside an ``Or`` (a BM25F term or a
``MinShouldMatch`` included) and drops repeated subqueries.

:func:`parse` gives text → :class:`WhooshParsedQuery`, :func:`relaxed` the
OR fallback, :func:`weigh_repeated` a long question's repeated words, and
:func:`filter_query` the filters as one Whoosh query. The query classes the
translation builds live in :mod:`.queries`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise

from whoosh import query as wq

from searchengine import querylang
from searchengine.analysis.folding import fold
from searchengine.analysis.tokens import word_pattern
from searchengine.dates import intersection
from searchengine.engines.whoosh.bm25f import bm25f_term, is_bm25f_term, joined_term
from searchengine.engines.whoosh.queries import (
    DocumentSet,
    ExactText,
    MinShouldMatch,
    Proximity,
    WrittenFuzzy,
    exact_pattern,
)
from searchengine.errors import QueryError
from searchengine.facets import FACETS
from searchengine.filters import PRIMARY_MARK, Filters
from searchengine.querylang import tree as t
from searchengine.querylang.text import fuzzy_edits, may_be_fuzzy
from searchengine.ranking import ALTERNATIVE_WEIGHT, PROXIMITY_FIELDS, QUERY_K3
from searchengine.records import arxiv_doi_id, doi_key

# A compound of more parts than this is searched as its joined form only
# (not also as its parts in sequence).
MAX_COMPOUND_PARTS = 6


def to_whoosh(tree: t.Node | None, schema, translator: _Translator | None = None) -> wq.Query | None:
    """The normalized Whoosh query for ``tree`` over ``schema`` (the index's
    Whoosh schema); ``None`` for no tree or a tree that matches nothing.

    Raises:
        Whatever Whoosh raises for a leaf it cannot search (a word or phrase
        in a stored-only field, a phrase in ``year`` that is not a number);
        :func:`parse` reports it as a :class:`~searchengine.errors.QueryError`.
    """
    if tree is None:
        return None
    query = (translator or _Translator(schema)).translate(tree)
    if not query:  # None, or an empty And/Or
        return None
    query = query.normalize()
    return None if query is wq.NullQuery else query


# Leaves whose translation one parse keeps: the parser's check translates
# each leaf, then the whole tree is translated (analysis of every word in
# three fields, a tenth of a keyword search's time).
_KEPT_LEAVES = (t.Word, t.FieldWord, t.Phrase, t.Joined)


class _Translator:
    """Tree nodes → Whoosh queries (not yet normalized), over one schema.

    With ``keep``, the translation of each word, phrase and joined word is
    kept and given again for an equal node (for one parse: the queries are
    shared, not copied).
    """

    def __init__(self, schema, keep: bool = False) -> None:
        self.schema = schema
        self._plain_parser = None
        self._kept: dict | None = {} if keep else None

    def plain_parser(self):
        """Whoosh's own parser (a ``QueryParser``), for the fields the product's rules do not cover."""
        if self._plain_parser is None:
            from whoosh.qparser import QueryParser  # 10 ms of imports that most searches never need

            self._plain_parser = QueryParser(None, self.schema)
        return self._plain_parser

    def translate(self, node):
        kept = self._kept
        if kept is not None and type(node) in _KEPT_LEAVES:
            if node not in kept:
                kept[node] = self._translate(node)
            return kept[node]
        return self._translate(node)

    def _translate(self, node):
        if isinstance(node, t.Word):
            return self.multifield_term(node.text)
        if isinstance(node, t.Joined):
            return self.joined(node.words)
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
        if isinstance(node, t.Fuzzy):
            if node.field is not None:
                return self.fuzzy(node.field, node.text, node.distance)
            return wq.Or(self._present(self.fuzzy(name, node.text, node.distance) for name in t.DEFAULT_FIELDS))
        if isinstance(node, t.And):
            return wq.And(self._present(map(self.translate, node.children)))
        if isinstance(node, t.Or):
            return wq.Or(self._present(map(self.translate, node.children)))
        if isinstance(node, t.Alternatives):
            return alternatives([self.translate(child) for child in node.children])
        if isinstance(node, t.Proximity):
            child = self.translate(node.child)
            pairs = self.pairs(" ".join(node.words))
            return Proximity(child, pairs) if child is not None and pairs else child
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
        # Compounds: the joined form (as typed) is one BM25F term weighing as
        # its parts; the parts in sequence (per field) are its alternative.
        joined = [q.subqueries[0] for q in per_field.values() if isinstance(q, wq.Or)]
        sequences = [q.subqueries[1] if isinstance(q, wq.Or) else q for q in per_field.values()]
        if not joined:
            return wq.Or(sequences)
        phrases = [q for q in sequences if isinstance(q, wq.Phrase)]
        if not phrases:  # one part left (the others are stop words: t-SNE)
            words = [[q for q in sequences if getattr(q, "fieldname", None) in PROXIMITY_FIELDS]]
            return alternatives([joined_term(joined, words), wq.Or(sequences)])
        # The parts in sequence score as the words would (BM25F over the
        # fields), not as one phrase score per field added up.
        words = [[] for _ in phrases[0].words]
        for q in phrases:
            for i, word in enumerate(q.words[: len(words)]):
                words[i].append(wq.Term(q.fieldname, word))
        spaced = wq.Require(wq.And([bm25f_term(terms) for terms in words]), wq.Or(phrases))
        others = [q for q in sequences if not isinstance(q, wq.Phrase)]
        return alternatives([joined_term(joined, words), wq.Or([spaced, *others]) if others else spaced])

    def term_query(self, fieldname: str, text: str):
        """One word in one field → a term, or for a compound its joined form OR
        its parts in sequence; ``None`` when it analyzes to nothing."""
        schema = self.schema
        if fieldname == "doi":
            return self.doi_query(doi_key(text))
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
        if joined is not None and len(parts) > MAX_COMPOUND_PARTS:
            # A pasted identifier (StateStateState...), not a compound anyone
            # types: its parts in sequence would read positions for each part.
            return wq.Term(fieldname, joined)
        sequence = wq.Phrase(fieldname, parts) if len(parts) > 1 else wq.Term(fieldname, parts[0])
        if joined is None:
            return sequence
        return wq.Or([wq.Term(fieldname, joined), sequence])

    @staticmethod
    def doi_query(key: str):
        """A DOI (as :func:`~searchengine.records.doi_key`) → its ``doi`` term, or
        for arXiv's DOI of an arXiv id, that term OR the id (an index holds
        arXiv's DOIs as ids only; indexes written before held them as terms)."""
        found = arxiv_doi_id(key)
        term = wq.Term("doi", key)
        return wq.Or([term, wq.Term("id", found)]) if found else term

    def fuzzy(self, fieldname: str, text: str, distance: int):
        """A fuzzy word in one field → for a title or abstract field, a
        :class:`~.queries.WrittenFuzzy` of each word of it as written (folded);
        for another, a ``FuzzyTerm`` of each term the field's analyzer makes
        of it (all of them, for a compound); ``None`` when it analyzes to nothing.
        A word or term that may not be fuzzy
        (:func:`~searchengine.querylang.text.may_be_fuzzy`: ``cs``, ``v2``) is
        searched as typed."""
        from searchengine.engines.whoosh.schema import SpelledTEXT

        field = self.schema[fieldname]
        terms = [
            token.text
            for token in field.tokenize(text, mode="query", removestops=True)
            if not getattr(token, "joined", False)
        ]
        if isinstance(field, SpelledTEXT) and terms:
            folded = fold(text)
            written = [
                word
                for word in word_pattern(folded).findall(folded)
                if list(field.tokenize(word, mode="query", removestops=True))
            ]
            if written:
                # A part too short to be fuzzy (cs.DC, x.y) or with a digit: as typed, as x~ alone is refused.
                fuzzy = [
                    WrittenFuzzy(fieldname, word, maxdist=fuzzy_edits(word, distance), prefixlength=0)
                    if may_be_fuzzy(word)
                    else self.term_query(fieldname, word)
                    for word in dict.fromkeys(written)
                ]
                return fuzzy[0] if len(fuzzy) == 1 else wq.And(fuzzy)
        fuzzy = [
            wq.FuzzyTerm(fieldname, term, maxdist=fuzzy_edits(term, distance), prefixlength=0)
            if may_be_fuzzy(term)
            else wq.Term(fieldname, term)
            for term in dict.fromkeys(terms)
        ]
        if not fuzzy:
            return None
        return fuzzy[0] if len(fuzzy) == 1 else wq.And(fuzzy)

    def joined(self, words: tuple[str, ...]):
        """Neighbouring words joined (``failslow``): one BM25F term over the
        default fields where the text analyzes to one term (its joined form,
        for a compound), weighing as the words would
        (:func:`~searchengine.engines.whoosh.bm25f.joined_term`); ``None``
        when it analyzes to one term in no field."""
        text = "".join(words)
        terms = []
        for fieldname in t.DEFAULT_FIELDS:
            # Whoosh reuses one token object: copy what is needed as it goes.
            tokens = [
                (token.text, getattr(token, "joined", False))
                for token in self.schema[fieldname].tokenize(text, mode="query")
            ]
            joined = [word for word, is_joined in tokens if is_joined]
            texts = joined or [word for word, _ in tokens]
            if len(texts) == 1:
                terms.append(wq.Term(fieldname, texts[0]))
        if not terms:
            return None
        parts = []
        for word in words:
            found = [
                wq.Term(fieldname, token.text)
                for fieldname in t.DEFAULT_FIELDS
                for token in self.schema[fieldname].tokenize(word, mode="phrase", removestops=True)
            ]
            if found:
                parts.append(found)
        return joined_term(terms, parts)

    def pairs(self, text: str) -> tuple[tuple[str, str, str, int], ...]:
        """The neighbouring words of ``text`` in the title and abstract, as
        ``(field, first stem, second stem, gap)`` (the gap in positions: 1 for
        adjacent words, more across a stop word); ``()`` for fewer than two words."""
        found: list[tuple[str, str, str, int]] = []
        for fieldname in PROXIMITY_FIELDS:
            if fieldname not in self.schema:
                continue
            tokens = [
                (token.text, token.pos)
                for token in self.schema[fieldname].tokenize(text, mode="phrase", positions=True)
            ]
            found.extend((fieldname, a, b, bpos - apos) for (a, apos), (b, bpos) in pairwise(tokens))
        return tuple(found)

    def phrase(self, fieldname: str, text: str):
        """A quoted phrase in one field → :class:`~.queries.ExactText` over the stemmed
        phrase; ``None`` when it has no word to search."""
        schema = self.schema
        field = schema[fieldname] if schema and fieldname in schema else None
        if field is None or not getattr(field, "analyzer", None) or field.self_parsing():
            # Whoosh's own phrase (a number field reads the text as a number).
            from whoosh.qparser.plugins import PhrasePlugin

            node = PhrasePlugin.PhraseNode(text, 0)
            node.fieldname, node.startchar, node.endchar = fieldname, 0, len(text)
            return node.query(self.plain_parser())
        pattern = exact_pattern(text)
        tokens = [(token.text, token.pos) for token in field.tokenize(text, mode="phrase", positions=True)]
        if pattern is None or not tokens:
            return None
        candidates: wq.Query
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


def parse(text: str, schema, *, allow_empty: bool = False, frequencies=None) -> WhooshParsedQuery:
    """Parse query text (:func:`searchengine.querylang.parse`, given
    ``frequencies`` for a long question's words) and translate it for
    ``schema``: Whoosh queries exactly as the product has always searched them.

    Raises:
        QueryError: as :func:`searchengine.querylang.parse`, and for a word or
            phrase in a field Whoosh cannot search ("cannot parse the query ...").
    """
    # The parser's check translates each leaf, so what Whoosh cannot search
    # raises while parsing; the same translator keeps them for the whole tree.
    translator = _Translator(schema, keep=True)
    parsed = querylang.parse(text, allow_empty=allow_empty, check=translator.translate, frequencies=frequencies)
    try:
        query = to_whoosh(parsed.tree, schema, translator)
    except RecursionError as exc:  # Whoosh's normalize recurses once per level of nesting
        raise QueryError(f"cannot parse the query {parsed.text!r}: {exc}") from None
    # The parser decided emptiness on the tree; here terms that analyze
    # alike (GPU, GPUs) are one, as they always were.
    if parsed.tree is not None and query is None:
        if allow_empty:
            return WhooshParsedQuery(
                text=parsed.text, query=None, notes=parsed.notes + ["the query has no searchable words"]
            )
        raise QueryError(
            f"the query {parsed.text!r} has no searchable words (only common words such as 'the' or 'of', or symbols)"
        )
    return WhooshParsedQuery(text=parsed.text, query=query, words=parsed.words, notes=parsed.notes, tree=parsed.tree)


def word_query(text: str, schema):
    """An unfielded word → its Whoosh query over ``schema``'s default fields,
    not normalized: a BM25F term, or for a compound its alternatives
    (:meth:`_Translator.multifield_term`); ``None`` when it analyzes to nothing."""
    return _Translator(schema).multifield_term(text)


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


def alternatives(queries: list):
    """Ways of writing the same words (the first as typed) → one query scoring
    each document by its best way: Whoosh's ``DisjunctionMax``, the
    alternatives after the first weighing :data:`ALTERNATIVE_WEIGHT`;
    ``None`` when none is left, the query itself when one is."""
    present = [(i, q) for i, q in enumerate(queries) if q is not None]
    if not present:
        return None
    if len(present) == 1:
        return present[0][1]
    return wq.DisjunctionMax([q if i == 0 else reweighed(q, q.boost * ALTERNATIVE_WEIGHT) for i, q in present])


def reweighed(query: wq.Query, boost: float) -> wq.Query:
    """``query`` with another ``boost``: Whoosh's ``with_boost`` without its
    deep copy of the whole subtree (a third of the time of building some
    queries), since only the top node's boost changes. A query type that
    passes its boost on to its children (a wrapper, ``Require``) keeps
    Whoosh's own way."""
    from copy import copy

    if type(query).with_boost is not wq.Query.with_boost:
        return query.with_boost(boost)
    changed = copy(query)
    changed.boost = boost  # type: ignore[attr-defined]  # (every Whoosh query has one; its stubs say not)
    return changed


def weigh_repeated(query: wq.Query, words: list[str], schema) -> wq.Query:
    """A long question's words weighed by how often the question uses them:
    Okapi BM25's query term frequency ``(K3 + 1) * qtf / (K3 + qtf)``
    (:data:`~searchengine.ranking.QUERY_K3`), ``qtf`` counting
    the ``words`` (as typed) that analyze to the term. Other queries are
    returned as they are."""
    from collections import Counter

    k3 = QUERY_K3
    target = query.child if type(query) is Proximity else query
    if not k3 or type(target) is not MinShouldMatch or "abstract" not in schema:
        return query
    field = schema["abstract"]
    counts = Counter(token.text for word in words for token in field.tokenize(word, mode="phrase"))
    if not counts or max(counts.values()) == 1:
        return query

    def text(sub) -> str | None:
        if not is_bm25f_term(sub):
            return None
        return next((term.text for term in sub.subqueries if term.fieldname == "abstract"), None)

    # Forms that differ only outside the abstract (``documents`` and
    # ``document`` as author names) are separate terms: they share the weight.
    forms = Counter(text(sub) for sub in target.subqueries)
    weighed = []
    for sub in target.subqueries:
        qtf = counts.get(text(sub), 1)
        weight = (k3 + 1) * qtf / (k3 + qtf) / forms[text(sub)]
        weighed.append(reweighed(sub, sub.boost * weight) if qtf > 1 else sub)  # type: ignore[attr-defined]
    found = MinShouldMatch(weighed, boost=target.boost, minmatch=target.minmatch)
    return Proximity(found, query.pairs) if type(query) is Proximity else found


def filter_query(filters: Filters, cache):
    """The Whoosh query that matches exactly the documents ``filters`` allow.

    Returns ``None`` when ``filters`` restrict nothing. Each facet of
    :data:`searchengine.facets.FACETS` is matched as its kind says: a
    ``year`` facet by the numeric field of its name, a ``category`` facet by
    the terms of its ``<name>_keys`` field (of
    :func:`searchengine.engines.whoosh.schema.build_schema`); ``author`` and
    ``keyword`` facets are looked up in the column file of ``cache`` (the
    searcher's :class:`~searchengine.engines.whoosh.facetcolumns.SearcherCache`)
    and matched as a :class:`~.queries.DocumentSet`. Date ranges use the ``day`` field.
    """

    def any_of(queries):
        return queries[0] if len(queries) == 1 else wq.Or(queries)

    def documents(label: str, docnums: list[int]) -> DocumentSet:
        return DocumentSet(label, docnums, cache.searcher.reader().leaf_readers())

    mark = PRIMARY_MARK if filters.primary_only else ""
    parts = []
    for facet in FACETS:
        chosen = filters.values(facet.name)
        if not chosen:
            pass
        elif facet.kind == "year":
            # The year field is unsigned: a bound below 0 ("<0000") is out of its
            # range, and no record has a year below 1000, so 0 stands in for it.
            parts.append(
                any_of(
                    [
                        wq.NumericRange(
                            facet.name,
                            None if f.low is None else max(f.low, 0),
                            None if f.high is None else max(f.high, 0),
                        )
                        for f in chosen
                    ]
                )
            )
        elif facet.kind == "author":
            keys = list(dict.fromkeys(k for f in chosen for k in f.keys))
            label = " OR ".join(f"author_keys:{k}" for k in keys)
            parts.append(documents(label if len(keys) == 1 else f"({label})", cache.columns().author_docs(keys)))
        elif facet.kind == "category":
            parts.append(any_of([wq.Term(facet.name + "_keys", mark + f.key) for f in chosen]))
        else:  # keyword
            keys = list(dict.fromkeys(f.key for f in chosen))
            label = " OR ".join(f"{facet.name}:{k!r}" for k in keys)
            parts.append(
                documents(label if len(keys) == 1 else f"({label})", cache.columns().value_docs(facet.name, keys))
            )
        # Date ranges (after the years, where they always were) AND: one range of the days they all allow.
        if facet.kind == "year" and filters.dates:
            low, high = intersection(filters.dates)
            parts.append(
                wq.NullQuery
                if low and high and low > high
                else wq.NumericRange(
                    "day", None if low is None else low.toordinal(), None if high is None else high.toordinal()
                )
            )
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else wq.And(parts)
