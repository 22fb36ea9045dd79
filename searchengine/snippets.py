"""Snippets: the parts of a hit's text that show why it matched.

A snippet is plain text plus the character offsets of the matched words in
it, so each front end marks them its own way (bold in a terminal, ``<mark>``
in HTML) and no markup ever has to be parsed back out. Matches are found by
Whoosh's highlighter, which re-analyses the stored text with the field's
analyzer: the offsets cover the words as written in the record (``GPUs``),
not their stems (``gpu``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Fragment size and context around a match, in characters.
FRAGMENT_CHARS = 180
CONTEXT_CHARS = 50
FRAGMENTS = 2
SEPARATOR = " … "
# When nothing in the abstract matched, show its start, cut at a word boundary.
LEAD_CHARS = 240


@dataclass
class Snippet:
    """Plain text and the ``[start, end)`` offsets of matched words in it."""

    text: str = ""
    matches: list[tuple[int, int]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "matches": [list(m) for m in self.matches]}


def _formatter():
    """A Whoosh formatter whose output is a :class:`Snippet`, not a string."""
    from whoosh import highlight

    class OffsetFormatter(highlight.Formatter):
        def format(self, fragments, replace=False):
            snippet = Snippet()
            parts: list[str] = []
            length = 0
            for number, fragment in enumerate(fragments):
                if number:
                    parts.append(SEPARATOR)
                    length += len(SEPARATOR)
                text, position = fragment.text, fragment.startchar
                for token in sorted(fragment.matches, key=lambda t: (t.startchar, -t.endchar)):
                    if token.startchar is None or token.startchar < position:
                        continue
                    parts.append(text[position:token.startchar])
                    length += token.startchar - position
                    snippet.matches.append((length, length + token.endchar - token.startchar))
                    parts.append(text[token.startchar:token.endchar])
                    length += token.endchar - token.startchar
                    position = token.endchar
                parts.append(text[position:fragment.endchar])
                length += fragment.endchar - position
            snippet.text = "".join(parts)
            return snippet

    return OffsetFormatter()


def query_terms(query) -> dict[str, frozenset[str]]:
    """The indexed term texts a query looks for, by field (``{"abstract": {"gpu", ...}}``)."""
    found: dict[str, set[str]] = {}
    if query is not None:
        for fieldname, text in query.iter_all_terms(phrases=True):
            if isinstance(text, bytes):
                text = text.decode("utf-8", "replace")
            found.setdefault(fieldname, set()).add(text)
    return {fieldname: frozenset(texts) for fieldname, texts in found.items()}


def lead(text: str, limit: int = LEAD_CHARS) -> Snippet:
    """The start of ``text``, cut at a word boundary, with no matches."""
    if len(text) <= limit:
        return Snippet(text)
    cut = text.rfind(" ", 0, limit)
    return Snippet(text[: cut if cut > 0 else limit].rstrip(" ,;:") + " …")


def _highlight(text: str, terms: frozenset[str], analyzer, fragmenter, top: int) -> Snippet:
    from whoosh import highlight

    found = highlight.highlight(text, terms, analyzer, fragmenter, _formatter(), top=top)
    return found if isinstance(found, Snippet) else Snippet()


def title_matches(title: str, terms: frozenset[str], analyzer) -> list[tuple[int, int]]:
    """Offsets of the words of ``title`` whose analysed form is in ``terms``."""
    from whoosh import highlight

    if not title or not terms:
        return []
    return list(_highlight(title, terms, analyzer, highlight.WholeFragmenter(), 1).matches)


def abstract_snippet(abstract: str, terms: frozenset[str], analyzer) -> Snippet:
    """The best fragments of ``abstract`` around the words in ``terms``, or its start."""
    from whoosh import highlight

    if not abstract:
        return Snippet()
    if terms:
        fragmenter = highlight.ContextFragmenter(maxchars=FRAGMENT_CHARS, surround=CONTEXT_CHARS)
        snippet = _highlight(abstract, terms, analyzer, fragmenter, FRAGMENTS)
        if snippet.text:
            return snippet
    return lead(abstract)
