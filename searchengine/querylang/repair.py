"""Query text made parseable: hostile input repaired where the intent is clear.

:func:`split_filters` takes the filter clauses (``year:``, ``author:``,
``^First``, ...) out of the query; :func:`clean` cuts it to size and
normalises quotes and spaces; :func:`prepare` rewrites what the grammar
(:mod:`searchengine.querylang.syntax`) would misread: field aliases,
operators, wildcards, fuzzy marks, identifiers, dangling operators,
unbalanced parentheses. What cannot be understood raises
:class:`~searchengine.errors.QueryError` with a one-line message.
"""

from __future__ import annotations

import re
import unicodedata

from searchengine import filters as _filters
from searchengine.analysis.tokens import DASHES, word_pattern
from searchengine.errors import QueryError
from searchengine.querylang import syntax
from searchengine.querylang.syntax import ALL_TERMS_UP_TO, MIN_PREFIX
from searchengine.querylang.text import MIN_FUZZY, may_be_fuzzy
from searchengine.tex import query_tex_to_text

# Longer queries are cut to this many characters: room for a pasted abstract
# (arXiv allows 1,920 characters) and a title, and for long test-collection
# questions; a longer paste is searched by its beginning rather than refused.
MAX_QUERY_CHARS = 4000
# Longer words are cut to this many characters.
MAX_WORD_CHARS = 100
# Prefixes and quoted phrases past these counts in one query are searched as
# plain words: each prefix adds up to 64 terms per field and each phrase a
# check of the stored text of every candidate, costs outside the time budget
# (a hundred of either took seconds on 10,000 records).
MAX_PREFIXES = 8
MAX_PHRASES = 8

# The operators; without one, parentheses are punctuation, not grouping.
OPERATOR = re.compile(r"\b(?:AND|OR|NOT|ANDNOT|ANDMAYBE)\b")
DASH_SPLIT = re.compile(f"[{DASHES}]")
_OPERATOR_WORDS = {"AND", "OR", "NOT", "ANDNOT", "ANDMAYBE"}

# Field names users may type → index field (the filters are taken out first).
FIELD_ALIASES = {
    "title": "title",
    "ti": "title",
    "abstract": "abstract",
    "abs": "abstract",
    "author": "authors",
    "authors": "authors",
    "au": "authors",
    "category": "categories",
    "categories": "categories",
    "cat": "categories",
    "year": "year",
    "id": "id",
    "doi": "doi",
}
KNOWN_FIELDS = "title/ti, abstract/abs, author/au, category/cat, year, date, id, doi"

_QUOTES = str.maketrans(
    {"“": '"', "”": '"', "„": '"', "‟": '"', "«": '"', "»": '"', "‘": "'", "’": "'", "‚": "'", "‛": "'"}
)
# A field prefix: a name, a colon and a value (not "//": https://... is a link).
_FIELD = re.compile(r"(?<![\w.\-/])([A-Za-z][\w-]*):(?=[^\s:])(?!//)")
_FIELD_BEFORE_PHRASE = re.compile(r"(?<![\w.\-/])([A-Za-z][\w-]*):$")
_EMPTY_FIELD = re.compile(r"(?<![\w.\-/])([A-Za-z][\w-]*):(?=\s|$|\))")
# A word with a ``*`` in it (a prefix query, or a misplaced wildcard).
_WILDCARD_WORD = re.compile(r"[^\s()\"]*\*[^\s()\"]*")
# A word with a number after a tilde (Lucene's fuzzy suffix ``word~2``); the
# distances the syntax reads are 0 to 2 (syntax.FUZZY).
_FUZZY_NUMBER = re.compile(r"(?<![^\s(:])(?P<word>[^\W\d_][^\s()\"*?:~]*)~(?P<number>\d+(?:\.\d*)?)(?=[\s)]|$)")
# A tilde after a closing quote: Lucene's proximity (``"a b"~3``).
_PROXIMITY = re.compile(r"~(?P<number>\d+(?:\.\d*)?)?(?=[\s)]|$)")
# The same after a sign (``-abs:"gpu memory"``): the sign stays, for the phrase.
_SIGNED_FIELD_BEFORE_PHRASE = re.compile(r"(?:^|(?<=[\s(]))[-+]([A-Za-z][\w-]*):$")
# A sign ending the text before a quoted phrase (``gpu -"memory"``, ``-abs:"a b"``).
_SIGN_BEFORE_PHRASE = re.compile(r"(?:^|(?<=[\s(]))([-+])$")
# A word of letters and digits joined by dots, slashes or underscores
# (``cs.DC``, ``node.js``, ``a_b``): excluded as one, as a phrase of its parts.
_JOINED_BY_MARKS = re.compile(r"(?<=\bNOT )([A-Za-z0-9]+(?:[._/][A-Za-z0-9]+)+)(?=[\s)]|$)")
# ``title:(graph neural)``: a field applied to a group of words.
_FIELD_GROUP = re.compile(r"\b\w+:\([^()]*\)")

# ``year:...``, ``author:...`` or ``category:...`` with a bare or quoted value,
# or ADS's first-author ``^Qian`` / ``^"Qian, D"`` (a word's boost, ``gpu^2``, is glued to it).
_FILTER_CLAUSE = re.compile(
    r'(?:(?<![\w:])(year|date|author|au|category|cat):|(?<!\S)\^(?=[^\W\d_]|"))'
    r'(?:"([^"]*)"|(\S+))',
    re.IGNORECASE,
)
_FILTER_NAMES = {
    "year": "year",
    "date": "date",
    "author": "author",
    "au": "author",
    "category": "category",
    "cat": "category",
}
_OPERATOR_BEFORE = re.compile(r"(?:\b(?:OR|NOT)\s+|(?:^|\s)-)$")
_OPERATOR_AFTER = re.compile(r"^\s*(?:OR\b|\))")
_AND_AT_END = re.compile(r"\bAND\s*$")
_AND_AT_START = re.compile(r"^AND\b\s*")


def split_filters(text: str) -> tuple[str, _filters.Filters]:
    """Take the filter clauses out of a query: ``(remaining text, Filters)``.

    ``"GPU year:2023- author:\"Qian, D.\""`` gives ``("GPU", Filters(...))``;
    the values are parsed by :mod:`searchengine.filters`, so the query syntax
    and the options mean the same.

    Raises:
        QueryError: a filter value is malformed, or a filter is combined with
            ``OR``/``NOT`` or put in parentheses (it would not mean what it says).
    """
    found: dict[str, list[str]] = {"year": [], "author": [], "category": [], "date": []}
    kept, last = [], 0
    for match in _FILTER_CLAUSE.finditer(text):
        clause = match.group(0)
        before, after = text[: match.start()], text[match.end() :]
        if _OPERATOR_BEFORE.search(before) or _OPERATOR_AFTER.search(after) or before.count("(") > before.count(")"):
            raise QueryError(
                f"filter {clause!r} cannot be combined with OR, NOT or parentheses; it applies to the whole query"
            )
        value = match.group(2) if match.group(2) is not None else match.group(3)
        if match.group(3) is not None and "~" in value:
            raise QueryError(
                f"{clause!r}: a filter matches its value as written, never fuzzily; "
                "a fuzzy word (~) belongs in the search text"
            )
        if match.group(1) is None:
            found["author"].append(_filters.FIRST_MARK + value)
        else:
            found[_FILTER_NAMES[match.group(1).lower()]].append(value)
        kept.append(_AND_AT_END.sub("", text[last : match.start()]))  # "GPU AND year:2023"
        last = match.end()
    kept.append(text[last:])
    rest = _AND_AT_START.sub("", " ".join("".join(kept).split()))
    return rest, _filters.build_filters(found["year"], found["author"], found["category"], date=found["date"])


def clean(text: str, notes: list[str]) -> str:
    """TeX as records' TeX is read (:func:`searchengine.tex.query_tex_to_text`:
    ``Schr\\"odinger`` is ``Schrödinger``), Unicode's NFKC form (``ﬁnite`` → ``finite``, full-width letters and
    digits, decomposed accents composed: the form both engines index),
    typographic quotes to straight ones, control characters out, spaces
    collapsed, words and the whole text capped (a note in ``notes`` for each cut)."""
    text = unicodedata.normalize("NFKC", query_tex_to_text(text)).translate(_QUOTES)
    text = "".join(
        " " if unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch
        for ch in text
        if unicodedata.category(ch) not in ("Cf", "Cs", "Co", "Cn") or ch in "\t\n"
    )
    words = text.split()
    if any(len(word) > MAX_WORD_CHARS for word in words):
        # No real word is this long; the taggers also slow down
        # quadratically on one huge run of characters.
        words = [word[:MAX_WORD_CHARS] for word in words]
        notes.append(f"words longer than {MAX_WORD_CHARS} characters were cut")
    text = " ".join(words)
    if len(text) > MAX_QUERY_CHARS:
        cut = text.rfind(" ", 0, MAX_QUERY_CHARS)
        text = text[: cut if cut > 0 else MAX_QUERY_CHARS]
        notes.append(f"the query was cut to its first {len(text)} characters")
    return text


def _segments(text: str) -> list[tuple[bool, str]]:
    """Split into ``(quoted, part)`` pieces; an unmatched final quote runs to
    the end (``title:"sparse matrix``: a closing quote forgotten), or is
    dropped when nothing follows it."""
    pieces = text.split('"')
    if len(pieces) % 2 == 0 and not pieces[-1].strip():  # a final quote with nothing after it
        pieces[-2:] = [pieces[-2]]
    return [(i % 2 == 1, piece) for i, piece in enumerate(pieces)]


def _balance_parentheses(text: str) -> str:
    """Drop ``)`` without an opener and ``(`` never closed (``title:(gpu`` is
    ``title:gpu``: the field keeps its first word)."""
    out: list[str] = []
    open_at: list[int] = []
    for ch in text:
        if ch == "(":
            open_at.append(len(out))
        elif ch == ")":
            if not open_at:
                out.append(" ")
                continue
            open_at.pop()
        out.append(ch)
    for index in open_at:
        out[index] = "" if index and out[index - 1] == ":" else " "
    return "".join(out)


def _rewrite_fields(part: str, strict: bool = True) -> str:
    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        canonical = FIELD_ALIASES.get(name.lower())
        if canonical:
            return canonical + ":"
        if strict and name.islower() and name.isalpha():
            raise QueryError(f"unknown field '{name}:' (fields are {KNOWN_FIELDS})")
        return name + " "  # mixed case, digits, or prose: text glued to a colon

    empty = next(
        (
            m.group(1)
            for m in _EMPTY_FIELD.finditer(part)
            if FIELD_ALIASES.get(m.group(1).lower()) or m.group(1).lower() in _FILTER_NAMES
        ),
        None,
    )
    if empty:
        example = {
            "year": "2023",
            "id": "2101.00001",
            "categories": "cs.DC",
            "authors": "Qian",
            "doi": "10.1103/PhysRevB.76.125117",
            "date": "2025-03..2025-06",
        }
        value = example.get(FIELD_ALIASES.get(empty.lower()) or _FILTER_NAMES[empty.lower()], "gpu")
        raise QueryError(f"'{empty}:' has no value (write e.g. {empty}:{value})")
    return _FIELD.sub(replace, part)


def _rewrite_operators(part: str) -> str:
    """``-word`` → ``NOT word``, ``+word`` → ``word``; lone signs and dangling operators go."""
    part = re.sub(r"(?:(?<=\s)|^)-(?=[\w(\"])", "NOT ", part)
    part = re.sub(r"(?:(?<=\s)|^)\+(?=[\w(\"])", "", part)
    part = _JOINED_BY_MARKS.sub(lambda m: f'"{m.group(1)}"', part)
    tokens = part.split(" ")
    kept: list[str] = []
    for token in tokens:
        if token in ("-", "+", "&&", "||", "!"):
            continue
        kept.append(token)
    return " ".join(kept)


def _check_wildcards(part: str) -> None:
    for word in _WILDCARD_WORD.findall(part):
        value = word.split(":", 1)[1] if ":" in word else word
        head = value.split("*", 1)[0]
        if len(head) < MIN_PREFIX:
            raise QueryError(
                f"'{word}': a wildcard needs at least {MIN_PREFIX} letters before it"
                " (a leading or bare wildcard would match almost everything)"
            )


def _check_fuzzy(part: str, strict: bool) -> None:
    """Refuse a ``~`` in a keyword query that is not a fuzzy word ``word~``,
    ``word~0``, ``word~1`` or ``word~2`` of at least :data:`MIN_FUZZY` letters
    (in longer, pasted text ``Lean~4`` is TeX's tie: text, as it always was);
    a number made fuzzy (``2023~1``) says that numbers never are.

    Raises:
        QueryError: naming the token and how to write it.
    """
    if not strict or "~" not in part:
        return
    for match in _FUZZY_NUMBER.finditer(part):
        if match.group("number") not in ("0", "1", "2"):
            raise QueryError(
                f"'{match.group()}': the edit distance of a fuzzy word must be 0, 1 or 2 "
                f"(write e.g. {match.group('word')}~2)"
            )
    for token in part.split():
        if "~" not in token or "://" in token:
            continue
        token = token.strip("()")
        word = token.lstrip("+-!")
        word = word.split(":", 1)[1].lstrip("(") if _FIELD.match(word) else word  # title:(memroy~2 gpu)
        fuzzy = syntax.FUZZY.fullmatch(word)
        if fuzzy:
            if fuzzy.group("distance") != "0" and len(fuzzy.group("text")) < MIN_FUZZY:
                raise QueryError(
                    f"'{token}': a fuzzy word needs at least {MIN_FUZZY} letters "
                    "(a shorter one would match almost every short word)"
                )
            continue
        stem = word.split("~", 1)[0]
        if "*" in stem or "?" in stem:
            reason = f"a word is either a prefix ({stem.rstrip('*?')}*) or fuzzy ({stem.rstrip('*?')}~1), not both"
        elif stem and stem[0].isnumeric():
            reason = f"numbers, years and identifiers are never fuzzy (search {stem} without the ~)"
        elif not stem or not stem[0].isalpha():
            reason = "a fuzzy word starts with a letter, and the ~ follows it (write e.g. memory~1)"
        else:
            reason = f"a fuzzy word is written {stem}~, {stem}~1 or {stem}~2, with nothing after the number"
        raise QueryError(f"'{token}': {reason}")


def _plain_identifiers(part: str, notes: list[str]) -> str:
    """Drop the ``~N`` of each fuzzy word with a digit that has no word that
    may be fuzzy (:func:`~searchengine.querylang.text.may_be_fuzzy`):
    ``gpt4~1``, ``x86~1``, ``h100~2`` are searched as typed, never as the
    other numbers one edit turns them into; a note says so."""
    if "~" not in part:
        return part

    def replace(match: re.Match[str]) -> str:
        text = match.group("text")
        if match.group("distance") == "0" or not any(ch.isnumeric() for ch in text):
            return match.group()
        if any(may_be_fuzzy(word) for word in word_pattern(text).findall(text)):
            return match.group()  # its words with a digit are searched as typed (the engines' part)
        notes.append(f"'{match.group()}': a word with a digit is never fuzzy; searched as typed")
        return text

    return syntax.FUZZY.sub(replace, part)


def _check_proximity(phrase: str, after: str) -> str:
    """``after`` (the text following the quoted ``phrase``) without a ``~`` or
    ``~0`` that would mean the exact phrase anyway.

    Raises:
        QueryError: a proximity ``"a b"~N`` with N above 0, which is not supported.
    """
    match = _PROXIMITY.match(after)
    if not match:
        return after
    number = match.group("number")
    if number and float(number) > 0:
        raise QueryError(
            f"'\"{phrase.strip()}\"{match.group()}': proximity search is not supported; "
            "without the ~ the quotes find the exact phrase, and without the quotes "
            "the words are found anywhere in a paper"
        )
    return after[match.end() :]


def _drop_dangling_operators(text: str) -> str:
    """Remove AND/OR/NOT with nothing to apply to (``OR OR``, a final ``NOT``)."""
    tokens = text.split()
    operators = {"AND", "OR", "NOT", "ANDNOT", "ANDMAYBE"}
    changed = True
    while changed:
        changed = False
        for i, token in enumerate(tokens):
            following = tokens[i + 1] if i + 1 < len(tokens) else None
            binary = token in operators - {"NOT"}
            if token in operators and (
                following is None
                or following in operators - {"NOT"}
                or following == ")"
                or (binary and (i == 0 or tokens[i - 1] in operators or tokens[i - 1] == "("))
            ):
                del tokens[i]
                changed = True
                break
    return " ".join(tokens)


def _plain_prefixes(part: str, seen: list[int], notes: list[str]) -> str:
    """Drop the ``*`` of the wildcard words after the first :data:`MAX_PREFIXES` of the query.

    ``seen`` holds the count of wildcard words met so far (shared across parts).
    """

    def replace(match: re.Match[str]) -> str:
        seen[0] += 1
        if seen[0] <= MAX_PREFIXES:
            return match.group()
        if seen[0] == MAX_PREFIXES + 1:
            notes.append(f"only the first {MAX_PREFIXES} prefixes were expanded; the others were searched as words")
        return match.group().replace("*", "")

    return _WILDCARD_WORD.sub(replace, part)


def prepare(text: str, notes: list[str]) -> str:
    """Repair and normalise raw query text into the syntax :mod:`~searchengine.querylang.syntax` reads.

    Notes about repairs are appended to ``notes``.

    Raises:
        QueryError: an unknown field name, a field without a value, a
            leading/bare wildcard, a fuzzy word's distance above 2 (in a
            keyword query) or a phrase's proximity (``"a b"~3``).
    """
    text = clean(text, notes)
    segments = _segments(text)
    # Pasted prose (more words than a keyword query) uses colons as prose
    # does: an unknown "word:" there is text, not a mistyped field.
    strict = len(query_words(" ".join(part for quoted, part in segments if not quoted))) <= ALL_TERMS_UP_TO
    out = []
    field = ""  # a field name written right before a quoted phrase: title:"..."
    phrases, prefixes = 0, [0]
    for number, (quoted, part) in enumerate(segments):
        if quoted:
            if part.strip():
                phrases += 1
                if phrases <= MAX_PHRASES:
                    out.append(f'{field}"{part.strip()}"')
                else:
                    if phrases == MAX_PHRASES + 1:
                        notes.append(
                            f"only the first {MAX_PHRASES} quoted phrases were searched as phrases; the others as words"
                        )
                    out.append(" ".join(word_pattern(part).findall(part)))
            field = ""
            continue
        if number and segments[number - 1][1].strip():  # text right after a quoted phrase
            part = _check_proximity(segments[number - 1][1], part)
        if number + 1 < len(segments):
            before = _FIELD_BEFORE_PHRASE.search(part) or _SIGNED_FIELD_BEFORE_PHRASE.search(part)
            if before and FIELD_ALIASES.get(before.group(1).lower()):
                field, part = FIELD_ALIASES[before.group(1).lower()] + ":", part[: before.start(1)]
            # A sign right before a quote belongs to the phrase: -"gpu memory" excludes it.
            sign = _SIGN_BEFORE_PHRASE.search(part)
            if sign:
                part = part[: sign.start()] + (" NOT" if sign.group(1) == "-" else "")
        part = _balance_parentheses(part)
        part = _rewrite_fields(part, strict)
        _check_wildcards(part)
        _check_fuzzy(part, strict)
        part = _plain_prefixes(part, prefixes, notes)
        out.append(_plain_identifiers(_rewrite_operators(part), notes))  # once +gpt4~1 is gpt4~1
    return _drop_dangling_operators(" ".join(p for p in out if p.strip()))


def query_words(text: str) -> list[str]:
    """Words of the query outside quotes, operators and fields (for relaxing);
    a fuzzy word with its ``~N`` is one word."""
    plain = _FIELD_GROUP.sub(" ", text)
    plain = re.sub(r'\b\w+:"[^"]*"|"[^"]*"|\b\w+:\S+|\bNOT\s+\S+|(?<!\S)-\S+', " ", plain)
    words = []
    for piece in plain.split():
        if syntax.FUZZY.fullmatch(piece):
            words.append(piece)
        else:
            words.extend(w for w in word_pattern(piece).findall(piece) if w not in _OPERATOR_WORDS)
    return words


def drop_parentheses(text: str) -> str:
    """``text`` without its parentheses, but those of a field's group (``title:(graph neural)``)."""
    out: list[str] = []
    kept: list[bool] = []  # for each open parenthesis: whether it is kept
    for i, ch in enumerate(text):
        if ch == "(":
            keep = i > 0 and text[i - 1] == ":"
            kept.append(keep)
            out.append(ch if keep else " ")
        elif ch == ")":
            out.append(ch if kept and kept.pop() else " ")
        else:
            out.append(ch)
    return " ".join("".join(out).split())
