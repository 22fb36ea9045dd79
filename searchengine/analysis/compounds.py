"""Compounds: a word made of words, indexed as its parts and as one joined word.

``fail-slow`` gives ``fail``, ``slow`` and ``failslow``; ``FlashAttention``
gives ``flash``, ``attention`` and ``flashattention``; ``16GB`` gives
``16``, ``gb`` and ``16gb`` (:func:`compound_parts`, :class:`CompoundFilter`).
The query side asks for the joined word or the parts in sequence, so
hyphenated, joined and spaced forms meet. A CJK run becomes overlapping
character pairs, so ``语言模型`` finds ``大规模语言模型的研究``.
:func:`text_tokens` gives the tokens a text keeps, unstemmed (the query
language's decisions). Plain Python; no search engine's code.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import Any

from searchengine.analysis.stopwords import is_stop
from searchengine.analysis.tokens import DASHES, analyzed_pattern, is_cjk_run

# A number glued to a unit or a word (16GB, 100ms, 3,700x, 2D): a compound of
# the two, so 16GB meets 16 GB and 3,700x stays apart from 1,700x.
_NUMBER_UNIT = re.compile(r"(\d+(?:,\d{3})*)([^\W\d_]+)")
_DASH_SPLIT = re.compile(rf"[{DASHES}]")
# Splits camel case only where every part is a capitalised or lower-case word
# of three letters or more (FlashAttention, ResNet; not SpMV or GraphSAGE).
_CAMEL = re.compile(r"(?:[A-Z]?[a-z]{2,})(?:[A-Z][a-z]{2,})+")
_CAMEL_PART = re.compile(r"[A-Z]?[a-z]+")


def compound_parts(text: str) -> list[str]:
    """The words a compound token is made of; ``[text]`` when it is not one.

    ``fail-slow`` → ``["fail", "slow"]``; ``FlashAttention`` →
    ``["Flash", "Attention"]``; ``802.11ax``, ``SpMV`` and ``C++`` stay whole.
    """
    if any(ch in DASHES for ch in text):
        return [part for part in _DASH_SPLIT.split(text) if part]
    if _CAMEL.fullmatch(text):
        return _CAMEL_PART.findall(text)
    return [text]


def text_tokens(text: str, *, phrase: bool = False) -> list[str]:
    """The tokens the title and abstract analysis keeps of ``text``, unstemmed.

    The text is read in Unicode's NFKC form, as both engines index it
    (``ﬁnite`` → ``finite``, full-width and mathematical letters as plain
    ones, decomposed accents composed). A CJK run of three or more
    characters gives its overlapping pairs; a
    compound gives its joined form (not for a ``phrase``) and its parts; stop
    words are left out. ``"fail-slow of GPUs"`` → ``["failslow", "fail",
    "slow", "GPUs"]``.
    """
    out: list[str] = []
    text = unicodedata.normalize("NFKC", text)
    for token in analyzed_pattern(text).findall(text):
        if token.isalnum() and token.islower():
            pieces = [token]
        elif len(token) > 2 and is_cjk_run(token):
            pieces = [token[i : i + 2] for i in range(len(token) - 1)]
        else:
            parts = compound_parts(token)
            pieces = parts if len(parts) == 1 or phrase else ["".join(parts), *parts]
        out.extend(piece for piece in pieces if not is_stop(piece))
    return out


def _span(start: int, charmap: tuple[list[int], list[int]] | None, begin: int, end: int) -> tuple[int, int]:
    """The written offsets of characters ``[begin, end)`` of a token's text that starts at ``start``."""
    if charmap is None:
        return start + begin, start + end
    return charmap[0][begin], charmap[1][end - 1]


class CompoundFilter:
    """Index a compound (dashes, camel case, a number glued to a word:
    ``16GB``) as its parts, in sequence, plus one joined word; a CJK
    run as its overlapping character pairs (``语言模型`` → ``语言``, ``言模``,
    ``模型``; a run of one or two characters stays whole).

    In ``"index"`` and ``"query"`` mode the joined word (``failslow``) comes
    first, at the first part's position, with ``token.joined`` set; the parts
    follow at consecutive positions. Later tokens move up by the number of
    extra parts, so phrases stay aligned. In ``"phrase"`` mode only the parts
    are emitted.
    """

    token_local = True  # see searchengine.analysis.analyzer.index_positions

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __call__(self, tokens: Iterator[Any]) -> Iterator[Any]:
        shift = 0
        for token in tokens:
            if token.positions:
                token.pos += shift
            text = token.text
            if not (text.isalnum() and text.islower()) or text[0].isdigit():
                if len(text) > 2 and is_cjk_run(text):
                    base = token.pos if token.positions else 0
                    start = token.startchar if token.chars else 0
                    charmap = getattr(token, "charmap", None)
                    for i in range(len(text) - 1):
                        token.text = text[i : i + 2]
                        if token.positions:
                            token.pos = base + i
                        if token.chars:
                            token.startchar, token.endchar = _span(start, charmap, i, i + 2)
                        yield token
                    shift += len(text) - 2
                    continue
                unit = _NUMBER_UNIT.fullmatch(text)
                parts = list(unit.groups()) if unit else compound_parts(text)
                if len(parts) > 1:
                    chars = token.chars
                    start = token.startchar if chars else 0
                    charmap = getattr(token, "charmap", None)
                    if token.mode != "phrase":
                        token.text = "".join(parts)
                        token.joined = True
                        yield token
                        token.joined = False
                    offset = 0
                    for i, part in enumerate(parts):
                        if chars:
                            at = text.index(part, offset)
                            token.startchar, token.endchar = _span(start, charmap, at, at + len(part))
                            offset = at + len(part)
                        token.text = part
                        yield token
                        if i < len(parts) - 1 and token.positions:
                            token.pos += 1
                    shift += len(parts) - 1
                    continue
            yield token
