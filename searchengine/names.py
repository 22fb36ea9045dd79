"""Queries that name an author: their papers first, as NASA ADS answers them.

A researcher types a colleague's surname (``Vedaldi``) or full name
(``Yann LeCun``, ``LeCun, Y.``) into the search box. The words alone rank
papers that *mention* the name (``Yann LeCun argues ...``) with those the
person wrote. When the whole query reads as an author name that papers of
the index have (:func:`reading`), the search pipeline lists that author's
papers first, newest first, then the other matches of the words, and says
so (:meth:`AuthorReading.note`); the author filter it applied is offered.

When a query is read as a name (engine-free; :mod:`searchengine.filters`
gives what a name matches):

* one to :data:`MAX_NAME_WORDS` plain words (no operator, field, phrase,
  prefix or fuzzy word), sorted by relevance, with no author filter chosen;
* the words, read as an author filter (``First Last``, ``Last, First``,
  ``Last, F.``, a surname alone, accents folded), match papers within the
  search's filters;
* a single word (a surname alone) has two letters or more, and has to be more a name than a word:
  the titles and abstracts holding it are at most :data:`NAME_SHARE` times
  the papers of authors of that surname (``Hinton`` is read as a name,
  ``deep`` is not, though a few authors are called Deep).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from searchengine.engines.base import Lexicon, Matches, Searcher
    from searchengine.filters import AuthorFilter, Filters
    from searchengine.querylang import ParsedQuery

# Words of a query read as a name, at most (given names, particles, surname).
MAX_NAME_WORDS = 4
# A surname typed alone is a name when titles and abstracts hold it at most
# this many times as often as authors of that surname wrote papers.
NAME_SHARE = 10
# Names listed for a surname that several people share, at most.
MAX_NAMES = 8
# Plain name words: letters, apostrophes, hyphens, dots of initials, a comma.
_OPERATORS = {"AND", "OR", "NOT", "ANDNOT", "ANDMAYBE"}
_NAME_TEXT = re.compile(r"[^\W\d_][\w'’.\-]*(?:,?\s+[^\W\d_][\w'’.\-]*){0,5},?")


@dataclass
class AuthorReading:
    """A query read as an author name.

    Attributes:
        text: the name as typed (``Andrea Vedaldi``).
        filter: the :class:`~searchengine.filters.AuthorFilter` it reads as.
        matches: the engine's matches of that filter within the search's filters.
        names: ``(name as a record writes it, papers)`` of the people it
            matches, most papers first (several for a shared surname).
        overlap: how many of their papers the query's words match too.
    """

    text: str
    filter: AuthorFilter
    matches: Matches
    names: list[tuple[str, int]] = field(default_factory=list)
    overlap: int = 0

    @property
    def papers(self) -> int:
        """Papers by the author(s), within the search's filters."""
        return self.matches.total

    def note(self) -> str:
        """What the results say: ``also searched as the author Vedaldi, Andrea: ...``."""
        shown = ", ".join(name for name, _ in self.names[:MAX_NAMES]) or self.text
        more = len(self.names) - MAX_NAMES
        people = shown + (f" and {more} more" if more > 0 else "")
        papers = f"{self.papers:,} paper" + ("" if self.papers == 1 else "s")
        return (
            f"also searched as the author {people}: {papers} listed first, newest first "
            f'(only theirs: --author "{self.text}")'
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON form: ``{"query", "filter", "papers", "names": [{"name", "papers"}]}``."""
        return {
            "query": self.text,
            "filter": self.text,
            "papers": self.papers,
            "names": [{"name": name, "papers": count} for name, count in self.names],
        }


def name_filters(text: str, filters: Filters) -> Filters | None:
    """``filters`` with the author filter of the query ``text`` when it may
    read as an author's name (module docstring: the words' shape; whether
    papers bear the name is the searcher's to count), else ``None``."""
    from searchengine.errors import QueryError
    from searchengine.filters import Filters, fold_name, parse_author

    if filters.authors or not text or not _NAME_TEXT.fullmatch(text):
        return None
    words = fold_name(text)
    if not 1 <= len(words) <= MAX_NAME_WORDS or _OPERATORS.intersection(text.split()):
        return None
    if len(words) == 1 and len(words[0]) < 2:  # a letter alone (`e`) names too many people to mean one
        return None
    try:
        wanted = parse_author(text)
    except QueryError:
        return None
    return filters + Filters(authors=(wanted,))


def reading(
    searcher: Searcher[Any],
    text: str,
    parsed: ParsedQuery,
    filters: Filters,
    sort: str | None,
    lexicon: Lexicon | None,
    deadline: float,
) -> AuthorReading | None:
    """The :class:`AuthorReading` of the query ``text`` (filters taken out),
    or ``None`` when it does not read as an author's name (module docstring).

    ``parsed`` is the engine's parse of ``text``, ``filters`` the search's
    :class:`~searchengine.filters.Filters`, ``lexicon`` the engine's word
    lexicon (``frequency(word)``: titles or abstracts holding it) or ``None``.
    """
    from searchengine.filters import fold_name

    if sort not in (None, "relevance") or not parsed.words:
        return None
    alone = name_filters(text, filters)
    if alone is None:
        return None
    wanted = alone.authors[-1]
    words = fold_name(text)
    matches = searcher.match(searcher.parse("", allow_empty=True), alone, deadline, [])
    if not matches.total:
        return None
    if len(words) == 1 and lexicon is not None:
        normal = lexicon.normalise(text)
        if normal is None or lexicon.frequency(normal) > NAME_SHARE * matches.total:
            return None
    counted = searcher.facets(matches, alone, ("author",), 100)["author"].values
    names = [(value.value, value.count) for value in counted if value.value is not None and wanted.matches(value.value)]
    return AuthorReading(text=text, filter=wanted, matches=matches, names=names)
