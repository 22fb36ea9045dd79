"""Text facts the query language needs, without any search engine.

The tokens, compounds and stop words of the product's analysis (the
embedded engine's analyzer, :mod:`searchengine.engines.whoosh.analysis`, is
built from these). The parser uses them to make the decisions that depend on analysis
the same way for every engine: a query word that analyzes to nothing is a
stop word and is dropped, and a fielded word or phrase with nothing to search
does not count towards the words a hit must contain.

Nothing here stems or folds: that is the engines' part (each analyzes a
leaf's text as typed); the plural rewrites both engines apply before their
stemmers are kept here (:data:`PLURAL_REWRITES`) so that they cannot drift.

This module imports nothing of the product's or of any engine's.
"""

from __future__ import annotations

import functools
import re
import unicodedata

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
SAME_IN_RE_AND_REGEX = frozenset({"Cc", "Co", "Ll", "Lm", "Lo", "Lt", "Lu", "Nd", "Nl", "Pd", "Pe", "Pf", "Pi",
                                  "Po", "Ps", "Sc", "Sk", "Sm", "Zl", "Zp", "Zs"})

# English function words (and the stray letters of possessives and
# contractions); content words, single letters like C, and numbers are kept.
STOP_WORDS = frozenset("""
a about above after again against all am an and any are as at be because been
before being below between both but by can could did do does doing down during
each few for from further had has have having he her here hers herself him
himself his how i if in into is it its itself just me more most my myself no nor
not of off on once only or other our ours ourselves out over own same she should
so some such than that the their theirs them themselves then there these they
this those through to too under until up very was we were what when where which
while who whom why will with would you your yours yourself yourselves s t
""".split())

_DASH_SPLIT = re.compile(rf"[{DASHES}]")
# Splits camel case only where every part is a capitalised or lower-case word
# of three letters or more (FlashAttention, ResNet; not SpMV or GraphSAGE).
_CAMEL = re.compile(r"(?:[A-Z]?[a-z]{2,})(?:[A-Z][a-z]{2,})+")
_CAMEL_PART = re.compile(r"[A-Z]?[a-z]+")
# Whitespace-separated values (the keyword fields' tokens).
_SPACED = re.compile(r"[^ \t\r\n]+")


@functools.cache
def _plain_words() -> re.Pattern:
    return re.compile(_PLAIN_TOKEN_PATTERN)


@functools.cache
def _ascii_words() -> re.Pattern:
    return re.compile(_ASCII_TOKEN_PATTERN, re.ASCII)


@functools.cache
def _marked_words() -> re.Pattern:
    return re.compile(_MARKED_TOKEN_PATTERN)


@functools.cache
def _words() -> re.Pattern:
    return re.compile(TOKEN_PATTERN)


@functools.cache
def _analyzed():
    try:
        import regex
    except ImportError:  # an NLTK that tokenizes with ``re``
        return _words()
    return regex.compile(TOKEN_PATTERN, regex.UNICODE | regex.MULTILINE | regex.DOTALL)


def _is_cjk(ch: str) -> bool:
    return any(first <= ch <= last for first, last in _CJK_RANGES)


def word_pattern(text: str) -> re.Pattern:
    """:data:`TOKEN_PATTERN` compiled with Python's ``re``, to cut ``text`` into
    the query's words as the parser does (compiled on first use; without
    its CJK ranges for text without CJK characters, which finds the same
    words)."""
    if text.isascii() or not any(_is_cjk(ch) for ch in set(text)):
        return _plain_words()
    return _words()


def analyzed_pattern(text: str):
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


# Letters with a second, transliterated spelling (German ü = ue, Danish ø = oe).
_TRANSLITERATED = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "Ä": "Ae", "Ö": "Oe", "Ü": "Ue",
                                 "ø": "oe", "Ø": "Oe"})
UMLAUTS = "äöüÄÖÜøØ"


def transliterated(text: str) -> str | None:
    """``text`` with its umlauts spelled out (``Müller`` → ``Mueller``, ``Søren`` →
    ``Soeren``); ``None`` when it has none. ``text`` is in NFC or NFKC form."""
    other = text.translate(_TRANSLITERATED)
    return None if other == text else other


# Greek letters by name, as papers write them in words or as symbols (TeX's
# $\alpha$ is read as α): a query word of either form also asks for the other.
_GREEK = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu",
          "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi", "psi", "omega")
_GREEK_SYMBOLS = dict(zip(_GREEK, "αβγδεζηθικλμνξοπρστυφχψω"))
_GREEK_NAMES = {symbol: name for name, symbol in _GREEK_SYMBOLS.items()} | {"ς": "sigma", "ϵ": "epsilon",
                                                                            "ϑ": "theta", "ϕ": "phi", "ϖ": "pi"}


def greek_spelling(word: str) -> str | None:
    """The other way of writing a Greek letter: ``alpha`` → ``α``, ``Δ`` →
    ``delta``; ``None`` for any other word, and for a name in capitals (an
    acronym: ``CHI``, ``ETA``, ``PI``)."""
    if len(word) > 1 and word.isascii() and word.isupper():
        return None
    lowered = word.lower()
    return _GREEK_SYMBOLS.get(lowered) or _GREEK_NAMES.get(lowered)


def is_cjk_run(text: str) -> bool:
    """Whether ``text`` (not empty) is all Han, Kana or Hangul (:data:`CJK_CHARS`)."""
    return not text.isascii() and all(_is_cjk(ch) for ch in text)


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


def is_stop(token: str) -> bool:
    """Whether one token is a stop word: ``it`` and ``It`` are, the acronym ``IT`` is not."""
    return token.lower() in STOP_WORDS and not (len(token) > 1 and token.isupper())


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
            pieces = [token[i:i + 2] for i in range(len(token) - 1)]
        else:
            parts = compound_parts(token)
            pieces = parts if len(parts) == 1 or phrase else ["".join(parts), *parts]
        out.extend(piece for piece in pieces if not is_stop(piece))
    return out


def name_tokens(text: str) -> list[str]:
    """The tokens of ``text`` in the author-name analysis (every word, no stop words)."""
    text = unicodedata.normalize("NFKC", text)
    return analyzed_pattern(text).findall(text)


def spaced_tokens(text: str) -> list[str]:
    """The tokens of a keyword field (categories): whitespace-separated values."""
    return _SPACED.findall(text)


# Word endings rewritten, in order, on a folded word before stemming (both
# engines), so that a singular and its plural reach one stem. Porter only
# strips English -s/-es, and unevenly: gas → ga but gases → gase, virus → viru but
# viruses → virus, radius → radiu but radii → radii. Each rule is
# (pattern, replacement); ``$1`` is the pattern's first group (the OpenSearch
# chain applies the same table with ``pattern_replace``, Java's syntax). The
# lists are word stems, not open rules, where an open rule would collide
# (-i: multi, mini; -ium: zirconium/zirconia; -on: neuron; -as: ideas).
PLURAL_REWRITES = (
    # matrix/matrices, vertex/vertices, index/indices: the Latin plurals of a
    # list, made singular (Porter takes -ixes/-exes itself). Singulars turned
    # into -ices met Porter's -icate/-ical stems: index/indicate,
    # complex/complication, vertex/vertical.
    (r"^(matr|append|hel|cerv|rad)ices$", "$1ix"),
    (r"^(vert|ind|cort|vort|simpl|cod|ap)ices$", "$1ex"),
    # analysis/analyses (Porter: analys); not basis, whose bases is base's
    (r"(?<=\w{3})sis$", "ses"),
    # formulae/formulas
    (r"(?<=\w{3})ae$", "as"),
    # axis/axes (both Porters agree on ax, not on axes)
    (r"^(ax)(?:is|es)$", "$1"),
    # Latin -us/-i: radii, stimuli, nuclei, foci → radius, ... (then the -us rule)
    (r"^(radi|stimul|nucle|foc|loc|modul|calcul|tor|syllab|termin|thesaur|glomerul|menisc|gyr|thromb|papyr"
     r"|styl|octop|fung|cact|alumn|annul|bacill|hippocamp|sulc|vill)i$", "$1us"),
    # genus/genera, corpus/corpora
    (r"^(gen)era$", "$1us"),
    (r"(corp)ora$", "$1us"),
    # plurals of -u words, which the -us rule would take for singulars
    (r"^(menu|guru|relu|haiku|sudoku|tofu)s$", "$1"),
    # -us → -use, the form the plural -uses shares (virus/viruses → virus);
    # not -ous adjectives or -aus, nor words of four letters or ending in
    # -pus (acronym plurals written lower-case: gpus, cpus, spmv-gpus)
    # but for the three below
    (r"(?<=\w{3})(?<![aop])us$", "use"),
    (r"(corp|camp|octop)us$", "$1use"),
    # singulars in -s with a plural in -ses: gas/gases, bias/biases, lens/lenses
    (r"^(gas|bias|alias|atlas|canvas|pancreas|lens|bus|plus|iris)$", "$1e"),
    # Latin -um/-a (and English -ums): spectrum/spectra, maximum/maxima,
    # forum/forums/fora, datum/data; not -ium (elements: zirconium/zirconia,
    # cerium/ceria), -sum (checksum), aluminum (alumina), quorum (Quora)
    (r"(?<=\w{3})(?<![is])(?<!^alumin)(?<!^quor)ums?$", "a"),
    (r"(medi|equilibri|consorti|millenni|herbari|bacteri|symposi|compendi|cili|epitheli|endotheli|myceli"
     r"|gymnasi|stadi|podi|crani|auditori|aquari|sanatori|moratori)ums?$", "$1a"),
    # Greek -on/-a: criterion/criteria, phenomenon/phenomena, polyhedron/polyhedra
    (r"(criteri|phenomen|automat|hedr|gangli|mitochondri|legomen|tax)ons?$", "$1a"),
    # Greek -ma/-mata: schema/schemata, lemma/lemmata
    (r"(schem|lemm|stom|stigm|dogm)ata$", "$1a"),
)


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


def split_candidates(term: str, stem) -> list[str]:
    """Every term :func:`best_split` may look up for ``term``: the term, each
    cut's left part stemmed and right part (after a connector too)."""
    wanted = {term}
    for cut in range(MIN_SPLIT_PART, len(term) - MIN_SPLIT_PART + 1):
        left, rest = term[:cut], term[cut:]
        wanted.add(stem(left))
        for inside, _ in (("", None), *(c for c in _JOINED_CONNECTORS if rest.startswith(c[0]))):
            if len(rest) - len(inside) >= MIN_SPLIT_PART:
                wanted.add(rest[len(inside):])
    return sorted(wanted)


def best_split(term: str, frequency, stem) -> tuple[str, ...] | None:
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
            right = rest[len(inside):]
            if len(right) < MIN_SPLIT_PART or right in STOP_WORDS:
                continue
            both = min(df, frequency(right))
            if both >= needed and both > best_df:
                best, best_df = (left, right) if joint is None else (left, joint, right), both
    return best
