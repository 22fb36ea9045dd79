"""Text analysis: one Whoosh analyzer, used for indexing and for queries alike.

The chain reads like Whoosh's own pipelines::

    TechTokenizer | CompoundFilter | AcronymStopFilter | InflectionStemFilter

* :class:`TechTokenizer` (a regular expression, as NLTK's ``RegexpTokenizer``) keeps identifiers whole:
  ``C++``, ``C#``, ``802.11ax``, ``fail-slow``, ``Bose–Einstein`` (any dash or
  hyphen); a run of CJK characters is one token.
* :class:`CompoundFilter` indexes a compound as its parts *and* as one joined
  word at the first part's position: ``fail-slow`` gives ``fail``, ``slow`` and
  ``failslow``; ``FlashAttention`` gives ``flash``, ``attention`` and
  ``flashattention``. The query side (:mod:`searchengine.engines.whoosh.querying`) asks for the
  joined word or the parts in sequence, so hyphenated, joined and spaced forms
  meet.
* :class:`AcronymStopFilter` drops common English words, but keeps upper-case
  acronyms that spell one (``US``, ``IT``, ``AS``).
* :class:`InflectionStemFilter` stems with Porter's algorithm minus its
  root-cutting step 4 (NLTK's implementation), after rewriting the word
  endings Porter parts (:data:`~searchengine.querylang.text.PLURAL_REWRITES`):
  ``GPUs`` → ``gpu``, ``matrices``/``matrix`` → ``matrix``,
  ``radii``/``radius`` → ``radius``, ``criteria``/``criterion`` →
  ``criteria``; ``university`` and ``universe``, ``organic`` and
  ``organization`` stay apart. Upper-case acronyms are not stemmed (``AWS``
  stays ``aws``).
* Case and accents fold (in the same filter): ``Schrödinger`` is indexed as
  ``schrodinger``; thousands separators go (``10,000`` → ``10000``).
* Text is tokenized in Unicode's NFKC form (:func:`normalize`): ``ﬁnite``
  is ``finite``, ``ＧＰＵ`` is ``GPU``; offsets stay those of the text as
  written.
* A CJK run becomes overlapping character pairs (:class:`CompoundFilter`), so
  ``语言模型`` finds ``大规模语言模型的研究``.

Analyzer modes (the ``mode`` keyword Whoosh passes down): ``"index"`` and
``"query"`` emit everything above (the parser builds the alternatives from
the joined word and the parts); ``"phrase"`` leaves out joined words. Quoted
phrases are made exact by :mod:`searchengine.engines.whoosh.querying`, which checks the
candidates' stored text.

NLTK's stemmer module is imported on first use, and without NLTK's package
initialiser (:func:`~searchengine.engines.whoosh.internals.nltk_module`): that
initialiser imports all of NLTK, and SciPy where it is installed, which costs
more than the rest of a command-line search put together.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterator
from typing import Any, NamedTuple

from whoosh.analysis import CharsetFilter, Filter, LowercaseFilter, Token, Tokenizer
from whoosh.support.charset import accent_map

from searchengine.engines.whoosh import internals
from searchengine.querylang.text import (PLURAL_REWRITES, STOP_WORDS, TOKEN_PATTERN, analyzed_pattern,
                                         compound_parts, is_cjk_run, transliterated)

# querylang.text.THOUSANDS with the comma first: the same matches, found by a search for
# the comma (a pattern that starts with a look-behind tries every position,
# 4x slower on an abstract).
_THOUSANDS = re.compile(r",(?<=\d,)(?=\d{3}(?!\d))")
# A number glued to a unit or a word (16GB, 100ms, 3,700x, 2D): a compound of
# the two, so 16GB meets 16 GB and 3,700x stays apart from 1,700x.
_NUMBER_UNIT = re.compile(r"(\d+(?:,\d{3})*)([^\W\d_]+)")
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


def _strip_accents(run: re.Match) -> str:
    return run.group().translate(accent_map)


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


class WordSpans(NamedTuple):
    """The words of a text, in columns (:meth:`TechTokenizer.word_spans`).

    ``words`` are in NFKC form (:func:`normalize`), as found in ``text``
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


class TechTokenizer(Tokenizer):
    """Whoosh tokenizer matching :data:`TOKEN_PATTERN` (as NLTK's ``RegexpTokenizer`` would).

    Yields one token per match with its position and character offsets,
    which Whoosh needs for phrases and highlighting. Punctuation glued to a
    word does not hide it: ``CB-SpMV:A`` gives ``CB-SpMV`` and ``A``.
    The text is tokenized in its NFKC form (:func:`normalize`): a token's
    text is normalized (``ﬁnite`` → ``finite``), its offsets are those of
    the text as written; where the two differ in length, ``token.charmap``
    holds the written offsets of each of the token's characters
    (``(starts, ends)``; ``None`` otherwise) for the filters that cut a token.
    Without ``chars`` (indexing) the words come from one ``findall`` pass;
    with it, from the spans of ``finditer``.
    """

    def __init__(self, pattern: str = TOKEN_PATTERN) -> None:
        self.pattern = pattern
        self._compiled = None
        self._expansions: dict = {}

    def __getstate__(self) -> dict[str, Any]:
        return {"pattern": self.pattern}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.pattern = state["pattern"]
        self._compiled = None
        self._expansions = {}

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.pattern == self.pattern

    def _tokenizer(self, value: str):
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
        found = list(self._tokenizer(normal).finditer(normal))
        if not found:
            return WordSpans(normal, [], [], [], [], None if starts is None else [])
        match = type(found[0])  # re's or regex's: its methods mapped in C, not called from Python
        words = list(map(match.group, found))
        positions = list(map(match.start, found))
        if starts is None:
            return WordSpans(normal, words, positions, positions, list(map(match.end, found)), None)
        firsts, lasts, charmaps = [], [], []
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
    ) -> Iterator[Token]:
        token = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
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
                if starts is None:
                    token.startchar = start_char + start
                    token.endchar = start_char + end
                else:
                    token.startchar = start_char + starts[start]
                    token.endchar = start_char + ends[end - 1]
                    token.charmap = None
                    if token.endchar - token.startchar != end - start:
                        token.charmap = ([start_char + at for at in starts[start:end]],
                                         [start_char + at for at in ends[start:end]])
            yield token


# Distinct words whose analysis index_positions keeps (per analyzer).
EXPANSION_CACHE_SIZE = 100_000
# A word after the one analysed: where it lands says how many positions the word took.
_NEXT_WORD = "zz"


def index_positions(analyzer, value: str) -> dict[str, list[int]] | None:
    """The terms ``analyzer`` indexes for ``value``, each with its positions.

    The same terms and positions as the analyzer's token stream in
    ``"index"`` mode (stopped tokens left out), in the order they first
    come, but each distinct word of the tokenizer is analysed once: its
    terms (with their positions relative to the word's) and the number of
    positions it takes are kept, for the :data:`EXPANSION_CACHE_SIZE` words
    seen last, and reused; the words new to the cache go through the
    filters together (:func:`_expand_all`). Whoosh's way runs every token through a chain of
    generators, half of an indexing worker's time. This holds because every
    filter after :class:`TechTokenizer` is ``token_local``: what it makes of
    a token depends on the token's text alone, and it moves later tokens by
    a fixed number of positions.

    Returns ``None`` when ``analyzer`` is not such a chain (the caller then
    uses the token stream).
    """
    items = getattr(analyzer, "items", None)
    if not items or type(items[0]) is not TechTokenizer or not all(
            getattr(item, "token_local", False) for item in items[1:]):
        return None
    tokenizer, filters = items[0], tuple(items[1:])
    caches = tokenizer.__dict__.setdefault("_expansions", {})
    key = tuple(map(id, filters))  # filters compare by value and are not hashable
    cache = caches.get(key)
    if cache is None:
        cache = caches[key] = {}
    positions: dict[str, list[int]] = {}
    at = 0
    normal = normalize(value)[0]
    words = tokenizer._tokenizer(normal).findall(normal)
    new = [word for word in dict.fromkeys(words) if word not in cache]
    if new:
        expanded = _expand_all(filters, new)
        if expanded is None:
            return None
        cache.update(expanded)
    for word in words:
        terms, width = cache[word]
        for text, offset in terms:
            found = positions.get(text)
            if found is None:
                positions[text] = [at + offset]
            else:
                found.append(at + offset)
        at += width
    if len(cache) > EXPANSION_CACHE_SIZE:
        cache.clear()
    return positions


def term_positions(analyzer, value: str) -> dict[str, list[int]]:
    """``{term: positions}`` of ``value`` as ``analyzer`` indexes it:
    :func:`index_positions`, or the token stream for a chain it cannot read."""
    found = index_positions(analyzer, value)
    if found is None:
        found = {}
        for token in analyzer(value, positions=True, mode="index", removestops=True):
            found.setdefault(token.text, []).append(token.pos)
    return found


def _expand_all(filters: tuple, words: list[str]) -> dict | None:
    """``{word: (terms, width)}`` of distinct ``words`` as :func:`_expand`
    gives them, the words run through ``filters`` as one stream (a filter
    chain's generators cost more to set up than a word to analyse), each
    followed by a marker word whose position tells the width; ``None`` when
    a word's analysis cannot be told. Words whose analysis gives the marker
    itself are analysed one by one."""
    found: dict = {}
    terms: list[tuple[str, int]] = []
    start = 0  # where the current word's terms start
    for t in _marked(filters, words):
        if t.stopped:
            continue
        if t.boost != 1.0:
            return None
        if t.text != _NEXT_WORD:
            terms.append((t.text, t.pos - start))
            continue
        if len(found) == len(words):  # more markers than words: a word gave one
            break
        found[words[len(found)]] = (tuple(terms), t.pos - start)
        terms, start = [], t.pos + 1
    else:
        if len(found) == len(words) and not terms:
            return found
    one_by_one = {word: _expand(filters, word) for word in words}
    return None if None in one_by_one.values() else one_by_one


def _marked(filters: tuple, words: list[str]) -> Iterator[Token]:
    """The tokens ``filters`` make of ``words``, each word followed by the
    marker :data:`_NEXT_WORD` (positions 0, 1, 2 ...); one token object is
    reused, so each is read before the next is asked for."""
    token = Token(positions=True, chars=False, removestops=True, mode="index", boosts=True)

    def stream() -> Iterator[Token]:
        for pos, text in enumerate(text for word in words for text in (word, _NEXT_WORD)):
            token.text, token.pos, token.boost = text, pos, 1.0
            token.stopped = token.joined = False
            token.charmap = None
            yield token

    tokens: Iterator[Token] = stream()
    for item in filters:
        tokens = item(tokens)
    return tokens


def _expand(filters: tuple, word: str) -> tuple[tuple[tuple[str, int], ...], int] | None:
    """``(terms, width)``: ``word``'s ``(term, position)`` pairs through ``filters``
    (positions from 0) and the number of positions it takes; ``None`` when
    that cannot be told (the next word did not come out as written)."""
    out = [(t.text, t.pos, t.boost) for t in _marked(filters, [word]) if not t.stopped]
    if not out or out[-1][0] != _NEXT_WORD or any(boost != 1.0 for _, _, boost in out):
        return None
    *terms, (_, width, _) = out
    return tuple((text, pos) for text, pos, _ in terms), width


def _span(start: int, charmap, begin: int, end: int) -> tuple[int, int]:
    """The written offsets of characters ``[begin, end)`` of a token's text that starts at ``start``."""
    if charmap is None:
        return start + begin, start + end
    return charmap[0][begin], charmap[1][end - 1]


class CompoundFilter(Filter):
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

    token_local = True  # see index_positions

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __call__(self, tokens: Iterator[Token]) -> Iterator[Token]:
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
                        token.text = text[i:i + 2]
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


class AcronymStopFilter(Filter):
    """Drop stop words, except when written as an upper-case acronym.

    ``it`` and ``It`` are dropped; ``IT`` (information technology) is kept.
    Must run before lower-casing. Stopped tokens still take up a position, so
    phrase queries keep their gaps.
    """

    token_local = True  # see index_positions

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


# The plural rewrites (:data:`~searchengine.querylang.text.PLURAL_REWRITES`) in Python's syntax.
_PLURALS = tuple((re.compile(pattern), replacement.replace("$1", r"\g<1>"))
                 for pattern, replacement in PLURAL_REWRITES)
# Whether any rewrite applies: one search instead of a substitution per rewrite
# (a word none of them matches is left as it is by all of them).
_ANY_PLURAL = re.compile("|".join(f"(?:{pattern})" for pattern, _ in PLURAL_REWRITES))


class UmlautFilter(Filter):
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

    def __call__(self, tokens: Iterator[Token]) -> Iterator[Token]:
        for token in tokens:
            # (read before yielding: the filters after this one rewrite the token)
            other = transliterated(token.text) if token.mode == "index" and not token.stopped else None
            yield token
            if other is not None:
                token.text = other
                yield token


class InflectionStemmer:
    """Porter's stemmer without its step 4, plus Latin and Greek plurals.

    Porter (1980), "An algorithm for suffix stripping": step 1 removes
    inflection (plural ``-s``/``-es``/``-ies``, ``-ed``, ``-ing``; final
    ``y`` → ``i``), steps 2 and 3 map compound suffixes to shorter ones
    (``-ization`` → ``-ize``, ``-ational`` → ``-ate``, ``-fulness`` →
    ``-ful``), and step 5 drops a final ``-e`` and undoubles ``-ll``. Step 4,
    which cuts a word down to a root by removing ``-ic``, ``-ity``, ``-ize``,
    ``-al``, ``-ment`` and the like, is what conflates unrelated words
    (``university``/``universe`` → ``univers``, ``organic``/``organization``
    → ``organ``), so it is left out. Against full Porter this changes
    nDCG@10 by −0.004 on Cranfield and +0.005 on CISI; leaving out steps 2
    and 3 as well costs about 0.01 on both (docs/evaluation.md).

    NLTK's implementation of the steps is used (imported on first use).
    Words of two letters or fewer, and words with anything but ASCII
    letters, are returned lower-cased and otherwise unchanged.
    """

    def __init__(self) -> None:
        self._porter = internals.nltk_module("nltk.stem.porter").PorterStemmer()

    def stem(self, word: str) -> str:
        """Return the stem of ``word`` (lower-case)."""
        word = word.lower()
        if len(word) <= 2 or not (word.isascii() and word.isalpha()):
            return word
        porter = self._porter
        if word in porter.pool:  # NLTK's irregular forms: dying → die, skies → sky
            return porter.pool[word]
        if _ANY_PLURAL.search(word):
            for pattern, replacement in _PLURALS:
                word = pattern.sub(replacement, word, count=1)
        return internals.porter_steps(porter, word)


class InflectionStemFilter(Filter):
    """Fold case and accents, then stem with :class:`InflectionStemmer`.

    It sees the original case: an all-capitals acronym is folded but not
    stemmed (``AWS``, ``GPUS`` stay), and an acronym followed by a lower-case
    ``s`` is its plural (``GPUs`` → ``gpu``). Folding here rather than in
    Whoosh's ``LowercaseFilter`` and ``CharsetFilter`` lets one cached call do
    all three per distinct word. Stems are cached
    (``cachesize`` distinct words); the cache is rebuilt after unpickling
    rather than stored in the index's schema.

    A token's new text starts with the first character of its folded text
    (:func:`fold`): stemming and the plural rewrites change only a word's
    ending and keep at least its first letter (``ies`` → ``i``), and words
    of two letters or fewer are kept whole. Highlighting relies on this to
    stem only the words that can be query terms
    (:class:`~searchengine.engines.whoosh.snippets.WordAnalysis`).
    """

    token_local = True  # see index_positions

    def __init__(self, cachesize: int = 200_000) -> None:
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
            stemmer = InflectionStemmer()

            def stem(text: str) -> str:
                if text.isupper():
                    return fold(text)
                if len(text) > 2 and text[-1] == "s" and text[:-1].isupper():
                    return fold(text[:-1])
                return stemmer.stem(fold(text))

            self._stem = functools.lru_cache(maxsize=self.cachesize)(stem)
        return self._stem

    def stem_text(self, text: str) -> str:
        """The text this filter gives a token of ``text`` that is not a stop word."""
        return self._stemmer()(text)

    def __call__(self, tokens: Iterator[Token]) -> Iterator[Token]:
        stem = self._stemmer()
        for token in tokens:
            token.text = fold(token.text) if token.stopped else stem(token.text)
            yield token


def text_analyzer():
    """The analyzer for title and abstract text (indexing, queries and phrases)."""
    return (
        TechTokenizer()
        | CompoundFilter()
        | AcronymStopFilter()
        | UmlautFilter()
        | InflectionStemFilter()
    )


def name_analyzer():
    """The analyzer for author names: words folded for case and accents, not stemmed."""
    return TechTokenizer() | LowercaseFilter() | CharsetFilter(accent_map)
