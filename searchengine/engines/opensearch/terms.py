"""The product's own analysis, as text the cluster indexes token for token.

The cluster does not analyse titles and abstracts itself: the product's
analyzer (:func:`searchengine.analysis.analyzer.text_analyzer`, whose steps
the embedded engine indexes with) turns each into its terms and positions,
and the document carries them as a *term text* that the cluster's ``se_terms``
analyzer only cuts apart (see :mod:`.mapping`):

* one slot per position, slots separated by a space;
* the terms of one position joined by :data:`SAME_POSITION` (``failslow``
  and ``fail``), which a ``pattern_capture`` filter emits at one position;
* a position without a term (a stop word's) as :data:`NO_TERM`, which a
  ``stop`` filter drops, leaving the gap.

So both engines hold the same terms at the same positions: the same stems,
irregular forms, joined and split compounds, umlaut spellings and CJK pairs.
Two fields are made this way for each text field:

* ``<field>_terms``: the analyzed terms, for words, prefixes, fuzzy words and
  proximity (:func:`term_text`);
* ``<field>_words``: every word as written, folded, parts of a hyphenated
  word apart, stop words included, for quoted phrases, which the embedded
  engine matches as written (:func:`word_text`,
  :func:`~searchengine.analysis.tokens.written_words`).

A third, ``spelling``, holds the distinct words of both as written, folded,
whole (:func:`spelling_text`): the words the embedded index keeps for
did-you-mean, which also compares a fuzzy word with them.

Queries are analysed here too (:func:`query_tokens`, :func:`phrase_tokens`),
so a query asks for exactly the terms the embedded engine asks for.
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_left
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from searchengine.analysis.analyzer import Analyzer
    from searchengine.analysis.snippets import Snippet, WordAnalysis
    from searchengine.records import Record

#: Joins the terms that share a position in a term text.
SAME_POSITION = "\u0001"
#: Stands for a position without a term (a stop word's).
NO_TERM = "\u0002"
#: The text fields indexed as term texts, and their two sub-fields' suffixes.
TEXT_FIELDS = ("title", "abstract")
TERMS, WORDS = "_terms", "_words"
#: Suffixes of a text field's length fields: its term count, and that count as the embedded engine keeps it.
TOKENS, LENGTH = "_tokens", "_length"


#: The field lengths one byte stands for, as the embedded engine (Whoosh) keeps
#: a field's length: ``round((1.033 ** code - 1) * 27)`` for codes 0 to 255.
_BYTE_LENGTHS = tuple(round((1.033**code - 1) * 27) for code in range(256))


@functools.cache
def text_analyzer() -> Analyzer:
    """The product's analyzer of titles and abstracts (the embedded engine's steps, built once)."""
    from searchengine.analysis.analyzer import text_analyzer as analyzer

    return analyzer()


def _positions(text: str) -> dict[str, list[int]]:
    """``{term: positions}`` of ``text`` as the product's analyzer indexes it."""
    from searchengine.analysis.analyzer import term_positions

    return term_positions(text_analyzer(), text)


def kept_length(tokens: int) -> int:
    """``tokens`` (0 or more) as the embedded engine keeps a field's length in
    one byte: the largest of :data:`_BYTE_LENGTHS` that is not under it (106,374 at most)."""
    return _BYTE_LENGTHS[min(bisect_left(_BYTE_LENGTHS, tokens), 255)]


def indexed(text: str) -> tuple[str, int, int]:
    """``(term text, tokens, length)`` of ``text``, analysed once: its
    :func:`term_text`, and its length as the embedded engine counts a field's
    length: its terms (those sharing a position each count), and that count
    as Whoosh keeps it in one byte (the length BM25F normalises by; the
    average is of the counts)."""
    positions = _positions(text)
    tokens = sum(len(at) for at in positions.values())
    return _slots(positions), tokens, kept_length(tokens) if tokens else 0


def term_text(text: str) -> str:
    """The term text of ``text``: its terms as the embedded engine indexes them
    (``"index"`` mode: stems, joined compounds and their parts, umlaut
    spellings), one slot per position. ``""`` for a text without terms.

    >>> term_text("the fail-slow GPUs")
    '\\x02 failslow\\x01fail slow gpu'
    """
    return _slots(_positions(text))


def _slots(positions: dict[str, list[int]]) -> str:
    if not positions:
        return ""
    slots: list[list[str]] = [[] for _ in range(1 + max(max(at) for at in positions.values()))]
    for term, at in positions.items():
        for position in at:
            slots[position].append(term)
    return " ".join(SAME_POSITION.join(slot) if slot else NO_TERM for slot in slots)


def word_text(text: str) -> str:
    """The ``<field>_words`` text of ``text``: its :func:`phrase_words`, one per position."""
    return " ".join(phrase_words(text))


def phrase_words(text: str) -> list[str]:
    """:func:`~searchengine.analysis.tokens.written_words` (the words a quoted
    phrase is matched with), a CJK run as its characters (the embedded engine
    finds a phrase of CJK characters anywhere in a run), a word that cannot
    stand in a slot left out."""
    from searchengine.analysis.tokens import is_cjk_run, written_words

    written = written_words(text)
    if text.isascii() and not _BREAKS.search("".join(written)):
        return written  # no CJK run, no word to leave out: the words as they are (most texts)
    words: list[str] = []
    for word in written:
        if _BREAKS.search(word):
            continue
        words.extend(word if is_cjk_run(word) else (word,))
    return words


# Characters a slot cannot hold (never in paper text once folded).
_BREAKS = re.compile(f"[ {SAME_POSITION}{NO_TERM}]")


def spelling_words(text: str) -> set[str]:
    """The distinct words of ``text`` as did-you-mean holds them: folded for
    case and accents, whole (a hyphenated word is one), unstemmed; the words
    the embedded index keeps for it (``searchengine.engines.whoosh.schema.spelling_words``)."""
    from searchengine.analysis.folding import fold
    from searchengine.analysis.tokens import word_pattern

    value = fold(text)
    return set(word_pattern(value).findall(value))


def spelling_text(*texts: str) -> str:
    """The ``spelling`` text of a paper's ``texts`` (title, abstract): their
    :func:`spelling_words`, sorted, one per slot; a word that cannot stand in
    a slot left out."""
    words: set[str] = set()
    for text in texts:
        words.update(spelling_words(text or ""))
    return " ".join(sorted(word for word in words if not _BREAKS.search(word)))


def name_text(text: str) -> str:
    """``text`` as the product's name analyzer reads author names (words
    folded for case and accents, not stemmed), one space between words:
    ``Antimicrobial`` → ``antimicrobial``. ``text`` itself when it has no word."""
    return " ".join(name_terms(text)) or text


def name_terms(text: str) -> list[str]:
    """The terms the product's name analyzer makes of ``text``, in order
    (``Jean-Pierre O'Brien`` → ``jean-pierre``, ``o``, ``brien``)."""
    from searchengine.analysis.analyzer import name_terms as terms

    return terms(text)


def stem(word: str) -> str:
    """The term the product's stemmer makes of one lower-case word (``language`` → ``languag``)."""
    stems = [item.stem_text for item in getattr(text_analyzer(), "items", ()) if hasattr(item, "stem_text")]
    return stems[-1](word) if stems else word


def query_tokens(text: str, mode: str = "query") -> list[tuple[str, int, bool]]:
    """``(term, position, joined)`` of each term the product's analyzer makes
    of a query word (stop words left out), as the embedded engine searches
    it: in ``"query"`` mode a compound gives its joined form first
    (``joined`` true) and then its parts; in ``"phrase"`` mode the parts only."""
    tokens = text_analyzer()(text, positions=True, mode=mode, removestops=True)
    # The analyzer reuses one token object: copy what is needed as it goes.
    return [(token.text, token.pos, bool(getattr(token, "joined", False))) for token in tokens]


@functools.cache
def _snippet_analysis() -> WordAnalysis:
    from searchengine.analysis.snippets import WordAnalysis

    return WordAnalysis(text_analyzer())


def snippet_parts(record: Record, marked: dict[str, Any]) -> tuple[Snippet, list[tuple[int, int]]]:
    """The abstract's snippet and the title's match offsets of ``record`` (a
    :class:`~searchengine.records.Record`), made as the embedded engine makes
    them: ``(Snippet, [(start, end), ...])``. ``marked`` is what
    :func:`.querying.marked_terms` gives: the terms of each field, and prefixes
    whose terms in this record are marked too."""
    from searchengine.analysis import snippets

    analysis = _snippet_analysis()
    terms = {name: set(marked.get(name, ())) for name in TEXT_FIELDS}
    for name, prefix in marked.get("prefixes", ()):
        text = getattr(record, name)
        terms[name].update(term for term in _positions(text) if term.startswith(prefix))
    snippet = snippets.abstract_snippet(record.abstract, frozenset(terms["abstract"]), analysis)
    title = snippets.title_matches(record.title, frozenset(terms["title"]), analysis)
    return snippet, list(title)


def term_counts(title: str, abstract: str) -> dict[str, float]:
    """``{term: occurrences}`` of a paper's title and abstract as the product
    indexes them (the feedback documents' frequencies, :mod:`searchengine.feedback`)."""
    return {term: float(len(at)) for term, at in _positions(f"{title or ''}\n{abstract or ''}").items()}
