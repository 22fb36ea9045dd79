"""The query language, parsed once into an engine-free query tree.

``parse(text)`` gives a :class:`ParsedQuery` whose ``tree`` is made of the
nodes of :mod:`searchengine.querylang.tree`; each engine translates the tree
(for Whoosh: :func:`searchengine.engines.whoosh.querying.to_whoosh`).
Nothing in this package imports a search engine.
"""

from searchengine.querylang.parser import (
    FIELD_ALIASES, KNOWN_FIELDS, MAX_PHRASES, MAX_PREFIXES, MAX_QUERY_CHARS, MAX_WORD_CHARS,
    ParsedQuery, clean, only_negative, parse, prepare, relaxed, required_terms, simplify, split_filters,
    with_proximity,
)
from searchengine.querylang.tree import (
    DEFAULT_FIELDS, MAX_EXPANSIONS, Alternatives, And, AndMaybe, AndNot, FieldWord, Fuzzy, Joined, MinMatch, Node,
    Not, Or, Phrase, Prefix, Proximity, Require, Word, children, leaves,
)

__all__ = [
    "FIELD_ALIASES", "KNOWN_FIELDS", "MAX_PHRASES", "MAX_PREFIXES", "MAX_QUERY_CHARS", "MAX_WORD_CHARS",
    "ParsedQuery", "clean", "only_negative", "parse", "prepare", "relaxed", "required_terms", "simplify",
    "split_filters", "with_proximity",
    "DEFAULT_FIELDS", "MAX_EXPANSIONS", "Alternatives", "And", "AndMaybe", "AndNot", "FieldWord", "Fuzzy", "Joined",
    "MinMatch", "Node", "Not", "Or", "Phrase", "Prefix", "Proximity", "Require", "Word", "children", "leaves",
]
