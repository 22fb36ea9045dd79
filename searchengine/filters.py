"""Filters on the facets (year, author, category, ...): one meaning for every front end.

The command-line options (``--year 2023-2025``), the query syntax
(``year:>=2023``) and the web parameters all turn their text into the same
:class:`Filters` object, which each engine turns into its own filter (the
embedded engine: a query over the terms that :func:`author_keys` and
:func:`category_keys` put into the index).

Semantics:

* **year** -- ``2023`` (one year), ``2023-2025`` (closed range), ``2023-`` and
  ``>=2023`` (from), ``-2020`` and ``<=2020`` (up to), ``>2022``, ``<2021``.
  A document without a year never matches a year filter.
* **author** -- case- and accent-insensitive, following the conventions of
  NASA ADS's author search. ``First Last`` and ``Last, First`` mean the
  same person; an initial (``Qian, D.`` or ``D. Qian``) matches every full
  first name with that initial; a full first name (``Tomas Okafor``)
  matches that first name and records that give only its initial
  (``T. Okafor``), never another first name (``Teresa Okafor``); a surname
  alone (``Qian``) matches every author with that surname. A name always
  has to agree on the surname, so it never matches someone who only shares
  a first name. Surnames with particles (``van der Holt Brink``,
  ``Holt Brink, J. van der``) are compared without spaces or hyphens;
  German umlauts meet both their spellings (``Müller``: ``muller``,
  ``mueller``). ``^Name`` (``^Qian, D``) is a first-author filter; arXiv's
  ``Qian_D`` (surname, underscore, initials) means ``Qian, D``. The rules
  are :func:`author_keys` (the index side) and :func:`parse_author` (the
  filter side).
* **category** -- an exact code (``cs.DC``, case-insensitive) or an archive
  (``cs`` or ``cs.*``: every ``cs.XX``); with ``primary_only`` only a
  document's first (primary) category is considered.
* **keyword facets** (``kind="keyword"`` in :data:`searchengine.facets.FACETS`)
  -- the value as a whole, in any letter case and spacing
  (:class:`KeywordFilter`).
* **date** -- a range of submitted days, both ends inclusive
  (:class:`searchengine.dates.DateFilter`: ``--since 2025-03``, ``--until
  2025-06-30``, ``date:2025-03..2025-06``). Unlike the other filters, date
  ranges combine with AND (``--since`` and ``--until`` narrow each other); a
  document without a submitted day (a year only, or nothing) never matches.
* Several values of one filter combine with OR; different filters with AND.

Malformed values raise :class:`~searchengine.errors.QueryError` naming the
value: a filter never silently disappears.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from searchengine.analysis.folding import transliterated
from searchengine.dates import DateFilter, parse_range
from searchengine.errors import QueryError
from searchengine.facets import FACETS, HISTOGRAM, Facet
from searchengine.facets import facet as facet_spec

# Index term prefixes: a primary-category key starts with this mark.
PRIMARY_MARK = "^"
# Archive keys end with this suffix (``cs.*``), as users write them.
ARCHIVE_SUFFIX = ".*"
# Author keys join surname and given name with this (never inside a name).
KEY_JOIN = "/"
# An author key ending in this: the record gives only the initial ("okafor/t.").
INITIAL_ONLY = "."
# The first author's keys again, marked like the primary category ("^qian/d").
FIRST_MARK = PRIMARY_MARK

_YEAR = r"(\d{4})"
_YEAR_FORMS = (
    (re.compile(rf"{_YEAR}"), lambda a: (a, a)),
    (re.compile(rf"{_YEAR}\s*[-–]\s*{_YEAR}"), lambda a, b: (a, b)),
    (re.compile(rf"{_YEAR}\s*[-–]"), lambda a: (a, None)),
    (re.compile(rf"[-–]\s*{_YEAR}"), lambda b: (None, b)),
    (re.compile(rf">=\s*{_YEAR}"), lambda a: (a, None)),
    (re.compile(rf">\s*{_YEAR}"), lambda a: (a + 1, None)),
    (re.compile(rf"<=\s*{_YEAR}"), lambda b: (None, b)),
    (re.compile(rf"<\s*{_YEAR}"), lambda b: (None, b - 1)),
    (re.compile(rf"=\s*{_YEAR}"), lambda a: (a, a)),
)
_CATEGORY = re.compile(r"[a-z][a-z0-9-]*(?:\.[a-z0-9-]+)*(?:\.\*)?")
_NAME_JUNK = re.compile(r"[^\w\s-]+")
# Generational suffixes written after the surname ("Guy L. Steele Jr.").
_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv"})
# Surname particles (Dutch, German, French, Italian, Spanish, Portuguese,
# Scandinavian, Arabic); "van der Holt Brink" is one surname.
_PARTICLES = frozenset(
    {
        "van",
        "von",
        "der",
        "den",
        "dem",
        "de",
        "del",
        "della",
        "dei",
        "degli",
        "des",
        "di",
        "da",
        "das",
        "dos",
        "do",
        "du",
        "le",
        "la",
        "lo",
        "ten",
        "ter",
        "te",
        "op",
        "zu",
        "zum",
        "zur",
        "af",
        "av",
        "al",
        "el",
    }
)
# Letters that Unicode decomposition leaves whole, by their plain letters.
_PLAIN_LETTERS = str.maketrans(
    {
        "ø": "o",
        "Ø": "O",
        "æ": "ae",
        "Æ": "Ae",
        "œ": "oe",
        "Œ": "Oe",
        "ł": "l",
        "Ł": "L",
        "đ": "d",
        "Đ": "D",
        "ð": "d",
        "Ð": "D",
        "þ": "th",
        "Þ": "Th",
        "ı": "i",
    }
)
# arXiv's author form: surname words and initials joined by underscores ("del_maestro_a").
_ARXIV_NAME = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*(?:_[^\W_]+(?:[-'][^\W_]+)*)+")


@dataclass(frozen=True)
class YearFilter:
    """Years ``low..high`` inclusive; ``None`` leaves that end open.

    ``text`` is the value as written, for messages.
    """

    low: int | None
    high: int | None
    text: str = ""

    def matches(self, year: int | None) -> bool:
        """True when ``year`` lies in the range (never for an unknown year)."""
        if year is None:
            return False
        return (self.low is None or year >= self.low) and (self.high is None or year <= self.high)


@dataclass(frozen=True)
class AuthorFilter:
    """One author name to match: a document matches when it holds any of ``keys``.

    ``keys`` are index terms (:func:`author_keys`), ``first`` says they are
    first-author keys, ``text`` is the value as written, for messages.
    """

    keys: tuple[str, ...]
    text: str = ""
    first: bool = False

    def matches(self, name: str) -> bool:
        """True when the author ``name`` (as stored in a record) is this author.

        A first-author filter matches the name itself (a facet value knows no
        position).
        """
        held = set(author_keys([name]))
        return any(key in held for key in self.keys)


@dataclass(frozen=True)
class CategoryFilter:
    """A category code (``cs.dc``) or archive (``cs.*``), lower-cased."""

    key: str
    text: str = ""

    def matches(self, code: str) -> bool:
        """True when the category ``code`` is this category or in this archive."""
        return self.key in _category_terms(code)


@dataclass(frozen=True)
class KeywordFilter:
    """One value of a ``keyword`` facet (:data:`searchengine.facets.KINDS`):
    a value matches when it is the same text in any letter case and spacing.

    ``key`` is the value folded (:func:`keyword_key`), ``text`` the value as
    written, for messages.
    """

    key: str
    text: str = ""

    def matches(self, value: str) -> bool:
        """True when the facet value ``value`` (as stored in a record) is this value."""
        return keyword_key(value) == self.key


def keyword_key(value: str) -> str:
    """A ``keyword`` facet value as filters compare it: case-folded, spaces collapsed
    (``"Phys.  Rev. D"`` → ``"phys. rev. d"``)."""
    return " ".join(value.split()).casefold()


#: A filter value of any facet kind.
FacetFilter = YearFilter | AuthorFilter | CategoryFilter | KeywordFilter


# The facets a Filters' repr always shows (the others only when chosen).
_ALWAYS_SHOWN = ("years", "authors", "categories")


@dataclass(frozen=True, init=False)
class Filters:
    """The filters of one search: chosen values per declared facet
    (:data:`searchengine.facets.FACETS`), and date ranges.

    Made as ``Filters(years=..., authors=..., categories=..., primary_only=...,
    dates=...)``: one keyword per facet's ``filter_field``, each a tuple of
    parsed values; an empty tuple means "no filter on this facet". Values
    within one facet combine with OR, the facets with AND.

    Raises:
        TypeError: (constructor) a keyword is not a facet's filter field.
    """

    chosen: tuple[tuple[str, tuple[FacetFilter, ...]], ...]
    primary_only: bool
    # Date ranges AND together (see the module docstring).
    dates: tuple[DateFilter, ...]

    def __init__(
        self, *, primary_only: bool = False, dates: tuple[DateFilter, ...] = (), **chosen: tuple[FacetFilter, ...]
    ) -> None:
        unknown = set(chosen) - {f.filter_field for f in FACETS}
        if unknown:
            raise TypeError(f"Filters got unexpected keyword arguments {', '.join(sorted(unknown))}")
        values = tuple((f.filter_field, tuple(chosen.get(f.filter_field, ()))) for f in FACETS)
        object.__setattr__(self, "chosen", values)
        object.__setattr__(self, "primary_only", primary_only)
        object.__setattr__(self, "dates", tuple(dates))

    def values(self, facet: str) -> tuple[Any, ...]:
        """The chosen values of ``facet`` (a name in :data:`searchengine.facets.FACETS`):
        the :class:`FacetFilter` type its kind parses to."""
        field = facet_spec(facet).filter_field
        return next(values for name, values in self.chosen if name == field)

    # The attributes of the first facets, as code and tests have always read them.
    @property
    def years(self) -> tuple[YearFilter, ...]:
        """The year filters."""
        return self.values("year")

    @property
    def authors(self) -> tuple[AuthorFilter, ...]:
        """The author filters."""
        return self.values("author")

    @property
    def categories(self) -> tuple[CategoryFilter, ...]:
        """The category filters."""
        return self.values("category")

    def __bool__(self) -> bool:
        """True when at least one filter restricts the documents."""
        return any(values for _, values in self.chosen) or bool(self.dates)

    def __repr__(self) -> str:
        """The facets' values and the flag: the first facets' always (filters
        print as they always did: recorded query translations hold them),
        another facet's and ``dates`` only when there are some."""
        shown = ", ".join(f"{name}={values!r}" for name, values in self.chosen if values or name in _ALWAYS_SHOWN)
        shown = f"Filters({shown}, primary_only={self.primary_only!r}"
        return shown + (f", dates={self.dates!r})" if self.dates else ")")

    def __add__(self, other: Filters) -> Filters:
        """Both sets of filters (values of one facet OR, facets AND)."""
        ours, theirs = dict(self.chosen), dict(other.chosen)
        return Filters(
            primary_only=self.primary_only or other.primary_only,
            dates=self.dates + other.dates,
            **{name: ours[name] + theirs[name] for name in ours},
        )

    def _replaced(self, field: str, values: tuple[Any, ...]) -> Filters:
        chosen = dict(self.chosen)
        if field == "dates":
            return Filters(primary_only=self.primary_only, dates=values, **chosen)
        chosen[field] = values
        return Filters(primary_only=self.primary_only, dates=self.dates, **chosen)

    def without(self, facet: str) -> Filters:
        """These filters less those on ``facet`` (a name in :data:`searchengine.facets.FACETS`, or ``"date"``)."""
        return self._replaced("dates" if facet == HISTOGRAM else facet_spec(facet).filter_field, ())

    def for_facet(self, facet: str) -> Filters:
        """The filters ``facet`` is counted under.

        Every filter but the facet's own, so the values not chosen yet stay
        visible as choices to add (OR), except for authors (an ``author``
        facet): under an author filter the author facet counts the chosen
        authors' co-authors, as a researcher looking at one author's papers
        wants them (the chosen names are pinned on top by
        :func:`searchengine.facets.pin_selected`).
        """
        return self if facet_spec(facet).kind == "author" and self.values(facet) else self.without(facet)

    def selects(self, facet: str, value: Any) -> bool:
        """True when a facet value is among those the filters ask for.

        ``facet`` is a name in :data:`searchengine.facets.FACETS`; an unknown
        value (``None``) is never selected.
        """
        if value is None:
            return False
        return any(f.matches(value) for f in self.values(facet))


def parse_year(text: str | int) -> YearFilter:
    """Parse one year filter value (see the module docstring for the forms).

    Raises:
        QueryError: the value is not one of the forms, or the range is reversed.
    """
    raw = str(text).strip()
    for pattern, bounds in _YEAR_FORMS:
        match = pattern.fullmatch(raw)
        if match:
            low, high = bounds(*(int(g) for g in match.groups()))
            if low is not None and high is not None and low > high:
                raise QueryError(f"year filter {raw!r} is reversed (did you mean {high}-{low}?)")
            return YearFilter(low, high, raw)
    raise QueryError(f"year filter {raw!r} is not a year or a range (use 2023, 2023-2025, 2023-, -2020 or >=2023)")


def fold_name(text: str) -> list[str]:
    """Name words folded for comparison: no accents, case or punctuation.

    ``"Moreno D'Incà"`` → ``["moreno", "dinca"]``; ``"J.-P. Serre"`` →
    ``["j", "p", "serre"]`` (dots separate initials; hyphens join name parts).
    """
    return [word.casefold() for word in _name_words(text)]


def _name_words(text: str) -> list[str]:
    """:func:`fold_name` keeping the case (``"van"`` tells a particle from ``"Van"``)."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_PLAIN_LETTERS).replace(".", " "))
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    words = _NAME_JUNK.sub("", plain.replace(",", " ")).split()
    return [w for w in (word.strip("-") for word in words) if w]


def _spellings(text: str) -> list[str]:
    """``text``, and its transliterated spelling when it has an umlaut: ``Müller`` → ``[Müller, Mueller]``."""
    other = transliterated(text)
    return [text] if other is None else [text, other]


def _surname_key(words: list[str]) -> str:
    """Surname words as one key, without spaces or hyphens: ``van der Holt-Brink`` → ``vanderholtbrink``."""
    return "".join(words).replace("-", "")


def _without_suffixes(words: list[str]) -> list[str]:
    words = list(words)
    while len(words) > 2 and words[-1].casefold() in _SUFFIXES:
        words.pop()
    return words


def _split_initials(words: list[str], name: str) -> list[str]:
    """Given names with their initials run together split into initials
    (``TJ`` → ``T``, ``J``: ``Okafor, TJ`` is ``Okafor, T. J.``): a word of two
    or three capitals, in a name not written wholly in capitals."""
    if name.isupper():
        return words
    return [
        part
        for word in words
        for part in (list(word) if 2 <= len(word) <= 3 and word.isalpha() and word.isupper() else [word])
    ]


def _particle_run_ends(words: list[str], start: int) -> int:
    """The position after the particles starting at ``start`` (``start`` when none)."""
    end = start
    while end < len(words) and words[end].casefold() in _PARTICLES:
        end += 1
    return end


def _readings(name: str, *, query: bool) -> list[tuple[list[str], list[str]]]:
    """The ``(surname words, given names)`` a name can mean, folded.

    Initials run together are initials (``Okafor, TJ``: see
    :func:`_split_initials`). ``Last, First`` has one reading; particles ending the given names belong
    to the surname (``Holt Brink, J. van der`` → ``van der holt brink``).
    ``First Last`` has its last word as surname, or, from a particle on,
    the rest (``J. van der Holt Brink``, ``Ludwig van Beethoven``) when a
    non-particle word follows. A particle leading the whole name is
    ambiguous (``Van Nguyen``, ``Le Chen``, ``van Dijk``): it starts the
    surname when another particle follows (``Van der Berg``) or when it is
    written in lower case in a name that has capitals (``van Dijk``); else a
    record's name reads it as a given name, and a query (``le chen``, typed
    in any case) means both readings.
    """
    if "," in name:
        last, _, first = name.partition(",")
        surname = fold_name(last)
        given = [word.casefold() for word in _split_initials(_name_words(first), name)]
        start = len(given)
        while start > 0 and given[start - 1] in _PARTICLES:
            start -= 1
        return [(given[start:] + surname, given[:start])] if surname else []
    cased = _without_suffixes(_name_words(name))
    cased = _split_initials(cased[:-1], name) + cased[-1:]
    words = [w.casefold() for w in cased]
    if not words:
        return []
    plain = (words[-1:], words[:-1])
    for start in range(len(words) - 1):
        if words[start] not in _PARTICLES or _particle_run_ends(words, start) >= len(words):
            continue
        if start > 0:
            return [(words[start:], words[:start])]
        surname_only = words[1] in _PARTICLES or (cased[0].islower() and name != name.lower())
        if surname_only:
            return [(words, [])]
        if query:
            return [(words, []), plain]
        break
    return [plain]


def author_keys(names: Iterable[str]) -> list[str]:
    """The index terms under which the author ``names`` (in record order) can be found.

    Each name gives its surname (``qian``), surname with first initial
    (``qian/d``) and surname with first given name (``qian/depei``), or,
    when the record gives only an initial, the initial marked
    :data:`INITIAL_ONLY` (``okafor/t.``) instead. A surname with leading
    particles is keyed with and without them (``vanderholtbrink``,
    ``holtbrink``); a name with an umlaut under both spellings (``muller``,
    ``mueller``). The first name's keys come again marked
    :data:`FIRST_MARK` (``^qian/d``). Shapes: list of str, each key at most
    once, in first-seen order.
    """
    keys: dict[str, None] = {}
    for position, name in enumerate(names):
        terms = name_keys(name)
        keys.update(dict.fromkeys(terms))
        if position == 0:
            keys.update((FIRST_MARK + term, None) for term in terms)
    return list(keys)


def name_keys(name: str) -> list[str]:
    """The keys of one author name, unmarked: :func:`author_keys` of a name
    that is not the first (``["qian", "qian/d", "qian/depei"]``); empty for
    a name without letters. Each key at most once, in first-seen order."""
    terms: dict[str, None] = {}
    for spelling in _spellings(name):
        for surname, given in _readings(spelling, query=False):
            bare = surname[_particle_run_ends(surname, 0) :] if len(surname) > 1 else surname
            for key in dict.fromkeys((_surname_key(surname), _surname_key(bare or surname))):
                terms[key] = None
                if given:
                    first = given[0]
                    terms[key + KEY_JOIN + first[0]] = None
                    terms[key + KEY_JOIN + first + (INITIAL_ONLY if len(first) == 1 else "")] = None
    return list(terms)


def _arxiv_name(text: str) -> str:
    """arXiv's ``Qian_D`` / ``del_maestro_a`` as ``Qian, D`` / ``del maestro, a``; other text unchanged.

    Trailing one-letter parts are initials, the rest the surname.
    """
    if not _ARXIV_NAME.fullmatch(text):
        return text
    parts = text.split("_")
    end = len(parts)
    while end > 1 and len(parts[end - 1]) == 1:
        end -= 1
    return " ".join(parts[:end]) + ", " + " ".join(parts[end:])


def parse_author(text: str) -> AuthorFilter:
    """Parse one author filter value.

    Forms: ``Depei Qian``, ``Qian, Depei``, ``Qian, D.``, ``D. Qian``,
    ``Qian``, arXiv's ``Qian_D``, and any of them after ``^`` for the first
    author (ADS's ``^Qian, D``). The filter's keys are the index terms of
    :func:`author_keys` a matching record holds: an initial looks for
    ``qian/d``; a full first name for ``okafor/tomas`` and ``okafor/t.``
    (records giving only the initial); every spelling and reading of the
    name is looked for (see :func:`_readings`).

    Raises:
        QueryError: the value holds no name.
    """
    raw = " ".join(str(text).split())
    body = raw[1:].strip() if raw.startswith(FIRST_MARK) else raw
    first_author = body != raw
    keys: dict[str, None] = {}
    for spelling in _spellings(_arxiv_name(body)):
        for surname, given in _readings(spelling, query=True):
            key = _surname_key(surname)
            if not given:
                keys[key] = None
                continue
            first = given[0]
            if len(first) == 1:
                keys[key + KEY_JOIN + first] = None
            else:
                keys[key + KEY_JOIN + first] = None
                keys[key + KEY_JOIN + first[0] + INITIAL_ONLY] = None
    if not keys:
        raise QueryError(f"author filter {raw!r} holds no name")
    mark = FIRST_MARK if first_author else ""
    return AuthorFilter(tuple(mark + key for key in keys), raw, first_author)


def parse_first_author(text: str) -> AuthorFilter:
    """Parse one first-author filter value (``Qian, D``): :func:`parse_author` of ``^Qian, D``.

    Raises:
        QueryError: the value holds no name.
    """
    raw = " ".join(str(text).split())
    return parse_author(raw if raw.startswith(FIRST_MARK) else FIRST_MARK + raw)


def _normal_code(code: str) -> str:
    return "".join(code.split()).lower()


def _category_terms(code: str) -> tuple[str, str]:
    """The code itself and its archive key: ``cs.DC`` → ``("cs.dc", "cs.*")``."""
    normal = _normal_code(code)
    return normal, normal.split(".", 1)[0] + ARCHIVE_SUFFIX


def category_keys(categories: list[str]) -> list[str]:
    """The index terms for a document's categories (primary first).

    Every code and archive (``cs.dc``, ``cs.*``), and the same marked
    :data:`PRIMARY_MARK` for the first category (``^cs.dc``, ``^cs.*``).
    """
    keys: dict[str, None] = {}
    for position, code in enumerate(categories):
        if not code.strip():
            continue
        for term in _category_terms(code):
            keys[term] = None
            if position == 0:
                keys[PRIMARY_MARK + term] = None
    return list(keys)


def parse_category(text: str) -> CategoryFilter:
    """Parse one category filter value: ``cs.DC`` (code) or ``cs`` / ``cs.*`` (archive).

    A value without a dot names an archive (``hep-th`` is both an archive and
    its only code, so it matches either way).

    Raises:
        QueryError: the value is not a category code.
    """
    raw = str(text).strip()
    normal = raw.lower()
    if not _CATEGORY.fullmatch(normal):
        raise QueryError(f"category filter {raw!r} is not a category code (like cs.DC, cs or cs.*)")
    if "." not in normal:
        normal += ARCHIVE_SUFFIX
    return CategoryFilter(normal, raw)


def parse_keyword(text: str, facet: str = "keyword") -> KeywordFilter:
    """Parse one value of a ``keyword`` facet's filter (``facet`` names it in messages).

    Raises:
        QueryError: the value is empty.
    """
    raw = " ".join(str(text).split())
    if not raw:
        raise QueryError(f"{facet} filter {text!r} is empty")
    return KeywordFilter(keyword_key(raw), raw)


# The parser and the parsed type of each facet kind (searchengine.facets.KINDS).
_KIND_PARSERS: dict[str, tuple[type, Callable[[Any], FacetFilter]]] = {
    "year": (YearFilter, parse_year),
    "author": (AuthorFilter, parse_author),
    "category": (CategoryFilter, parse_category),
}


def parse_filter(facet: str, text: str | int) -> FacetFilter:
    """Parse one filter value of ``facet`` (a name in :data:`searchengine.facets.FACETS`)
    as its kind reads it (``parse_filter("year", "2023-")`` is :func:`parse_year`).

    Raises:
        QueryError: the value is malformed, or ``facet`` is no facet.
    """
    kind = facet_spec(facet).kind
    if kind == "keyword":
        return parse_keyword(str(text), facet)
    return _KIND_PARSERS[kind][1](text)


def _as_tuple(values: Any) -> tuple[Any, ...]:
    if values is None:
        return ()
    if isinstance(values, (str, int)):
        return (values,)
    return tuple(values)


def build_filters(
    year: Any = (), author: Any = (), category: Any = (), primary_only: bool = False, date: Any = (), **more: Any
) -> Filters:
    """Build :class:`Filters` from option values.

    ``year``, ``author``, ``category`` and, by name, any other facet of
    :data:`searchengine.facets.FACETS` (``journal=...``) take one value or an
    iterable of values, given as text (as typed by a user) or already parsed
    (:class:`YearFilter`, ...). A year may also be an ``int``; a date is a
    ``date:`` value (:func:`searchengine.dates.parse_range`) or a
    :class:`DateFilter`.

    Raises:
        QueryError: a value is malformed; the message quotes it.
        TypeError: a keyword is not a facet's name.
    """
    given = {"year": year, "author": author, "category": category, **more}
    unknown = set(given) - {f.name for f in FACETS}
    if unknown:
        raise TypeError(f"build_filters got unexpected keyword arguments {', '.join(sorted(unknown))}")

    def parsed(facet: Facet, values: Any) -> tuple[Any, ...]:
        kind = KeywordFilter if facet.kind == "keyword" else _KIND_PARSERS[facet.kind][0]
        return tuple(v if isinstance(v, kind) else parse_filter(facet.name, v) for v in _as_tuple(values))

    return Filters(
        primary_only=bool(primary_only),
        dates=tuple(v if isinstance(v, DateFilter) else parse_range(v) for v in _as_tuple(date)),
        **{f.filter_field: parsed(f, given.get(f.name, ())) for f in FACETS},
    )
