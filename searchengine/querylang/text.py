"""The query language's rules for fuzzy words and Greek letters, without any search engine.

The parser and both engines decide alike which words may be fuzzy and
what they may expand to (:func:`may_be_fuzzy`, :func:`fuzzy_edits`,
:func:`may_expand_to`, :func:`whole_term`), and which query words also ask
for a Greek letter's other spelling (:func:`greek_spelling`). The facts of
analysis itself (tokens, compounds, stop words, plural rewrites, joined
words) are :mod:`searchengine.analysis`'s.

This module imports nothing of the product's or of any engine's.
"""

from __future__ import annotations

# Greek letters by name, as papers write them in words or as symbols (TeX's
# $\alpha$ is read as α): a query word of either form also asks for the other.
_GREEK = (
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
    "nu",
    "xi",
    "omicron",
    "pi",
    "rho",
    "sigma",
    "tau",
    "upsilon",
    "phi",
    "chi",
    "psi",
    "omega",
)
_GREEK_SYMBOLS = dict(zip(_GREEK, "αβγδεζηθικλμνξοπρστυφχψω"))
_GREEK_NAMES = {symbol: name for name, symbol in _GREEK_SYMBOLS.items()} | {
    "ς": "sigma",
    "ϵ": "epsilon",
    "ϑ": "theta",
    "ϕ": "phi",
    "ϖ": "pi",
}


def greek_spelling(word: str) -> str | None:
    """The other way of writing a Greek letter: ``alpha`` → ``α``, ``Δ`` →
    ``delta``; ``None`` for any other word, and for a name in capitals (an
    acronym: ``CHI``, ``ETA``, ``PI``)."""
    if len(word) > 1 and word.isascii() and word.isupper():
        return None
    lowered = word.lower()
    return _GREEK_SYMBOLS.get(lowered) or _GREEK_NAMES.get(lowered)


# Letters a fuzzy word needs (``x~`` would match most short words); an
# index term needs as many to be one of a fuzzy word's expansions.
MIN_FUZZY = 3


def may_be_fuzzy(word: str) -> bool:
    """Whether ``word`` may be fuzzy, or be what a fuzzy word expands to: it
    starts with a letter, holds no digit and has at least :data:`MIN_FUZZY`
    letters (``transformer``, ``graph-based``, ``jean-pierre``).

    ``word`` is a word of a fuzzy word as written, or an index term. Numbers,
    years and identifiers (``2023``, ``gpt4``, ``x86``, ``h100``) are never
    fuzzy: one edit turns them into other numbers. One- and two-letter terms
    (the ``2`` of ``transformer-2``, the ``l`` of ``l-transformer``, an
    initial, ``π``) are never expansions: a few edits reach them from any
    short word, and each is in thousands of papers.
    """
    if not word or not word[0].isalpha():
        return False
    letters = 0
    for ch in word:
        if ch.isnumeric():  # digits, and ² or ½
            return False
        letters += ch.isalpha()
    return letters >= MIN_FUZZY


# A fuzzy word of this many characters or fewer is allowed one edit,
# whatever the number typed (as Elasticsearch's AUTO fuzziness): two edits
# change 40 % of it or more (graph~2 would find gap, grain and grade, five
# times as many papers as graph).
MAX_ONE_EDIT = 5


def fuzzy_edits(word: str, distance: int) -> int:
    """The edits a fuzzy ``word`` (one word as written, ``distance`` 0 to 2
    typed) is allowed: ``distance``, but at most one for a word of up to
    :data:`MAX_ONE_EDIT` characters (``graph~2`` is ``graph~1``)."""
    return min(distance, 1) if len(word) <= MAX_ONE_EDIT else distance


def may_expand_to(term: str, edits: int) -> bool:
    """Whether an index term ``edits`` edits from a fuzzy word (or its stem)
    may be one of its expansions: the word itself (no edit) always, another
    term when :func:`may_be_fuzzy` (``transformer~2`` reaches
    ``transformers``, never ``2``)."""
    return edits == 0 or may_be_fuzzy(term)


def whole_term(tokens: list[tuple[str, bool]]) -> str | None:
    """The one term a word as written is indexed by whole, given its analysed
    ``(term, joined)`` tokens: a compound's joined form (``transformer-2`` →
    ``transformer2``), else its only term; ``None`` when it has none, or
    several and no joined form. A fuzzy word expands to the words as
    written near it by this term, never by a compound's parts: the ``2`` of
    ``transformer-2`` would match every paper with a 2 in it.
    """
    joined = [term for term, is_joined in tokens if is_joined]
    if joined:
        return joined[0]
    return tokens[0][0] if len(tokens) == 1 else None
