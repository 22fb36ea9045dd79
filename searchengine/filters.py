"""Filters on year, author and category: one meaning for every front end.

The command-line options (``--year 2023-2025``), the query syntax
(``year:>=2023``) and the web parameters all turn their text into the same
:class:`Filters` object, which each engine turns into its own filter (the
embedded engine: a query over the terms that :func:`author_keys` and
:func:`category_keys` put into the index).

Semantics:

* **year** -- ``2023`` (one year), ``2023-2025`` (closed range), ``2023-`` and
  ``>=2023`` (from), ``-2020`` and ``<=2020`` (up to), ``>2022``, ``<2021``.
  A document without a year never matches a year filter.
* **author** -- case- and accent-insensitive. ``First Last`` and
  ``Last, First`` mean the same person; an initial (``Qian, D.`` or
  ``D. Qian``) matches every full first name with that initial; a surname
  alone (``Qian``) matches every author with that surname. A name always
  has to agree on the surname, so it never matches someone who only shares a
  first name.
* **category** -- an exact code (``cs.DC``, case-insensitive) or an archive
  (``cs`` or ``cs.*``: every ``cs.XX``); with ``primary_only`` only a
  document's first (primary) category is considered.
* Several values of one filter combine with OR; different filters with AND.

Malformed values raise :class:`~searchengine.errors.QueryError` naming the
value: a filter never silently disappears.
"""

from __future__ import annotations

import dataclasses

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from searchengine.errors import QueryError

# Index term prefixes: a primary-category key starts with this mark.
PRIMARY_MARK = "^"
# Archive keys end with this suffix (``cs.*``), as users write them.
ARCHIVE_SUFFIX = ".*"
# Author keys join surname and given name with this (never inside a name).
KEY_JOIN = "/"

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
    """One author name to match; ``key`` is the index term it looks for."""

    key: str
    text: str = ""

    def matches(self, name: str) -> bool:
        """True when the author ``name`` (as stored in a record) is this author."""
        return self.key in author_keys([name])


@dataclass(frozen=True)
class CategoryFilter:
    """A category code (``cs.dc``) or archive (``cs.*``), lower-cased."""

    key: str
    text: str = ""

    def matches(self, code: str) -> bool:
        """True when the category ``code`` is this category or in this archive."""
        return self.key in _category_terms(code)


@dataclass(frozen=True)
class Filters:
    """The filters of one search. Empty tuples mean "no filter on this facet".

    Values within one tuple combine with OR, the tuples with AND.
    """

    years: tuple[YearFilter, ...] = ()
    authors: tuple[AuthorFilter, ...] = ()
    categories: tuple[CategoryFilter, ...] = ()
    primary_only: bool = False

    def __bool__(self) -> bool:
        """True when at least one filter restricts the documents."""
        return bool(self.years or self.authors or self.categories)

    def __add__(self, other: Filters) -> Filters:
        """Both sets of filters (values of one facet OR, facets AND)."""
        return Filters(
            years=self.years + other.years,
            authors=self.authors + other.authors,
            categories=self.categories + other.categories,
            primary_only=self.primary_only or other.primary_only,
        )

    def without(self, facet: str) -> Filters:
        """These filters less those on ``facet`` (``"year"``, ``"author"`` or ``"category"``)."""
        field = {"year": "years", "author": "authors", "category": "categories"}[facet]
        return dataclasses.replace(self, **{field: ()})

    def selects(self, facet: str, value) -> bool:
        """True when a facet value is among those the filters ask for.

        ``facet`` is ``"year"``, ``"author"`` or ``"category"``; an unknown
        value (``None``) is never selected.
        """
        if value is None:
            return False
        chosen = {"year": self.years, "author": self.authors, "category": self.categories}[facet]
        return any(f.matches(value) for f in chosen)


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
    decomposed = unicodedata.normalize("NFKD", text.replace(".", " "))
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()
    words = _NAME_JUNK.sub("", plain.replace(",", " ")).split()
    return [w for w in (word.strip("-") for word in words) if w]


def _name_parts(name: str) -> tuple[str, list[str]]:
    """``(surname, given names)`` of ``Last, First`` or ``First Last``."""
    if "," in name:
        last, _, first = name.partition(",")
        return " ".join(fold_name(last)), fold_name(first)
    words = fold_name(name)
    while len(words) > 2 and words[-1] in _SUFFIXES:
        words.pop()
    if not words:
        return "", []
    return words[-1], words[:-1]


def author_keys(names: Iterable[str]) -> list[str]:
    """The index terms under which the author ``names`` can be found.

    Each name gives its surname (``qian``), surname with first initial
    (``qian/d``) and surname with first given name (``qian/depei``). Shapes:
    list of str, each key at most once, in first-seen order.
    """
    keys: dict[str, None] = {}
    for name in names:
        surname, given = _name_parts(name)
        if not surname:
            continue
        keys[surname] = None
        if given:
            first = given[0]
            keys[surname + KEY_JOIN + first[0]] = None
            keys[surname + KEY_JOIN + first] = None
    return list(keys)


def parse_author(text: str) -> AuthorFilter:
    """Parse one author filter value (``Depei Qian``, ``Qian, Depei``, ``Qian, D.``, ``Qian``).

    Raises:
        QueryError: the value holds no name.
    """
    raw = " ".join(str(text).split())
    surname, given = _name_parts(raw)
    if not surname:
        raise QueryError(f"author filter {raw!r} holds no name")
    if not given:
        return AuthorFilter(surname, raw)
    first = given[0]
    # "D." and "D" are initials; a full first name must match exactly.
    key = surname + KEY_JOIN + (first[0] if len(first) == 1 else first)
    return AuthorFilter(key, raw)


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


def _as_tuple(values) -> tuple:
    if values is None:
        return ()
    if isinstance(values, (str, int)):
        return (values,)
    return tuple(values)


def build_filters(year=(), author=(), category=(), primary_only: bool = False) -> Filters:
    """Build :class:`Filters` from option values.

    Each argument is one value or an iterable of values, given as text (as
    typed by a user) or already parsed (:class:`YearFilter`, ...). A year
    may also be an ``int``.

    Raises:
        QueryError: a value is malformed; the message quotes it.
    """
    def parsed(values, kind, parser):
        return tuple(v if isinstance(v, kind) else parser(v) for v in _as_tuple(values))

    return Filters(
        years=parsed(year, YearFilter, parse_year),
        authors=parsed(author, AuthorFilter, parse_author),
        categories=parsed(category, CategoryFilter, parse_category),
        primary_only=bool(primary_only),
    )
