"""Query text → Whoosh query.

Every term of a keyword query must match (``SpMV GPU`` finds only papers with
both words); a term may match in the title, the abstract or the author names.
The query text passes through the same analyzer as the indexed text, so
``GPUs`` finds ``GPU``. Whoosh's syntax applies: ``"exact phrase"``,
``OR``, ``NOT``, parentheses and ``field:term`` for the fields below.

Filters may be written into the query: ``year:2023-2025``, ``year:>=2023``,
``author:"Qian, D."`` (or ``au:``), ``category:cs.DC`` (or ``cat:``); the
values mean what the command-line options mean (:mod:`searchengine.filters`).
:func:`split_filters` takes them out of the text before parsing; they always
apply to the whole query, so they cannot follow ``OR``/``NOT`` or stand
inside parentheses.
"""

from __future__ import annotations

import re

from whoosh import qparser
from whoosh.query import Query

from searchengine import filters as _filters
from searchengine.errors import QueryError
from searchengine.schema import DEFAULT_FIELDS

# Queries longer than this are refused rather than parsed (characters).
MAX_QUERY_LENGTH = 2000


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


def make_parser(schema) -> qparser.QueryParser:
    """A parser over :data:`DEFAULT_FIELDS` where every term is required."""
    return qparser.MultifieldParser(list(DEFAULT_FIELDS), schema, group=qparser.AndGroup)


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
    return make_parser(schema).parse(text)
