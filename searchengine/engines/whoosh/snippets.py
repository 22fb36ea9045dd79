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
                text, position, end = fragment.text, fragment.startchar, fragment.endchar
                for token in sorted(fragment.matches, key=lambda t: (t.startchar, -t.endchar)):
                    if token.startchar is None or token.startchar < position or token.startchar >= end:
                        continue
                    parts.append(text[position:token.startchar])
                    length += token.startchar - position
                    snippet.matches.append((length, length + token.endchar - token.startchar))
                    parts.append(text[token.startchar:token.endchar])
                    length += token.endchar - token.startchar
                    position = token.endchar
                    # A joined compound (Retrieval-Augmented) may run past
                    # the fragment's end: the fragment then ends with it.
                    end = max(end, position)
                parts.append(text[position:end])
                length += end - position
            snippet.text = "".join(parts)
            return snippet

    return OffsetFormatter()


class WordAnalysis:
    """A stand-in for a Whoosh analyzer when highlighting: its tokenizer runs
    over the text, the rest of its chain once per distinct word, and the
    stemming filter only where its result could be a query term.

    Highlighting re-analyses ten abstracts per page of hits; most of that
    cost is the filter chain run on every token. The filters of the text
    analyzer (compound splitting, stop words, stemming) look at one token at
    a time, so a word always gives the same tokens at the same offsets
    within it: those are kept (up to ``size`` words, then forgotten) and
    replayed. Positions are not produced: the highlighter does not use them.

    Stemming is most of the rest (60 µs a word, 50 ms for a page of
    abstracts in a new process). A stem keeps the first character of its
    folded word (:class:`~searchengine.engines.whoosh.analysis.InflectionStemFilter`),
    so when called with ``terms`` a token whose folded text starts with no
    term's first character cannot match: it keeps its text as tokenized,
    which is no term either (the highlighter reads no other use of it).

    Args:
        analyzer: a Whoosh ``CompositeAnalyzer`` (tokenizer first, then
            filters that each look at one token at a time).
    """

    def __init__(self, analyzer, size: int = 100_000) -> None:
        from searchengine.engines.whoosh.analysis import InflectionStemFilter

        self.tokenizer, filters = analyzer.items[0], list(analyzer.items[1:])
        self.stemmer = filters.pop() if filters and isinstance(filters[-1], InflectionStemFilter) else None
        self.filters = filters
        self.size = size
        self._words: dict[tuple[str, str, bool], list[tuple[str, int, int, bool]]] = {}

    def _analyse(self, word: str, mode: str, removestops: bool) -> list[tuple[str, int, int, bool]]:
        from whoosh.analysis import Token

        token = Token(positions=True, chars=True, removestops=removestops, mode=mode)
        token.text, token.pos, token.startchar, token.endchar = word, 0, 0, len(word)
        token.boost, token.stopped, token.joined = 1.0, False, False
        stream = iter([token])
        for step in self.filters:
            stream = step(stream)
        found = [(t.text, t.startchar, t.endchar, t.stopped) for t in stream]
        if len(self._words) >= self.size:
            self._words.clear()
        self._words[(word, mode, removestops)] = found
        return found

    def __call__(self, value: str, mode: str = "", removestops: bool = True,
                 terms: frozenset[str] | None = None, **kwargs):
        """The tokens of ``value`` with character offsets, as the analyzer gives them
        (``terms``: the only texts the caller looks for, or ``None``)."""
        from whoosh.analysis import Token

        from searchengine.engines.whoosh.analysis import fold

        out = Token(positions=False, chars=True, removestops=removestops, mode=mode)
        out.boost = 1.0
        words = self._words
        stem = self.stemmer.stem_text if self.stemmer is not None else None
        firsts = None if terms is None else {term[:1] for term in terms}
        for raw in self.tokenizer(value, chars=True, mode=mode, removestops=removestops):
            start, word = raw.startchar, raw.text
            # A word whose NFKC form has another length (ﬁnite) maps each
            # of its characters back to the text as written.
            charmap = getattr(raw, "charmap", None)
            found = words.get((word, mode, removestops))
            if found is None:
                found = self._analyse(word, mode, removestops)
            for text, begin, end, stopped in found:
                if charmap is None:
                    out.startchar, out.endchar = start + begin, start + end
                else:
                    out.startchar, out.endchar = charmap[0][begin], charmap[1][end - 1]
                if stem is not None:
                    # The folded first letter (that of the text as tokenized, NFKC, when ASCII).
                    first = text[:1].lower() if text[:1].isascii() else fold(text)[:1]
                    if firsts is not None and first not in firsts:
                        pass  # no term starts so: the text is left as it is, which is no term either
                    elif stopped:
                        text = fold(text)
                    else:
                        text = stem(text)
                out.text, out.stopped = text, stopped
                out.matched = False
                yield out


def query_terms(query) -> dict[str, frozenset[str]]:
    """The indexed term texts a query looks for, by field (``{"abstract": {"gpu", ...}}``)."""
    found: dict[str, set[str]] = {}
    if query is not None:
        for fieldname, text in query.iter_all_terms(phrases=True):
            if isinstance(text, bytes):
                text = text.decode("utf-8", "replace")
            found.setdefault(fieldname, set()).add(text)
    return {fieldname: frozenset(texts) for fieldname, texts in found.items()}


def lead(text: str) -> Snippet:
    """The start of ``text``, cut at a word boundary, with no matches (:func:`searchengine.results.lead_snippet`)."""
    from searchengine.results import lead_snippet

    return Snippet(lead_snippet(text))


def _highlight(text: str, terms: frozenset[str], analyzer, fragmenter, top: int) -> Snippet:
    import functools

    from whoosh import highlight

    if isinstance(analyzer, WordAnalysis):
        analyzer = functools.partial(analyzer, terms=terms)
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
