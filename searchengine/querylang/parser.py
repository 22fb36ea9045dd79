"""Query text → :class:`ParsedQuery`: the query language users type, for any engine.

The language is documented in docs/searching.md, "The query language". In short:

* Words. Keyword queries of up to :data:`ALL_TERMS_UP_TO` (3) words need
  every word; longer queries need a share :data:`MIN_SHOULD_MATCH` (5 %) of
  their terms, rounded up, and at least :data:`LONG_QUERY_MIN` (2)
  (:class:`~searchengine.querylang.tree.MinMatch`). Stop words do not count;
  in a long query a hyphenated word counts as its parts. In a keyword query
  two adjacent words also match their joined form (``fail slow`` →
  ``failslow``: :class:`~searchengine.querylang.tree.Joined`); the ways
  of writing them are :class:`~searchengine.querylang.tree.Alternatives`.
  A query of plain words ranks higher the hits where its words stand
  together (:class:`~searchengine.querylang.tree.Proximity`).
* ``"exact phrase"`` (straight or typographic quotes), ``OR``, ``AND``,
  ``NOT`` (upper case only), ``-word``, ``+word``, parentheses (only with an
  operator; otherwise they are punctuation).
* Fields ``title:``/``ti:``, ``abstract:``/``abs:``, ``id:``; filters
  ``year:``, ``date:``, ``author:``/``au:``, ``category:``/``cat:``, first author
  ``^Qian`` or ``^"Qian, D"`` (taken out by
  :func:`split_filters` before parsing).
* ``spars*``: a prefix of at least :data:`MIN_PREFIX` letters.
* A whole query that is an arXiv id or abs/pdf URL looks that paper up.

Hostile input is repaired rather than rejected where the intent is clear
(:func:`prepare`); everything else that cannot be understood raises
:class:`~searchengine.errors.QueryError` with a one-line message.

:func:`parse` gives a tree of :mod:`searchengine.querylang.tree` nodes,
which each engine translates (:mod:`searchengine.engines.whoosh.querying`);
nothing here imports a search engine.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from searchengine.analysis.compounds import text_tokens
from searchengine.errors import QueryError
from searchengine.querylang import syntax
from searchengine.querylang import tree as t
from searchengine.querylang.repair import (
    DASH_SPLIT,
    FIELD_ALIASES,
    KNOWN_FIELDS,
    MAX_PHRASES,
    MAX_PREFIXES,
    MAX_QUERY_CHARS,
    MAX_WORD_CHARS,
    OPERATOR,
    clean,
    drop_parentheses,
    prepare,
    query_words,
    split_filters,
)
from searchengine.querylang.syntax import (
    ALL_TERMS_UP_TO,
    LONG_QUERY_MIN,
    MIN_PREFIX,
    MIN_SHOULD_MATCH,
    required_terms,
)
from searchengine.querylang.text import MIN_FUZZY
from searchengine.records import arxiv_id, doi, doi_key

if TYPE_CHECKING:
    from searchengine.querylang.syntax import Raw

__all__ = [
    "ALL_TERMS_UP_TO",
    "LONG_QUERY_MIN",
    "MIN_FUZZY",
    "MIN_PREFIX",
    "MIN_SHOULD_MATCH",
    "required_terms",
    "MAX_QUERY_CHARS",
    "MAX_WORD_CHARS",
    "MAX_PREFIXES",
    "MAX_PHRASES",
    "FIELD_ALIASES",
    "KNOWN_FIELDS",
    "ParsedQuery",
    "clean",
    "split_filters",
    "prepare",
    "parse",
    "relaxed",
    "simplify",
    "only_negative",
]

# A question of more different words than this (a pasted abstract: 200 to
# 400 words) is searched by this many, those in the fewest papers (the
# highest idf): ORing every word cost seconds and ranked no better, since
# common words barely count in BM25 (docs/matching.md).
MAX_QUESTION_TERMS = 80
# Different terms a query may combine with operators, fields or phrases
# (a question of plain words is shortened instead): each is read on its own.
MAX_QUERY_TERMS = 100
# Queries of plain words, from two up to this many (keyword queries), rank
# by proximity too (tree.Proximity). On longer questions it cost Cranfield
# and CISI (docs/evaluation.md).
PROXIMITY_UP_TO = ALL_TERMS_UP_TO


@dataclass
class ParsedQuery:
    """A query as understood.

    Attributes:
        text: the cleaned query text that was parsed.
        tree: the query tree (:mod:`searchengine.querylang.tree`), simplified;
            ``None`` for an empty query (browse by filters).
        words: the positive words of the query, as typed (for relaxing an
            AND query into OR, and for spelling suggestions).
        notes: messages for the user about repairs made (cut, capped, ...).
    """

    text: str
    tree: t.Node | None
    words: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# --- the tree -------------------------------------------------------------------------


def simplify(node: Raw | None) -> t.Node | None:
    """``node`` without what matches nothing, nested like groups merged, single
    children lifted and repeated children dropped; ``None`` when nothing is left.

    The rules are those Whoosh's ``normalize`` applies to the translated
    query, as far as they do not depend on analysis: so whether a query is
    empty or only excludes is decided here the same way for every engine. A
    :class:`MinMatch` keeps its minimum and is not merged into an enclosing
    :class:`Or`; an :class:`Or` of one child is kept as it is.
    """
    if node is None or isinstance(node, syntax.Null):
        return None
    if isinstance(node, t.Phrase):
        if node.field is None and not syntax.default_phrase_searches(node.text):
            return None
        return node
    if isinstance(node, t.LEAVES):
        return node
    if isinstance(node, t.Proximity):
        child = simplify(node.child)
        return None if child is None else t.Proximity(child, node.words)
    if isinstance(node, (t.And, t.Or, t.Alternatives, t.MinMatch)):
        subs: list[t.Node] = []
        for child in node.children:
            child = simplify(child)
            if child is None:
                continue
            if type(node) in (t.And, t.Or) and type(child) is type(node):
                subs.extend(child.children)
            else:
                subs.append(child)
        subs = list(dict.fromkeys(subs))  # repeated children count once
        if not subs:
            return None
        # One child is the child itself; but an Or of one stays: the engine may
        # search it otherwise (Whoosh merges a BM25F term into an enclosing Or
        # as separate per-field terms).
        if len(subs) == 1 and not isinstance(node, t.Or):
            return subs[0]
        if isinstance(node, t.MinMatch):
            return t.MinMatch(tuple(subs), node.minimum)
        return type(node)(tuple(subs))
    if isinstance(node, t.Not):
        child = simplify(node.child)
        return None if child is None else t.Not(child)
    if isinstance(node, (t.AndNot, t.AndMaybe, t.Require)):
        a, b = simplify(node.a), simplify(node.b)
        if isinstance(node, t.Require):
            return None if a is None or b is None else t.Require(a, b)
        if a is None:
            return None
        return a if b is None else type(node)(a, b)
    raise TypeError(f"not a query tree node: {node!r}")


def only_negative(node: t.Node | None) -> bool:
    """Whether a (simplified) tree only excludes: a :class:`Not`, or an :class:`And`
    or :class:`Or` of such. Such a query lists every document but those it
    excludes, with no score (Solr's and Elasticsearch's pure negative query)."""
    if node is None:
        return False
    if isinstance(node, t.Not):
        return True
    if isinstance(node, t.And):
        return all(only_negative(child) for child in node.children)
    if isinstance(node, t.Or):
        return all(only_negative(child) for child in node.children)
    return False


def _tree(text: str) -> Raw | None:
    """The tree of prepared ``text`` before :func:`simplify`."""
    return syntax.to_tree(syntax.syntax_tree(text))


_DOI_FIELD = re.compile(r"(?<![\w.\-/])doi:\s*(\S*)", re.IGNORECASE)


def identifier_doi(text: str) -> str | None:
    """The DOI a query made of one DOI names (bare, ``doi:...``, or a
    ``https://doi.org/...`` link), else ``None``.

    Raises:
        QueryError: a ``doi:`` value that is not a DOI (anywhere in the query).
    """
    for match in _DOI_FIELD.finditer(text):
        value = match.group(1).strip("\"'")
        if value and not doi(value):
            raise QueryError(
                f"'doi:{value}' is not a DOI (a DOI starts with '10.', its registrant's "
                "number, then '/': e.g. doi:10.1103/PhysRevB.76.125117)"
            )
    return doi(" ".join(text.split()))


def parse(
    text: str,
    *,
    allow_empty: bool = False,
    check: Callable[[t.Node], object] | None = None,
    frequencies: Callable[[list[str]], dict[str, int]] | None = None,
) -> ParsedQuery:
    """Parse query text (filters already taken out by :func:`split_filters`).

    Args:
        text: what the user typed.
        allow_empty: an empty query is fine (the caller browses by filters);
            otherwise it is an error.
        check: called with each leaf of the tree as parsed, before it is
            simplified: an engine's check that it can search the leaf (a
            field it cannot search); whatever it raises is reported as a
            :class:`QueryError` "cannot parse the query ...: <its message>".
        frequencies: the index's document frequencies of words as typed
            (``{word: papers holding it}``, 0 for none), which choose the
            words of a long question (:func:`key_terms`); without it such a
            question keeps every word.

    Returns:
        A :class:`ParsedQuery`; its ``tree`` is ``None`` only when
        ``allow_empty`` and nothing is left to search.

    Raises:
        QueryError: the query is empty (unless allowed), names an unknown
            field, has a field without a value, starts with a wildcard, has
            no searchable words (only stop words), a fuzzy word's distance
            above 2 or outside the text fields, a phrase's proximity, or has
            parentheses (or a chain of ``ANDNOT``, ``ANDMAYBE`` or ``REQUIRE``)
            nested deeper than :data:`~searchengine.querylang.syntax.MAX_NESTING`,
            or combines more than :data:`MAX_QUERY_TERMS` different terms
            with operators, fields or phrases.
    """
    notes: list[str] = []
    raw = text if isinstance(text, str) else ""
    paper = arxiv_id(" ".join(raw.split())) if raw.strip() else None
    typed = " ".join(raw.split())
    if paper:
        return ParsedQuery(
            text=paper,
            tree=t.FieldWord("id", paper),
            notes=[f"'{typed}' is an arXiv identifier: the paper with id {paper} is searched"],
        )
    found_doi = identifier_doi(raw)
    if found_doi:
        return ParsedQuery(
            text="doi:" + found_doi,
            tree=t.FieldWord("doi", doi_key(found_doi)),
            notes=[f"'{typed}' is a DOI: the paper with DOI {found_doi} is searched"],
        )
    cleaned = prepare(raw, notes)
    if not OPERATOR.search(cleaned):
        cleaned = drop_parentheses(cleaned)
    if not cleaned:
        if allow_empty:
            return ParsedQuery(text="", tree=None, notes=notes)
        raise QueryError("the query is empty")
    try:
        parsed = _tree(cleaned)
        parsed, kept = key_terms(parsed, frequencies, notes)
        if check is not None and parsed is not None and not isinstance(parsed, syntax.Null):
            try:
                for leaf in t.leaves(parsed):
                    check(leaf)
            except RecursionError:
                raise
            except Exception as exc:  # the engine's own words for what it cannot search
                raise QueryError(f"cannot parse the query {cleaned!r}: {exc}") from None
        tree = simplify(parsed)
    except (syntax.NestingError, RecursionError) as exc:
        raise QueryError(f"cannot parse the query {cleaned!r}: {exc}") from None
    if tree is None:
        if allow_empty:
            return ParsedQuery(text=cleaned, tree=None, notes=notes + ["the query has no searchable words"])
        raise QueryError(
            f"the query {cleaned!r} has no searchable words (only common words such as 'the' or 'of', or symbols)"
        )
    for leaf in t.leaves(tree):
        if isinstance(leaf, t.Fuzzy) and leaf.field not in (None, *t.DEFAULT_FIELDS):
            raise QueryError(
                f"'{leaf.field}:{leaf.text}~{leaf.distance}': fuzzy words are searched in "
                "the title, the abstract and the author names only"
            )
    _check_term_count(tree)
    words = query_words(cleaned)
    if kept is not None:
        words = [word for word in words if any(part.casefold() in kept for part in DASH_SPLIT.split(word))]
        cleaned = " ".join(words)
    return ParsedQuery(text=cleaned, tree=with_proximity(tree, words), words=words, notes=notes)


def key_terms(
    tree: Raw | None, frequencies: Callable[[list[str]], dict[str, int]] | None, notes: list[str]
) -> tuple[Raw | None, set[str] | None]:
    """A long question (a :class:`~searchengine.querylang.tree.MinMatch` of more
    than :data:`MAX_QUESTION_TERMS` different words, alone or beside excluded
    words) cut to its :data:`MAX_QUESTION_TERMS` most specific words.

    Words are ranked by ``frequencies`` (fewest papers first; a word in no
    paper last, as it can match nothing), ties by first use. Its phrases, prefixes and fielded words are
    kept (each capped by its own limit); repeated words stay repeated, so that
    they keep their weight. The minimum to match is taken anew of what is
    kept. A note names the number of words searched.

    Returns:
        ``(tree, kept)``: the tree (unchanged when not such a question) and
        the case-folded words kept (``None`` when unchanged).
    """
    if isinstance(tree, t.And):
        for number, child in enumerate(tree.children):
            if isinstance(child, t.MinMatch):
                shortened, kept = _question_terms(child, frequencies, notes)
                children = tree.children[:number] + (shortened,) + tree.children[number + 1 :]
                return t.And(children), kept
        return tree, None
    if not isinstance(tree, t.MinMatch):
        return tree, None
    return _question_terms(tree, frequencies, notes)


def _question_terms(
    tree: t.MinMatch, frequencies: Callable[[list[str]], dict[str, int]] | None, notes: list[str]
) -> tuple[t.MinMatch, set[str] | None]:
    """:func:`key_terms` of a :class:`~searchengine.querylang.tree.MinMatch`."""
    if frequencies is None:
        return tree, None
    typed: dict[str, str] = {}  # folded → first spelling
    for child in tree.children:
        if type(child) is t.Word:
            typed.setdefault(child.text.casefold(), child.text)
    if len(typed) <= MAX_QUESTION_TERMS:
        return tree, None
    found = frequencies(list(typed.values()))
    order = {key: number for number, key in enumerate(typed)}

    def rank(key: str) -> tuple[bool, int, int]:
        df = found.get(typed[key], 0)
        return (not df, df, order[key])

    kept = set(sorted(typed, key=rank)[:MAX_QUESTION_TERMS])
    children = tuple(child for child in tree.children if type(child) is not t.Word or child.text.casefold() in kept)
    notes.append(
        f"a long question: searched by the {MAX_QUESTION_TERMS} of its {len(typed)} different words "
        "that the fewest papers hold"
    )
    return t.MinMatch(children, required_terms(len(children))), kept


def _check_term_count(tree: t.Node) -> None:
    """Refuse a query combining more than :data:`MAX_QUERY_TERMS` different
    terms (a question of plain words is not refused: :func:`key_terms`)."""
    if isinstance(tree, t.MinMatch):
        return
    count = len(set(t.leaves(tree)))
    if count > MAX_QUERY_TERMS:
        raise QueryError(
            f"the query combines {count} different terms; at most {MAX_QUERY_TERMS} can be "
            "searched together (a question of plain words is searched by its "
            f"{MAX_QUESTION_TERMS} most specific words)"
        )


# Node kinds of a query made of plain words only (no operator, field, phrase or prefix).
_PLAIN = (t.Word, t.Joined, t.And, t.Alternatives, t.MinMatch)


def with_proximity(tree: t.Node, words: list[str]) -> t.Node:
    """``tree`` as a :class:`~searchengine.querylang.tree.Proximity` of ``words``
    when it is a query of at least two plain words (no operator, field,
    phrase or prefix) of at most :data:`PROXIMITY_UP_TO` words; else ``tree``.

    A single word is left alone even when it is a compound: its parts in
    sequence are already one of its alternatives.
    """
    plain = [word for word in words if text_tokens(word)]
    if not 2 <= len(plain) <= PROXIMITY_UP_TO:
        return tree
    stack = [tree]
    while stack:
        node = stack.pop()
        if not isinstance(node, _PLAIN):
            return tree
        stack.extend(t.children(node))
    return t.Proximity(tree, tuple(words))


def relaxed(parsed: ParsedQuery) -> t.Or | None:
    """Any one of the query's words, for when no document has them all.

    Each word is parsed on its own (so it is analysed, and compounds are
    handled, as in the full query); stop words are left out. ``None`` for
    fewer than two words. The :class:`Or`'s children are kept as they are
    (not merged or deduplicated): one alternative per word.
    """
    if len(parsed.words) < 2:
        return None
    words = [q for q in (simplify(_tree(word)) for word in parsed.words) if q is not None]
    return t.Or(tuple(words)) if len(words) > 1 else None
