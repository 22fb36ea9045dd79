"""Query text → Whoosh query: the query language users type.

The language (documented with examples in README.md, "Query language"):

* Words: every word of a keyword query must match, in the title, the abstract
  or the author names. Words pass through the same analyzer as the indexed
  text, so ``GPUs`` finds ``GPU``.
* ``"exact phrase"`` (straight or typographic quotes).
* ``OR``, ``AND``, ``NOT`` (upper case only), ``-word`` (= ``NOT word``),
  ``+word`` (= ``word``), parentheses. Lower-case ``and``/``or``/``not`` are
  ordinary words, and being stop words they are ignored.
* Fields, with arXiv-style aliases: ``title:``/``ti:``, ``abstract:``/``abs:``,
  ``id:``. An unknown lower-case ``name:`` is an error, not a word; a
  mixed-case word glued to a colon (``CB-SpMV:A``) and a colon followed by a
  space (``NetWeaver: ...``) are ordinary text.
* Filters: ``year:2023-2025``, ``year:>=2023``, ``author:"Qian, D."`` (or
  ``au:``), ``category:cs.DC`` (or ``cat:``) mean what the command-line
  options mean (:mod:`searchengine.filters`). :func:`split_filters` takes them
  out of the text before parsing; they apply to the whole query, so they
  cannot follow ``OR``/``NOT`` or stand inside parentheses.
* ``spars*``: prefix, expanded to at most :data:`MAX_EXPANSIONS` terms (the
  most frequent). A wildcard needs :data:`MIN_PREFIX` letters before it.
* A whole query that is an arXiv id (``2101.00001v2``, ``hep-th/9901001``)
  or an arXiv abs/pdf URL looks that paper up.

Hostile input is repaired rather than rejected where the intent is clear:
control characters are dropped, an unbalanced quote or parenthesis is ignored,
dangling operators are ignored, and a query longer than
:data:`MAX_QUERY_CHARS` is cut at a word boundary (with a note). Everything
else that cannot be understood raises :class:`~searchengine.errors.QueryError`
with a message naming the offending part.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from whoosh import qparser
from whoosh import query as wq

from searchengine import filters as _filters
from searchengine.errors import QueryError
from searchengine.records import arxiv_id
from searchengine.schema import DEFAULT_FIELDS

# Longer queries are cut to this many characters (a pasted abstract is
# searched by its beginning rather than refused).
MAX_QUERY_CHARS = 1000
# A prefix or wildcard term matches at most this many index terms.
MAX_EXPANSIONS = 64
# Letters required before the first wildcard character.
MIN_PREFIX = 2

# Field names users may type → schema field.
FIELD_ALIASES = {
    "title": "title", "ti": "title",
    "abstract": "abstract", "abs": "abstract",
    "author": "authors", "authors": "authors", "au": "authors",
    "category": "categories", "categories": "categories", "cat": "categories",
    "year": "year",
    "id": "id",
}
KNOWN_FIELDS = "title/ti, abstract/abs, author/au, category/cat, year, id"

_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "‟": '"', "«": '"', "»": '"',
                         "‘": "'", "’": "'", "‚": "'", "‛": "'"})
# A field prefix: a name glued to a colon that is glued to a value.
_FIELD = re.compile(r"(?<![\w.\-/])([A-Za-z][\w-]*):(?=[^\s:])")
_WILDCARD_WORD = re.compile(r"[^\s()\"]*[*?][^\s()\"]*")

# ``year:...``, ``author:...`` or ``category:...`` with a bare or quoted value.
_FILTER_CLAUSE = re.compile(r'(?<![\w:])(year|author|au|category|cat):(?:"([^"]*)"|(\S+))', re.IGNORECASE)
_FILTER_NAMES = {"year": "year", "author": "author", "au": "author", "category": "category", "cat": "category"}
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
    found = {"year": [], "author": [], "category": []}
    kept, last = [], 0
    for match in _FILTER_CLAUSE.finditer(text):
        clause = match.group(0)
        before, after = text[:match.start()], text[match.end():]
        if _OPERATOR_BEFORE.search(before) or _OPERATOR_AFTER.search(after) or before.count("(") > before.count(")"):
            raise QueryError(f"filter {clause!r} cannot be combined with OR, NOT or parentheses; it applies to the whole query")
        value = match.group(2) if match.group(2) is not None else match.group(3)
        found[_FILTER_NAMES[match.group(1).lower()]].append(value)
        kept.append(_AND_AT_END.sub("", text[last:match.start()]))  # "GPU AND year:2023"
        last = match.end()
    kept.append(text[last:])
    rest = _AND_AT_START.sub("", " ".join("".join(kept).split()))
    return rest, _filters.build_filters(found["year"], found["author"], found["category"])


@dataclass
class ParsedQuery:
    """A query as understood.

    Attributes:
        text: the cleaned query text that was parsed.
        query: the Whoosh query (``None`` for an empty query: browse by filters).
        words: the positive words of the query, as typed (for relaxing an
            AND query into OR, and for spelling suggestions).
        notes: messages for the user about repairs made (cut, capped, ...).
    """

    text: str
    query: wq.Query | None
    words: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def make_parser(schema, group=qparser.AndGroup) -> qparser.QueryParser:
    """Whoosh parser over :data:`DEFAULT_FIELDS`; ``group`` combines the words."""
    parser = qparser.MultifieldParser(list(DEFAULT_FIELDS), schema, group=group)
    # "*" alone would match every document; "a:b" for names not in the schema
    # is caught before parsing.
    parser.remove_plugin_class(qparser.EveryPlugin)
    parser.remove_plugin_class(qparser.BoostPlugin)
    return parser


def clean(text: str, notes: list[str]) -> str:
    """Typographic quotes to straight ones, control characters out, spaces collapsed, length capped."""
    text = text.translate(_QUOTES)
    text = "".join(
        " " if unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch
        for ch in text
        if unicodedata.category(ch) not in ("Cf", "Cs", "Co", "Cn") or ch in "\t\n"
    )
    text = " ".join(text.split())
    if len(text) > MAX_QUERY_CHARS:
        cut = text.rfind(" ", 0, MAX_QUERY_CHARS)
        text = text[: cut if cut > 0 else MAX_QUERY_CHARS]
        notes.append(f"the query was cut to its first {len(text)} characters")
    return text


def _segments(text: str) -> list[tuple[bool, str]]:
    """Split into ``(quoted, part)`` pieces; an unmatched final quote is dropped."""
    pieces = text.split('"')
    if len(pieces) % 2 == 0:  # odd number of quotes: the last one is unmatched
        pieces[-2:] = [pieces[-2] + " " + pieces[-1]]
    return [(i % 2 == 1, piece) for i, piece in enumerate(pieces)]


def _balance_parentheses(text: str) -> str:
    """Drop ``)`` without an opener and ``(`` never closed."""
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
        out[index] = " "
    return "".join(out)


def _rewrite_fields(part: str) -> str:
    def replace(match: re.Match) -> str:
        name = match.group(1)
        canonical = FIELD_ALIASES.get(name.lower())
        if canonical:
            return canonical + ":"
        if name.islower() and name.isalpha():
            raise QueryError(f"unknown field '{name}:' (fields are {KNOWN_FIELDS})")
        return name + " "  # mixed case or digits: text glued to a colon
    return _FIELD.sub(replace, part)


def _rewrite_operators(part: str) -> str:
    """``-word`` → ``NOT word``, ``+word`` → ``word``; lone signs and dangling operators go."""
    part = re.sub(r"(?:(?<=\s)|^)-(?=[\w(\"])", "NOT ", part)
    part = re.sub(r"(?:(?<=\s)|^)\+(?=[\w(\"])", "", part)
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
        head = re.split(r"[*?]", value, maxsplit=1)[0]
        if len(head) < MIN_PREFIX:
            raise QueryError(
                f"'{word}': a wildcard needs at least {MIN_PREFIX} letters before it"
                " (a leading or bare wildcard would match almost everything)"
            )


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
                following is None or following in operators - {"NOT"} or following == ")"
                or (binary and (i == 0 or tokens[i - 1] in operators or tokens[i - 1] == "("))
            ):
                del tokens[i]
                changed = True
                break
    return " ".join(tokens)


def prepare(text: str, notes: list[str]) -> str:
    """Repair and normalise raw query text into something Whoosh's parser accepts.

    Raises:
        QueryError: an unknown field name or a leading/bare wildcard.
    """
    text = clean(text, notes)
    out = []
    for quoted, part in _segments(text):
        if quoted:
            if part.strip():
                out.append(f'"{part.strip()}"')
            continue
        part = _balance_parentheses(part)
        part = _rewrite_fields(part)
        _check_wildcards(part)
        out.append(_rewrite_operators(part))
    return _drop_dangling_operators(" ".join(p for p in out if p.strip()))


def _positive_words(query: wq.Query) -> list[str]:
    """Words the user asked for (not under NOT), in order, without repeats."""
    words: dict[str, None] = {}

    def walk(node: wq.Query, negated: bool) -> None:
        if isinstance(node, wq.Not):
            return
        if isinstance(node, wq.AndNot):
            walk(node.a, negated)
            return
        if isinstance(node, (wq.Term, wq.Phrase)) and not negated and node.field() in DEFAULT_FIELDS:
            original = getattr(node, "original", None)
            words[original or str(getattr(node, "text", ""))] = None
        for child in node.children():
            walk(child, negated)

    walk(query, False)
    return [w for w in words if w]


def _only_negative(query: wq.Query) -> bool:
    if isinstance(query, wq.Not):
        return True
    if isinstance(query, wq.And):
        return all(_only_negative(child) for child in query.subqueries)
    return False


def parse(text: str, schema, *, allow_empty: bool = False) -> ParsedQuery:
    """Parse query text.

    Args:
        text: what the user typed.
        schema: the index's Whoosh schema.
        allow_empty: an empty query is fine (the caller browses by filters);
            otherwise it is an error.

    Raises:
        QueryError: the query is empty (unless allowed), names an unknown
            field, starts with a wildcard, has no searchable words (only stop
            words), or only excludes.
    """
    notes: list[str] = []
    raw = text if isinstance(text, str) else ""
    paper = arxiv_id(" ".join(raw.split())) if raw.strip() else None
    if paper:
        return ParsedQuery(text=paper, query=wq.Term("id", paper), notes=notes)
    cleaned = prepare(raw, notes)
    if not cleaned:
        if allow_empty:
            return ParsedQuery(text="", query=None, notes=notes)
        raise QueryError("the query is empty")
    parser = make_parser(schema)
    try:
        query = parser.parse(cleaned, normalize=True)
    except Exception as exc:  # Whoosh's parser errors have no common base class
        raise QueryError(f"cannot parse the query {cleaned!r}: {exc}") from None
    if query is wq.NullQuery or isinstance(query, type(wq.NullQuery)):
        if allow_empty:
            return ParsedQuery(text=cleaned, query=None, notes=notes + ["the query has no searchable words"])
        raise QueryError(f"the query {cleaned!r} has no searchable words (only common words such as 'the' or 'of')")
    if _only_negative(query) and not allow_empty:
        raise QueryError(f"the query {cleaned!r} only excludes words; add a word to search for")
    return ParsedQuery(text=cleaned, query=query, words=_positive_words(query), notes=notes)


def expand_wildcards(query: wq.Query, reader, notes: list[str]) -> wq.Query:
    """Replace each prefix/wildcard node with an OR of at most :data:`MAX_EXPANSIONS` terms.

    The most frequent matching terms are kept, so ``s*`` cannot turn into a
    query over half the vocabulary. A note is added when terms were dropped.
    """
    def expand(node: wq.Query) -> wq.Query:
        if isinstance(node, (wq.Prefix, wq.Wildcard)):
            fieldname = node.field()
            if fieldname not in reader.schema:
                return wq.NullQuery
            candidates = list(node._btexts(reader)) if hasattr(node, "_btexts") else []
            if len(candidates) > MAX_EXPANSIONS:
                candidates.sort(key=lambda t: reader.doc_frequency(fieldname, t), reverse=True)
                notes.append(f"'{node.text}*' matches {len(candidates)} terms in {fieldname}; "
                             f"searched the {MAX_EXPANSIONS} most frequent")
                candidates = candidates[:MAX_EXPANSIONS]
            field = reader.schema[fieldname]
            return wq.Or([wq.Term(fieldname, field.from_bytes(t)) for t in candidates], boost=node.boost) \
                if candidates else wq.NullQuery
        if node.is_leaf():
            return node
        return node.apply(expand)

    return expand(query).normalize()


def relaxed(parsed: ParsedQuery, schema) -> wq.Query | None:
    """The same words combined with OR, for when no document has them all."""
    if len(parsed.words) < 2:
        return None
    parser = make_parser(schema, group=qparser.OrGroup)
    return parser.parse(parsed.text, normalize=True)
