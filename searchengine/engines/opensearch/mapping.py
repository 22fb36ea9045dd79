"""Index settings, mappings and documents of the OpenSearch engine.

The fields mirror the embedded engine's schema
(:mod:`searchengine.engines.whoosh.schema`):

===================  =========================================  ==================================
field                mapped as                                  used for
===================  =========================================  ==================================
id                   keyword                                    identity, ``id:``, sort ties
title, abstract      text: ``se_text`` (index), ``se_text_      ranking (BM25 per field), snippets
                     search`` (queries), ``se_text_phrase``;
                     ``.spell``: ``se_spell``                   did-you-mean
authors              text: ``se_name``; ``authors.raw`` keyword  ``authors:`` words; author facet
year                 integer (absent when unknown)              filter, sort, facet
categories           keyword, primary first                     category facet
primary_category     keyword                                    ``--primary-only`` facet
author_keys          keyword (:func:`searchengine.filters.      ``--author``, ``--first-author``
                     author_keys`)
category_keys        keyword (:func:`searchengine.filters.      ``--category``
                     category_keys`)
sort_title           keyword: the title folded for case and     ``--sort title``
                     accents
url, source          kept in ``_source`` only                   display, messages
version              long                                       the highest version wins
submitted, updated   date (``yyyy-MM-dd``, absent when unknown)  date filters, date histogram
versions             kept in ``_source`` only: ``[[n, day]]``   display
newest_key,          long (:func:`searchengine.dates.sort_keys`,  ``--sort newest`` / ``oldest``
oldest_key           absent when there is no day nor year)
===================  =========================================  ==================================

The text analyzers are built from OpenSearch's own tokenizer and token
filters to index what the embedded analyzer
(:mod:`searchengine.engines.whoosh.analysis`) indexes:

0. a ``mapping`` char filter puts the text in NFKC form (:func:`nfkc_rules`:
   ``ﬁnite`` → ``finite``, ``ＧＰＵ`` → ``GPU``), offsets kept;
1. ``pattern`` tokenizer with the embedded tokenizer's own pattern (Java's
   Unicode character classes; CJK characters one by one, see 2): ``C++``, ``C#``, ``802.11ax``, ``fail-slow``
   and ``CB-SpMV`` stay whole, punctuation around them goes;
2. CJK runs become overlapping character pairs in sequence: the tokenizer
   takes CJK characters one at a time, and a ``shingle`` filter under a
   ``condition`` joins neighbours (``语言模型`` → ``语言``, ``言模``, ``模型``);
3. a number glued to a word is split (``16GB`` → ``16gb``, ``16``, ``gb``:
   ``word_delimiter_graph`` with ``split_on_numerics`` under a ``condition``);
   camel-case words whose every part has three letters or more are split
   (``FlashAttention``; not ``SpMV``): ``word_delimiter_graph`` under a
   ``condition`` (a Painless predicate with the embedded rule);
4. compounds split at dashes (``word_delimiter_graph``); both splits keep
   the parts in sequence and the joined word (``catenate_all``) at the first
   part's position: ``fail-slow`` → ``failslow``, ``fail``, ``slow``;
5. thousands separators are dropped (``pattern_replace``: ``10,000`` →
   ``10000``); stop words (the product's list) are dropped, except when written as an
   acronym in capitals (``US``, ``IT``): a case-sensitive ``stop`` list;
6. acronyms in capitals are marked so that they are not stemmed
   (``keyword_marker``), then ``lowercase`` and ``asciifolding``;
7. Latin, Greek and ``-s`` singulars and plurals are rewritten as the embedded
   stemmer does (``pattern_replace`` under a ``condition`` that skips the
   acronyms: ``matrix`` → ``matrices``, ``radii`` → ``radius`` → ``radiuse``,
   :data:`searchengine.querylang.text.PLURAL_REWRITES`), then ``porter_stem``
   (except for ``use``/``used``/``using``…, which Porter would stem to the
   acronym ``us``: ``stemmer_override``).

Words are cut at :data:`MAX_WORD` characters first (``truncate``): Lucene
refuses a term over 32,766 bytes, and with it the whole document.

The index-time analyzer flattens the word-delimiter graph (``flatten_graph``,
as OpenSearch requires for indexing); the search analyzer keeps the graph, so
a query for ``fail-slow`` asks for ``failslow`` or the phrase ``fail slow``;
the phrase analyzer leaves out joined words (the embedded ``"phrase"`` mode).
What remains different is listed in docs/opensearch-analysis.md ("What remains different").
"""

from __future__ import annotations

import functools
import os
import unicodedata

from searchengine import dates, filters
from searchengine.ranking import FIELD_B, K1
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
LAYOUT = 4


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

# Painless predicate of the embedded camel-case rule
# ``(?:[A-Z]?[a-z]{2,})(?:[A-Z][a-z]{2,})+``, written as a loop so that it
# runs where Painless regexes are switched off.
_CAMEL_SCRIPT = """
CharSequence t = token.getTerm();
int n = t.length(); int i = 0; int parts = 0;
while (i < n) {
  char c = t.charAt(i);
  if (c >= (char) 'A' && c <= (char) 'Z') { i++; } else if (parts > 0) { return false; }
  int start = i;
  while (i < n && t.charAt(i) >= (char) 'a' && t.charAt(i) <= (char) 'z') { i++; }
  if (i - start < 2) { return false; }
  parts++;
}
return parts > 1;
""".strip()

# Porter stems "use", "used", "using" and "useful" to "us", which would meet
# the acronym US (kept unstemmed, as in the embedded analysis): these words
# keep the embedded stem instead.
_STEM_OVERRIDES = ("use, used, uses, using, useful, usefulness => use",)

def _rules():
    """The product's analysis rules (token pattern, stop words, CJK ranges, plural rewrites).

    They are the query language's (:mod:`searchengine.querylang.text`), which the
    embedded analyzer is built from too, so both engines cut and drop the same words.
    """
    from searchengine.querylang import text

    return text.TOKEN_PATTERN, text.STOP_WORDS, text.CJK_CHARS, text.PLURAL_REWRITES, text.THOUSANDS


# Painless predicate of the embedded number-and-unit rule
# ``\d+(?:,\d{3})*[^\W\d_]+`` (16GB, 10,000GPUs): digits, then letters only.
_NUMBER_UNIT_SCRIPT = """
CharSequence t = token.getTerm();
int n = t.length(); int i = 0;
while (i < n && (Character.isDigit(t.charAt(i)) || (i > 0 && t.charAt(i) == (char) ','))) { i++; }
if (i == 0 || i == n || !Character.isDigit(t.charAt(i - 1))) { return false; }
while (i < n && Character.isLetter(t.charAt(i))) { i++; }
return i == n;
""".strip()


def cjk_ranges(cjk_chars: str) -> list[tuple[int, int]]:
    """The code point ranges of a character-class body such as ``"\u3040-\u30ff..."``."""
    import re

    return [(ord(low), ord(high)) for low, high in re.findall(r"(.)-(.)", cjk_chars, re.DOTALL)]


def token_pattern(pattern: str, cjk_chars: str) -> str:
    """The tokenizer pattern: the embedded one, except that CJK characters come one
    at a time (the ``se_cjk_pairs`` filter joins neighbours into pairs).

    Raises:
        RuntimeError: the embedded pattern no longer starts with its CJK-run alternative.
    """
    run = f"[{cjk_chars}]+|"
    if not pattern.startswith(run):
        raise RuntimeError("the embedded token pattern changed: update the OpenSearch tokenizer")
    return f"[{cjk_chars}]|" + pattern[len(run):]


def _cjk_script(cjk_chars: str) -> str:
    """Painless predicate: the token is one CJK character."""
    tests = " || ".join(f"(c >= {low} && c <= {high})" for low, high in cjk_ranges(cjk_chars))
    return ("CharSequence t = token.getTerm(); if (t.length() != 1) { return false; } "
            f"char c = t.charAt(0); return {tests};")


def stop_list(stop_words) -> list[str]:
    """The case-sensitive stop list that drops ``the`` and ``The`` but keeps ``US``.

    Each word lower-case and capitalised; single letters in capitals too
    (the embedded filter keeps only acronyms of two letters or more).
    """
    words = set()
    for word in stop_words:
        words.update((word, word.capitalize()))
        if len(word) == 1:
            words.add(word.upper())
    return sorted(words)


def _rule_text(text: str) -> str:
    """``text`` as one side of a ``mapping`` char filter rule: characters the
    rule parser would trim or read as syntax written as ``\\uXXXX``."""
    out = []
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
    embedded tokenizer does (:func:`searchengine.engines.whoosh.analysis.normalize`).

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


def _word_delimiter(*, case_split: bool, joined: bool) -> dict:
    return {
        "type": "word_delimiter_graph",
        "generate_word_parts": True,
        "generate_number_parts": True,
        "catenate_all": joined,
        "preserve_original": False,
        "split_on_case_change": case_split,
        "split_on_numerics": False,
        "stem_english_possessive": False,
        # The tokenizer lets only these through inside a token: "++" and "#"
        # end an identifier (C++, C#), "." joins digits (802.11ax), ","
        # separates thousands (10,000).
        "type_table": ["+ => ALPHA", "# => ALPHA", ". => DIGIT", ", => DIGIT"],
    }


def analysis_settings() -> dict:
    """The ``index.analysis`` settings: analyzers ``se_text`` (indexing title and
    abstract), ``se_text_search`` (their queries), ``se_text_phrase`` (quoted
    phrases: no joined words), ``se_name`` (author names: folded, not stemmed)
    and ``se_spell`` (the words did-you-mean chooses from: folded, whole)."""
    pattern, stop_words, cjk_chars, plural_rewrites, thousands = _rules()
    token_filters = {
        "se_word_cap": {"type": "truncate", "length": MAX_WORD},
        # Neighbouring CJK characters as overlapping pairs in sequence; a lone one stays.
        "se_cjk_shingles": {"type": "shingle", "min_shingle_size": 2, "max_shingle_size": 2,
                            "output_unigrams": False, "output_unigrams_if_no_shingles": True,
                            "token_separator": ""},
        "se_cjk_pairs": {"type": "condition", "filter": ["se_cjk_shingles"],
                         "script": {"source": _cjk_script(cjk_chars)}},
        "se_camel_parts": _word_delimiter(case_split=True, joined=True),
        "se_unit_parts": {**_word_delimiter(case_split=False, joined=True), "split_on_numerics": True},
        "se_units": {"type": "condition", "filter": ["se_unit_parts"],
                     "script": {"source": _NUMBER_UNIT_SCRIPT}},
        "se_unit_parts_only": {**_word_delimiter(case_split=False, joined=False), "split_on_numerics": True},
        "se_units_phrase": {"type": "condition", "filter": ["se_unit_parts_only"],
                            "script": {"source": _NUMBER_UNIT_SCRIPT}},
        "se_camel": {"type": "condition", "filter": ["se_camel_parts"],
                     "script": {"source": _CAMEL_SCRIPT}},
        "se_compounds": _word_delimiter(case_split=False, joined=True),
        "se_camel_parts_only": _word_delimiter(case_split=True, joined=False),
        "se_camel_phrase": {"type": "condition", "filter": ["se_camel_parts_only"],
                            "script": {"source": _CAMEL_SCRIPT}},
        "se_compound_parts": _word_delimiter(case_split=False, joined=False),
        "se_stop": {"type": "stop", "stopwords": stop_list(stop_words), "ignore_case": False},
        # Not stemmed, as in the embedded stemmer: all capitals (and no lower-case
        # letter), an acronym; or a word with a digit or other non-letter
        # (100ms, 1990s, covid19s), unless it is an acronym's plural (A100s → a100).
        "se_acronyms": {"type": "keyword_marker",
                        "keywords_pattern": "[^\\p{Ll}]*\\p{Lu}[^\\p{Ll}]*"
                                            "|(?![^\\p{Ll}]*\\p{Lu}[^\\p{Ll}]*s$).*\\P{L}.*"},
    }
    for number, (ending, replacement) in enumerate(plural_rewrites, 1):
        token_filters[f"se_plural_{number}"] = {"type": "pattern_replace", "pattern": ending,
                                                "replacement": replacement}
    # The rewrites skip acronyms (marked keywords), which the embedded stemmer leaves whole.
    token_filters["se_plurals"] = {"type": "condition",
                                   "filter": [f"se_plural_{n}" for n in range(1, len(plural_rewrites) + 1)],
                                   "script": {"source": "!token.isKeyword()"}}
    token_filters["se_stem_overrides"] = {"type": "stemmer_override", "rules": list(_STEM_OVERRIDES)}
    # 10,000 → 10000 ((?U): \\d as the Unicode digits Python's re reads).
    token_filters["se_thousands"] = {"type": "pattern_replace", "pattern": "(?U)" + thousands, "replacement": ""}
    # A word written with an umlaut is indexed under its transliterated spelling
    # too (Müller: muller and mueller), as the embedded UmlautFilter does.
    for letters, spelled in (("äÄ", "ae"), ("öÖøØ", "oe"), ("üÜ", "ue")):
        token_filters[f"se_umlaut_{spelled}"] = {"type": "pattern_replace", "pattern": f"[{letters}]",
                                                 "replacement": spelled}
    token_filters["se_umlauts"] = {"type": "multiplexer", "preserve_original": True,
                                   "filters": ["se_umlaut_ae,se_umlaut_oe,se_umlaut_ue"]}
    head = ["se_thousands", "se_stop", "se_acronyms"]
    tail = ["lowercase", "asciifolding", "se_plurals", "se_stem_overrides", "porter_stem"]
    text = {"type": "custom", "char_filter": ["se_nfkc"], "tokenizer": "se_words"}
    return {
        "char_filter": {"se_nfkc": {"type": "mapping", "mappings": list(nfkc_rules())}},
        "tokenizer": {
            "se_words": {"type": "pattern", "pattern": token_pattern(pattern, cjk_chars), "group": 0,
                         "flags": _PATTERN_FLAGS},
        },
        "filter": token_filters,
        "analyzer": {
            "se_text": {**text,
                        "filter": ["se_word_cap", "se_cjk_pairs", "se_units", "se_camel", "se_compounds",
                                   "flatten_graph", *head, "se_umlauts", *tail]},
            "se_text_search": {**text,
                               "filter": ["se_word_cap", "se_cjk_pairs", "se_units", "se_camel", "se_compounds",
                                          *head, *tail]},
            "se_text_phrase": {**text,
                               "filter": ["se_word_cap", "se_cjk_pairs", "se_units_phrase", "se_camel_phrase",
                                          "se_compound_parts", *head, *tail]},
            "se_name": {**text, "filter": ["se_word_cap", "lowercase", "asciifolding"]},
            # Did-you-mean's words: whole tokens folded, not split, stemmed or stopped.
            "se_spell": {**text, "filter": ["se_word_cap", "lowercase", "asciifolding", "se_thousands"]},
        },
    }


def similarity_settings() -> dict:
    """``index.similarity``: one BM25 per text field, K1 and B as the embedded ranking's."""
    return {f"se_{name}": {"type": "BM25", "k1": K1, "b": b} for name, b in FIELD_B.items()}


#: The record vector field (semantic and hybrid modes): the k-NN plugin's
#: ``knn_vector`` with Lucene's HNSW graph (the only engine that needs no
#: native library), cosine similarity.
VECTOR_FIELD = "vector"


def vector_mapping() -> dict:
    """The mapping of :data:`VECTOR_FIELD` and of ``content_key`` (the SHA-1 of the
    encoded text, hex: an update re-encodes only a record whose text changed)."""
    from searchengine.semantic import DIMENSIONS

    return {
        VECTOR_FIELD: {"type": "knn_vector", "dimension": DIMENSIONS,
                       "method": {"name": "hnsw", "engine": "lucene", "space_type": "cosinesimil"}},
        "content_key": {"type": "keyword", "index": False, "doc_values": False},
    }


def mappings(alias: str, *, vectors: bool = False) -> dict:
    """The index mapping (``dynamic: strict``: a field not listed here is refused).

    ``alias`` is recorded in ``_meta`` (with :data:`LAYOUT`), marking the
    physical index as one the writer made for that alias. With ``vectors``,
    the record vector fields (:func:`vector_mapping`) are added.
    """
    def text(field: str, analyzer: str, **extra) -> dict:
        return {"type": "text", "analyzer": analyzer, "similarity": f"se_{field}", **extra}

    keyword = {"type": "keyword", "ignore_above": MAX_KEYWORD}
    # Only which documents hold a word: the term suggester and word frequencies.
    spell = {"spell": {"type": "text", "analyzer": "se_spell", "index_options": "docs", "norms": False}}
    kept = {"type": "keyword", "index": False, "doc_values": False}
    return {
        "dynamic": "strict",
        "_meta": {META_KEY: {"alias": alias, "layout": LAYOUT}},
        "properties": {
            "id": {"type": "keyword"},  # at most 512 bytes, as every document id
            "title": text("title", "se_text", search_analyzer="se_text_search", fields=spell),
            "abstract": text("abstract", "se_text", search_analyzer="se_text_search", fields=spell),
            "authors": text("authors", "se_name", fields={"raw": keyword}),
            "year": {"type": "integer"},
            "categories": keyword,
            "primary_category": keyword,
            "author_keys": keyword,
            "category_keys": keyword,
            "sort_title": keyword,
            "url": kept,
            "source": kept,
            "version": {"type": "long"},
            # Dates, kept apart from the fields above.
            "submitted": {"type": "date", "format": "strict_date"},
            "updated": {"type": "date", "format": "strict_date"},
            "versions": {"type": "object", "enabled": False},
            "newest_key": {"type": "long"},
            "oldest_key": {"type": "long"},
            # --- links and identifiers ---
            "doi": kept,
            "doi_keys": keyword,  # doi_keys(): lower-cased, the record's own DOI and arXiv's
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
    if not os.environ.get("SEARCHENGINE_OPENSEARCH_REPLICAS", "").strip():
        return None
    return _setting("SEARCHENGINE_OPENSEARCH_REPLICAS", DEFAULT_REPLICAS, minimum=0)


def _setting(name: str, default: int, *, minimum: int) -> int:
    from searchengine.errors import InputError

    raw = os.environ.get(name, "").strip()
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
    source.update(_date_source(record))
    # --- links and identifiers ---
    keys = doi_keys(record)
    if keys:
        source["doi_keys"] = keys
    for name in LINK_FIELDS:
        if getattr(record, name):
            source[name] = getattr(record, name)
    return source


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
    return Record(
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
        # --- links and identifiers ---
        **{name: source.get(name) or "" for name in LINK_FIELDS},
    )
