"""The terms of a Whoosh query that snippets mark (:func:`query_terms`); the
snippets themselves are made by :mod:`searchengine.analysis.snippets`.
"""

from __future__ import annotations


def query_terms(query) -> dict[str, frozenset[str]]:
    """The indexed term texts a query looks for, by field (``{"abstract": {"gpu", ...}}``)."""
    found: dict[str, set[str]] = {}
    if query is not None:
        for fieldname, text in query.iter_all_terms(phrases=True):
            if isinstance(text, bytes):
                text = text.decode("utf-8", "replace")
            found.setdefault(fieldname, set()).add(text)
    return {fieldname: frozenset(texts) for fieldname, texts in found.items()}
