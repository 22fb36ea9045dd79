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
  (:class:`ExactText`); in each default field when unfielded.
* :class:`~searchengine.querylang.tree.Prefix` → ``Prefix`` of the folded
  text (expanded at search time by :func:`expand_wildcards`).
* :class:`~searchengine.querylang.tree.Fuzzy` → a ``FuzzyTerm`` for each
  term the field's analyzer makes of the word (stemmed, as indexed), in
  each default field when unfielded (expanded at search time by
  :func:`expand_wildcards` to the closest index terms).
* :class:`~searchengine.querylang.tree.MinMatch` → :class:`MinShouldMatch`;
  the others → Whoosh's ``And``, ``Or``, ``Not``, ``AndNot``, ``AndMaybe``,
  ``Require``.

The result is normalized with Whoosh's ``normalize()``, as Whoosh's parser
did: it merges an ``Or`` inside an ``Or`` (a BM25F term or a
:class:`MinShouldMatch` included) and drops repeated subqueries.

:func:`parse` gives text → :class:`WhooshParsedQuery`, :func:`relaxed` the
OR fallback; the Whoosh query classes the translation needs
(:class:`MinShouldMatch`, :class:`ExactText`), prefix expansion at search
time (:func:`expand_wildcards`) and the filters' query (:func:`filter_query`)
live here too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import pairwise

from whoosh import query as wq
from whoosh.matching import NullMatcher
from whoosh.query.wrappers import WrappingQuery

from searchengine import querylang
from searchengine.engines.whoosh import internals
from searchengine.engines.whoosh.analysis import fold
from searchengine.engines.whoosh.bm25f import bm25f_term, is_bm25f_term, joined_term, scored_list
from searchengine.engines.whoosh.cache import generation_cache, remembered
from searchengine.engines.whoosh.clock import MatchClock
from searchengine.dates import intersection
from searchengine.errors import QueryError
from searchengine.records import arxiv_doi_id, doi_key
from searchengine.ranking import ALTERNATIVE_WEIGHT, PROXIMITY_FIELDS, QUERY_K3
from searchengine.filters import PRIMARY_MARK, Filters
from searchengine.querylang import tree as t
from searchengine.querylang.text import DASHES, is_cjk_run, word_pattern

# A prefix or fuzzy term matches at most this many index terms.
MAX_EXPANSIONS = t.MAX_EXPANSIONS
# A compound of more parts than this is searched as its joined form only
# (not also as its parts in sequence).
MAX_COMPOUND_PARTS = 6

_DASH = re.compile(f"[{DASHES}]")


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
            words = [[q for q in sequences if q.fieldname in PROXIMITY_FIELDS]]
            return alternatives([joined_term(joined, words), wq.Or(sequences)])
        # The parts in sequence score as the words would (BM25F over the
        # fields), not as one phrase score per field added up.
        words = [[] for _ in phrases[0].words]
        for q in phrases:
            for i, word in enumerate(q.words[:len(words)]):
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
        """A fuzzy word in one field → a ``FuzzyTerm`` of each term the field's
        analyzer makes of it (all of them, for a compound); ``None`` when it
        analyzes to nothing."""
        field = self.schema[fieldname]
        terms = [token.text for token in field.tokenize(text, mode="query", removestops=True)
                 if not getattr(token, "joined", False)]
        fuzzy = [wq.FuzzyTerm(fieldname, term, maxdist=distance, prefixlength=0) for term in dict.fromkeys(terms)]
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
            tokens = [(token.text, getattr(token, "joined", False))
                      for token in self.schema[fieldname].tokenize(text, mode="query")]
            joined = [word for word, is_joined in tokens if is_joined]
            texts = joined or [word for word, _ in tokens]
            if len(texts) == 1:
                terms.append(wq.Term(fieldname, texts[0]))
        if not terms:
            return None
        parts = []
        for word in words:
            found = [wq.Term(fieldname, token.text) for fieldname in t.DEFAULT_FIELDS
                     for token in self.schema[fieldname].tokenize(word, mode="phrase", removestops=True)]
            if found:
                parts.append(found)
        return joined_term(terms, parts)

    def pairs(self, text: str) -> tuple:
        """The neighbouring words of ``text`` in the title and abstract, as
        ``(field, first stem, second stem, gap)`` (the gap in positions: 1 for
        adjacent words, more across a stop word); ``()`` for fewer than two words."""
        found = []
        for fieldname in PROXIMITY_FIELDS:
            if fieldname not in self.schema:
                continue
            tokens = [(token.text, token.pos)
                      for token in self.schema[fieldname].tokenize(text, mode="phrase", positions=True)]
            found.extend((fieldname, a, b, bpos - apos) for (a, apos), (b, bpos) in pairwise(tokens))
        return tuple(found)

    def phrase(self, fieldname: str, text: str):
        """A quoted phrase in one field → :class:`ExactText` over the stemmed
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
            return WhooshParsedQuery(text=parsed.text, query=None,
                                     notes=parsed.notes + ["the query has no searchable words"])
        raise QueryError(f"the query {parsed.text!r} has no searchable words "
                         "(only common words such as 'the' or 'of')")
    return WhooshParsedQuery(text=parsed.text, query=query, words=parsed.words, notes=parsed.notes,
                             tree=parsed.tree)


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
    changed.boost = boost
    return changed


class Proximity(WrappingQuery):
    """The hits of ``child``, with a bonus where the query's neighbouring words
    stand together (:func:`searchengine.engines.whoosh.proximity.proximity_bonus`).

    ``pairs`` are ``(field, first stem, second stem, gap)`` as
    :meth:`_Translator.pairs` makes them. The fast scorer
    (:func:`~searchengine.engines.whoosh.evaluate.score_documents`) adds the
    bonus to the best hits of ``child``; Whoosh's matchers ask it for the scores.
    """

    def __init__(self, child, pairs: tuple) -> None:
        super().__init__(child)
        self.pairs = pairs

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other.child == self.child and other.pairs == self.pairs

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.child, self.pairs))

    def __str__(self) -> str:
        words = [self.pairs[0][1]] + [b for f, _, b, _ in self.pairs if f == self.pairs[0][0]]
        return f"near({self.child}, {' '.join(words)})"

    def _rewrap(self, child):
        return Proximity(child, self.pairs)

    def normalize(self):
        child = self.child.normalize()
        return wq.NullQuery if child is wq.NullQuery else Proximity(child, self.pairs)

    def matcher(self, searcher, context=None):
        from searchengine.engines.whoosh.evaluate import score_documents

        scored = context.weighting is not None if context else True
        scores = score_documents(self, searcher) if scored else None
        if scores is None:
            return self.child.matcher(searcher, context)
        pairs = sorted(scores.items())
        return scored_list([doc for doc, _ in pairs], [score for _, score in pairs]) if pairs else NullMatcher()


def time_phrases(query: wq.Query, clock: MatchClock) -> None:
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
    and ranking reuse it) and stops at the deadline of its
    :class:`~searchengine.engines.whoosh.clock.MatchClock` (set by
    :func:`time_phrases`): the candidates checked by then are the hits.
    """

    def __init__(self, child, fieldname: str, pattern: str, clock: MatchClock | None = None) -> None:
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
        if self.clock is not None and self.clock.expired():
            self.clock.cut = True
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
    words = [fold(part) for match in word_pattern(text).finditer(text) for part in _DASH.split(match.group()) if part]
    if not words:
        return None
    body = r"[\W_]+".join(re.escape(word) for word in words)
    start = "" if is_cjk_run(words[0][0]) else r"(?<![^\W_])"
    end = "" if is_cjk_run(words[-1][-1]) else r"(?![^\W_])"
    return start + body + end


def _prefix_frequencies(reader, fieldname: str, prefix: str) -> dict[bytes, int]:
    """Each indexed term of ``fieldname`` starting with ``prefix`` → its document
    frequency, read in one pass over each segment's term list (looking each
    term up again cost half a second for a few common prefixes)."""
    counts: dict[bytes, int] = {}
    for sub, _ in reader.leaf_readers():
        for text, info in sub.iter_prefix(fieldname, prefix):
            counts[text] = counts.get(text, 0) + info.doc_frequency()
    return counts


_CHECK_EVERY = 2048  # terms read or compared between two looks at the clock


class _Vocabulary:
    """The indexed terms of one field, in term order, kept with the reader
    (its generation): from the generation's column file when it holds them,
    else read from the index's term list.

    Reading stops at a search's deadline and the next search resumes where
    it stopped: a cold process with a small budget still gets there.
    """

    def __init__(self) -> None:
        self.terms: list[str] = []
        self.resume: bytes | None = None  # the last term read; None before the first
        self.complete = False

    def read(self, reader, fieldname: str, clock: MatchClock | None) -> bool:
        """Read on until the end of the term list (``True``) or the deadline (``False``)."""
        field = reader.schema[fieldname]
        append = self.terms.append
        count = 0
        for name, btext in reader.terms_from(fieldname, self.resume or b""):
            if name != fieldname:
                break
            if btext == self.resume:
                continue  # the term list resumes at the last term already read
            append(field.from_bytes(btext))
            self.resume = btext
            count += 1
            if count % _CHECK_EVERY == 0 and clock is not None and clock.expired():
                return False
        self.complete = True
        return True

    def take(self, terms: list[str]) -> None:
        """Take the whole term list, in term order (from the column file)."""
        self.terms, self.resume, self.complete = terms, None, True


def _vocabulary(reader, fieldname: str, clock: MatchClock | None, stored=None) -> _Vocabulary | None:
    """The field's :class:`_Vocabulary`, ``None`` when the deadline came first.

    ``stored(fieldname)``, when given, is the field's term list as the
    generation's column file holds it (``None`` if it holds none), taken
    in one go rather than read from the index.
    """
    vocabulary = generation_cache(reader).vocabularies.setdefault(fieldname, _Vocabulary())
    if not vocabulary.complete and stored is not None:
        terms = stored(fieldname)
        if terms is not None:
            vocabulary.take(terms)
    if not vocabulary.complete and not vocabulary.read(reader, fieldname, clock):
        return None
    return vocabulary


def fuzzy_terms(reader, fieldname: str, text: str, maxdist: int, clock: MatchClock | None = None,
                stored=None) -> list[str] | None:
    """The indexed terms of ``fieldname`` within ``maxdist`` edits of ``text``
    (the optimal string alignment distance: Damerau–Levenshtein with a swap
    of neighbours counting one, as Lucene's fuzzy query): at most
    :data:`MAX_EXPANSIONS`, the closest first (in term order), and among
    equally close terms that do not all fit, the most frequent.

    The distances are computed by ``rapidfuzz`` over the whole term list
    (about 50 ms for 100,000 terms); document frequencies are read only to
    choose within the closest distance that overflows the cap (in term
    order once the ``clock``'s deadline has passed). ``None`` when the
    deadline passed before the term list was read. ``stored``: see
    :func:`_vocabulary`.
    """
    from rapidfuzz import process
    from rapidfuzz.distance import OSA

    vocabulary = _vocabulary(reader, fieldname, clock, stored)
    if vocabulary is None:
        return None
    by_distance: dict[int, list[str]] = {}
    for term, distance, _ in process.extract(text, vocabulary.terms, scorer=OSA.distance, processor=None,
                                             score_cutoff=maxdist, limit=None):
        by_distance.setdefault(int(distance), []).append(term)
    found: list[str] = []
    for distance in sorted(by_distance):
        terms = sorted(by_distance[distance])
        room = MAX_EXPANSIONS - len(found)
        if len(terms) > room and (clock is None or not clock.expired()):
            terms.sort(key=lambda term: -reader.doc_frequency(fieldname, term))  # stable: ties by term
        found.extend(terms[:room])
        if len(found) >= MAX_EXPANSIONS:
            break
    return found


def expand_wildcards(query: wq.Query, reader, notes: list[str], clock: MatchClock | None = None,
                     memo: dict | None = None, vocabulary=None) -> wq.Query:
    """Replace each prefix, wildcard and fuzzy node with an OR of at most
    :data:`MAX_EXPANSIONS` terms.

    A prefix keeps its most frequent matching terms, so ``s*`` cannot turn
    into a query over half the vocabulary (a note says when terms were
    dropped); a fuzzy term its closest (:func:`fuzzy_terms`).

    Expanding counts against the ``clock``'s deadline: once it has passed, a
    node left to expand matches only its own text (a fuzzy word) or nothing
    (a prefix, a wildcard), and the clock says matching was cut. ``memo``
    (a dict kept for one search) holds each node's expansion, so the OR
    fallback and did-you-mean reuse them. ``vocabulary(fieldname)`` gives a
    field's stored term list for fuzzy words (see :func:`_vocabulary`).
    """
    if not any(isinstance(leaf, (wq.Prefix, wq.Wildcard, wq.FuzzyTerm)) for leaf in query.leaves()):
        return query
    memo = {} if memo is None else memo

    def expired() -> bool:
        if clock is not None and clock.expired():
            clock.cut = True
            return True
        return False

    def terms_of(node: wq.Query) -> tuple[list, list[str]]:
        """``(terms, notes)`` of one node, ``terms`` as the field stores them."""
        fieldname = node.field()
        if isinstance(node, wq.FuzzyTerm):
            found = None if expired() else fuzzy_terms(reader, fieldname, node.text, node.maxdist, clock, vocabulary)
            if found is None:
                if clock is not None:
                    clock.cut = True
                return [node.text], []
            return found, []
        if expired():
            return [], []
        if isinstance(node, wq.Prefix):
            frequency = _prefix_frequencies(reader, fieldname, node.text)
            candidates = sorted(frequency)
        else:
            candidates = internals.wildcard_terms(node, reader)
            frequency = None
        said = []
        if len(candidates) > MAX_EXPANSIONS:
            candidates.sort(key=frequency.__getitem__ if frequency is not None
                            else lambda t: reader.doc_frequency(fieldname, t), reverse=True)
            said.append(f"'{node.text}*' matches {len(candidates)} terms in {fieldname}; "
                        f"searched the {MAX_EXPANSIONS} most frequent")
            candidates = candidates[:MAX_EXPANSIONS]
        field = reader.schema[fieldname]
        return [field.from_bytes(t) for t in candidates], said

    def expand(node: wq.Query) -> wq.Query:
        if isinstance(node, (wq.Prefix, wq.Wildcard, wq.FuzzyTerm)):
            fieldname = node.field()
            if fieldname not in reader.schema:
                return wq.NullQuery
            key = (type(node).__name__, fieldname, node.text, getattr(node, "maxdist", 0))
            if key not in memo:
                memo[key] = terms_of(node)
            terms, said = memo[key]
            notes.extend(said)
            return wq.Or([wq.Term(fieldname, term) for term in terms], boost=node.boost) if terms else wq.NullQuery
        if node.is_leaf():
            return node
        return node.apply(expand)

    return expand(query).normalize()


# A joined word typed in lower case (``flashattention``) is also searched as
# two words (``flash attention``) when each of the two has MIN_SPLIT_PART
# letters or more and is in at least SPLIT_RARITY times as many abstracts as
# the joined word (``network`` is not ``net work``: ``net`` is the rarer).
SPLIT_RARITY = 1
MIN_SPLIT_PART = 3


_FREQUENCIES_KEPT = 100_000  # terms; the cache starts over past this


def abstract_frequency(reader):
    """``frequency(term)``: the number of abstracts holding ``term``, kept
    with the reader (its generation). Splitting a joined word looks up every
    cut of it, and a lookup in Whoosh's term table costs about 70 µs."""
    kept = generation_cache(reader).abstract_frequencies

    def frequency(text: str) -> int:
        return remembered(kept, text, lambda term: reader.doc_frequency("abstract", term), _FREQUENCIES_KEPT)

    return frequency


def split_joined(query: wq.Query, reader) -> wq.Query:
    """Each one-field-term word of a keyword ``query`` (not a long question)
    that is two indexed words written together → the alternatives of a
    compound typed joined (the joined word, then the two words in sequence),
    as ``FlashAttention`` gets them.

    The split is the one whose rarer part is most frequent in the abstracts,
    among those where both parts are :data:`SPLIT_RARITY` times as frequent
    as the joined word (in the abstracts); a word with no such split is left alone.
    """
    # A question ranks by many words, each by its own weight; splitting is
    # for looking up a keyword query.
    if type(query.child if type(query) is Proximity else query) is MinShouldMatch:
        return query

    def split(node: wq.Query) -> wq.Query:
        if is_bm25f_term(node):
            texts = {sub.text for sub in node.subqueries if sub.fieldname in PROXIMITY_FIELDS}
            text = texts.pop() if len(texts) == 1 else None
            if text is None or not text.isalpha() or len(text) < 2 * MIN_SPLIT_PART:
                return node
            frequency = abstract_frequency(reader)
            needed = max(1, frequency(text)) * SPLIT_RARITY
            best, best_df = None, 0
            for cut in range(MIN_SPLIT_PART, len(text) - MIN_SPLIT_PART + 1):
                left, right = text[:cut], text[cut:]
                df = frequency(left)
                if df >= needed and df > best_df:  # most cuts end here: the left part is no word
                    df = min(df, frequency(right))
                    if df >= needed and df > best_df:
                        best, best_df = (left, right), df
            if best is None:
                return node
            found = _Translator(reader.schema).multifield_term("-".join(best))
            return reweighed(found, node.boost) if found is not None else node
        if node.is_leaf():
            return node
        return node.apply(split)

    return split(query)


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
        weighed.append(reweighed(sub, sub.boost * weight) if qtf > 1 else sub)
    found = MinShouldMatch(weighed, boost=target.boost, minmatch=target.minmatch)
    return Proximity(found, query.pairs) if type(query) is Proximity else found


class DocumentSet(wq.Query):
    """A query matching a given set of documents, shown as ``label``.

    ``docnums``: ascending document numbers in the whole index, whose
    segments are ``leaves`` (``reader.leaf_readers()``: ``(segment reader,
    first docnum)``); a segment's searcher gets its own part of them. Deleted
    documents never match.
    """

    def __init__(self, label: str, docnums: list[int], leaves) -> None:
        self.label = label
        self.docnums = docnums
        self._leaves = list(leaves)
        self.boost = 1.0

    def __str__(self) -> str:
        return self.label

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.label!r}, {len(self.docnums)} documents)"

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and (other.label, other.docnums) == (self.label, self.docnums)

    def __hash__(self) -> int:
        return hash((type(self), self.label))

    def is_leaf(self) -> bool:
        return True

    def estimate_size(self, ixreader) -> int:
        return len(self.docnums)

    def docnums_in(self, reader) -> list[int]:
        """The matching document numbers of ``reader`` (a segment of the
        index, or the whole index), ascending, as that reader numbers them."""
        from bisect import bisect_left

        docs = self.docnums
        for leaf, offset in self._leaves:
            if leaf is reader:
                end = offset + reader.doc_count_all()
                docs = [d - offset for d in docs[bisect_left(docs, offset):bisect_left(docs, end)]]
                break
        if reader.has_deletions():
            docs = [d for d in docs if not reader.is_deleted(d)]
        return docs

    def matcher(self, searcher, context=None):
        from whoosh.matching import ListMatcher

        docs = self.docnums_in(searcher.reader())
        return ListMatcher(docs, all_weights=1.0) if docs else NullMatcher()

    def docs(self, searcher, deleting=False):
        return iter(self.docnums_in(searcher.reader()))


def filter_query(filters: Filters, cache):
    """The Whoosh query that matches exactly the documents ``filters`` allow.

    Returns ``None`` when ``filters`` restrict nothing. Uses the ``year``,
    ``day`` and ``category_keys`` fields of
    :func:`searchengine.engines.whoosh.schema.build_schema`; authors are
    looked up in the column file of ``cache`` (the searcher's
    :class:`~searchengine.engines.whoosh.columns.SearcherCache`) and
    matched as a :class:`DocumentSet`.
    """
    def any_of(queries):
        return queries[0] if len(queries) == 1 else wq.Or(queries)

    mark = PRIMARY_MARK if filters.primary_only else ""
    parts = []
    if filters.years:
        # The year field is unsigned: a bound below 0 ("<0000") is out of its
        # range, and no record has a year below 1000, so 0 stands in for it.
        parts.append(any_of([wq.NumericRange("year", None if f.low is None else max(f.low, 0),
                                             None if f.high is None else max(f.high, 0)) for f in filters.years]))
    if filters.dates:  # date ranges AND: one range of the days they all allow
        low, high = intersection(filters.dates)
        parts.append(wq.NullQuery if low and high and low > high else
                     wq.NumericRange("day", low and low.toordinal(), high and high.toordinal()))
    if filters.authors:
        keys = list(dict.fromkeys(k for f in filters.authors for k in f.keys))
        label = " OR ".join(f"author_keys:{k}" for k in keys)
        parts.append(DocumentSet(label if len(keys) == 1 else f"({label})", cache.columns().author_docs(keys),
                                 cache.searcher.reader().leaf_readers()))
    if filters.categories:
        parts.append(any_of([wq.Term("category_keys", mark + f.key) for f in filters.categories]))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else wq.And(parts)
