"""Snippets of the embedded engine's hits: the engine-free snippet making
(:mod:`searchengine.analysis.snippets`), given the terms of a Whoosh query
(:func:`query_terms`).
"""

from __future__ import annotations

# The engine's face for snippets: its engine module reaches them through this one.
from searchengine.analysis.snippets import Snippet, abstract_snippet, lead, title_matches

__all__ = ["Snippet", "abstract_snippet", "lead", "query_terms", "title_matches"]


def query_terms(query) -> dict[str, frozenset[str]]:
    """The indexed term texts a query looks for, by field (``{"abstract": {"gpu", ...}}``)."""
    found: dict[str, set[str]] = {}
    if query is not None:
        for fieldname, text in query.iter_all_terms(phrases=True):
            if isinstance(text, bytes):
                text = text.decode("utf-8", "replace")
            found.setdefault(fieldname, set()).add(text)
    return {fieldname: frozenset(texts) for fieldname, texts in found.items()}
