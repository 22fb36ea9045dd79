"""Facets as data: the facets a search can count (:data:`FACETS`), and the counts it returns.

Engine-free: each :class:`Facet` says what it counts, how its values are
ordered, shown and filtered; the engines (the embedded engine over its facet
columns, :mod:`searchengine.engines.whoosh.columns`; the cluster with
aggregations), the CLI, the web page and its templates read them from here.
Each engine counts and returns these shapes. The
counting rules are the same everywhere: a multi-valued field counts a
document once per value; a document without a value counts in the unknown
bucket (``value=None``), listed last; each facet is counted over the hits of
the query and of every filter but its own, except that an author filter
keeps the author facet to the chosen authors' papers (their co-authors), the
chosen names pinned on top (:func:`pin_selected`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from searchengine.errors import QueryError

#: How a facet's filter values are read and matched (:mod:`searchengine.filters`
#: parses them, each engine matches them):
#:
#: * ``year``: a number range (``2023-2025``) on a numeric facet;
#: * ``author``: a person's name, matched by its name keys (initials, particles,
#:   spellings), and counted under its own filter (the co-authors);
#: * ``category``: an arXiv category code or archive, optionally the primary one only;
#: * ``keyword``: the value itself, in any letter case and spacing.
KINDS = ("year", "author", "category", "keyword")


@dataclass(frozen=True)
class Facet:
    """One facet: what it counts, how its values are ordered, shown and
    filtered, and the search parameter of its filter.

    The engines derive their per-facet storage (embedded columns, cluster
    fields), filter clauses and counts from these declarations, and the
    parameter table (:mod:`searchengine.parameters`) its filter parameters.

    Attributes:
        name: how it is asked for (``facets="year,author"``), and the name of
            its filter: the CLI option (``--year``) and the URL parameter
            (``?year=``).
        label: its heading on the web page.
        record_field: the :class:`~searchengine.records.Record` attribute
            counted (a list counts a document once per value; an empty
            string or ``None`` is no value).
        filter_field: the :class:`~searchengine.filters.Filters` attribute
            (and the web page's parameter field) holding its chosen values.
        kind: how a filter value is read and matched, one of :data:`KINDS`.
        flags: its ``searchengine search`` option names, long first.
        help: the option's ``--help`` text.
        description: the web parameter's OpenAPI description.
        by_value: values listed by value, highest first (years), instead of
            by count, then value.
        numeric: one whole number per record (``None``: unknown).
    """

    name: str
    label: str
    record_field: str
    filter_field: str
    kind: str
    flags: tuple[str, ...]
    help: str
    description: str
    by_value: bool = False
    numeric: bool = False

    def values(self, record: Any) -> list[Any]:
        """The values ``record`` has for this facet: a list (in record order,
        blank strings left out), empty when it has none."""
        value = getattr(record, self.record_field)
        if isinstance(value, (list, tuple)):
            return [v for v in value if not isinstance(v, str) or v.strip()]
        return [] if value is None or value == "" else [value]


#: Facets a search can count, in display order.
FACETS = (
    Facet(
        "year",
        "Year",
        record_field="year",
        filter_field="years",
        kind="year",
        flags=("--year", "-y"),
        help="Only these years: 2023, 2023-2025, 2023-, -2020 (repeat to OR).",
        description="Year or range: 2023, 2023-2025, 2023-, -2020, >=2023 (several: OR); a reversed range is a 400",
        by_value=True,
        numeric=True,
    ),
    Facet(
        "author",
        "Author",
        record_field="authors",
        filter_field="authors",
        kind="author",
        flags=("--author", "-a"),
        help="Only papers by this author: 'Depei Qian', 'Qian, D.', 'Qian' or Qian_D (repeat to OR).",
        description="Author name (First Last, Last, First or arXiv's Last_F), any case and "
        "accents; an initial matches every first name with it, a full first name "
        "also records giving only its initial; ^Name for a first author (several: OR)",
    ),
    Facet(
        "category",
        "Category",
        record_field="categories",
        filter_field="categories",
        kind="category",
        flags=("--category", "-c"),
        help="Only this category (cs.DC) or archive (cs, cs.*) (repeat to OR).",
        description="Category code (cs.DC) or archive (cs, cs.*) (several: OR)",
    ),
    Facet(
        "journal",
        "Journal",
        record_field="journal",
        filter_field="journals",
        kind="keyword",
        flags=("--journal",),
        help="Only papers published in this journal: 'Phys. Rev. D' (any case and spacing; repeat to OR).",
        description="Journal name as its journal reference gives it before the volume (Phys. Rev. D), "
        "any case and spacing (several: OR)",
    ),
)
#: Their names, in display order.
FACET_NAMES = tuple(facet.name for facet in FACETS)
_BY_NAME = {facet.name: facet for facet in FACETS}
#: The name that asks for the date histogram of the hits (with the facets,
#: though it is no list of values: :class:`searchengine.dates.DateHistogram`).
HISTOGRAM = "date"
#: Values listed per facet unless asked otherwise.
DEFAULT_FACET_SIZE = 10
#: Upper bound of values listed per facet.
MAX_FACET_SIZE = 1000


def facet(name: str) -> Facet:
    """The :class:`Facet` named ``name``.

    Raises:
        QueryError: no facet has that name.
    """
    try:
        return _BY_NAME[name]
    except KeyError:
        raise QueryError(f"unknown facet {name!r} (choose from {', '.join(FACET_NAMES)})") from None


def parse_facet_names(spec: str | Iterable[str] | None) -> tuple[str, ...]:
    """Facet names from ``"year,author"`` or a list of names, in the order given
    (:data:`HISTOGRAM`, ``date``, among them asks for the date histogram).

    Raises:
        QueryError: a name is not one of :data:`FACET_NAMES`.
    """
    if spec is None:
        return ()
    parts = spec.split(",") if isinstance(spec, str) else list(spec)
    names: dict[str, None] = {}
    for part in parts:
        name = part.strip().lower()
        if not name:
            continue
        if name not in FACET_NAMES and name != HISTOGRAM:
            raise QueryError(f"unknown facet {part.strip()!r} (choose from {', '.join(FACET_NAMES + (HISTOGRAM,))})")
        names[name] = None
    return tuple(names)


@dataclass
class FacetValue:
    """One facet value with the number of hits that have it."""

    value: Any
    count: int
    selected: bool = False

    def to_dict(self) -> dict[str, Any]:
        """``{"value", "count", "selected"}``, as in the JSON output."""
        return {"value": self.value, "count": self.count, "selected": self.selected}


@dataclass
class FacetCounts:
    """The counts of one facet over all hits.

    Attributes:
        values: the top values (``year`` newest first; ``author`` and
            ``category`` by count, then by value), and last the unknown
            bucket (``value=None``) when some hit has no value.
        remaining: how many other known values have hits but are not listed.
    """

    values: list[FacetValue] = field(default_factory=list)
    remaining: int = 0


#: Values asked beyond the listed ones when the selected values are pinned,
#: so that a chosen name counted below the top values is still found.
PIN_MARGIN = 20


def pin_selected(counts: FacetCounts, size: int) -> FacetCounts:
    """``counts`` with the selected values first, then the others, ``size`` values in all.

    Every selected value is kept (even beyond ``size``); the others keep
    their order and fill the rest; ``remaining`` grows by the values cut,
    and the unknown bucket stays last.
    """
    known = [v for v in counts.values if v.value is not None]
    unknown = [v for v in counts.values if v.value is None]
    chosen = [v for v in known if v.selected]
    others = [v for v in known if not v.selected]
    kept = others[: max(0, size - len(chosen))]
    return FacetCounts(chosen + kept + unknown, counts.remaining + len(others) - len(kept))
