"""Export records and hits as BibTeX, CSV, JSON lines or RIS.

Every writer takes rows: dicts with the record's field names (``id``,
``title``, ``authors``, ``year``, ``categories``, ``url``; the dates
``submitted``, ``updated`` (ISO days or ``None``) and ``versions``;
``abstract``, ``score`` and the links and identifiers ``pdf_url``, ``doi``,
``journal_ref``, ``comments``, ``license`` when there are any), in the
order to write them. An arXiv id's abstract page, PDF and DataCite DOI
are derived when a row has none (:func:`searchengine.records.link_fields`). :func:`rows`
makes them from hits, :func:`render` writes them in a format named in
:data:`FORMATS`.

- **BibTeX** is written with ``bibtexparser``; special characters become
  TeX with pylatexenc's encoder (``×`` → ``\\texttimes``, ``&`` → ``\\&``,
  ``č`` → ``\\v{c}``), so the output parses back with any BibTeX reader.
  Records with an arXiv id become ``@misc`` entries with
  ``eprint``/``archivePrefix``/``primaryClass``, as arXiv's own export does.
  ``doi`` is the published version's DOI, else arXiv's DataCite DOI (as
  arXiv's export gives it); the journal reference goes in ``note`` (every
  style prints it; ``@misc`` has no ``journal``), ``url`` is the abstract page.
  Styles lowercase titles, so in a title a word whose capitals matter is
  braced (``{BERT}``): one with a capital after its first character (``GPU``,
  ``SpMV``, ``PyTorch``, ``3D``), and one capitalised after the title's first
  word (a proper noun: ``Gaussian``, ``Bayesian``, ``Markov``); inline math
  (``$O(n^2)$``) is kept as written. A word with a capital and a symbol
  (``Q&A``, ``C#``, ``O(n^2)`` outside math) is braced whole. A group's name
  (a collaboration, or one holding the word "and") is braced whole, so that
  it stays one name; a suffix is written as BibTeX's "Jr" part (``Okafor,
  Jr., Bo``; ``King, Jr., Martin Luther`` from ``Martin Luther King, Jr.``),
  and a surname with a capitalised particle as ``Van Assche, Walter``
  (:func:`person_parts`; Oren Patashnik, *BibTeXing*, 1988, on names and
  on the case of titles).
- **CSV** has a header row (:data:`CSV_COLUMNS`); see :func:`to_csv`.
- **JSON lines** (https://jsonlines.org/): one record per line, as
  ``/api/records/<id>`` gives it (:data:`JSONL_KEYS`).
- **RIS**: the tagged format of the *RIS Format Specifications* (Research
  Information Systems, Thomson Reuters); see :func:`to_ris`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from searchengine.records import abs_link, arxiv_doi, arxiv_id, pdf_link

if TYPE_CHECKING:
    from searchengine.results import Hit

#: The links and identifiers, as the JSON forms name them.
LINK_KEYS = ("url", "pdf_url", "doi", "arxiv_doi", "journal_ref", "comments", "license")
CSV_COLUMNS = (
    "rank", "id", "title", "authors", "year", "categories", "score", *LINK_KEYS, "submitted", "updated", "abstract",
)  # fmt: skip
#: The keys of a JSON lines row: the record as the JSON API gives it.
JSONL_KEYS = (
    "id",
    "title",
    "abstract",
    "authors",
    "year",
    "categories",
    *LINK_KEYS,
    "submitted",
    "updated",
    "versions",
)
#: BibTeX's month macros (``month = mar``), as the standard styles define them.
MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def links(record: dict[str, Any]) -> dict[str, str]:
    """A row's :data:`LINK_KEYS`, each a string: an arXiv id's abstract page,
    PDF and DataCite DOI derived when the row has none."""
    found = {key: str(record.get(key) or "") for key in LINK_KEYS}
    found["url"] = abs_link(record["id"], found["url"])
    found["pdf_url"] = pdf_link(record["id"], found["pdf_url"])
    found["arxiv_doi"] = found["arxiv_doi"] or arxiv_doi(record["id"])
    return found


def citable_doi(record: dict[str, Any]) -> str:
    """The DOI to cite: the published version's (the first, when the source gives
    several), else arXiv's DataCite DOI, else ``""``."""
    known = links(record)
    return (known["doi"].split() or [""])[0] if _is_doi(known["doi"]) else known["arxiv_doi"]


def _is_doi(text: str) -> bool:
    from searchengine.records import doi

    return bool(text.split()) and doi(text.split()[0]) is not None


@dataclass(frozen=True)
class ExportFormat:
    """An export format: its name, media type and file name extension."""

    name: str
    media_type: str
    extension: str
    label: str


#: The formats of an export, by name, in the order the web page lists them.
FORMATS = {
    "bibtex": ExportFormat("bibtex", "application/x-bibtex; charset=utf-8", "bib", "BibTeX"),
    "csv": ExportFormat("csv", "text/csv; charset=utf-8", "csv", "CSV"),
    "jsonl": ExportFormat("jsonl", "application/jsonl; charset=utf-8", "jsonl", "JSON lines"),
    "ris": ExportFormat("ris", "application/x-research-info-systems; charset=utf-8", "ris", "RIS"),
}


def rows(hits: Iterable[Hit]) -> list[dict[str, Any]]:
    """Export rows for :class:`~searchengine.results.Hit` s: their JSON form with the whole abstract."""
    return [dict(hit.to_dict(), abstract=hit.abstract) for hit in hits]


def render(format_name: str, records: Iterable[dict[str, Any]], first_rank: int = 1) -> str:
    """``records`` written in the format ``format_name`` (a key of :data:`FORMATS`).

    ``first_rank`` is the rank of the first row (CSV's ``rank`` column).

    Raises:
        KeyError: ``format_name`` is not a key of :data:`FORMATS`.
    """
    writer = {"bibtex": to_bibtex, "jsonl": to_jsonl, "ris": to_ris}.get(format_name)
    if format_name == "csv":
        return to_csv(records, first_rank=first_rank)
    if writer is None:
        raise KeyError(format_name)
    return writer(records)


# --- BibTeX --------------------------------------------------------------------

# Letters that Unicode does not decompose into an ASCII letter and a mark.
_ASCII_FOLD = str.maketrans(
    {
        "ø": "o",
        "Ø": "O",
        "æ": "ae",
        "Æ": "AE",
        "œ": "oe",
        "Œ": "OE",
        "ß": "ss",
        "ł": "l",
        "Ł": "L",
        "đ": "d",
        "Đ": "D",
        "ð": "d",
        "Ð": "D",
        "þ": "th",
        "Þ": "TH",
        "ı": "i",
        "ħ": "h",
        "Ħ": "H",
    }
)
# A person's name suffix, written after the surname ("Bo Okafor Jr.").
_NAME_SUFFIX = re.compile(r"^(?:[JS]r\.?|II|III|IV)$")
# Words of a group's name that say what it is, not which.
_GROUP_KIND = re.compile(
    r"^(?:the|and|of|for|collaborations?|collab|consortium|team|group|project|experiment|"
    r"survey|observatory|scientific)$",
    re.IGNORECASE,
)


def _key_part(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text.translate(_ASCII_FOLD)).encode("ascii", "ignore").decode()
    return re.sub(r"[^A-Za-z0-9]", "", ascii_text).lower()


# Surname particles, also when capitalised ("Walter Van Assche"); a lower-case
# word inside a name is one too ("de la Vallée Poussin").
_PARTICLES = frozenset(
    "van von vom vander de del della dei der den des di da das do dos du la le lo ter ten zu bin ibn af".split()
)
# A suffix after a comma: "Martin Luther King, Jr.".
_COMMA_SUFFIX = re.compile(r"^(?P<base>.+?),\s*(?P<suffix>[JS]r\.?|II|III|IV)$")


def person_parts(name: str) -> tuple[str, str, str] | None:
    """``(given, surname, suffix)`` of a person's name, the surname with its
    particles: ``Bo van Okafor Jr.`` → ``("Bo", "van Okafor", "Jr.")``,
    ``Walter Van Assche`` → ``("Walter", "Van Assche", "")``, ``Charles de la
    Vallée Poussin`` → ``("Charles", "de la Vallée Poussin", "")``, ``Martin
    Luther King, Jr.`` → ``("Martin Luther", "King", "Jr.")``; a name written
    ``Surname, Given`` is read as such. ``None`` for a single word. (A given
    name spelled like a particle, as Vietnamese "Van", is read as one.)"""
    suffix = ""
    base = name.strip()
    match = _COMMA_SUFFIX.match(base)
    if match:
        base, suffix = match["base"], match["suffix"]
    if "," in base:
        surname, _, given = base.partition(",")
        return (given.strip(), surname.strip(), suffix) if surname.strip() and given.strip() else None
    words = base.split()
    if not suffix and len(words) >= 3 and _NAME_SUFFIX.match(words[-1]):
        suffix = words.pop()
    if len(words) < 2:
        return None
    start = next(
        (i for i in range(1, len(words) - 1) if words[i][:1].islower() or words[i].lower() in _PARTICLES),
        len(words) - 1,
    )
    return " ".join(words[:start]), " ".join(words[start:]), suffix


def _last_name(author: str) -> str:
    from searchengine.records import is_group_name

    if is_group_name(author):  # "ATLAS Collaboration": its distinctive word
        return next((w for w in author.split() if not _GROUP_KIND.match(w)), author)
    parts = person_parts(author)
    if parts:
        return parts[1].split()[-1]
    words = author.split()
    return words[-1] if words else ""


def citation_key(record: dict[str, Any]) -> str:
    """``<first author's surname><year><first title word>``, e.g. ``qian2026cbspmv``,
    in ASCII letters (``Brønholt`` → ``bronholt``); a group is keyed by its
    distinctive word (``ATLAS Collaboration`` → ``atlas``)."""
    author = _key_part(_last_name(record["authors"][0])) if record.get("authors") else "anon"
    year = str(record["year"]) if record.get("year") else ""
    words = [_key_part(w) for w in (record.get("title") or "").split()]
    first = next((w for w in words if len(w) > 3), next((w for w in words if w), "paper"))
    return f"{author or 'anon'}{year}{first}"


_encoder = None
# Text of these characters only is the same in TeX: the encoder (about half
# a millisecond a call) is skipped for it.
_PLAIN = re.compile(r"[A-Za-z0-9 ,.;:!?()'/+=*@\[\]-]*")


def _tex(text: str) -> str:
    """Plain text as TeX: special characters escaped, non-ASCII letters as accents or macros."""
    global _encoder
    if _PLAIN.fullmatch(text):
        return text
    if _encoder is None:
        import logging

        from pylatexenc.latexencode import UnicodeToLatexEncoder

        # A character without a TeX form is kept as it is, which BibTeX reads
        # as UTF-8; pylatexenc would also log a warning for each one on stderr.
        logging.getLogger("pylatexenc").setLevel(logging.ERROR)
        _encoder = UnicodeToLatexEncoder(unknown_char_policy="keep")
    latex: str = _encoder.unicode_to_latex(text)  # pylatexenc has no type hints
    return latex


# A word: letters and digits. One to protect has a capital after its first character.
_WORD = re.compile(r"[^\W_]+")


def _protected(word: str, first: bool) -> bool:
    """Whether a title's word keeps its case: a capital after its first
    character (``GPU``, ``PyTorch``, ``3D``), or a capital first unless it is
    the title's first word (``Gaussian``, ``Bayesian``: a proper noun)."""
    return any(ch.isupper() for ch in word[1:]) or (word[:1].isupper() and not first)


def _brace(tex: str) -> str:
    # "{\v{C}...}" would be a BibTeX "special character", lowercased by
    # styles: a second brace makes it a plain protected group.
    return "{{" + tex + "}}" if tex.startswith("\\") else "{" + tex + "}"


def bibtex_title(title: str) -> str:
    """A title as a BibTeX field value: TeX-escaped, capitals protected, math kept.

    >>> bibtex_title("BERT for GPU kernels in $O(n^2)$ & more")
    '{BERT} for {GPU} kernels in $O(n^2)$ \\\\& more'
    """
    from searchengine.tex import INLINE_MATH

    parts: list[str] = []
    position = 0
    first = _WORD.search(title)
    seen = [first.start() if first else -1]  # where the title's first word starts, till it is met
    for math in INLINE_MATH.finditer(title):
        parts.append(_protect_words(title[position : math.start()], position, seen))
        parts.append(math.group())
        position = math.end()
    parts.append(_protect_words(title[position:], position, seen))
    return "".join(parts)


# A token with a capital and a symbol inside it (Q&A, C#, C++, O(n^2)): braced
# whole, or styles would print "Q\&a" and "o(n^2)".
_SYMBOLS = frozenset("&#+^=<>*/_~|()[]")
_OUTER = ".,;:!?\"'"


def _symbolic(core: str) -> bool:
    inner = core.strip("()[]")
    return any(ch.isupper() for ch in core) and any(ch in _SYMBOLS for ch in inner)


def _protect_words(text: str, offset: int, first: list[int]) -> str:
    """``text`` (at ``offset`` in the title) with its words protected; ``first``
    holds where the title's first word starts."""
    parts: list[str] = []
    position = 0
    for token in re.finditer(r"\S+", text):
        value = token.group()
        lead = len(value) - len(value.lstrip(_OUTER))
        core = value.strip(_OUTER)
        if core and _symbolic(core):
            start = token.start() + lead
            parts.append(_protect_capitals(text[position:start], offset + position, first))
            parts.append(_brace(_tex(core)))
            position = start + len(core)
    parts.append(_protect_capitals(text[position:], offset + position, first))
    return "".join(parts)


def _protect_capitals(text: str, offset: int, first: list[int]) -> str:
    parts: list[str] = []
    position = 0
    for word in _WORD.finditer(text):
        if _protected(word.group(), offset + word.start() == first[0]):
            parts.append(_tex(text[position : word.start()]))
            parts.append(_brace(_tex(word.group())))
            position = word.end()
    parts.append(_tex(text[position:]))
    return "".join(parts)


_AND = re.compile(r"\sand\s", re.IGNORECASE)


def bibtex_author(name: str) -> str:
    """An author name as BibTeX: TeX-escaped. A group's name (a collaboration,
    or any name holding the word "and", which BibTeX would read as two names)
    is braced whole (``{Barnes and Noble Detector Collaboration}``); a name
    with a suffix is written ``Surname, Jr., Given`` so that the suffix is
    BibTeX's "Jr" part (``Okafor, Jr., Bo``), not a surname, and one whose
    surname starts with a capitalised particle as ``Van Assche, Walter`` (else
    BibTeX would read "Van" as a given name). Lower-case particles are
    BibTeX's "von" part as written (``Charles de la Vall\'ee Poussin``)."""
    from searchengine.records import is_group_name

    if _AND.search(name) or is_group_name(name):
        return "{" + _tex(name) + "}"
    parts = person_parts(name)
    if parts is not None:
        given, surname, suffix = parts
        if suffix:
            return f"{_tex(surname)}, {_tex(suffix)}, {_tex(given)}"
        if " " in surname and surname[:1].isupper():
            return f"{_tex(surname)}, {_tex(given)}"
    return _tex(name)


def _url(url: str) -> str:
    # The url field is read verbatim: only what would break the entry is encoded.
    return re.sub(r"[{}\\\s]", lambda m: f"%{ord(m.group()):02X}", url)


def to_bibtex(records: Iterable[dict[str, Any]]) -> str:
    """BibTeX ``@misc`` entries for records (dicts with the Record's field names).

    Citation keys are :func:`citation_key`, made unique with ``a``, ``b``,
    ... suffixes. Titles as :func:`bibtex_title`, authors as
    :func:`bibtex_author`; the url is written as it is, braces, backslashes
    and spaces percent-encoded.
    """
    import bibtexparser
    from bibtexparser.middlewares.parsestack import default_unparse_stack
    from bibtexparser.model import Block, Entry, Field

    entries: list[Block] = []
    used: dict[str, int] = {}
    for record in records:
        key = citation_key(record)
        count = used.get(key, 0)
        used[key] = count + 1
        if count:
            key += "abcdefghijklmnopqrstuvwxyz"[(count - 1) % 26] * (1 + (count - 1) // 26)
        fields = [Field("title", bibtex_title(record["title"]))]
        if record.get("authors"):
            fields.append(Field("author", " and ".join(bibtex_author(name) for name in record["authors"])))
        if record.get("year"):
            fields.append(Field("year", str(record["year"])))
        if record.get("submitted"):
            # month as the styles' macro (unbraced); date for biblatex (ISO 8601).
            fields.append(Field("month", MONTHS[int(record["submitted"][5:7]) - 1], enclosing="no-enclosing"))
            fields.append(Field("date", record["submitted"]))
        eprint = arxiv_id(record["id"])
        if eprint:
            fields.append(Field("eprint", eprint))
            fields.append(Field("archivePrefix", "arXiv"))
            if record.get("categories"):
                fields.append(Field("primaryClass", _tex(record["categories"][0])))
        known = links(record)
        if citable_doi(record):
            fields.append(Field("doi", _url(citable_doi(record))))
        if known["journal_ref"]:
            fields.append(Field("note", _tex(known["journal_ref"])))
        if known["url"]:
            fields.append(Field("url", _url(known["url"])))
        entries.append(Entry("misc", key, fields))
    library = bibtexparser.Library(entries)
    # The library is ours: its middlewares may change it in place instead of
    # copying every entry (a copy costs more than writing it).
    return bibtexparser.write_string(library, unparse_stack=default_unparse_stack(allow_inplace_modification=True))


# --- CSV -----------------------------------------------------------------------


def _cell(value: object) -> str:
    """A CSV cell that a spreadsheet will not run as a formula.

    A text starting with ``=``, ``+``, ``-``, ``@`` or a tab/return is
    prefixed with ``'`` (OWASP's advice against CSV injection).
    """
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def to_csv(hits: Iterable[dict[str, Any]], first_rank: int = 1) -> str:
    """CSV with a header row (:data:`CSV_COLUMNS`, the abstract last); list
    fields joined (authors with ``; ``, categories with spaces).

    Text cells that a spreadsheet would read as a formula are prefixed with
    ``'`` (see :func:`_cell`); numbers are written as they are.
    """
    import csv
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for rank, hit in enumerate(hits, start=first_rank):
        writer.writerow(
            [
                rank,
                _cell(hit["id"]),
                _cell(hit["title"]),
                _cell("; ".join(hit.get("authors") or [])),
                hit.get("year") if hit.get("year") is not None else "",
                _cell(" ".join(hit.get("categories") or [])),
                hit.get("score", ""),
                *(_cell(value) for value in links(hit).values()),
                hit.get("submitted") or "",
                hit.get("updated") or "",
                _cell(hit.get("abstract") or ""),
            ]
        )
    return buffer.getvalue()


# --- JSON lines ----------------------------------------------------------------


def to_jsonl(records: Iterable[dict[str, Any]]) -> str:
    """One JSON object per line, keys :data:`JSONL_KEYS` in that order, UTF-8 as is.

    A missing abstract, link or identifier is ``""``, a missing year or
    date ``null``; ``versions`` is ``[{"version": 1, "date": "YYYY-MM-DD"},
    ...]`` (``[]`` when unknown).
    """
    import json

    lines = []
    for record in records:
        row = {key: record.get(key) for key in JSONL_KEYS}
        row["abstract"] = row["abstract"] or ""
        row.update(links(record))
        row["authors"] = list(row["authors"] or [])
        row["categories"] = list(row["categories"] or [])
        row["versions"] = list(row["versions"] or [])
        lines.append(json.dumps(row, ensure_ascii=False) + "\n")
    return "".join(lines)


# --- RIS -----------------------------------------------------------------------

#: RIS lines end with CR LF, as the RIS specification asks.
RIS_NEWLINE = "\r\n"


def _ris_line(tag: str, value: str) -> str:
    # A tag line is "XX  - value"; a line break inside a value would start a bogus tag.
    return f"{tag}  - {' '.join(str(value).split())}{RIS_NEWLINE}"


def ris_author(name: str) -> str:
    """An author name as RIS writes it: ``Surname, Given, Suffix`` (``Guy L.
    Steele Jr.`` → ``Steele, Guy L., Jr.``; ``Ludwig van Beethoven`` → ``van
    Beethoven, Ludwig``). A name already written ``Surname, Given``, a
    group's name and a single word are kept as written."""
    from searchengine.records import is_group_name

    parts = person_parts(name)
    if parts is None or is_group_name(name):
        return name
    given, surname, suffix = parts
    return f"{surname}, {given}, {suffix}" if suffix else f"{surname}, {given}"


def to_ris(records: Iterable[dict[str, Any]]) -> str:
    """RIS records, one per row, in the order given.

    Follows the *RIS Format Specifications* (Research Information Systems,
    Thomson Reuters): each line is a two-character tag, two spaces,
    ``-``, a space and the value, ending with CR LF; a record opens with
    ``TY`` and closes with ``ER  - ``. Tags written, in this order:

    - ``TY``: ``UNPB`` (unpublished work) for an arXiv id, since an arXiv
      preprint is not a journal's article; ``GEN`` (generic) for records
      from other sources, whose kind of publication is not known.
    - ``ID``: the record id; ``TI``: the title.
    - ``AU``: one line per author, ``Surname, Given, Suffix`` (:func:`ris_author`).
    - ``PY``: the year (four digits), when known.
    - ``DA``: the submitted day as ``YYYY/MM/DD/`` (the specification's
      date form, its last part empty), when known.
    - ``AB``: the abstract, on one line, when there is one.
    - ``KW``: one line per category.
    - ``DO``: the DOI to cite (:func:`citable_doi`).
    - ``JO``: the journal reference, when there is one.
    - ``UR``: the record's link (for an arXiv id without one, its abs page).
    - ``L1``: the PDF's link (for an arXiv id without one, arXiv's PDF).

    Whitespace runs, line breaks included, become one space.
    """
    lines: list[str] = []
    for record in records:
        eprint = arxiv_id(record["id"])
        lines.append(_ris_line("TY", "UNPB" if eprint else "GEN"))
        lines.append(_ris_line("ID", record["id"]))
        lines.append(_ris_line("TI", record["title"]))
        lines.extend(_ris_line("AU", ris_author(name)) for name in record.get("authors") or [])
        if record.get("year"):
            lines.append(_ris_line("PY", f"{int(record['year']):04d}"))
        if record.get("submitted"):
            lines.append(_ris_line("DA", record["submitted"].replace("-", "/") + "/"))
        if record.get("abstract"):
            lines.append(_ris_line("AB", record["abstract"]))
        lines.extend(_ris_line("KW", code) for code in record.get("categories") or [])
        known = links(record)
        if citable_doi(record):
            lines.append(_ris_line("DO", citable_doi(record)))
        if known["journal_ref"]:
            lines.append(_ris_line("JO", known["journal_ref"]))
        if known["url"]:
            lines.append(_ris_line("UR", known["url"]))
        if known["pdf_url"]:
            lines.append(_ris_line("L1", known["pdf_url"]))
        lines.append("ER  - " + RIS_NEWLINE)
    return "".join(lines)
