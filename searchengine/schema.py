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
==========  ==================================================  =========================
"""

from __future__ import annotations

from whoosh.fields import ID, KEYWORD, NUMERIC, STORED, TEXT, Schema

from searchengine.analysis import name_analyzer, text_analyzer

# A title term counts this many times an abstract term in BM25F.
TITLE_BOOST = 2.0

# Fields a query searches when it names none.
DEFAULT_FIELDS = ("title", "abstract", "authors")


def build_schema() -> Schema:
    """Return a new schema; one analyzer instance serves title and abstract."""
    text = text_analyzer()
    return Schema(
        id=ID(unique=True, stored=True),
        title=TEXT(analyzer=text, stored=True, field_boost=TITLE_BOOST),
        abstract=TEXT(analyzer=text, stored=True),
        authors=TEXT(analyzer=name_analyzer(), stored=True),
        year=NUMERIC(int, bits=32, stored=True, sortable=True, signed=False),
        categories=KEYWORD(stored=True, scorable=False, lowercase=False),
        url=STORED(),
        source=STORED(),
        version=STORED(),
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
    }
    if record.year is not None:
        fields["year"] = record.year
    if record.version is not None:
        fields["version"] = record.version
    return fields
