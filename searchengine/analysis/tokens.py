"""Tokenizing: the words of a text, as both engines cut it.

:data:`TOKEN_PATTERN` keeps identifiers whole: ``C++``, ``C#``,
``802.11ax``, ``fail-slow``, ``Bose–Einstein`` (any dash or hyphen); a run
of CJK characters is one token. :class:`TechTokenizer` cuts a text's NFKC
form (:func:`~searchengine.analysis.folding.normalize`) with it, yielding
:class:`Token` s with positions and offsets in the text as written; the
pattern is also compiled for the query language's cuts
(:func:`word_pattern`) and for analysis (:func:`analyzed_pattern`).

Plain Python (the ``regex`` engine is imported only for text that needs it);
no search engine's code.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from searchengine.analysis.folding import fold, normalize

if TYPE_CHECKING:
    import regex

    # A word's analysis: its (term, position from the word's first) pairs and the positions it takes.
    Expansion = tuple[tuple[tuple[str, int], ...], int]
    # A compiled token pattern: of ``re``, or of the ``regex`` engine (the same methods).
    WordPattern = re.Pattern[str] | regex.Pattern[str]

# Han, Hiragana, Katakana and Hangul: scripts written without spaces.
CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
# Hyphen-minus, soft hyphen, Unicode hyphens and the figure and en dashes.
DASHES = "\\-\u00ad\u2010\u2011\u2012\u2013\u2212"
_ALNUM = rf"[^\W_{CJK_CHARS}]"
# A thousands separator: a comma between a digit and three digits that end a
# group (10,000; 3,700x), not one in a list or pair (1,2 or 0,25).
THOUSANDS = r"(?<=\d),(?=\d{3}(?!\d))"
# A token: a CJK run; or letters/digits joined by dashes (fail-slow), by dots
# between digits (802.11ax), by thousands separators (10,000-GPU), optionally
# ending in ++ or # (C++, C#).


def _token_pattern(alnum: str) -> str:
    return rf"{alnum}+(?:(?:[{DASHES}]|(?<=\d)\.(?=\d)|{THOUSANDS}){alnum}+)*(?:\+\+|#)?(?!{alnum})"


TOKEN_PATTERN = rf"[{CJK_CHARS}]+|{_token_pattern(_ALNUM)}"
# TOKEN_PATTERN without its CJK ranges: it finds the same tokens in text
# without CJK characters. Compiling it takes 0.5 ms, against 30 ms for the
# CJK ranges in ``re``, which a command-line search of such text (nearly
# every query and abstract) then never pays.
_PLAIN_TOKEN_PATTERN = _token_pattern(r"[^\W_]")
# TOKEN_PATTERN for ASCII text, where ``[^\W_]`` is ``[A-Za-z0-9]`` and ``\d``
# is ``[0-9]``: spelt so (and compiled ASCII-only), ``re`` runs a fifth faster.
_ASCII_TOKEN_PATTERN = _token_pattern("[A-Za-z0-9]")
# Combining diacritical marks: word characters to ``regex``, not to ``re``.
# NFKC composes most with the letter before them; those left (a TeX accent
# on a letter without a composed form, a stray \' in a listing) are
# matched as ``regex`` matches them.
_MARKS = ("\u0300", "\u036f")
_MARKED_TOKEN_PATTERN = _token_pattern(rf"(?:[^\W_]|[{_MARKS[0]}-{_MARKS[1]}])")
# CJK_CHARS as (first, last) character pairs.
_CJK_RANGES = tuple((CJK_CHARS[i], CJK_CHARS[i + 2]) for i in range(0, len(CJK_CHARS), 3))
# The Unicode general categories on whose characters ``re`` and ``regex``
# agree about ``\w`` and ``\d``: letters, decimal digits, letter numbers,
# punctuation but the connector kind, symbols but the "other" kind, spaces,
# controls. They differ on marks, other numbers (², ½), connector
# punctuation, other symbols and format characters (and ``regex`` may know
# characters this Python's Unicode does not).
SAME_IN_RE_AND_REGEX = frozenset(
    {
        "Cc",
        "Co",
        "Ll",
        "Lm",
        "Lo",
        "Lt",
        "Lu",
        "Nd",
        "Nl",
        "Pd",
        "Pe",
        "Pf",
        "Pi",
        "Po",
        "Ps",
        "Sc",
        "Sk",
        "Sm",
        "Zl",
        "Zp",
        "Zs",
    }
)

# Whitespace-separated values (the keyword fields' tokens).
_SPACED = re.compile(r"[^ \t\r\n]+")


@functools.cache
def _plain_words() -> re.Pattern[str]:
    return re.compile(_PLAIN_TOKEN_PATTERN)


@functools.cache
def _ascii_words() -> re.Pattern[str]:
    return re.compile(_ASCII_TOKEN_PATTERN, re.ASCII)


@functools.cache
def _marked_words() -> re.Pattern[str]:
    return re.compile(_MARKED_TOKEN_PATTERN)


@functools.cache
def _words() -> re.Pattern[str]:
    return re.compile(TOKEN_PATTERN)


@functools.cache
def _analyzed() -> WordPattern:
    try:
        import regex
    except ImportError:  # an NLTK that tokenizes with ``re``
        return _words()
    return regex.compile(TOKEN_PATTERN, regex.UNICODE | regex.MULTILINE | regex.DOTALL)


def _is_cjk(ch: str) -> bool:
    return any(first <= ch <= last for first, last in _CJK_RANGES)


def word_pattern(text: str) -> re.Pattern[str]:
    """:data:`TOKEN_PATTERN` compiled with Python's ``re``, to cut ``text`` into
    the query's words as the parser does (compiled on first use; without
    its CJK ranges for text without CJK characters, which finds the same
    words)."""
    if text.isascii() or not any(_is_cjk(ch) for ch in set(text)):
        return _plain_words()
    return _words()


def analyzed_pattern(text: str) -> WordPattern:
    """:data:`TOKEN_PATTERN` compiled as the analyzer tokenizes ``text``: a
    compiled pattern of ``re`` or ``regex`` (``findall``, ``finditer``, ``search``).

    NLTK's tokenizer compiles the pattern with the third-party ``regex``
    engine (NLTK depends on it), whose ``\\w`` differs from ``re``'s for some
    characters (combining marks are word characters, ``²`` and ``½`` are
    not); the decisions that follow analysis use it too. Text without CJK
    characters and without characters the engines disagree on (all of
    whose characters are ASCII or of :data:`SAME_IN_RE_AND_REGEX`, or
    combining diacritical marks, which the ``re`` pattern then counts as
    word characters) is cut with ``re`` and the pattern without CJK ranges,
    which find the same tokens; ``regex`` is imported only for other text.
    ASCII text (most abstracts) is cut with the ASCII spelling of that pattern.
    """
    if text.isascii():
        return _ascii_words()
    marked = False
    for ch in set(text):
        if ch < "\x80" or (unicodedata.category(ch) in SAME_IN_RE_AND_REGEX and not _is_cjk(ch)):
            continue
        if not _MARKS[0] <= ch <= _MARKS[1]:
            return _analyzed()
        marked = True
    return _marked_words() if marked else _plain_words()


def is_cjk_run(text: str) -> bool:
    """Whether ``text`` (not empty) is all Han, Kana or Hangul (:data:`CJK_CHARS`)."""
    return not text.isascii() and all(_is_cjk(ch) for ch in text)


def name_tokens(text: str) -> list[str]:
    """The tokens of ``text`` in the author-name analysis (every word, no stop words)."""
    text = unicodedata.normalize("NFKC", text)
    return analyzed_pattern(text).findall(text)


def spaced_tokens(text: str) -> list[str]:
    """The tokens of a keyword field (categories): whitespace-separated values."""
    return _SPACED.findall(text)


def written_words(text: str) -> list[str]:
    """The words of ``text`` as written, folded for case and accents, a
    hyphenated word as its parts: what a quoted phrase is matched with."""
    return [fold(part) for match in word_pattern(text).finditer(text) for part in _DASH.split(match.group()) if part]


_DASH = re.compile(f"[{DASHES}]")


class Token:
    """One token of a stream: the attributes a tokenizer sets (``text``,
    ``pos``, ``startchar``, ``endchar``, ``boost``, ``stopped``, ``joined``,
    ``charmap``) and the options of the call (``positions``, ``chars``,
    ``removestops``, ``mode``, and any keyword given). The same object is
    reused for every token of a stream: read it before asking for the next.
    (Whoosh's ``Token`` has the same shape; its adapters yield that one.)
    """

    # Set by the tokenizer and the filters, not here (reading one before it is set raises).
    text: str
    pos: int
    startchar: int
    endchar: int
    joined: bool
    charmap: tuple[list[int], list[int]] | None
    original: str

    def __init__(
        self, positions: bool = False, chars: bool = False, removestops: bool = True, mode: str = "", **kwargs: Any
    ) -> None:
        self.positions = positions
        self.chars = chars
        self.stopped = False
        self.boost = 1.0
        self.removestops = removestops
        self.mode = mode
        self.__dict__.update(kwargs)


class WordSpans(NamedTuple):
    """The words of a text, in columns (:meth:`TechTokenizer.word_spans`).

    ``words`` are in NFKC form (:func:`~searchengine.analysis.folding.normalize`), as found in ``text``
    (the text in that form) at ``positions``; ``starts`` and ``ends`` are
    their offsets in the text as written. ``charmaps`` is ``None`` when
    the two forms of the text are alike; otherwise it holds, per word,
    ``None`` or, where the word's two lengths differ (``ﬁnite``), the
    written ``(starts, ends)`` of each of its characters.
    """

    text: str
    words: list[str]
    positions: list[int]
    starts: list[int]
    ends: list[int]
    charmaps: list[tuple[list[int], list[int]] | None] | None


class TechTokenizer:
    """A tokenizer matching :data:`TOKEN_PATTERN` (as NLTK's ``RegexpTokenizer`` would).

    Yields one token per match with its position and character offsets,
    which phrases and snippets need. Punctuation glued to a
    word does not hide it: ``CB-SpMV:A`` gives ``CB-SpMV`` and ``A``.
    The text is tokenized in its NFKC form
    (:func:`~searchengine.analysis.folding.normalize`): a token's
    text is normalized (``ﬁnite`` → ``finite``), its offsets are those of
    the text as written; where the two differ in length, ``token.charmap``
    holds the written offsets of each of the token's characters
    (``(starts, ends)``; ``None`` otherwise) for the filters that cut a token.
    Without ``chars`` (indexing) the words come from one ``findall`` pass;
    with it, from the spans of ``finditer``. Tokens are of class
    :attr:`token_class` (the embedded engine's adapter makes Whoosh's).
    """

    token_class: type[Any] = Token  # or Whoosh's Token, of the same shape

    def __init__(self, pattern: str = TOKEN_PATTERN) -> None:
        self.pattern = pattern
        self._compiled: regex.Pattern[str] | None = None
        # index_positions' cache: filters' ids -> {word: its expansion}
        self._expansions: dict[tuple[int, ...], dict[str, Expansion]] = {}

    def __getstate__(self) -> dict[str, Any]:
        return {"pattern": self.pattern}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.pattern = state["pattern"]
        self._compiled = None
        self._expansions = {}

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.pattern == self.pattern

    def _tokenizer(self, value: str) -> WordPattern:
        # What NLTK's RegexpTokenizer does (its ``tokenize`` is ``findall``,
        # its ``span_tokenize`` the spans of ``finditer``), with the same
        # engine and flags, minus two costs: its package imports the
        # network and XML modules (0.1 s of every command-line search),
        # and it bounds every match with a wall-clock timer, which doubles
        # the cost of tokenizing an abstract. This pattern cannot
        # backtrack catastrophically: no quantified group nests another
        # quantifier over overlapping text (each repeat of the dash/dot
        # group must start with its separator), so matching is linear in
        # the text (``benchmarks/index_speed.py --tokenizer`` times inputs
        # built to provoke backtracking).
        if self.pattern == TOKEN_PATTERN:
            return analyzed_pattern(value)  # ASCII text in ``re``: no ``regex`` import
        if self._compiled is None:
            import regex

            self._compiled = regex.compile(self.pattern, regex.UNICODE | regex.MULTILINE | regex.DOTALL)
        return self._compiled

    def word_spans(self, value: str) -> WordSpans:
        """The words of ``value`` in columns (:class:`WordSpans`): what
        ``self(value, chars=True)`` yields, without a Token per word
        (snippets tokenize ten abstracts per page of hits).
        """
        normal, starts, ends = normalize(value)
        found: list[re.Match[str] | regex.Match[str]] = list(self._tokenizer(normal).finditer(normal))
        if not found:
            return WordSpans(normal, [], [], [], [], None if starts is None else [])
        match: Any = type(found[0])  # re's or regex's: its methods mapped in C, not called from Python
        words = list(map(match.group, found))
        positions = list(map(match.start, found))
        if starts is None or ends is None:  # (None together: the text is in NFKC form)
            return WordSpans(normal, words, positions, positions, list(map(match.end, found)), None)
        firsts: list[int] = []
        lasts: list[int] = []
        charmaps: list[tuple[list[int], list[int]] | None] = []
        for m in found:
            start, end = m.span()
            first, last = starts[start], ends[end - 1]
            firsts.append(first)
            lasts.append(last)
            charmaps.append((starts[start:end], ends[start:end]) if last - first != end - start else None)
        return WordSpans(normal, words, positions, firsts, lasts, charmaps)

    def __call__(
        self,
        value: str,
        positions: bool = False,
        chars: bool = False,
        keeporiginal: bool = False,
        removestops: bool = True,
        start_pos: int = 0,
        start_char: int = 0,
        tokenize: bool = True,
        mode: str = "",
        **kwargs: Any,
    ) -> Iterator[Any]:
        token = self.token_class(positions, chars, removestops=removestops, mode=mode, **kwargs)
        token.charmap = None
        value, starts, ends = normalize(value)
        if tokenize and not chars:
            # Indexing needs no character offsets: the words come in one C-level pass.
            for pos, text in enumerate(self._tokenizer(value).findall(value)):
                token.text = text
                token.boost = 1.0
                token.stopped = False
                token.joined = False
                if keeporiginal:
                    token.original = text
                if positions:
                    token.pos = start_pos + pos
                yield token
            return
        spans = (m.span() for m in self._tokenizer(value).finditer(value)) if tokenize else [(0, len(value))]
        for pos, (start, end) in enumerate(spans):
            token.text = value[start:end]
            token.boost = 1.0
            token.stopped = False
            token.joined = False
            if keeporiginal:
                token.original = token.text
            if positions:
                token.pos = start_pos + pos
            if chars:
                if starts is None or ends is None:  # (None together: the text is in NFKC form)
                    token.startchar = start_char + start
                    token.endchar = start_char + end
                else:
                    token.startchar = start_char + starts[start]
                    token.endchar = start_char + ends[end - 1]
                    token.charmap = None
                    if token.endchar - token.startchar != end - start:
                        token.charmap = (
                            [start_char + at for at in starts[start:end]],
                            [start_char + at for at in ends[start:end]],
                        )
            yield token
