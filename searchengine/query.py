"""Query text → Whoosh query.

Every term of a keyword query must match (``SpMV GPU`` finds only papers with
both words); a term may match in the title, the abstract or the author names.
The query text passes through the same analyzer as the indexed text, so
``GPUs`` finds ``GPU``. Whoosh's syntax applies: ``"exact phrase"``,
``OR``, ``NOT``, parentheses and ``field:term`` for the fields below.
"""

from __future__ import annotations

from whoosh import qparser
from whoosh.query import Query

from searchengine.errors import QueryError
from searchengine.schema import DEFAULT_FIELDS

# Queries longer than this are refused rather than parsed (characters).
MAX_QUERY_LENGTH = 2000


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
