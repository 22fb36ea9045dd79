"""Did-you-mean: a corrected query when a word is unknown, rare or hits are few.

The policy is engine-free: each engine gives a lexicon of its indexed words
(the embedded engine's :class:`searchengine.engines.whoosh.lexicon.Lexicon`)
and an oracle of hits (``hits(text)``, ``phrase_share(phrase, text, sample)``).
Candidates are the plain words (letters only) of titles and abstracts within
edit distance 1, or 2 for words of :data:`LONG_WORD` letters or more,
sharing the first two letters (typos rarely hit them), but for a swap among
the first three (``nueral``). A word's frequency is the number of titles (or
abstracts, whichever is larger) that hold its stem, provided some title or
abstract holds it as written.

A typed word the index holds (as written, in its singular or plural form,
or inside a compound: :func:`held`) is taken for what it says unless the
evidence says otherwise: it is checked only when it is rare and a word one
edit away is :data:`RARE_FACTOR` times as common (or, when the query finds
fewer than :data:`FEW_HITS` hits, when it occurs once and a neighbour is
ten times as common), and that word is kept only when the papers holding
the typed word hold it too, :data:`TOGETHER_LIFT` times as often as chance
would, or when the typed word is no English word and that one is
(``tranformer``, in one abstract, for ``transformer``). A typo that made it into a few abstracts sits beside the word it
misspells (``transfomer``, ``transformer``); a rare word seldom sits beside
its look-alike (``boson``, ``boost``). A word the index does not hold is
always checked.

Each word keeps its :data:`CANDIDATES` best candidates (smallest
Damerau–Levenshtein distance, then most documents); the query is then scored
in context, like a bigram language model scores a noisy-channel correction
(Kernighan, Church and Gale 1990): first by how many documents hold each
corrected word next to its neighbours in the query (phrase hits), then by
the hits of the whole corrected query. A correction is offered only if it
finds more than the query as typed. So ``sparce matrix`` becomes ``sparse
matrix``, though ``space`` is the more common word and ``space matrix``
finds more documents than ``sparse matrix``. It is :attr:`Correction.sure`
(may be searched instead of the query as typed) only when every word it
changes is one the index does not hold, one edit from its correction.

Two kinds of word are never replaced. A word that an author's name holds
(``lexicon.name_frequency``: ``Vedaldi``, ``Mondal``) is taken as typed;
only when the query finds no paper at all may a correction of it be
suggested (``markov chian``: one author is named Chian). A real English word that the index lacks (``neutrino``,
``phonon``: :func:`searchengine.realwords.is_real`) is searched
instead of only when the query's other words vouch for the correction
(``memroy bandwith``: papers write "memory bandwidth"; web text writes
``bandwith`` often enough for the word list to hold it). Alone, it is at
most suggested, and only as a real word (``photon``), never as a word that
only the index holds (``neurino``).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from searchengine import realwords

if TYPE_CHECKING:
    from collections.abc import Callable

    # Query text -> its number of hits (may raise QueryError).
    CountHits = Callable[[str], int]
    # (quoted phrase, query text) -> share of the query's hits holding the phrase (may raise QueryError).
    PhraseShare = Callable[[str, str], float]
    # (query texts, (quoted phrase, query text) pairs) -> None: counts to be asked for next.
    Prefetch = Callable[[list[str], list[tuple[str, str]]], None]


class Lexicon(Protocol):
    """The indexed words did-you-mean chooses from (:func:`searchengine.spelling.correct`)
    and a name query is read with (:mod:`searchengine.names`)."""

    def doc_count(self) -> int:
        """Number of documents."""

    @staticmethod
    def normalise(word: str) -> str | None:
        """``word`` as the spelling words are kept (case and accents folded), ``None`` for a stop word."""

    def frequency(self, word: str) -> int:
        """Papers whose title or abstract holds ``word`` (the larger count); 0 for none."""

    def name_frequency(self, word: str) -> int:
        """Papers whose author names hold ``word``; 0 for none."""

    def frequencies(self, words: list[str]) -> dict[str, int]:
        """``{word: frequency}`` of words as typed, all at once (for choosing a long question's words)."""

    def near(self, word: str, maxdist: int) -> Iterable[str]:
        """Candidate words within ``maxdist`` edits of ``word`` (the distance is checked by the caller)."""


# Below this many hits, words found once are checked too, not only unknown ones.
FEW_HITS = 3
# A word in at most this share of documents is rare: it is checked whenever a
# neighbour is RARE_FACTOR times as common (typos that made it into abstracts).
RARE_SHARE = 1 / 5_000
RARE_FACTOR = 100
# A held word's correction must be in its papers this many times as often as
# in the index as a whole.
TOGETHER_LIFT = 2
# Words of this length or more may be two edits away from the correction.
LONG_WORD = 5
CANDIDATES = 3
MAX_WORDS = 3
# Candidates share this many first letters with the word: typos rarely hit
# them, and the embedded lexicon compares the word with every word of that prefix.
SHARED_PREFIX = 2
# Queries of more words are not corrected (questions and pasted abstracts
# rank by their many words; correcting them would cost a search per choice).
MAX_QUERY_WORDS = 6
# Longer "words" (pasted ids, hashes, runs of one letter) are not corrected:
# the edit-distance automaton grows with the word.
MAX_WORD = 30
# Phrase shares are measured on this many of a corrected query's hits.
PHRASE_SAMPLE = 200
# How much less likely each edit makes a correction.
EDIT_COST = 0.05

# Plain words outside field prefixes and operators: what a user may mistype.
_WORD = re.compile(r"(?<![\w:.\-/*?])([^\W\d_]{3,})(?![\w:*?])")
_OPERATORS = {"AND", "OR", "NOT", "ANDNOT", "ANDMAYBE", "TO"}
# A capital after the first letter (SpMV, NeRF, LoRA): an acronym or a name
# as its authors write it, not a typo.
_NAME_CASE = re.compile(r"^.+[A-Z]")


def edit_distance(a: str, b: str) -> int:
    """Damerau–Levenshtein distance (optimal string alignment variant).

    Insertions, deletions, substitutions and transpositions of two adjacent
    letters each cost 1 (Damerau 1964).
    """
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[len(b)]


def prefixes(word: str) -> set[str]:
    """The first-letter prefixes a correction of ``word`` may start with: its
    first :data:`SHARED_PREFIX` letters as typed, or with two of its first
    three letters swapped (``nueral``: ``nu``, ``un``, ``ne``)."""
    return {word[:SHARED_PREFIX], word[1::-1], word[0] + word[2:3]}


def within(lexicon: Lexicon, word: str, maxdist: int) -> set[str]:
    """Words of the ``lexicon`` within ``maxdist`` edits of ``word`` that
    start with one of its :func:`prefixes`.

    The lexicon's ``near(word, maxdist)`` gives candidates (any superset of
    the answer: the embedded engine's words of those prefixes, the cluster's
    term suggester); the rule is applied here, the same for every engine. A
    word more than ``maxdist`` letters longer or shorter, or whose set of
    letters differs from the word's by more than ``2 * maxdist`` (one edit
    changes it by at most two), cannot be that close, and is passed over
    before the edit distance is computed.
    """
    letters = set(word)
    size = len(word)
    starts = prefixes(word)
    candidates = [
        term
        for term in lexicon.near(word, maxdist)
        if term[:SHARED_PREFIX] in starts
        and abs(len(term) - size) <= maxdist
        and len(letters.symmetric_difference(term)) <= 2 * maxdist
    ]
    distance = _distance(len(candidates))
    return {term for term in candidates if distance(word, term) <= maxdist}


# From this many candidates on, edit distances come from rapidfuzz: its
# import (40 ms) is less than this many distances in Python (0.3 ms each for
# a long word), and a search rarely has that many, so a new process's search
# seldom pays for it.
RAPIDFUZZ_FROM = 150


def _distance(count: int) -> Callable[[str, str], int]:
    """:func:`edit_distance`, or rapidfuzz's implementation of the same
    (optimal string alignment) for ``count`` words or more."""
    if count < RAPIDFUZZ_FROM:
        return edit_distance
    from rapidfuzz.distance import OSA

    return OSA.distance


def _candidates(lexicon: Lexicon, word: str, maxdist: int | None = None) -> list[str]:
    """The best corrections of ``word``: closest, then most common. Only
    plain words: an indexed token such as ``graph-s`` is not one word to
    type, and its frequency is its first part's."""
    if maxdist is None:
        maxdist = 2 if len(word) >= LONG_WORD else 1
    found = {term for term in within(lexicon, word, maxdist) if term.isalpha()}
    found.discard(word)
    ranked = sorted(found, key=lambda c: (edit_distance(word, c), -lexicon.frequency(c), c))
    return ranked[:CANDIDATES]


def forms(word: str) -> list[str]:
    """``word``'s regular singular and plural forms, as a search box may be
    typed in one and papers written in the other (``kaon``, ``kaons``;
    ``isotopes``, ``isotope``; ``topology``, ``topologies``)."""
    found = [word + "s", word + "es"]
    if word.endswith("s"):
        found.append(word[:-1])
    if word.endswith("es"):
        found.append(word[:-2])
    if word.endswith("ies"):
        found.append(word[:-3] + "y")
    if word.endswith("y"):
        found.append(word[:-1] + "ies")
    return found


def held(lexicon: Lexicon, word: str, count_hits: CountHits | None = None) -> int:
    """How many papers hold ``word`` (folded); 0: the index does not hold it.

    The word's frequency; else that of its most common form (:func:`forms`)
    when some title or abstract holds that one instead; else, given
    ``count_hits``, the papers whose titles or abstracts hold it inside a
    compound (``gluon`` in ``quark- and gluon-initiated``) — unless a written
    word one edit away is what they hold (``sparce`` finds ``SPARC``, whose
    stem it shares)."""
    frequency = lexicon.frequency(word)
    if frequency:
        return frequency
    frequency = max(lexicon.frequencies(forms(word)).values())
    if frequency or count_hits is None:
        return frequency
    found = _hits(count_hits, _in_text(word))
    if found and any(
        lexicon.frequency(other) <= found and _hits(count_hits, f"{_in_text(word)} {_in_text(other)}") == found
        for other in within(lexicon, word, 1)
        if other != word and other.isalpha()
    ):
        return 0
    return found


def in_text(word: str) -> str:
    """A query for ``word`` in titles and abstracts only (not author names)."""
    return f"(title:{word} OR abstract:{word})"


_in_text = in_text


def _together(lexicon: Lexicon, count_hits: CountHits, word: str, option: str) -> bool:
    """Whether the papers holding ``word`` hold ``option`` too, at least
    :data:`TOGETHER_LIFT` times as often as the index's papers do."""
    alone = _hits(count_hits, word)
    both = _hits(count_hits, f"{word} {option}") if alone else 0
    return both > 0 and both * lexicon.doc_count() >= TOGETHER_LIFT * alone * lexicon.frequency(option)


@dataclass(frozen=True)
class Change:
    """One word of a :class:`Correction`: as typed (folded), as corrected,
    whether the index holds the typed word (:func:`held`), the edits between
    them, whether the typed word is a real English word the index lacks
    (:func:`searchengine.realwords.is_real`) and whether an author's name holds it."""

    typed: str
    corrected: str
    held: bool
    distance: int
    real: bool = False
    named: bool = False


@dataclass(frozen=True)
class Correction:
    """A corrected query (``text``) and the words it changes."""

    text: str
    changes: tuple[Change, ...]
    #: Whether the corrected words stand next to the query's other words in some paper.
    seen: bool = False

    @property
    def sure(self) -> bool:
        """Whether the evidence allows searching the correction instead of the
        query as typed: every word it changes is one the index does not hold,
        no word of an author's name, one edit from its correction; a real
        word (:mod:`searchengine.realwords`) only when the correction is
        :attr:`seen` beside the other words (``memroy bandwith``: papers write
        "memory bandwidth"; ``neutrino`` alone has no such evidence)."""
        return all(
            not change.held and not change.named and (not change.real or self.seen) and change.distance <= 1
            for change in self.changes
        )


def query_words(text: str) -> list[str]:
    """The words of the query ``text`` that :func:`correct` may look up (as
    typed): none for a query of more than :data:`MAX_QUERY_WORDS` words."""
    words = [match.group(1) for match in _WORD.finditer(text)]
    if len(words) > MAX_QUERY_WORDS:
        return []
    return [w for w in words if w not in _OPERATORS and len(w) <= MAX_WORD and not _NAME_CASE.search(w)]


def suggest(
    lexicon: Lexicon,
    text: str,
    total: int,
    count_hits: CountHits,
    deadline: float | None = None,
    phrase_share: PhraseShare | None = None,
) -> str | None:
    """The text of :func:`correct`'s correction of the query ``text``, or ``None``."""
    found = correct(lexicon, text, total, count_hits, deadline, phrase_share)
    return None if found is None else found.text


def correct(
    lexicon: Lexicon,
    text: str,
    total: int,
    count_hits: CountHits,
    deadline: float | None = None,
    phrase_share: PhraseShare | None = None,
    prefetch: Prefetch | None = None,
) -> Correction | None:
    """A :class:`Correction` of the query ``text``, or ``None``.

    Args:
        lexicon: the index's words: ``doc_count()``, ``normalise(word)`` (the
            word as the lexicon holds it, ``None`` for a stop word),
            ``frequency(word)`` (documents holding it), ``name_frequency(word)``
            (documents whose author names hold it), ``frequencies(words)``
            (``{word: frequency}``) and ``near(word, maxdist)`` (indexed
            words that may be within ``maxdist`` edits, see :func:`within`).
        text: the query as parsed (after repairs), e.g. ``sparce matrix``.
        total: hits the query found as typed.
        count_hits: function from query text to its number of hits; used to
            score corrections in context. It may raise ``QueryError``.
        deadline: ``time.monotonic()`` value after which no more corrections
            are tried (the best so far is returned).
        phrase_share: function ``(phrase, query text) -> share`` giving the
            share, from 0 to 1, of the query's hits (or a sample of them)
            that hold the quoted two-word ``phrase``; without it corrections
            are scored by hits alone.
        prefetch: ``prefetch(texts, pairs)``, when given, is told every
            corrected query text the choice may count and every ``(phrase,
            text)`` whose share it may ask, before the first is counted (an
            engine that counts them all in one request).
    """
    import time

    if len(_WORD.findall(text)) > MAX_QUERY_WORDS:
        return None
    rare = max(1, int(lexicon.doc_count() * RARE_SHARE))
    spans: list[tuple[int, int, list[str]]] = []
    typed: list[tuple[str, bool, bool, bool]] = []  # (word, held, real, named)
    for match in _WORD.finditer(text):
        word = match.group(1)
        if word in _OPERATORS or len(word) > MAX_WORD or _NAME_CASE.search(word):
            continue
        normal = lexicon.normalise(word)
        if normal is None:
            continue
        # A word of an author's name (Vedaldi, Fidler) is a name: checked only
        # when the query finds nothing as typed (markov chian), and then only suggested.
        named = lexicon.name_frequency(normal) > 0
        if named and total:
            continue
        frequency = held(lexicon, normal, count_hits)
        real = False
        if frequency == 0:
            options = _candidates(lexicon, normal)
            real = bool(options) and realwords.is_real(normal, options)
            if real or named:
                # A real word no paper holds (neutrino): at most a real word suggested, never searched instead.
                options = [option for option in options if realwords.zipf(option)]
        elif frequency <= rare or (total < FEW_HITS and frequency <= 1):
            # A rare but real word: only a much more common word one edit
            # away, seen beside it in its papers, may be what was meant.
            # A word no English text uses (tranformer) needs no such company
            # when the word it misses is a real one.
            factor = 10 if total < FEW_HITS and frequency <= 1 else RARE_FACTOR
            options = [o for o in _candidates(lexicon, normal, 1) if lexicon.frequency(o) >= factor * frequency]
            misspelt = bool(options) and not realwords.zipf(normal)
            options = [
                o for o in options if (misspelt and realwords.zipf(o)) or _together(lexicon, count_hits, normal, o)
            ]
        else:
            continue
        if options:
            spans.append((match.start(1), match.end(1), options))
            typed.append((normal, frequency > 0, real, named))
        if len(spans) == MAX_WORDS:
            break
    if not spans:
        return None
    if prefetch is not None:
        texts: list[str] = []
        pairs: list[tuple[str, str]] = []
        for choice in itertools.product(*(options for _, _, options in spans)):
            candidate, replaced = _replace(text, spans, choice)
            texts.append(candidate)
            if phrase_share is not None:
                pairs.extend((phrase, candidate) for phrase in _neighbour_phrases(lexicon, candidate, replaced))
        prefetch(texts, pairs)
    best: Correction | None = None
    best_key: tuple[float, float] = (-1.0, total)
    for choice in itertools.product(*(options for _, _, options in spans)):
        # Counted ahead, every choice costs nothing more: the deadline bounds counting.
        if deadline is not None and prefetch is None and time.monotonic() > deadline:
            break
        candidate, replaced = _replace(text, spans, choice)
        hits = _hits(count_hits, candidate)
        if hits <= total:
            continue
        context = 0.0
        phrases: list[str] = []
        if phrase_share is not None:
            phrases = _neighbour_phrases(lexicon, candidate, replaced)
            context = hits * sum(_share(phrase_share, phrase, candidate) for phrase in phrases)
        distances = [edit_distance(normal, word) for (normal, *_), word in zip(typed, choice)]
        # A short word has many close words, and two edits reach far: next to
        # other words, such a correction must be seen next to them somewhere.
        if (
            phrase_share is not None
            and phrases
            and not context
            and any(len(word) < LONG_WORD or distance > 1 for word, distance in zip(choice, distances))
        ):
            continue
        # Each edit makes a correction EDIT_COST times less likely (a flat noisy channel).
        weight = EDIT_COST ** sum(distances)
        key = (context * weight, hits * weight)
        if key > best_key:
            changes = tuple(
                Change(normal, word, is_held, distance, is_real, is_named)
                for (normal, is_held, is_real, is_named), word, distance in zip(typed, choice, distances)
            )
            best, best_key = Correction(candidate, changes, context > 0), key
    return best


def _replace(text: str, spans: list[tuple[int, int, list[str]]], choice: tuple[str, ...]) -> tuple[str, list[int]]:
    """``text`` with each span replaced by the chosen word, and where the replacements start."""
    parts: list[str] = []
    starts: list[int] = []
    position, length = 0, 0
    for (start, end, _), replacement in zip(spans, choice):
        parts.append(text[position:start])
        length += start - position
        starts.append(length)
        parts.append(replacement)
        length += len(replacement)
        position = end
    parts.append(text[position:])
    return "".join(parts), starts


_TOKEN = re.compile(r"\w+")


def _neighbour_phrases(lexicon: Lexicon, text: str, starts: list[int]) -> list[str]:
    """Quoted two-word phrases of each replaced word (starting at one of
    ``starts`` in ``text``) with the word right before and after it, when
    that word is a content word and only spaces or hyphens lie between:
    ``["sparse matrix"]`` for ``sparse matrix``. A pair of two replaced
    words is given once."""
    tokens = list(_TOKEN.finditer(text))

    def joinable(left: re.Match[str], right: re.Match[str]) -> bool:
        return text[left.end() : right.start()].strip(" -") == "" and all(
            t.group() not in _OPERATORS and lexicon.normalise(t.group()) is not None for t in (left, right)
        )

    phrases = []
    for left, right in zip(tokens, tokens[1:]):
        if (left.start() in starts or right.start() in starts) and joinable(left, right):
            phrases.append(f'"{left.group()} {right.group()}"')
    return phrases


def _share(phrase_share: PhraseShare, phrase: str, text: str) -> float:
    from searchengine.errors import QueryError

    try:
        return phrase_share(phrase, text)
    except QueryError:
        return 0.0


def _hits(count_hits: CountHits, text: str) -> int:
    from searchengine.errors import QueryError

    try:
        return count_hits(text)
    except QueryError:
        return 0
