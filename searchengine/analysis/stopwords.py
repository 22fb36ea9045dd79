"""Stop words: the common English words analysis leaves out.

:data:`STOP_WORDS` are dropped by both engines, but an upper-case acronym
that spells one is kept (``US``, ``IT``, ``AS``: :func:`is_stop`,
:class:`AcronymStopFilter`). Plain Python; no search engine's code.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

# English function words (and the stray letters of possessives and
# contractions); content words, single letters like C, and numbers are kept.
STOP_WORDS = frozenset(
    """
a about above after again against all am an and any are as at be because been
before being below between both but by can could did do does doing down during
each few for from further had has have having he her here hers herself him
himself his how i if in into is it its itself just me more most my myself no nor
not of off on once only or other our ours ourselves out over own same she should
so some such than that the their theirs them themselves then there these they
this those through to too under until up very was we were what when where which
while who whom why will with would you your yours yourself yourselves s t
""".split()
)


def is_stop(token: str) -> bool:
    """Whether one token is a stop word: ``it`` and ``It`` are, the acronym ``IT`` is not."""
    return token.lower() in STOP_WORDS and not (len(token) > 1 and token.isupper())


class AcronymStopFilter:
    """Drop stop words, except when written as an upper-case acronym.

    ``it`` and ``It`` are dropped; ``IT`` (information technology) is kept.
    Must run before lower-casing. Stopped tokens still take up a position, so
    phrase queries keep their gaps.
    """

    token_local = True  # see searchengine.analysis.analyzer.index_positions

    def __init__(self, stoplist: frozenset[str] = STOP_WORDS) -> None:
        self.stops = frozenset(stoplist)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.stops == self.stops

    def __call__(self, tokens: Iterator[Any]) -> Iterator[Any]:
        stops = self.stops
        for token in tokens:
            text = token.text
            if text.lower() in stops and not (len(text) > 1 and text.isupper()):
                if token.removestops:
                    continue
                token.stopped = True
            yield token
