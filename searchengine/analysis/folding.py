"""Folding: text in the form the index holds its words.

* :func:`normalize`: Unicode's NFKC form (``ﬁnite`` → ``finite``,
  ``ＧＰＵ`` → ``GPU``), with where each character came from, so offsets
  stay those of the text as written;
* :func:`fold`: NFKC, lower case, accents stripped (:data:`.accents.ACCENT_MAP`),
  thousands separators dropped: ``Schrödinger`` → ``schrodinger``,
  ``10,000`` → ``10000``;
* :func:`transliterated` and :class:`UmlautFilter`: a word written with an
  umlaut is indexed under its spelled-out form too (``Müller``: ``muller``
  and ``mueller``).

Plain Python; no search engine's code.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import Any

from searchengine.analysis.accents import ACCENT_MAP

# tokens.THOUSANDS with the comma first: the same matches, found by a search for
# the comma (a pattern that starts with a look-behind tries every position,
# 4x slower on an abstract).
_THOUSANDS = re.compile(r",(?<=\d,)(?=\d{3}(?!\d))")
# Runs of characters that NFKC may change (ASCII never changes).
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def fold(text: str) -> str:
    """``text`` as the index holds its words: in NFKC form (``ﬁnite`` →
    ``finite``), lower-cased, accents stripped (``Vlček`` → ``vlcek``),
    thousands separators dropped (``10,000`` → ``10000``)."""
    if text.isascii():
        text = text.lower()  # (no accents to strip)
    else:
        # Only non-ASCII runs are translated (lower-case ASCII maps to itself):
        # a third of the time of translating a whole abstract.
        text = _NON_ASCII.sub(_strip_accents, unicodedata.normalize("NFKC", text).lower())
    return _THOUSANDS.sub("", text) if "," in text else text


def _strip_accents(run: re.Match[str]) -> str:
    return run.group().translate(ACCENT_MAP)


def _combines(ch: str) -> bool:
    """Whether NFKC joins ``ch`` to the character before it: a combining mark, or
    a form of one (the half-width voiced sound mark ﾞ)."""
    return bool(unicodedata.combining(ch) or unicodedata.combining(unicodedata.normalize("NFKC", ch)[0]))


def normalize(text: str) -> tuple[str, list[int] | None, list[int] | None]:
    """``text`` in Unicode's NFKC form, with where each of its characters came from.

    Returns ``(normalized, starts, ends)``: normalized character ``i`` stands
    for ``text[starts[i]:ends[i]]``, so a token found in the normalized text
    is mapped back to the text as written (snippet offsets). ``starts`` and
    ``ends`` are ``None`` when nothing changes (ASCII, or already NFKC).

    Compatibility forms become their plain letters (``ﬁ`` → ``fi``, ``Ａ`` →
    ``A``, ``𝐱`` → ``x``, ``²`` → ``2``) and a letter followed by combining
    accents (NFD) is composed (``e`` + U+0301 → ``é``). Each character is
    normalized with the combining marks that follow it, which is NFKC of
    the whole text; ASCII runs are copied (NFKC leaves them alone).
    """
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return text, None, None
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    done = 0
    for run in _NON_ASCII.finditer(text):
        # The ASCII letter before a run may take the run's combining marks.
        begin = run.start() - 1 if run.start() > done and _combines(text[run.start()]) else run.start()
        if begin > done:
            pieces.append(text[done:begin])
            starts.extend(range(done, begin))
            ends.extend(range(done + 1, begin + 1))
        i, end = begin, run.end()
        while i < end:
            j = i + 1
            while j < end and _combines(text[j]):
                j += 1
            piece = unicodedata.normalize("NFKC", text[i:j])
            pieces.append(piece)
            starts.extend([i] * len(piece))
            ends.extend([j] * len(piece))
            i = j
        done = end
    if done < len(text):
        pieces.append(text[done:])
        starts.extend(range(done, len(text)))
        ends.extend(range(done + 1, len(text) + 1))
    return "".join(pieces), starts, ends


# Letters with a second, transliterated spelling (German ü = ue, Danish ø = oe).
_TRANSLITERATED = str.maketrans(
    {"ä": "ae", "ö": "oe", "ü": "ue", "Ä": "Ae", "Ö": "Oe", "Ü": "Ue", "ø": "oe", "Ø": "Oe"}
)
UMLAUTS = "äöüÄÖÜøØ"


def transliterated(text: str) -> str | None:
    """``text`` with its umlauts spelled out (``Müller`` → ``Mueller``, ``Søren`` →
    ``Soeren``); ``None`` when it has none. ``text`` is in NFC or NFKC form."""
    other = text.translate(_TRANSLITERATED)
    return None if other == text else other


class UmlautFilter:
    """Index a word written with an umlaut (``Müller``, ``Möbius``, ``Søren``)
    under its transliterated spelling too (``Mueller``), at the same position,
    so that a query of either spelling finds it: folding gives ``muller``,
    this gives ``mueller``. Only when indexing; a query word typed with an
    umlaut asks for both spellings itself
    (:func:`~searchengine.querylang.syntax.to_tree`).
    """

    token_local = True  # see index_positions

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __call__(self, tokens: Iterator[Any]) -> Iterator[Any]:
        for token in tokens:
            # (read before yielding: the filters after this one rewrite the token)
            other = transliterated(token.text) if token.mode == "index" and not token.stopped else None
            yield token
            if other is not None:
                token.text = other
                yield token
