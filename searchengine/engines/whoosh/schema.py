"""The Whoosh schema: which fields a document has and how each is indexed.

==========  ==================================================  =========================
field       indexed as                                          used for
==========  ==================================================  =========================
id          exact term, unique                                  identity, updates, ``id:``
title       analysed text (positions), stored, boosted          ranking, snippets
abstract    analysed text (positions), stored                   ranking, snippets
authors     analysed names (positions), stored as a list        ``author:`` word search
year        integer, sortable column, stored                    filter, sort, facet
categories  exact terms, space separated, stored as a list      filter, facet
url         stored only                                         display
source      stored only (``file:line``)                         messages
version     stored only (arXiv version number, or absent)      keeping the latest version
day         integer: the submitted day (``date.toordinal``)     date filters
dates       stored only: submitted, updated (ISO), versions;    display
            ``tex``: the title and abstract as written when
            they hold math (kept here: no layout change)
doi         exact lower-cased terms (the record's own DOIs;     ``doi:``, a DOI as the query
            arXiv's DOI of its id is searched as the id),
            stored as the source wrote it
pdf_url,    stored only                                         display, exports
journal_ref,
comments,
license
==========  ==================================================  =========================

The words of titles and abstracts as written (folded, unstemmed), which
did-you-mean suggests, are no field: each segment holds its distinct words
in a file of its own (:mod:`searchengine.engines.whoosh.codec`), written by
the index's writers (:mod:`searchengine.engines.whoosh.writer`) and gathered
into the generation's column file.

Fields for filters, facets and sorting (built by :mod:`searchengine.filters`
and :mod:`searchengine.engines.whoosh.columns`, which also read them back):

* ``category_keys``: lower-cased codes and archives (``cs.dc``, ``cs.*``),
  the primary category's also marked (``^cs.dc``, ``^cs.*``): ``--category``.
* ``facet_data``: a column packing year, id and the other facets' values
  (authors, categories, journals: :func:`.columns.pack_facet_data`): facet
  counts, the year sorts (a missing year is empty here, never a number) and
  ``--author``, ``--first-author`` (answered from the generation's column
  file, :meth:`~searchengine.engines.whoosh.facetcolumns.FacetColumns.author_docs`;
  the index holds no author-key terms).
* ``sort_title``: a column with the folded title: ``--sort title``.
* ``date_data``: a column with the submitted day number (empty when
  unknown): the date sorts and the date histogram.
"""

from __future__ import annotations

from whoosh.fields import COLUMN, ID, KEYWORD, NUMERIC, STORED, TEXT, Schema
from whoosh.formats import Positions

from searchengine import dates, filters
from searchengine.analysis.analyzer import index_positions
from searchengine.analysis.folding import fold
from searchengine.analysis.tokens import word_pattern
from searchengine.engines.whoosh import columns as facets
from searchengine.engines.whoosh.analysis import name_analyzer, text_analyzer
from searchengine.engines.whoosh.codec import compact_positions
from searchengine.ranking import TITLE_BOOST
from searchengine.records import doi_key

# Fields a query searches when it names none.
DEFAULT_FIELDS = ("title", "abstract", "authors")


class SpelledTEXT(TEXT):
    """A TEXT field whose words, as written but folded for case and accents,
    are also the source of spelling suggestions (:func:`spelled_fields`).

    The index holds stems (``spars``), which make poor suggestions; Whoosh
    keeps unstemmed words apart only for analyzers with a separate stemming
    stage, and ours folds and stems in one cached step, so the words are cut
    with the tokenizer's pattern (:func:`spelling_words`: one C-level regex
    pass per text) by the index's writers, which keep each segment's
    distinct words in a file (:mod:`searchengine.engines.whoosh.codec`).

    Whoosh would post every word of every document to a ``spell_<name>``
    field; older indexes have such fields, in which Whoosh posts nothing
    (:meth:`spellable_words` is empty) and older segments hold one term per
    word (read by :func:`~searchengine.engines.whoosh.codec.segment_words`).
    """

    def separate_spelling(self) -> bool:
        return bool(self.spelling)

    def index(self, value, **kwargs):
        """``(term bytes, frequency, weight, encoded positions)`` per distinct
        term, as Whoosh's ``Positions`` format gives them, from
        :func:`~searchengine.analysis.analyzer.index_positions` (each
        distinct word analysed once) where it applies."""
        found = None
        if isinstance(value, str) and not kwargs and isinstance(self.format, Positions):
            found = index_positions(self.analyzer, value)
        if found is None:
            yield from super().index(value, **kwargs)
            return
        encode, boost = self.format.encode, self.format.field_boost
        for text, positions in found.items():
            yield text.encode("utf-8"), len(positions), float(len(positions)) * boost, encode(positions)

    def spellable_words(self, value):
        return iter(())


def spelling_words(value: str) -> set[str]:
    """The distinct words of ``value`` as spelling suggestions hold them (folded, unstemmed)."""
    value = fold(value)
    return set(word_pattern(value).findall(value))


def spelled_fields(schema) -> list[str]:
    """Names of the schema's :class:`SpelledTEXT` fields: where spelling words come from."""
    return [name for name, field in schema.items() if isinstance(field, SpelledTEXT)]


def build_schema() -> Schema:
    """Return a new schema; one analyzer instance serves title and abstract."""
    text = text_analyzer()
    return Schema(
        id=ID(unique=True, stored=True),
        title=compact_positions(SpelledTEXT(analyzer=text, stored=True, field_boost=TITLE_BOOST)),
        abstract=compact_positions(SpelledTEXT(analyzer=text, stored=True)),
        authors=compact_positions(TEXT(analyzer=name_analyzer(), stored=True)),
        year=NUMERIC(int, bits=32, stored=True, sortable=True, signed=False),
        categories=KEYWORD(stored=True, scorable=False, lowercase=False),
        url=STORED(),
        source=STORED(),
        category_keys=KEYWORD(scorable=False),
        facet_data=COLUMN(),
        sort_title=COLUMN(),
        version=STORED(),
        day=NUMERIC(int, bits=32, signed=False),
        dates=STORED(),
        date_data=COLUMN(),
        # --- links and identifiers ---
        doi=KEYWORD(stored=True, scorable=False, lowercase=True),
        pdf_url=STORED(),
        journal_ref=STORED(),
        comments=STORED(),
        license=STORED(),
    )


def document_fields(record) -> dict:
    """Map a :class:`~searchengine.records.Record` to ``writer.add_document`` keywords.

    Lists are indexed as joined text but stored as lists, so hits give them
    back unchanged. A record without a year has no ``year`` term at all.
    """
    fields = {
        "id": record.id,
        "title": record.title,
        "abstract": record.abstract,
        "authors": "\n".join(record.authors),
        "_stored_authors": list(record.authors),
        "categories": " ".join(record.categories),
        "_stored_categories": list(record.categories),
        "url": record.url,
        "source": record.source,
        "category_keys": " ".join(filters.category_keys(record.categories)),
        "facet_data": facets.pack_facet_data(record),
        "sort_title": facets.title_sort_key(record.title),
    }
    if record.year is not None:
        fields["year"] = record.year
    if record.version is not None:
        fields["version"] = record.version
    fields["date_data"] = facets.pack_date_data(record)
    if record.submitted is not None:
        fields["day"] = record.submitted.toordinal()
    if record.submitted or record.updated or record.versions or record.tex:
        fields["dates"] = stored_dates(record)
    # --- links and identifiers ---
    # Only the record's own DOIs: arXiv's DOI of its id is searched as the id
    # (querying.doi_query) and takes no term.
    keys = list(dict.fromkeys(doi_key(value) for value in record.doi.split()))
    if keys:
        fields["doi"] = " ".join(keys)
        fields["_stored_doi"] = record.doi
    for name in ("pdf_url", "journal_ref", "comments", "license"):
        if getattr(record, name):
            fields[name] = getattr(record, name)
    return fields


def stored_dates(record) -> dict:
    """The ``dates`` stored field: ``{"submitted", "updated": ISO or None,
    "versions": [[number, ISO], ...]}``, and ``"tex"``: the record's
    :attr:`~searchengine.records.Record.tex` when it has one (a stored field
    of any shape: older indexes read it as absent)."""
    stored: dict = {
        "submitted": dates.iso(record.submitted),
        "updated": dates.iso(record.updated),
        "versions": [[number, day.isoformat()] for number, day in record.versions],
    }
    if record.tex:
        stored["tex"] = dict(record.tex)
    return stored
