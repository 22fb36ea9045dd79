"""Index settings, mappings and documents of the OpenSearch engine.

The fields mirror the embedded engine's schema
(:mod:`searchengine.engines.whoosh.schema`):

===================  =========================================  ==================================
field                mapped as                                  used for
===================  =========================================  ==================================
id                   keyword                                    identity, ``id:``, sort ties
title, abstract      text, not searched                         display, snippets
title_terms,         text: ``se_terms`` (the product's terms,   words, prefixes, fuzzy words,
abstract_terms       :func:`.terms.term_text`), not in           proximity (BM25 per field)
                     ``_source``
title_words,         text: ``se_terms`` (written words,         quoted phrases
abstract_words       :func:`.terms.word_text`), not in
                     ``_source``
spelling             text: ``se_terms`` (the title's and          did-you-mean's words, fuzzy words
                     abstract's words as written, folded, once    as written (which papers hold each)
                     each: :func:`.terms.spelling_text`),
                     documents only, not in ``_source``
authors              text: ``se_name``; ``authors.raw`` keyword  ``authors:`` words; author facet
year                 integer (absent when unknown)              filter, sort, facet
categories           keyword, primary first                     category facet
primary_category     keyword                                    ``--primary-only`` facet
author_keys          keyword (:func:`searchengine.filters.      ``--author``, ``--first-author``
                     author_keys`)
category_keys        keyword (:func:`searchengine.filters.      ``--category``
                     category_keys`)
sort_title           keyword, doc values only: the title        ``--sort title``
                     folded for case and accents
url, source          kept in ``_source`` only                   display, messages
version              long                                       the highest version wins
submitted, updated   date (``yyyy-MM-dd``, absent when unknown)  date filters, date histogram
versions             kept in ``_source`` only: ``[[n, day]]``   display
tex                  kept in ``_source`` only: the title and    formulas on the web page
                     abstract as written when they hold math
newest_key,          long (:func:`searchengine.dates.sort_keys`,  ``--sort newest`` / ``oldest``
oldest_key           absent when there is no day nor year)
===================  =========================================  ==================================

Titles and abstracts are analysed by the product itself, with the embedded
engine's analyzer (:mod:`.terms`): each document carries its terms (and its
words as written) as term texts, which the ``se_terms`` analyzer only cuts
apart, so both engines index the same terms at the same positions. The
``title`` and ``abstract`` fields themselves are kept for display, not
searched. Did-you-mean's words are the product's too (``spelling``: the
words the embedded index keeps for it, :func:`.terms.spelling_words`).

Each part of the layout is there for a feature (docs/opensearch.md, "What
the index holds"): fields only sorted or counted keep doc values and no
terms, fields only filtered keep terms and no doc values, the keys made
from a record are not kept in ``_source`` (a record is made again from
its own fields), and stored fields are compressed with DEFLATE
(``index.codec: best_compression``: a page of hits reads ten documents).

``se_name`` is OpenSearch's own chain: the embedded tokenizer's pattern
after a ``mapping`` char filter that puts the text in NFKC form
(:func:`nfkc_rules`), then ``lowercase`` and ``asciifolding``.
Words are cut at :data:`MAX_WORD` characters (``truncate``): Lucene refuses a
term over 32,766 bytes, and with it the whole document.
"""

from __future__ import annotations

import functools
import unicodedata
from typing import Any

from searchengine import dates, filters, settings
from searchengine.engines.opensearch.scoring import similarity_settings
from searchengine.engines.opensearch.terms import (
    LENGTH,
    NO_TERM,
    SAME_POSITION,
    TERMS,
    TEXT_FIELDS,
    TOKENS,
    WORDS,
    indexed,
    spelling_text,
    word_text,
)
from searchengine.facets import FACETS, Facet
from searchengine.records import LINK_FIELDS, Record, doi_keys, sort_title

#: Primary shards of a new index (``SEARCHENGINE_OPENSEARCH_SHARDS``).
DEFAULT_SHARDS = 3
#: Replicas of each shard (``SEARCHENGINE_OPENSEARCH_REPLICAS``), never more than
#: the cluster's data nodes less one, so that one node makes a green cluster.
DEFAULT_REPLICAS = 1
#: The mark a physical index carries in its mapping's ``_meta``.
META_KEY = "searchengine"
#: Version of the layout below; an index of another layout must be rebuilt.
#: 4: the date fields (submitted, updated, versions, newest_key, oldest_key)
#: and the links and identifiers (doi, doi_keys, pdf_url, journal_ref, comments, license).
#: 5: titles and abstracts searched by the product's own terms (title_terms, abstract_terms,
#: title_words, abstract_words).
#: 6: the terms of layout 4 of the embedded index (Latin plurals in -ices made singular).
#: 7: the journal facet's fields (journal, journal_keys).
#: 8: ``tex``, the title and abstract as written when they hold math (for display).
#: 9: did-you-mean's words as the product makes them (``spelling``, in place of the
#: ``.spell`` sub-fields), doc values only where only sorted or counted, no doc values
#: where only filtered, the record's derived keys left out of ``_source``, DEFLATE.
LAYOUT = 9


#: Longest word indexed, in characters: longer ones are cut to this (Lucene
#: refuses a term over 32,766 bytes, and with it the whole document).
MAX_WORD = 1000
#: Longest value of a keyword field kept for facets, filters and sorting (characters;
#: four UTF-8 bytes each stay under Lucene's limit); a longer one is left out
#: of the field (the document is still indexed).
MAX_KEYWORD = 8191
#: Characters of the folded title kept for sorting.
SORT_TITLE_CHARS = 1000

# Java regex flags for the tokenizer pattern: \w, \d and \W as Unicode classes,
# as the embedded tokenizer (NLTK with the ``regex`` module) reads them.
_PATTERN_FLAGS = "UNICODE_CHARACTER_CLASS"


def _rules():
    """The product's analysis rules (token pattern, stop words, CJK ranges, plural rewrites).

    They are the product's analysis (:mod:`searchengine.analysis.tokens`), which the
    embedded analyzer is built from too, so both engines cut and drop the same words.
    """
    from searchengine.analysis import tokens

    return tokens.TOKEN_PATTERN, tokens.CJK_CHARS, tokens.THOUSANDS


def _rule_text(text: str) -> str:
    """``text`` as one side of a ``mapping`` char filter rule: characters the
    rule parser would trim or read as syntax written as ``\\uXXXX``."""
    out: list[str] = []
    for ch in text:
        if ch in "\\=>\"'" or ord(ch) <= 0x20 or unicodedata.category(ch)[0] in "ZC":
            data = ch.encode("utf-16-be")
            out.extend(f"\\u{data[i]:02x}{data[i + 1]:02x}" for i in range(0, len(data), 2))
        else:
            out.append(ch)
    return "".join(out)


@functools.lru_cache(maxsize=1)
def nfkc_rules() -> tuple[str, ...]:
    """``mapping`` char filter rules that put text in Unicode's NFKC form, as the
    embedded tokenizer does (:func:`searchengine.analysis.folding.normalize`).

    One rule per character that NFKC changes (``ﬁ`` → ``fi``, ``Ａ`` → ``A``,
    ``𝐱`` → ``x``: 4,866 with Python 3.11's Unicode 14), and one per
    precomposed character written decomposed (``e`` + U+0301 → ``é``; not
    the 11,172 Hangul syllables, written decomposed only in old texts), and
    one per half-width kana with its voiced mark (``ｶﾞ`` → ``ガ``). The
    char filter keeps offsets pointing into the text as written. Made from
    Python's Unicode tables when an index is created.
    """
    rules = {}
    for code in range(0x110000):
        if 0xD800 <= code < 0xE000:
            continue
        ch = chr(code)
        composed = unicodedata.normalize("NFKC", ch)
        if composed != ch:
            rules[ch] = composed
        decomposed = unicodedata.normalize("NFD", ch)
        if len(decomposed) > 1 and not 0xAC00 <= code <= 0xD7A3:
            rules[decomposed] = composed
    # Half-width kana with a half-width (semi-)voiced mark: one character (ｶﾞ → ガ).
    for mark in "\uff9e\uff9f":
        for ch in list(rules):
            joined = unicodedata.normalize("NFKC", ch + mark)
            if len(ch) == 1 and len(joined) == 1:
                rules[ch + mark] = joined
    return tuple(f"{_rule_text(key)}=>{_rule_text(value)}" for key, value in rules.items())


def analysis_settings() -> dict:
    """The ``index.analysis`` settings: analyzers ``se_terms`` (the product's
    term texts, :mod:`.terms`, cut apart: title and abstract terms, written
    words and spelling words, and their queries) and ``se_name`` (author
    names: folded, not stemmed)."""
    pattern = _rules()[0]
    token_filters = {
        "se_word_cap": {"type": "truncate", "length": MAX_WORD},
        # The terms of one slot, all at the slot's position.
        "se_same_position": {
            "type": "pattern_capture",
            "preserve_original": False,
            "patterns": [f"([^{SAME_POSITION}]+)"],
        },
        # A slot without a term: dropped, its position left empty.
        "se_no_term": {"type": "stop", "stopwords": [NO_TERM], "ignore_case": False},
    }
    text = {"type": "custom", "char_filter": ["se_nfkc"], "tokenizer": "se_words"}
    return {
        "char_filter": {"se_nfkc": {"type": "mapping", "mappings": list(nfkc_rules())}},
        "tokenizer": {
            "se_words": {"type": "pattern", "pattern": pattern, "group": 0, "flags": _PATTERN_FLAGS},
            "se_slots": {"type": "pattern", "pattern": " "},
        },
        "filter": token_filters,
        "analyzer": {
            "se_terms": {
                "type": "custom",
                "tokenizer": "se_slots",
                "filter": ["se_same_position", "se_no_term", "se_word_cap"],
            },
            "se_name": {**text, "filter": ["se_word_cap", "lowercase", "asciifolding"]},
        },
    }


#: The record vector field (semantic and hybrid modes): the k-NN plugin's
#: ``knn_vector`` with Lucene's HNSW graph (the only engine that needs no
#: native library), cosine similarity.
VECTOR_FIELD = "vector"


def vector_mapping() -> dict:
    """The mapping of :data:`VECTOR_FIELD` and of ``content_key`` (the SHA-1 of the
    encoded text, hex: an update re-encodes only a record whose text changed)."""
    from searchengine.semantic import DIMENSIONS

    return {
        VECTOR_FIELD: {
            "type": "knn_vector",
            "dimension": DIMENSIONS,
            "method": {"name": "hnsw", "engine": "lucene", "space_type": "cosinesimil"},
        },
        "content_key": {"type": "keyword", "index": False, "doc_values": False},
    }


#: The field of did-you-mean's words (:func:`.terms.spelling_text`).
SPELLING = "spelling"


def source_excludes() -> tuple[str, ...]:
    """The fields a document sends but ``_source`` does not keep: the term
    texts and lengths (made again from the title and abstract when needed),
    the spelling words, and the keys made from the record (filter keys, sort
    keys, the primary category), which :func:`record_from_source` never reads."""
    keys = [facet_fields(facet)["filter"] for facet in FACETS if facet.kind == "keyword"]
    return (
        *(name + suffix for name in TEXT_FIELDS for suffix in (TERMS, WORDS, TOKENS, LENGTH)),
        SPELLING,
        "author_keys",
        "category_keys",
        *keys,
        "doi_keys",
        "sort_title",
        "primary_category",
        "newest_key",
        "oldest_key",
    )


def mappings(alias: str, *, vectors: bool = False) -> dict:
    """The index mapping (``dynamic: strict``: a field not listed here is refused).

    ``alias`` is recorded in ``_meta`` (with :data:`LAYOUT`), marking the
    physical index as one the writer made for that alias. With ``vectors``,
    the record vector fields (:func:`vector_mapping`) are added.
    """

    def text(field: str, analyzer: str, **extra) -> dict:
        return {"type": "text", "analyzer": analyzer, "similarity": f"se_{field}", **extra}

    keyword = {"type": "keyword", "ignore_above": MAX_KEYWORD}
    # Only counted (facets) or sorted: doc values, no terms.
    counted = {**keyword, "index": False}
    # Only filtered: terms, no doc values.
    filtered = {**keyword, "doc_values": False}
    kept = {"type": "keyword", "index": False, "doc_values": False}
    facet_keywords = [facet_fields(facet) for facet in FACETS if facet.kind == "keyword"]
    return {
        "dynamic": "strict",
        # The term texts are made again from the title and abstract when needed;
        # the keys are made again from the record (record_from_source reads neither).
        "_source": {"excludes": list(source_excludes())},
        "_meta": {META_KEY: {"alias": alias, "layout": LAYOUT}},
        "properties": {
            "id": {"type": "keyword"},  # at most 512 bytes, as every document id
            "title": {"type": "text", "index": False},
            "abstract": {"type": "text", "index": False},
            **{name + TERMS: text(name, "se_terms") for name in TEXT_FIELDS},
            # The lengths BM25F normalises by (terms.indexed): the count (summed for
            # the averages) and as kept in one byte (read by the scores' scripts).
            **{
                name + suffix: {"type": "integer", "index": False}
                for name in TEXT_FIELDS
                for suffix in (TOKENS, LENGTH)
            },
            # Only which words stand where: phrases are matched, not scored, by them.
            **{
                name + WORDS: {"type": "text", "analyzer": "se_terms", "norms": False, "similarity": "boolean"}
                for name in TEXT_FIELDS
            },
            # Only which papers hold a word as written: did-you-mean and fuzzy words.
            SPELLING: {
                "type": "text",
                "analyzer": "se_terms",
                "index_options": "docs",
                "norms": False,
                "similarity": "boolean",
            },
            "authors": text("authors", "se_name", fields={"raw": counted}),
            "year": {"type": "integer"},
            "categories": keyword,
            "primary_category": counted,
            "author_keys": filtered,
            "category_keys": filtered,
            # The keyword facets' values (counted) and their folded keys (filtered).
            **{fields["count"]: counted for fields in facet_keywords},
            **{fields["filter"]: filtered for fields in facet_keywords},
            "sort_title": counted,
            "url": kept,
            "source": kept,
            "version": {"type": "long"},
            # Dates, kept apart from the fields above.
            "submitted": {"type": "date", "format": "strict_date"},
            "updated": {"type": "date", "format": "strict_date"},
            "versions": {"type": "object", "enabled": False},
            "tex": {"type": "object", "enabled": False},
            "newest_key": {"type": "long", "index": False},
            "oldest_key": {"type": "long", "index": False},
            # --- links and identifiers ---
            "doi": kept,
            "doi_keys": filtered,  # doi_keys(): lower-cased, the record's own DOI and arXiv's
            "pdf_url": kept,
            "journal_ref": kept,
            "comments": kept,
            "license": kept,
            **(vector_mapping() if vectors else {}),
        },
    }


def shard_count() -> int:
    """Primary shards: ``$SEARCHENGINE_OPENSEARCH_SHARDS`` or :data:`DEFAULT_SHARDS`."""
    return _setting("SEARCHENGINE_OPENSEARCH_SHARDS", DEFAULT_SHARDS, minimum=1)


def replica_count() -> int | None:
    """Replicas asked for by ``$SEARCHENGINE_OPENSEARCH_REPLICAS``, or ``None`` (the default:
    up to :data:`DEFAULT_REPLICAS`, as many as the nodes allow)."""
    if not settings.text("SEARCHENGINE_OPENSEARCH_REPLICAS"):
        return None
    return _setting("SEARCHENGINE_OPENSEARCH_REPLICAS", DEFAULT_REPLICAS, minimum=0)


def _setting(name: str, default: int, *, minimum: int) -> int:
    from searchengine.errors import InputError

    raw = settings.text(name)
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InputError(f"{name}={raw!r} is not a whole number") from None
    if value < minimum:
        raise InputError(f"{name}={raw!r} must be at least {minimum}")
    return value


def replica_settings(replicas: int | None, data_nodes: int) -> dict:
    """Index settings for the replicas: ``replicas`` capped at ``data_nodes - 1``,
    or, for ``None``, ``auto_expand_replicas`` from 0 to :data:`DEFAULT_REPLICAS`
    (one node: no replica, green; three nodes: one replica each)."""
    if replicas is None:
        return {"auto_expand_replicas": f"0-{DEFAULT_REPLICAS}"}
    return {"auto_expand_replicas": False, "number_of_replicas": max(0, min(replicas, data_nodes - 1))}


def index_body(alias: str, *, shards: int, building: bool = True, vectors: bool = False) -> dict:
    """The body of ``PUT /<physical index>``: settings and mappings.

    With ``building``, the index starts without replicas or periodic
    refreshes (the writer sets both when the bulk load is over, see
    :func:`finished_settings`).
    """
    settings = {
        "number_of_shards": shards,
        "similarity": similarity_settings(),
        "analysis": analysis_settings(),
        # Stored fields (the records) compressed with DEFLATE: a page of hits reads ten.
        "codec": "best_compression",
    }
    if building:
        settings.update(number_of_replicas=0, auto_expand_replicas=False, refresh_interval="-1")
    if vectors:
        settings["knn"] = True
    return {"settings": {"index": settings}, "mappings": mappings(alias, vectors=vectors)}


def finished_settings(replicas: int | None, data_nodes: int) -> dict:
    """Settings applied when a build's bulk load is over: replicas, and refreshes
    back to OpenSearch's default."""
    return {"index": {**replica_settings(replicas, data_nodes), "refresh_interval": None}}


def facet_fields(facet: Facet) -> dict[str, str]:
    """The cluster fields of one declared facet: ``count`` (aggregated for its
    counts), ``primary`` (its count under ``primary_only``, a category facet's
    only) and ``filter`` (its filter's terms; a year facet's range is on
    ``count``). The mapping (:func:`index_mapping`) and documents
    (:func:`document`) hold them.

    ``year`` → ``year``; ``author`` → ``authors.raw`` and ``author_keys``;
    ``category`` → ``categories``, ``primary_category`` and ``category_keys``;
    a keyword facet ``journal`` → ``journal`` and ``journal_keys``.
    """
    if facet.kind == "year":
        return {"count": facet.name, "filter": facet.name}
    if facet.kind == "author":
        return {"count": facet.record_field + ".raw", "filter": facet.name + "_keys"}
    if facet.kind == "category":
        return {"count": facet.record_field, "primary": "primary_" + facet.name, "filter": facet.name + "_keys"}
    return {"count": facet.name, "filter": facet.name + "_keys"}


def title_sort_key(title: str) -> str:
    """The ``sort_title`` value: the title folded for case and accents, exactly
    the embedded engine's title order key (code point order of the folded
    text, which a keyword field keeps as UTF-8 byte order)."""
    return sort_title(title)[:SORT_TITLE_CHARS]


def document(record: Record) -> dict:
    """The ``_source`` of ``record``'s document. A missing year or version is left out."""
    source = {
        "id": record.id,
        "title": record.title,
        "abstract": record.abstract,
        "authors": list(record.authors),
        "categories": list(record.categories),
        "author_keys": filters.author_keys(record.authors),
        "category_keys": filters.category_keys(record.categories),
        "sort_title": title_sort_key(record.title),
        "url": record.url,
        **text_fields(record),
        "source": record.source,
    }
    # The first non-blank category, as the embedded engine's facet counts take it.
    primary = next((c for c in record.categories if c.strip()), None)
    if primary is not None:
        source["primary_category"] = primary
    if record.year is not None:
        source["year"] = record.year
    if record.version is not None:
        source["version"] = record.version
    for facet in FACETS:  # keyword facets: their values and folded keys, left out when none
        values = facet.values(record) if facet.kind == "keyword" else []
        if values:
            fields = facet_fields(facet)
            source[fields["count"]] = values
            source[fields["filter"]] = list(dict.fromkeys(filters.keyword_key(v) for v in values))
    source.update(_date_source(record))
    if record.tex:
        source["tex"] = dict(record.tex)
    # --- links and identifiers ---
    keys = doi_keys(record)
    if keys:
        source["doi_keys"] = keys
    for name in LINK_FIELDS:
        if getattr(record, name):
            source[name] = getattr(record, name)
    return source


def text_fields(record: Record) -> dict:
    """The term texts of ``record``'s title and abstract (:mod:`.terms`)."""
    fields: dict[str, Any] = {}
    for name in TEXT_FIELDS:
        value = getattr(record, name)
        fields[name + TERMS], fields[name + TOKENS], fields[name + LENGTH] = indexed(value)
        fields[name + WORDS] = word_text(value)
    fields[SPELLING] = spelling_text(record.title, record.abstract)
    return fields


def _date_source(record: Record) -> dict:
    """The date fields of a document; an unknown one is left out."""
    source: dict = {}
    if record.submitted is not None:
        source["submitted"] = record.submitted.isoformat()
    if record.updated is not None:
        source["updated"] = record.updated.isoformat()
    if record.versions:
        source["versions"] = [[number, day.isoformat()] for number, day in record.versions]
    newest, oldest = dates.sort_keys(record.submitted, record.year)
    if newest is not None:
        source["newest_key"], source["oldest_key"] = newest, oldest
    return source


def record_from_source(source: dict) -> Record:
    """The :class:`~searchengine.records.Record` a document's ``_source`` holds."""
    record = Record(
        id=source["id"],
        title=source.get("title") or "",
        abstract=source.get("abstract") or "",
        authors=list(source.get("authors") or []),
        year=source.get("year"),
        categories=list(source.get("categories") or []),
        url=source.get("url") or "",
        source=source.get("source") or "",
        version=source.get("version"),
        submitted=dates.from_iso(source.get("submitted")),
        updated=dates.from_iso(source.get("updated")),
        versions=[(int(n), day) for n, text in source.get("versions") or [] if (day := dates.from_iso(text))],
        tex=dict(source.get("tex") or {}),
    )
    for name in LINK_FIELDS:  # --- links and identifiers ---
        setattr(record, name, source.get(name) or "")
    return record
