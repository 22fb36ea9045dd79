"""The one shape that passes from readers to the indexer.

A reader turns an input file into a stream of :class:`Record` objects, and of
:class:`Problem` objects for the parts of the file it had to skip. Nothing
downstream of the readers knows which format a record came from.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable


@dataclass
class Record:
    """One paper, as read from an input file.

    Attributes:
        id: stable identifier, unique within an index (an arXiv id when the
            input carries one, otherwise derived from the title).
        title: title text as written in the source (whitespace collapsed).
        abstract: abstract text; empty string when the source has none.
        authors: author names in source order, each a whole name.
        year: publication year, or ``None`` when unknown.
        categories: subject categories, primary first (e.g. ``["cs.DC"]``).
        url: link to the paper, or empty string.
        source: ``"file:line"`` where the record starts, for messages.
        version: the arXiv version number (2 for ``2101.00003v2``), or
            ``None`` when the source gives none; of two records with one id,
            the higher version replaces the lower.
        submitted: the day of the first version (arXiv's "Submitted"), a UTC
            calendar day, or ``None`` when the source gives none; when known,
            ``year`` is its year.
        updated: the day the source last updated the paper, or ``None``.
        versions: ``[(version number, day)]`` as far as the source gives
            them, oldest first (``[(1, date(2007, 4, 2)), (2, ...)]``).
        notes: what reading left out of this record (a date that is not a
            date), reported by :func:`searchengine.readers.read_records` as
            notes; never stored.
        tex: the title and abstract as the source wrote them, by field name
            (``{"title": "... $O(n^2)$ ..."}``), for those that hold inline
            math (:func:`searchengine.tex.detex_record`): the web page renders
            their formulas; ``title`` and ``abstract`` hold the text that is
            searched, shown in snippets and exported.

    Links and identifiers, as the source gives them (empty when it gives
    none; :func:`abs_link`, :func:`pdf_link` and :func:`arxiv_doi` derive
    arXiv's own for an arXiv id):
        pdf_url: link to the full text (PDF).
        doi: the published version's DOI, bare (``10.1103/PhysRevD.76.013009``).
        journal_ref: the journal reference (``Phys.Rev.D76:013009,2007``).
        comments: the authors' comments (``37 pages, 15 figures``).
        license: the license's URL or name.
    """

    id: str
    title: str
    abstract: str = ""
    authors: list[str] = field(default_factory=list)
    year: int | None = None
    categories: list[str] = field(default_factory=list)
    url: str = ""
    source: str = ""
    version: int | None = None
    # Dates, kept apart from the fields above.
    submitted: date | None = None
    updated: date | None = None
    versions: list[tuple[int, date]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list, repr=False, compare=False)
    tex: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    # --- links and identifiers -------------------------------------------
    pdf_url: str = ""
    doi: str = ""
    journal_ref: str = ""
    comments: str = ""
    license: str = ""

    @property
    def journal(self) -> str:
        """The journal's name in :attr:`journal_ref` (:func:`journal_name`), ``""`` when none."""
        return journal_name(self.journal_ref)

    def merged_with(self, other: Record) -> Record:
        """Return this record with ``other``'s authors and categories added.

        Used when the same paper arrives twice (e.g. on two author pages):
        values keep their first-seen order and appear once; every other field
        keeps this record's value unless it is empty here.
        """
        return Record(
            id=self.id,
            title=self.title or other.title,
            abstract=self.abstract or other.abstract,
            authors=_union(self.authors, other.authors),
            year=self.year if self.year is not None else other.year,
            categories=_union(self.categories, other.categories),
            url=self.url or other.url,
            source=self.source,
            version=self.version if self.version is not None else other.version,
            submitted=self.submitted or other.submitted,
            updated=self.updated or other.updated,
            versions=self.versions or other.versions,
            tex={**other.tex, **self.tex} if self.tex or other.tex else {},
            # --- links and identifiers ---
            **{name: getattr(self, name) or getattr(other, name) for name in LINK_FIELDS},
        )


#: The Record's link and identifier fields (strings, ``""`` when unknown).
LINK_FIELDS = ("pdf_url", "doi", "journal_ref", "comments", "license")

# A year leading a journal reference ("2020 J. Phys.: Conf. Ser. 1234").
_LEADING_YEAR = re.compile(r"^\(?\d{4}\)?[\s,.:;]+")
# A dot joined to the next word ("Phys.Rev.D"): a space goes between.
_DOT_JOINED = re.compile(r"\.(?=[^\W\d_])")
# What may end the name before the numbers: separators and volume words.
_NAME_TAIL = re.compile(r"(?:[\s,;:(\[-]+|\b(?:vol|volume|no|nr|pp?)\b\.?)+$", re.IGNORECASE)


def journal_name(journal_ref: str) -> str:
    """The journal's name in a journal reference: the text before its first
    number (the volume or year), spaces collapsed and a dot joined to the
    next word spaced out; ``""`` when the reference has none.

    ``"Phys. Rev. D 102, 034501 (2020)"`` → ``"Phys. Rev. D"``;
    ``"Phys.Rev.D76:013009,2007"`` → ``"Phys. Rev. D"``;
    ``"J. Low. Temp. Phys. Vol. 140 pp77-89"`` → ``"J. Low. Temp. Phys."``.
    """
    text = " ".join(journal_ref.split())
    text = _LEADING_YEAR.sub("", text)
    name = re.split(r"\d", text, maxsplit=1)[0]
    name = _NAME_TAIL.sub("", name)
    return " ".join(_DOT_JOINED.sub(". ", name).split())


@dataclass(frozen=True)
class Problem:
    """A part of an input file that could not be read as a record.

    Attributes:
        path: the file, as given by the user.
        line: 1-based line number where the bad record starts (0 if unknown).
        reason: what is wrong, in a few words.
        skipped: whether the record (or file) was left out; ``False`` for a
            note about a record indexed without a part of it (an author
            name that is only punctuation).
        cut_off: the file ended early (a truncated ``.gz``): the rest of it
            is missing, which makes the run a failure.
    """

    path: str
    line: int
    reason: str
    skipped: bool = True
    cut_off: bool = False

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}"

    @property
    def kind(self) -> str:
        """The reason with its particulars (quoted values, numbers) masked:
        problems of one kind differ only in the record they are about."""
        return _PARTICULARS.sub("…", self.reason)


# A quoted value or a number in a problem's reason (what :attr:`Problem.kind` masks).
_PARTICULARS = re.compile(r"'[^']*'|\d+")


def group_problems(problems: Iterable[Problem]) -> list[tuple[Problem, int]]:
    """``[(first problem of a kind, how many of that kind)]`` in the order each
    kind was first met (:attr:`Problem.kind`, per file: a skipped file is its
    own kind)."""
    groups: dict[tuple[bool, str], tuple[Problem, int]] = {}
    for problem in problems:
        key = (problem.skipped, problem.kind if problem.line else f"{problem.path}\0{problem.reason}")
        first, count = groups.get(key, (problem, 0))
        groups[key] = (first, count + 1)
    return list(groups.values())


def _union(first: list[str], second: list[str]) -> list[str]:
    seen = dict.fromkeys(first)
    seen.update(dict.fromkeys(second))
    return list(seen)


_SPACE = re.compile(r"\s+")


# Words that make a name a group's, whose "and" is part of it ("Barnes and
# Noble Detector Collaboration"), not a list of people.
_GROUP_WORDS = re.compile(
    r"\b(?:collaborations?|collab|consortium|team|group|project|experiment|survey|observatory|"
    r"institute|laboratory|network|alliance|association|society|organi[sz]ation|initiative|council|"
    r"committee|centre|center|university|inc|ltd|corporation)\b",
    re.IGNORECASE,
)
_AND = re.compile(r"\s+and\s+|^and\s+|\s+and$")
_COMMA, _SEMICOLON, _COMMA_SPACED = re.compile(","), re.compile(";"), re.compile(r"\s*,\s*")
# Anything split_authors may cut at or unwrap: without one, a string is one name.
_SEPARATOR = re.compile(r"[,;{}]|(?:^|\s)and(?:\s|$)")
# A name's part that follows its comma without being given names: "King, Jr., Martin".
_SUFFIX = re.compile(r"^(?:jr|sr|[ivx]+)\.?$", re.IGNORECASE)
# The same written last ("Smith, John, Jr."): only the common ones, since a
# third bare name there may be a person ("Wang, Li, Xi").
_SUFFIX_LAST = re.compile(r"^(?:jr|sr|ii|iii|iv)\.?$", re.IGNORECASE)
# A surname as written before its comma: one word, maybe with particles ("van der Berg").
_SURNAME = re.compile(r"^(?:(?:[a-z]+|d'|de|van|von|der|den|del|della|la|le|du|da|dos|di)\s+)*[^\W\d_][\w'\-.]*$")
# Given names ending in lower-case particles ("J. van der", ADS's "Holt Brink, J. van der"):
# what is before the comma is a surname, however many words it has.
_GIVEN_THEN_PARTICLES = re.compile(r"^\S.*?\s(?:van|von|der|den|de|del|della|di|da|dos|du|la|le|ten|ter)$")


def _top_level_split(text: str, separator: re.Pattern[str]) -> list[str]:
    """``text`` cut at ``separator``, except inside braces (BibTeX's ``{Barnes and Noble}``)."""
    if "{" not in text and "}" not in text:  # nearly every name: cut by the regex engine
        pieces, start = [], 0
        for cut in separator.finditer(text):
            if cut.end() > cut.start():
                pieces.append(text[start : cut.start()])
                start = cut.end()
        pieces.append(text[start:])
        return pieces
    pieces, depth, start, i = [], 0, 0, 0
    while i < len(text):
        ch = text[i]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(depth - 1, 0)
        elif depth == 0:
            match = separator.match(text, i)
            if match and match.end() > i:
                pieces.append(text[start:i])
                start = i = match.end()
                continue
        i += 1
    pieces.append(text[start:])
    return pieces


def _unbrace(name: str) -> str:
    name = name.strip()
    if name.startswith("{") and name.endswith("}") and name.count("{") == 1:
        name = name[1:-1].strip()
    return name


def _inverted(name: str) -> str | None:
    """ "Last, First" (or "Last, Jr., First", "Last, First, Jr.") as "First Last" ("First Last Jr."); ``None``
    when ``name`` is not in that form."""
    parts = [p.strip() for p in _top_level_split(name, _COMMA)]
    if len(parts) == 3 and _SUFFIX.match(parts[1]):
        last, suffix, first = parts
    elif len(parts) == 3 and _SUFFIX_LAST.match(parts[2]):  # "Smith, John, Jr." (RIS, CSL)
        last, first, suffix = parts
    elif len(parts) == 2:
        (last, first), suffix = parts, ""
    else:
        return None
    if not last or not first or _SUFFIX.match(first):
        return None
    if not (_SURNAME.match(_unbrace(last)) or _GIVEN_THEN_PARTICLES.match(first)):
        return None
    return " ".join(p for p in (first, _unbrace(last), suffix) if p)


def split_authors(text: str) -> list[str]:
    """The people named by one author string, each a whole name, in order.

    Reads the forms author lists are written in (sources of CSV, JSON lines
    and BibTeX):

    * ``Lovelace, Ada; Babbage, C.`` (semicolons): one person each;
    * ``Lovelace, Ada and Babbage, Charles`` (BibTeX): one person per
      ``and``, each "Last, First" turned into "First Last";
    * ``A. Lovelace, C. Babbage and M. Somerville`` (arXiv's): commas and
      ``and`` separate people;
    * a single ``Lovelace, Ada`` (a one-word surname before the comma) is
      one person, ``Ada Lovelace``.

    A name with the word of a group (``Barnes and Noble Detector
    Collaboration``, ``ATLAS Team``) or in braces (BibTeX's ``{Barnes and
    Noble}``) keeps its ``and``. Empty pieces are dropped.
    """
    text = text.strip()
    if not text:
        return []
    if not _SEPARATOR.search(text):  # one name as it stands (nearly every name of a list)
        return [text]
    if ";" in text:
        names = [piece for piece in _top_level_split(text, _SEMICOLON)]
        return [n for n in (_inverted(name) or _unbrace(name) for name in names) if n]
    group = _GROUP_WORDS.search(text) is not None
    people = [] if group and "," not in text else _top_level_split(text, _AND)
    # BibTeX: every person "Last, First", or a group's name without a comma.
    if (
        len(people) > 1
        and any(_inverted(p) for p in people)
        and all(
            _inverted(p) or ("," not in p and (_GROUP_WORDS.search(p) or p.strip().startswith("{"))) for p in people
        )
    ):
        return [_inverted(p) or _unbrace(p) for p in people]
    if group and "," not in text:
        return [_unbrace(text)]
    single = _inverted(text)
    if single and " and " not in text:
        return [single]
    names = []
    commas = [piece for piece in _top_level_split(text, _COMMA_SPACED) if piece.strip()]
    for piece in commas:
        if _SUFFIX.match(piece.strip()) and names:  # "Martin Luther King, Jr."
            names[-1] += ", " + piece.strip()
        elif _GROUP_WORDS.search(piece):
            names.append(_unbrace(_AND.sub("", piece) if _AND.match(piece) else piece))
        else:
            names.extend(_top_level_split(piece, _AND))
    return [n for n in (_unbrace(name) for name in names) if n]


def is_group_name(name: str) -> bool:
    """Whether ``name`` is a group's (``ATLAS Collaboration``, ``Planck
    Consortium``), not a person's: it holds one of the group words."""
    return _GROUP_WORDS.search(name) is not None


def has_name(text: str) -> bool:
    """Whether an author string holds a letter or digit (``":"`` does not: no one's name)."""
    return any(ch.isalnum() for ch in text)


_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """Collapse runs of whitespace (line breaks included) into single spaces.

    Also applies Unicode NFC so that composed and decomposed accents compare
    equal, drops a leading byte-order mark, and replaces a lone UTF-16
    surrogate (JSON's ``"\\ud800"`` escape without its pair: no character,
    and text holding one cannot be written as UTF-8) with U+FFFD.
    """
    if not text.isascii():
        text = _SURROGATE.sub("\ufffd", text)
    # str.split() cuts at the characters the regex \s matches, several times faster than a sub
    return " ".join(unicodedata.normalize("NFC", text.lstrip("\ufeff")).split())


def title_key(title: str) -> str:
    """Normalise a title for identity: case, accents, punctuation and spacing ignored."""
    decomposed = unicodedata.normalize("NFKD", title.casefold())
    return "".join(ch for ch in decomposed if ch.isalnum())


def title_id(title: str) -> str:
    """A stable id for a paper that has no identifier of its own.

    Derived from :func:`title_key`, so the same paper read from two pages, or
    re-indexed later, gets the same id: ``"t-"`` followed by 12 hex digits of
    the SHA-1 of the normalised title.
    """
    import hashlib  # (here: only records without an id need it)

    digest = hashlib.sha1(title_key(title).encode("utf-8")).hexdigest()
    return "t-" + digest[:12]


# New-style arXiv ids (YYMM.NNNN or YYMM.NNNNN since 2015) and old-style ones
# (archive[.SUBJ]/YYMMNNN), each with an optional version suffix.
_ARXIV_ID = re.compile(
    r"(?:arxiv:)?(?P<id>\d{4}\.\d{4,5}|[a-z][a-z-]*(?:\.[a-z]{2})?/\d{7})(?P<version>v\d+)?",
    re.IGNORECASE,
)
_ARXIV_URL = re.compile(
    r"^(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf|html)/(?P<rest>.+?)(?:\.pdf)?/?$", re.IGNORECASE
)


def arxiv_id(text: str) -> str | None:
    """The bare arXiv id that ``text`` names, or ``None``.

    Accepts ``2101.00001``, ``2101.00001v2``, ``arXiv:2101.00001``,
    ``hep-th/9901001`` and abs/pdf URLs of either; the version suffix is
    dropped. Old-style archive names are lower-cased, the subject class
    (``math.AG/0101001``) upper-cased, as arXiv writes them.
    """
    text = text.strip()
    url = _ARXIV_URL.match(text)
    if url:
        text = url.group("rest")
    match = _ARXIV_ID.fullmatch(text)
    if not match:
        return None
    found = match.group("id")
    if "/" in found:
        archive, number = found.split("/")
        if "." in archive:
            name, subject = archive.split(".")
            archive = f"{name.lower()}.{subject.upper()}"
        else:
            archive = archive.lower()
        found = f"{archive}/{number}"
    return found


def sort_title(title: str) -> str:
    """``title`` folded for case and accents, from its first letter or digit:
    the key of the ``title`` sort order in every engine (compared by code
    point), so ``"Quoted" titles`` and ``(Un)bounded`` sort under Q and U.
    A title without a letter or digit keeps its punctuation."""
    decomposed = unicodedata.normalize("NFKD", title.casefold())
    folded = "".join(ch for ch in decomposed if not unicodedata.combining(ch)).strip()
    start = next((i for i, ch in enumerate(folded) if ch.isalnum()), 0)
    return folded[start:]


# --- links and identifiers ---------------------------------------------------

#: The prefix of arXiv's DataCite DOIs (``10.48550/arXiv.2503.11742``).
ARXIV_DOI_PREFIX = "10.48550/arXiv."
# A DOI: "10.", a registrant code, "/", a suffix of any printable characters
# but spaces (the DOI Handbook, section 2.2).
_DOI = re.compile(r"10\.\d{4,9}(?:\.\d+)*/\S+")
_DOI_URL = re.compile(r"^(?:https?://)?(?:dx\.)?doi\.org/", re.IGNORECASE)
_DOI_PREFIX = re.compile(r"^doi:\s*", re.IGNORECASE)


def doi(text: str) -> str | None:
    """The bare DOI that ``text`` names, or ``None``.

    Accepts ``10.1103/PhysRevB.76.125117``, ``doi:10.1103/...``,
    ``https://doi.org/10.1103/...`` (also ``dx.doi.org``, ``http``) and
    a percent-encoded URL. The DOI is returned as written (DOIs compare
    case-insensitively: :func:`doi_key`).
    """
    from urllib.parse import unquote

    text = (text or "").strip()
    text = _DOI_PREFIX.sub("", text)
    if _DOI_URL.match(text):
        text = unquote(_DOI_URL.sub("", text))
    return text if _DOI.fullmatch(text) else None


def doi_key(value: str) -> str:
    """A DOI as indexed and searched: case folded (DOIs are case-insensitive)."""
    return value.strip().lower()


def arxiv_doi(record_id: str) -> str:
    """arXiv's DataCite DOI of a paper with an arXiv id (``10.48550/arXiv.2503.11742``),
    else ``""``; arXiv registers one for every paper, new and old."""
    found = arxiv_id(record_id) if record_id else None
    return ARXIV_DOI_PREFIX + found if found and found == record_id else ""


def arxiv_doi_id(key: str) -> str | None:
    """The arXiv id that arXiv's DOI ``key`` (as :func:`doi_key`) names
    (``10.48550/arxiv.2503.11742`` → ``2503.11742``), else ``None``."""
    prefix = ARXIV_DOI_PREFIX.lower()
    if not key.startswith(prefix):
        return None
    found = arxiv_id(key[len(prefix) :])  # as arXiv writes it: math.AG/0101001
    return found if found and found.lower() == key[len(prefix) :] else None


def doi_keys(record: Record) -> list[str]:
    """The DOIs a record is found by: its own and, for an arXiv id, arXiv's; as :func:`doi_key`."""
    values = [doi_key(v) for v in (*record.doi.split(), arxiv_doi(record.id)) if v]
    return list(dict.fromkeys(values))


def source_doi(text: str) -> str:
    """A source's DOI field cleaned: each DOI bare (a ``doi:`` or ``https://doi.org/``
    form unwrapped), several separated by one space; text that is no DOI is kept
    as written (shown, never linked)."""
    return " ".join(doi(part) or part for part in clean_text(text or "").split())


def abs_link(record_id: str, url: str = "") -> str:
    """The paper's abstract page: ``url`` when the source gave one, else
    ``https://arxiv.org/abs/ID`` for an arXiv id, else ``""``."""
    found = arxiv_id(record_id) if not url and record_id else None
    return url or (f"https://arxiv.org/abs/{found}" if found and found == record_id else "")


def pdf_link(record_id: str, pdf_url: str = "") -> str:
    """The paper's PDF: ``pdf_url`` when the source gave one, else
    ``https://arxiv.org/pdf/ID`` for an arXiv id (its latest version), else ``""``."""
    found = arxiv_id(record_id) if not pdf_url and record_id else None
    return pdf_url or (f"https://arxiv.org/pdf/{found}" if found and found == record_id else "")


def link_fields(record: Record) -> dict[str, str]:
    """The links and identifiers of ``record`` as the JSON forms give them: ``url``
    (abstract page) and ``pdf_url`` derived for an arXiv id when the source gave
    none, ``doi`` (the published version's), ``arxiv_doi`` (:func:`arxiv_doi`),
    ``journal_ref``, ``comments`` and ``license`` (``""`` when unknown)."""
    return {
        "url": abs_link(record.id, record.url),
        "pdf_url": pdf_link(record.id, record.pdf_url),
        "doi": record.doi,
        "arxiv_doi": arxiv_doi(record.id),
        "journal_ref": record.journal_ref,
        "comments": record.comments,
        "license": record.license,
    }
