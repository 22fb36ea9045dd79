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


def configure(results) -> None:
    """Set up a Whoosh ``Results`` object so that highlighting yields :class:`Snippet`."""
    from whoosh import highlight

    results.formatter = _formatter()
    results.fragmenter = highlight.ContextFragmenter(maxchars=FRAGMENT_CHARS, surround=CONTEXT_CHARS)


def lead(text: str, limit: int = LEAD_CHARS) -> Snippet:
    """The start of ``text``, cut at a word boundary, with no matches."""
    if len(text) <= limit:
        return Snippet(text)
    cut = text.rfind(" ", 0, limit)
    return Snippet(text[: cut if cut > 0 else limit].rstrip(" ,;:") + " …")


def title_matches(hit, title: str) -> list[tuple[int, int]]:
    """Offsets of the matched words in the whole title of a Whoosh hit."""
    from whoosh import highlight

    if not title:
        return []
    results = hit.results
    saved = results.fragmenter
    results.fragmenter = highlight.WholeFragmenter()
    try:
        snippet = hit.highlights("title", text=title, top=1)
    finally:
        results.fragmenter = saved
    return list(snippet.matches) if isinstance(snippet, Snippet) else []


def abstract_snippet(hit, abstract: str) -> Snippet:
    """The best fragments of the abstract of a Whoosh hit, or its start if none match."""
    if not abstract:
        return Snippet()
    snippet = hit.highlights("abstract", text=abstract, top=FRAGMENTS)
    if isinstance(snippet, Snippet) and snippet.text:
        return snippet
    return lead(abstract)
