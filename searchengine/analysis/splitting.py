"""Joined words: a keyword typed as two words written together.

A joined word typed in lower case (``flashattention``, ``texttoimage``) is
also searched as its two words (``flash attention``, ``text to image``)
when the index says they are the likelier reading (:func:`best_split`,
from the frequencies each engine supplies). Plain Python; no search
engine's code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from searchengine.analysis.stopwords import STOP_WORDS

if TYPE_CHECKING:
    from collections.abc import Callable

# A joined word typed in lower case (``flashattention``) is also searched as
# two words (``flash attention``) when each of the two has MIN_SPLIT_PART
# letters or more and is in at least SPLIT_RARITY times as many abstracts as
# the joined word (``network`` is not ``net work``: ``net`` is the rarer).
SPLIT_RARITY = 1
MIN_SPLIT_PART = 3
# Stop words that join the two words of a compound (``text-to-image``,
# ``state-of-the-art``): a joined word may hold them between its two words.
SPLIT_CONNECTORS = ("to", "of", "and", "in", "on", "for", "by", "of-the", "in-the", "on-the", "to-the")
# Each connector as it stands inside a joined word (``ofthe``), beside its compound form.
_JOINED_CONNECTORS = tuple((connector.replace("-", ""), connector) for connector in SPLIT_CONNECTORS)


def may_split(term: str) -> bool:
    """Whether the analysed ``term`` of a keyword is long enough, and letters only,
    to be tried as two words written together (:func:`best_split`)."""
    return term.isalpha() and len(term) >= 2 * MIN_SPLIT_PART


def split_candidates(term: str, stem: Callable[[str], str]) -> list[str]:
    """Every term :func:`best_split` may look up for ``term``: the term, each
    cut's left part stemmed and right part (after a connector too)."""
    wanted = {term}
    for cut in range(MIN_SPLIT_PART, len(term) - MIN_SPLIT_PART + 1):
        left, rest = term[:cut], term[cut:]
        wanted.add(stem(left))
        for inside, _ in (("", None), *(c for c in _JOINED_CONNECTORS if rest.startswith(c[0]))):
            if len(rest) - len(inside) >= MIN_SPLIT_PART:
                wanted.add(rest[len(inside) :])
    return sorted(wanted)


def best_split(term: str, frequency: Callable[[str], int], stem: Callable[[str], str]) -> tuple[str, ...] | None:
    """The two words (with a connector between them when one stands inside:
    ``texttoimage`` → ``("text", "to", "image")``) that the analysed keyword
    ``term`` is written from, or ``None``.

    ``frequency(term)`` is the number of abstracts holding an analysed term,
    ``stem(word)`` the term the abstracts index for a lower-case word. The
    split is the one whose rarer part is most frequent, among those where
    both parts are :data:`SPLIT_RARITY` times as frequent as ``term``; a
    stop word is never one of the two parts (``andrea`` is not ``and rea``). The
    left part is looked up stemmed (``language`` as ``languag``); the right
    part is the end of a stem, so a stem already.
    """
    needed = max(1, frequency(term)) * SPLIT_RARITY
    best, best_df = None, 0
    for cut in range(MIN_SPLIT_PART, len(term) - MIN_SPLIT_PART + 1):
        left, rest = term[:cut], term[cut:]
        if left in STOP_WORDS:  # "andrea" is no "and" + "rea": a stop word is never a part
            continue
        df = frequency(stem(left))
        if df < needed or df <= best_df:  # most cuts end here: the left part is no word
            continue
        for inside, joint in (("", None), *(c for c in _JOINED_CONNECTORS if rest.startswith(c[0]))):
            right = rest[len(inside) :]
            if len(right) < MIN_SPLIT_PART or right in STOP_WORDS:
                continue
            both = min(df, frequency(right))
            if both >= needed and both > best_df:
                best, best_df = (left, right) if joint is None else (left, joint, right), both
    return best
