"""TeX markup in titles, abstracts and author names → readable Unicode text.

arXiv metadata is written in TeX: ``5$\\times$`` should read ``5×``,
``\\textit{in situ}`` ``in situ`` and ``Vr\\v{c}ak`` ``Vrčak``. The conversion
is pylatexenc's ``LatexNodes2Text`` (imported on first use). Text is left
exactly as it is unless it holds TeX: a backslash, or a ``$...$`` span that
opens and closes on a non-space character (inline math). So plain text with
a stray ``%``, ``_`` or ``$`` (``costs $5 and $10``) is never touched, and in
text that is converted, a ``%`` not written ``\\%`` is kept as a percent sign
rather than starting a TeX comment.
"""

from __future__ import annotations

import re

# Inline math: $...$ opening and closing on a non-space character ($x$, $O(n^2)$).
_MATH = re.compile(r"\$(?=[^\s$])[^$]{0,400}?(?<=[^\s\\])\$")
_BARE_PERCENT = re.compile(r"(?<!\\)%")
_SPACE = re.compile(r"\s+")

_converter = None


def has_tex(text: str) -> bool:
    """True when ``text`` holds TeX markup (a backslash or inline math)."""
    return "\\" in text or _MATH.search(text) is not None


def tex_to_text(text: str) -> str:
    """Return ``text`` with TeX markup rendered as Unicode; plain text unchanged.

    Whitespace runs collapse to one space in converted text. If the markup
    cannot be converted, the original text is returned.
    """
    if not has_tex(text):
        return text
    global _converter
    if _converter is None:
        from pylatexenc.latex2text import LatexNodes2Text

        _converter = LatexNodes2Text(math_mode="text", strict_latex_spaces=False)
    source = _BARE_PERCENT.sub(r"\\%", text)
    if source.count("$") % 2:
        # An odd dollar cannot all be math: keep the ones outside $...$ spans.
        source = _MATH.sub(lambda m: m.group().replace("$", "\0"), source).replace("$", r"\$").replace("\0", "$")
    try:
        converted = _converter.latex_to_text(source)
    except Exception:  # pylatexenc is tolerant; never lose a record over markup
        return text
    return _SPACE.sub(" ", converted).strip()


def detex_record(record):
    """Convert the TeX in a :class:`~searchengine.records.Record`'s title, abstract and authors, in place.

    Returns the same record.
    """
    record.title = tex_to_text(record.title)
    record.abstract = tex_to_text(record.abstract)
    record.authors = [tex_to_text(name) for name in record.authors]
    return record
