"""Snippets: the parts of a hit's text that show why it matched.

A snippet is plain text plus the character offsets of the matched words in
it, so each front end marks them its own way (bold in a terminal, ``<mark>``
in HTML) and no markup ever has to be parsed back out. Matches are found by
re-analysing the stored text with the field's analyzer (:class:`WordAnalysis`):
the offsets cover the words as written in the record (``GPUs``), not their
stems (``gpu``). Fragments are chosen by the rules of Whoosh's highlighter
(``ContextFragmenter``, ``BasicFragmentScorer``), run over plain tuples, and
only over the words near a match: the others cannot change them.
"""

from __future__ import annotations

import functools
import itertools
import re
from bisect import bisect_right
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

    from searchengine.analysis.analyzer import Chain, TokenFilter
    from searchengine.analysis.tokens import TechTokenizer, WordSpans

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
    """The snippet side of a text analyzer: its tokenizer runs over the
    text in one pass, the rest of its chain once per distinct word, and only
    for the words a snippet needs.

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
    (:class:`~searchengine.analysis.stemming.InflectionStemFilter`),
    so given the query's terms, a word none of whose tokens starts with a
    term's first character cannot match: its tokens keep their text as
    tokenized, which is no term either, and it is not stemmed. Where the
    filters are the text analyzer's own, the words that may have such a
    token are found by one regular expression over the text
    (:func:`_start_pattern`), and no other word is analysed to tell
    whether it matches; the fragments then need the tokens of the words
    near the matched ones only (:func:`_context_fragments`).

    Args:
        analyzer: an analyzer whose ``items`` are a
            :class:`~searchengine.analysis.tokens.TechTokenizer` followed by
            filters that each look at one token at a time and keep it within
            its word (:func:`searchengine.analysis.analyzer.text_analyzer`,
            or the embedded engine's Whoosh chain of the same steps).
    """

    def __init__(self, analyzer: Chain, size: int = 100_000) -> None:
        from searchengine.analysis.compounds import CompoundFilter
        from searchengine.analysis.folding import fold
        from searchengine.analysis.stemming import InflectionStemFilter
        from searchengine.analysis.stopwords import AcronymStopFilter
        from searchengine.analysis.tokens import Token as StreamToken

        self.tokenizer: TechTokenizer = analyzer.items[0]
        filters: list[TokenFilter] = list(analyzer.items[1:])
        last = filters[-1] if filters else None
        self.stemmer = last if isinstance(last, InflectionStemFilter) else None
        if self.stemmer is not None:
            filters.pop()
        self.filters = filters
        # Where a token may start within a word is known of these filters only.
        self.prescan = all(isinstance(step, (CompoundFilter, AcronymStopFilter)) for step in filters)
        self.size = size
        # Imported once here, not per word: this module loads before them.
        self._fold = fold
        self._token = functools.partial(StreamToken, positions=True, chars=True, removestops=False, mode="query")
        # word -> (its tokens before stemming, whether each is a stop word, their folded first letters)
        self._words: dict[str, tuple[list[Token], list[bool], set[str]]] = {}
        # word -> its tokens as the whole analyzer gives them
        self._analysed: dict[str, list[Token]] = {}

    def _unstemmed(self, word: str) -> tuple[list[Token], list[bool], set[str]]:
        fold = self._fold
        token = self._token()
        token.text, token.pos, token.startchar, token.endchar = word, 0, 0, len(word)
        token.boost, token.stopped, token.joined = 1.0, False, False
        stream = iter([token])
        for step in self.filters:
            stream = step(stream)
        found, stopped, firsts = [], [], set()
        for t in stream:
            text = t.text
            found.append((text, t.startchar, t.endchar))
            stopped.append(t.stopped)
            firsts.add(text[:1].lower() if text[:1].isascii() else fold(text)[:1])
        if len(self._words) >= self.size:
            self._words.clear()
        self._words[word] = found, stopped, firsts
        return found, stopped, firsts

    def _stemmed(self, word: str, unstemmed: list[Token], stopped: list[bool]) -> list[Token]:
        if self.stemmer is None:
            found = unstemmed
        else:
            fold, stem = self._fold, self.stemmer.stem_text
            found = [
                (fold(text) if stop else stem(text), begin, end) for (text, begin, end), stop in zip(unstemmed, stopped)
            ]
        if len(self._analysed) >= self.size:
            self._analysed.clear()
        self._analysed[word] = found
        return found

    def word_tokens(self, word: str, firsts: frozenset[str] | None) -> list[Token]:
        """The tokens of ``word``, with offsets within it: analysed in full
        when one of them may start with one of ``firsts`` (the first
        characters of the query's terms; ``None``: always), else as tokenized."""
        found = self._analysed.get(word)
        if found is None:
            unstemmed, stopped, starts = self._words.get(word) or self._unstemmed(word)
            if firsts is None or not starts.isdisjoint(firsts):
                found = self._stemmed(word, unstemmed, stopped)
            else:
                found = unstemmed
        return found

    def text(self, value: str, terms: frozenset[str] | None = None) -> TextTokens:
        """The words of ``value`` and which of them give a token in ``terms``
        (the texts the caller looks for; ``None``: none, and every word is analysed in full)."""
        spans = self.tokenizer.word_spans(value)
        if terms is None:
            return TextTokens(self, spans, None, [])
        firsts = frozenset(term[:1] for term in terms)
        candidates: Sequence[int]
        if self.prescan:
            candidates = _words_at(spans, _start_pattern(firsts))
        else:
            candidates = range(len(spans.words))
        analysed, words, matched = self._analysed, spans.words, []
        for number in candidates:
            word = words[number]
            # word_tokens, with its first look-up inline (most words are known).
            for text, _, _ in analysed.get(word) or self.word_tokens(word, firsts):
                if text in terms:
                    matched.append(number)
                    break
        return TextTokens(self, spans, firsts, matched)


def _words_at(spans: WordSpans, pattern: re.Pattern[str]) -> list[int]:
    """The numbers of the words of ``spans`` that hold a match of ``pattern``
    (and of any word right before a match outside words), in order.

    The matches are mapped to words in C (``map`` over ``bisect``): this
    runs for every text of every page.
    """
    starts = map(re.Match.start, pattern.finditer(spans.text))
    found = set(map(bisect_right, itertools.repeat(spans.positions), starts))
    return sorted(number - 1 for number in found if number)


@functools.lru_cache(maxsize=1024)
def _start_pattern(firsts: frozenset[str]) -> re.Pattern[str]:
    """Where in a text (in NFKC form) a token whose folded text starts with
    one of ``firsts`` may start: a superset, found in one C-level pass.

    A word's tokens (:class:`~searchengine.analysis.compounds.CompoundFilter`)
    start where it starts, after a dash (``multi-GPU``) or a digit
    (``16GB``), at a capital (``FlashAttention``), or anywhere in a CJK run;
    none starts at a lower-case letter or digit that follows an ASCII letter.
    Folding lower-cases ASCII and may turn any other character into any
    letter (``É`` → ``e``), so those all count. The words without a match
    have no token that can be a term, stemmed or not.
    """
    letters = {first.lower() for first in firsts if first.isascii() and first.isalpha()}
    leading = letters | {first for first in firsts if first.isascii() and first.isdigit()}
    wanted = leading | {letter.upper() for letter in letters} | {first for first in firsts if first.isascii()}
    pattern = _all_but_ascii(wanted)
    if leading:
        pattern += "(?<![A-Za-z][" + "".join(sorted(leading)) + "])"
    return re.compile(pattern)


def _all_but_ascii(kept: set[str]) -> str:
    """A character class of every character but the ASCII ones not in ``kept``,
    written as ranges: a class of the non-ASCII range itself takes 10 ms to
    compile, this one 0.2 ms (one per query)."""
    ranges, start = [], None
    for code in range(129):
        if code < 128 and chr(code) not in kept:
            if start is None:
                start = code
        elif start is not None:
            ranges.append(f"\\x{start:02x}-\\x{code - 1:02x}")
            start = None
    return "[^" + "".join(ranges) + "]"


class TextTokens:
    """The words of one text (:meth:`WordAnalysis.text`), whose tokens are
    made when asked for; ``matched`` numbers the words with a token in the
    query's terms, in order."""

    __slots__ = ("analysis", "spans", "firsts", "matched")

    def __init__(
        self, analysis: WordAnalysis, spans: WordSpans, firsts: frozenset[str] | None, matched: list[int]
    ) -> None:
        self.analysis = analysis
        self.spans = spans
        self.firsts = firsts
        self.matched = matched

    def __len__(self) -> int:
        return len(self.spans.words)

    def tokens(self, number: int) -> list[Token]:
        """The tokens of word ``number``, with their offsets in the text as written:
        a compound gives its joined form and its parts, each with its own span."""
        spans = self.spans
        found, start = self.analysis.word_tokens(spans.words[number], self.firsts), spans.starts[number]
        charmap = None if spans.charmaps is None else spans.charmaps[number]
        if charmap is None:
            return [(text, start + begin, start + end) for text, begin, end in found]
        # A word whose NFKC form has another length (ﬁnite) maps each of its
        # characters back to the text as written.
        return [(text, charmap[0][begin], charmap[1][end - 1]) for text, begin, end in found]

    def context_start(self, first: int, matched: int) -> int:
        """The first word, from word ``first`` on, whose tokens can matter to a
        fragment that word ``matched`` opens, no fragment being open before it.

        With no fragment open, each token's start is remembered until a later
        token ends more than ``CONTEXT_CHARS`` after it; the words that end
        that far before the end of the word before the match are forgotten
        by then. Tokens lie within their word, in order of their starts.
        """
        if matched <= first:
            return first
        reach = max((end for _, _, end in self.tokens(matched - 1)), default=0)
        return bisect_right(self.spans.ends, reach - CONTEXT_CHARS, first, matched - 1)


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


def _context_fragments(length: int, text: TextTokens, terms: frozenset[str]) -> list[_Fragment]:
    """Fragments of a text of ``length`` characters around its tokens in ``terms``.

    A fragment opens up to ``CONTEXT_CHARS`` before a matched token (at a
    token's start), stays open for ``CONTEXT_CHARS`` after each match, and
    closes before it would pass ``FRAGMENT_CHARS``. This is the rule of
    Whoosh's ``ContextFragmenter``, kept exactly (snippets read as before),
    over plain tuples, up to :data:`CHAR_LIMIT` characters.

    With no fragment open, the words before the context of the next
    matched word are skipped (:meth:`TextTokens.context_start`): they would
    be seen and forgotten before they could matter. That is more than half
    the words of an abstract.
    """
    fragments: list[_Fragment] = []
    first: int | None = None
    firsts: deque[int] = deque()  # starts of the recent unmatched tokens within reach
    countdown = -1  # characters left before the open fragment closes; < 0: none open
    matched: list[Token] = []
    current = 0  # characters in the open fragment
    end = 0
    words, starts, charmaps = text.spans.words, text.spans.starts, text.spans.charmaps
    analysed, word_tokens, initials = text.analysis._analysed, text.analysis.word_tokens, text.firsts
    upcoming = iter(text.matched)
    following = -1  # the next matched word
    resume = 0  # where its context starts
    number, count = 0, len(text)
    while number < count:
        if countdown < 0:
            if following < number:
                later_match = next((later for later in upcoming if later >= number), None)
                if later_match is None:
                    break
                following = later_match
                resume = text.context_start(number, following)
            if number < resume:
                number = resume
        # TextTokens.tokens inline, with word_tokens' first look-up: this
        # loop is most of a snippet's time.
        word, offset = words[number], starts[number]
        charmap = None if charmaps is None else charmaps[number]
        for word_text, begin, stop in analysed.get(word) or word_tokens(word, initials):
            if charmap is None:
                start, end = offset + begin, offset + stop
            else:
                start, end = charmap[0][begin], charmap[1][stop - 1]
            if end > CHAR_LIMIT:
                break
            size = end - start
            hit = word_text in terms
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
                matched.append((word_text, start, end))
            if countdown >= 0:
                current += size
                countdown -= size
                if countdown <= 0:
                    fragments.append(_fragment(length, matched, first, end))
                    matched, firsts, first, current = [], deque(), None, 0
        else:
            number += 1
            continue
        break  # a token past CHAR_LIMIT
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


def lead(text: str) -> Snippet:
    """The start of ``text``, cut at a word boundary, with no matches (:func:`searchengine.results.lead_snippet`)."""
    from searchengine.results import lead_snippet

    return Snippet(lead_snippet(text))


def title_matches(title: str, terms: frozenset[str], analyzer: WordAnalysis) -> list[tuple[int, int]]:
    """Offsets of the words of ``title`` whose analysed form is in ``terms``."""
    if not title or not terms:
        return []
    text = analyzer.text(title[: CHAR_LIMIT + _LIMIT_MARGIN], terms)
    matches = []
    for token in (token for number in text.matched for token in text.tokens(number)):
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
        text = analyzer.text(abstract[: CHAR_LIMIT + _LIMIT_MARGIN], terms)
        fragments = _context_fragments(len(abstract), text, terms)
        snippet = _snippet(abstract, _best(fragments, FRAGMENTS))
        if snippet.text:
            return snippet
    return lead(abstract)
