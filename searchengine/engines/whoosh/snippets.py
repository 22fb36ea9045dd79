"""Snippets: the parts of a hit's text that show why it matched.

A snippet is plain text plus the character offsets of the matched words in
it, so each front end marks them its own way (bold in a terminal, ``<mark>``
in HTML) and no markup ever has to be parsed back out. Matches are found by
re-analysing the stored text with the field's analyzer (:class:`WordAnalysis`):
the offsets cover the words as written in the record (``GPUs``), not their
stems (``gpu``). Fragments are chosen by the rules of Whoosh's highlighter
(``ContextFragmenter``, ``BasicFragmentScorer``), run over plain tuples.
"""

from __future__ import annotations

from collections import deque
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


# Words past this many characters of a text are not looked at, so a very long
# text costs a bounded time (Whoosh's highlighter stops at 32,768).
CHAR_LIMIT = 100_000
# Characters read past CHAR_LIMIT, so that the word the limit cuts is seen
# whole (and left out) rather than cut into a shorter word.
_LIMIT_MARGIN = 1_000

# A token as snippets see it: (analysed text, startchar, endchar) in the text as written.
Token = tuple[str, int, int]


class WordAnalysis:
    """The snippet side of a Whoosh text analyzer: its tokenizer runs over the
    text in one pass, the rest of its chain once per distinct word, and the
    stemming filter only where its result could be a query term.

    Snippets re-analyse ten abstracts per page of hits; most of that cost
    was the filter chain run on every token, and a Token object carried
    through generators. The filters of the text analyzer (compound
    splitting, stop words, stemming) look at one token at a time, so a word
    always gives the same tokens at the same offsets within it: those are
    kept (up to ``size`` words, then forgotten) and replayed. Analysis is in
    ``"query"`` mode with stop words kept (marked, not removed), as
    highlighting asks for.

    Stemming is most of the rest in a new process (60 µs a word, 50 ms for a
    page of abstracts). A stem keeps the first character of its folded word
    (:class:`~searchengine.engines.whoosh.analysis.InflectionStemFilter`),
    so given the query's ``terms``, a word none of whose tokens starts with a
    term's first character cannot match: its tokens keep their text as
    tokenized, which is no term either, and it is not stemmed.

    Args:
        analyzer: a Whoosh ``CompositeAnalyzer`` whose first item is the
            :class:`~searchengine.engines.whoosh.analysis.TechTokenizer`,
            followed by filters that each look at one token at a time.
    """

    def __init__(self, analyzer, size: int = 100_000) -> None:
        from searchengine.engines.whoosh.analysis import InflectionStemFilter

        self.tokenizer, filters = analyzer.items[0], list(analyzer.items[1:])
        self.stemmer = filters.pop() if filters and isinstance(filters[-1], InflectionStemFilter) else None
        self.filters = filters
        self.size = size
        # word -> (its tokens before stemming, with stop words marked; their folded first letters)
        self._words: dict[str, tuple[list[tuple[str, int, int, bool]], frozenset[str]]] = {}
        # word -> its tokens as the whole analyzer gives them
        self._analysed: dict[str, list[tuple[str, int, int]]] = {}

    def _unstemmed(self, word: str) -> tuple[list[tuple[str, int, int, bool]], frozenset[str]]:
        from whoosh.analysis import Token as WhooshToken

        from searchengine.engines.whoosh.analysis import fold

        token = WhooshToken(positions=True, chars=True, removestops=False, mode="query")
        token.text, token.pos, token.startchar, token.endchar = word, 0, 0, len(word)
        token.boost, token.stopped, token.joined = 1.0, False, False
        stream = iter([token])
        for step in self.filters:
            stream = step(stream)
        found = [(t.text, t.startchar, t.endchar, t.stopped) for t in stream]
        firsts = frozenset(text[:1].lower() if text[:1].isascii() else fold(text)[:1] for text, _, _, _ in found)
        if len(self._words) >= self.size:
            self._words.clear()
        self._words[word] = found, firsts
        return found, firsts

    def _analyse(self, word: str, unstemmed: list[tuple[str, int, int, bool]]) -> list[tuple[str, int, int]]:
        from searchengine.engines.whoosh.analysis import fold

        if self.stemmer is None:
            found = [(text, begin, end) for text, begin, end, _ in unstemmed]
        else:
            stem = self.stemmer.stem_text
            found = [(fold(text) if stopped else stem(text), begin, end) for text, begin, end, stopped in unstemmed]
        if len(self._analysed) >= self.size:
            self._analysed.clear()
        self._analysed[word] = found
        return found

    def tokens(self, value: str, terms: frozenset[str] | None = None) -> list[Token]:
        """Every token of ``value`` in order, with its offsets in ``value``: a
        compound gives its joined form and its parts, each with its own span.

        With ``terms`` (the only texts the caller looks for), the words that
        cannot give one keep their text as tokenized, unstemmed.
        """
        words, analysed, found_tokens = self._words, self._analysed, []
        firsts = None if terms is None else {term[:1] for term in terms}
        append = found_tokens.append
        for word, start, _, charmap in self.tokenizer.word_spans(value):
            found = analysed.get(word)
            if found is None:
                unstemmed, starts = words.get(word) or self._unstemmed(word)
                if firsts is None or not starts.isdisjoint(firsts):
                    found = self._analyse(word, unstemmed)
                else:
                    found = [(text, begin, end) for text, begin, end, _ in unstemmed]
            for text, begin, end in found:
                if charmap is None:
                    append((text, start + begin, start + end))
                else:
                    # A word whose NFKC form has another length (ﬁnite) maps
                    # each of its characters back to the text as written.
                    append((text, charmap[0][begin], charmap[1][end - 1]))
        return found_tokens


@dataclass
class _Fragment:
    """A stretch ``[start, end)`` of a text and the matched tokens in it."""

    start: int
    end: int
    matches: list[Token]

    def score(self) -> int:
        """Matched tokens, times 100 per distinct matched term: a fragment with
        more of the query's terms wins over one repeating a single term."""
        return len(self.matches) * (len({text for text, _, _ in self.matches}) * 100 or 1)


def _context_fragments(length: int, tokens: list[Token], terms: frozenset[str]) -> list[_Fragment]:
    """Fragments of a text of ``length`` characters around its matched tokens.

    A fragment opens up to ``CONTEXT_CHARS`` before a matched token (at a
    token's start), stays open for ``CONTEXT_CHARS`` after each match, and
    closes before it would pass ``FRAGMENT_CHARS``. This is the rule of
    Whoosh's ``ContextFragmenter``, kept exactly (snippets read as before),
    over plain tuples, up to :data:`CHAR_LIMIT` characters.
    """
    fragments: list[_Fragment] = []
    first: int | None = None
    firsts: deque[int] = deque()  # starts of the recent unmatched tokens within reach
    countdown = -1  # characters left before the open fragment closes; < 0: none open
    matched: list[Token] = []
    current = 0  # characters in the open fragment
    end = 0
    for token in tokens:
        text, start, end = token
        size = end - start
        if end > CHAR_LIMIT:
            break
        hit = text in terms
        if countdown < 0 and not hit:
            firsts.append(start)
            while firsts and end - firsts[0] > CONTEXT_CHARS:
                firsts.popleft()
        elif current + size > FRAGMENT_CHARS:
            countdown = 0
        elif hit:
            countdown = CONTEXT_CHARS
            if first is None:
                if firsts:
                    first = firsts[0]
                else:
                    first = start
                    countdown += CONTEXT_CHARS  # no context before: more after
            matched.append(token)
        if countdown >= 0:
            current += size
            countdown -= size
            if countdown <= 0:
                fragments.append(_fragment(length, matched, first, end))
                matched, firsts, first, current = [], deque(), None, 0
    if matched:
        fragments.append(_fragment(length, matched, first, end))
    return fragments


def _fragment(length: int, matches: list[Token], start: int | None, end: int) -> _Fragment:
    if start is None:
        start = matches[0][1] if matches else 0
    return _Fragment(max(0, start), min(length, end), matches)


def _best(fragments: list[_Fragment], top: int) -> list[_Fragment]:
    """The ``top`` best-scored fragments (of two equal scores, the later
    one), in text order; fragments without a match are never chosen."""
    best = sorted(fragments, key=lambda f: (f.score(), f.start), reverse=True)[:top]
    return sorted((f for f in best if f.score() >= 1), key=lambda f: f.start)


def _snippet(text: str, fragments: list[_Fragment]) -> Snippet:
    """The fragments' text joined by :data:`SEPARATOR`, with the offsets of
    their matches in it. Of overlapping matches (a joined compound and its
    parts) the first, longest one is marked."""
    snippet = Snippet()
    parts: list[str] = []
    length = 0
    for number, fragment in enumerate(fragments):
        if number:
            parts.append(SEPARATOR)
            length += len(SEPARATOR)
        position, end = fragment.start, fragment.end
        for _, start, stop in sorted(fragment.matches, key=lambda t: (t[1], -t[2])):
            if start < position or start >= end:
                continue
            parts.append(text[position:start])
            length += start - position
            snippet.matches.append((length, length + stop - start))
            parts.append(text[start:stop])
            length += stop - start
            position = stop
            # A joined compound (Retrieval-Augmented) may run past the
            # fragment's end: the fragment then ends with it.
            end = max(end, position)
        parts.append(text[position:end])
        length += end - position
    snippet.text = "".join(parts)
    return snippet


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


def title_matches(title: str, terms: frozenset[str], analyzer: WordAnalysis) -> list[tuple[int, int]]:
    """Offsets of the words of ``title`` whose analysed form is in ``terms``."""
    if not title or not terms:
        return []
    matches = []
    for token in analyzer.tokens(title[:CHAR_LIMIT + _LIMIT_MARGIN], terms):
        if token[2] > CHAR_LIMIT:
            break
        if token[0] in terms:
            matches.append(token)
    whole = _Fragment(0, len(title), matches)
    return _snippet(title, _best([whole], 1)).matches


def abstract_snippet(abstract: str, terms: frozenset[str], analyzer: WordAnalysis) -> Snippet:
    """The best fragments of ``abstract`` around the words in ``terms``, or its start."""
    if not abstract:
        return Snippet()
    if terms:
        tokens = analyzer.tokens(abstract[:CHAR_LIMIT + _LIMIT_MARGIN], terms)
        fragments = _context_fragments(len(abstract), tokens, terms)
        snippet = _snippet(abstract, _best(fragments, FRAGMENTS))
        if snippet.text:
            return snippet
    return lead(abstract)
