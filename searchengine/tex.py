"""TeX markup in titles, abstracts and author names → readable Unicode text.

arXiv metadata is written in TeX: ``5$\\times$`` should read ``5×``,
``\\textit{in situ}`` ``in situ`` and ``Vr\\v{c}ak`` ``Vrčak``. The conversion
is pylatexenc's ``LatexNodes2Text`` (imported on first use). Text is left
exactly as it is unless it holds TeX: a backslash, or a ``$...$`` span that
opens and closes on a non-space character (inline math). So plain text with
a stray ``%``, ``_`` or ``$`` (``costs $5 and $10``) is never touched, and in
text that is converted only the TeX pieces are (a ``%`` elsewhere never
starts a TeX comment).
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from searchengine.records import Record

# Inline math: $...$ opening and closing on a non-space character ($x$, $O(n^2)$).
_MATH = re.compile(r"\$(?=[^\s$])[^$]{0,400}?(?<=[^\s\\])\$")
#: Inline math as this module recognises it (exports keep it as written).
INLINE_MATH = _MATH
_SPACE = re.compile(r"\s+")
# A tie (Fig.~3) is a space; a tilde after a space (~5 %) means "about".
_TIE = re.compile(r"(?<=\S)~(?=\S)")

_converter: Any = None  # pylatexenc's LatexNodes2Text (untyped), made on first use
_context: Any = None  # pylatexenc's default macro table, made with it


def has_tex(text: str) -> bool:
    """True when ``text`` holds TeX markup (a backslash or inline math)."""
    return "\\" in text or _MATH.search(text) is not None


# The pieces of a text that are TeX: inline math; a command with its
# arguments (\\textit{in situ}, \\cite[p. 3]{x}); an accent or escaped symbol
# (\\v{c}, \\"o, \\%); a group opened by a command ({\\em word}). One level
# of nested braces inside an argument is understood.
_ARG = r"\{(?:[^{}]|\{[^{}]*\})*\}"
_SEGMENT = re.compile(
    _MATH.pattern
    + rf"|\\[a-zA-Z]+\*?(?:\s*(?:{_ARG}|\[[^\]]*\]))*"
    + r"|\\[^a-zA-Z\s](?:\{[^{}]*\}|[a-zA-Z])?"
    + r"|\{\\[a-zA-Z]+(?:[^{}]|\{[^{}]*\})*\}"
)


def tex_to_text(text: str) -> str:
    """Return ``text`` with TeX markup rendered as Unicode; plain text unchanged.

    Only the TeX pieces are handed to pylatexenc (converting a whole abstract
    costs about 7 ms; its few pieces, a fraction of that), so the text
    around them, stray ``%`` and ``$`` included, is kept as written. Braces
    left over in a text that held TeX are dropped, a tie (``Fig.~3``)
    becomes a space, and whitespace runs
    collapse to one space. A piece that cannot be converted is kept as it is.
    """
    if not has_tex(text):
        return text
    converted = _SEGMENT.sub(lambda m: _convert(m.group()), text)
    converted = _TIE.sub(" ", converted.replace("{", "").replace("}", ""))
    return _SPACE.sub(" ", converted).strip()


def query_tex_to_text(text: str) -> str:
    """A query's TeX pieces rendered as :func:`tex_to_text` renders a record's
    (``Schr\\"odinger`` → ``Schrödinger``, ``$\\alpha$`` → ``α``), so that a
    query written as a paper writes it finds the paper. Everything else is
    kept as typed: a ``~`` (a fuzzy word's suffix in a query), braces,
    quotes and spacing."""
    if not has_tex(text):
        return text
    return _SEGMENT.sub(lambda m: _convert(m.group()), text)


_COMMAND = re.compile(r"\\[a-zA-Z]+\*?")


@functools.lru_cache(maxsize=65536)  # the same pieces recur: \alpha, \"o, $O(n)$
def _convert(piece: str) -> str:
    global _converter, _context
    if _converter is None:
        import logging

        from pylatexenc.latex2text import LatexNodes2Text
        from pylatexenc.latexwalker import get_default_latex_context_db

        # A macro missing its arguments (a bare \frac) is logged as a
        # configuration warning on stderr; it is handled below instead.
        logging.getLogger("pylatexenc").setLevel(logging.ERROR)
        _converter = LatexNodes2Text(math_mode="text", strict_latex_spaces=False)
        _context = get_default_latex_context_db()  # built once, not per piece as by default
    try:
        text: str = _converter.latex_to_text(piece, latex_context=_context)
    except Exception:  # pylatexenc is tolerant; never lose a record over markup
        return piece
    if "%s" in text or "%(" in text:
        # The macro's template could not be filled: drop the command names.
        return _COMMAND.sub("", piece)
    return text


def detex_record(record: Record) -> Record:
    """Convert the TeX in a :class:`~searchengine.records.Record`'s title, abstract and authors, in place.

    A title or abstract holding inline math is kept as written in
    :attr:`~searchengine.records.Record.tex` (the web page renders its
    formulas, :func:`math_pieces`). Returns the same record.
    """
    for name in ("title", "abstract"):
        original = getattr(record, name)
        if _MATH.search(original):
            record.tex[name] = original
    record.title = tex_to_text(record.title)
    record.abstract = tex_to_text(record.abstract)
    record.authors = [tex_to_text(name) for name in record.authors]
    return record


def math_pieces(original: str) -> list[tuple[str, str]]:
    """``[(text, tex)]`` for each inline formula of ``original`` (a title or
    abstract as written), in order: the formula's text as :func:`tex_to_text`
    writes it in the stored text (``O(n^2)``, ``α``) and its TeX without the
    dollars (``O(n^2)``, ``\\alpha``). A formula with no text is left out."""
    pieces: list[tuple[str, str]] = []
    for math in _MATH.finditer(original):
        text = _SPACE.sub(" ", _convert(math.group()).replace("{", "").replace("}", "")).strip()
        if text:
            pieces.append((text, math.group()[1:-1]))
    return pieces


def to_mathml(tex: str) -> str | None:
    """The MathML (``<math>`` element, inline) of one TeX formula, by
    latex2mathml (imported on first use); ``None`` when it does not convert
    (the caller keeps the formula's text)."""
    from latex2mathml.converter import convert

    try:
        mathml: str = convert(tex)
    except Exception:  # a formula latex2mathml cannot read: shown as text instead
        return None
    return mathml
