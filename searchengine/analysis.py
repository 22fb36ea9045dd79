"""Text analysis: one Whoosh analyzer, used for indexing and for queries alike.

The chain reads like Whoosh's own pipelines::

    NltkTokenizer | AcronymStopFilter | LowercaseFilter | accent folding | NltkStemFilter

* :class:`NltkTokenizer` splits on anything that is not a letter or digit
  (NLTK's ``RegexpTokenizer``), so punctuation glued to a word does not hide
  it: ``CB-SpMV:A`` gives ``CB``, ``SpMV``, ``A``.
* :class:`AcronymStopFilter` drops common English words, but keeps upper-case
  acronyms that spell one (``US``, ``IT``, ``AS``).
* Case and accents fold: ``Schrödinger`` is indexed as ``schrodinger``.
* :class:`NltkStemFilter` applies NLTK's Porter stemmer, so ``GPUs`` and
  ``GPU`` meet at ``gpu``.

NLTK is imported on first use, not at import time: importing it costs more
than the rest of a command-line search put together.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from whoosh.analysis import CharsetFilter, Filter, LowercaseFilter, MultiFilter, PassFilter, Token, Tokenizer
from whoosh.analysis.filters import STOP_WORDS
from whoosh.support.charset import accent_map

# Letters and digits; everything else (punctuation, symbols, spaces) separates.
WORD_PATTERN = r"[^\W_]+"


class NltkTokenizer(Tokenizer):
    """Whoosh tokenizer around NLTK's ``RegexpTokenizer``.

    Yields one token per match of ``pattern`` with its position and character
    offsets, which Whoosh needs for phrases and highlighting.
    """

    def __init__(self, pattern: str = WORD_PATTERN) -> None:
        self.pattern = pattern
        self._nltk = None

    def __getstate__(self) -> dict[str, Any]:
        return {"pattern": self.pattern}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.pattern = state["pattern"]
        self._nltk = None

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.pattern == self.pattern

    def _spans(self, text: str) -> Iterator[tuple[int, int]]:
        if self._nltk is None:
            from nltk.tokenize import RegexpTokenizer

            self._nltk = RegexpTokenizer(self.pattern)
        return self._nltk.span_tokenize(text)

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
    ) -> Iterator[Token]:
        token = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        spans = self._spans(value) if tokenize else [(0, len(value))]
        for pos, (start, end) in enumerate(spans):
            token.text = value[start:end]
            token.boost = 1.0
            token.stopped = False
            if keeporiginal:
                token.original = token.text
            if positions:
                token.pos = start_pos + pos
            if chars:
                token.startchar = start_char + start
                token.endchar = start_char + end
            yield token


class AcronymStopFilter(Filter):
    """Drop stop words, except when written as an upper-case acronym.

    ``it`` and ``It`` are dropped; ``IT`` (information technology) is kept.
    Must run before lower-casing. Stopped tokens still take up a position, so
    phrase queries keep their gaps.
    """

    def __init__(self, stoplist: frozenset[str] = STOP_WORDS) -> None:
        self.stops = frozenset(stoplist)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.stops == self.stops

    def __call__(self, tokens: Iterator[Token]) -> Iterator[Token]:
        stops = self.stops
        for token in tokens:
            text = token.text
            if text.lower() in stops and not (len(text) > 1 and text.isupper()):
                if token.removestops:
                    continue
                token.stopped = True
            yield token


class NltkStemFilter(Filter):
    """Replace each token's text with its NLTK Porter stem (``GPUs`` → ``gpu``).

    Stems are cached (``cachesize`` distinct words, least recently used
    dropped); the cache is rebuilt after unpickling rather than stored in the
    index's schema. Marked as morphological (``is_morph``), so Whoosh also
    indexes the unstemmed words, for spelling suggestions.
    """

    is_morph = True

    def __init__(self, cachesize: int = 100_000) -> None:
        self.cachesize = cachesize
        self._stem = None

    def __getstate__(self) -> dict[str, Any]:
        return {"cachesize": self.cachesize}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.cachesize = state["cachesize"]
        self._stem = None

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.cachesize == self.cachesize

    def _stemmer(self):
        if self._stem is None:
            from nltk.stem.porter import PorterStemmer

            stemmer = PorterStemmer()
            self._stem = functools.lru_cache(maxsize=self.cachesize)(
                functools.partial(stemmer.stem, to_lowercase=False)
            )
        return self._stem

    def __call__(self, tokens: Iterator[Token]) -> Iterator[Token]:
        stem = self._stemmer()
        for token in tokens:
            if not token.stopped:
                token.text = stem(token.text)
            yield token


def text_analyzer():
    """The analyzer for title and abstract text (indexing and queries)."""
    return (
        NltkTokenizer()
        | AcronymStopFilter()
        | LowercaseFilter()
        | CharsetFilter(accent_map)
        | NltkStemFilter()
    )


def name_analyzer():
    """The analyzer for author names: words folded for case and accents, not stemmed.

    Every name part is indexed, but stop words are dropped from queries:
    otherwise the ``and`` of ``GPU and memory`` would have to match a name.
    """
    return (
        NltkTokenizer()
        | MultiFilter(index=PassFilter(), query=AcronymStopFilter())
        | LowercaseFilter()
        | CharsetFilter(accent_map)
    )
