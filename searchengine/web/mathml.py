"""Formulas rendered on the web page: a record's inline TeX math as MathML, server-side.

A record's ``title`` and ``abstract`` are the text that is searched, matched
in snippets and exported (:func:`searchengine.tex.tex_to_text` made it from
the source's TeX); a record whose title or abstract held inline math keeps
the source's text in :attr:`~searchengine.records.Record.tex`. Here each
formula's text is found again in the shown text (a title, a snippet) and
replaced by the formula's MathML, made by latex2mathml from its TeX. The
MathML is rebuilt from an allowlist of MathML elements and attributes (no
link, style or script survives), so it is as safe as escaped text; a formula
latex2mathml cannot read, or one with a command it does not know, keeps its
text. No script runs in the browser: MathML is drawn by the browser itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any
from xml.etree import ElementTree

from markupsafe import Markup, escape

MATHML_NS = "http://www.w3.org/1998/Math/MathML"

#: MathML Core's presentation elements (what latex2mathml writes), the only ones a formula keeps.
ELEMENTS = frozenset(
    "math mrow mi mn mo mtext mspace ms mfrac msqrt mroot msub msup msubsup munder mover munderover "
    "mmultiscripts mprescripts none mtable mtr mtd mstyle mpadded mphantom menclose semantics annotation".split()
)
ATTRIBUTES = frozenset(
    "display mathvariant stretchy fence form separator accent accentunder lspace rspace movablelimits "
    "largeop symmetric displaystyle scriptlevel linethickness columnalign rowalign columnspacing "
    "rowspacing width height depth notation minsize maxsize".split()
)
# A formula's text matched as a whole word where it starts or ends with one.
_WORDY = re.compile(r"\w")


@lru_cache(maxsize=4096)
def formula(tex: str) -> str | None:
    """The safe MathML of one TeX formula, or ``None`` when it does not convert
    (unbalanced braces, a command latex2mathml does not know, an error)."""
    from searchengine.tex import to_mathml

    if tex.count("{") != tex.count("}"):
        return None
    mathml = to_mathml(tex)
    if mathml is None:
        return None
    try:
        root = ElementTree.fromstring(mathml)
    except ElementTree.ParseError:
        return None
    parts: list[str] = []
    if not _rebuilt(root, parts):
        return None
    return "".join(parts)


def _rebuilt(node: ElementTree.Element, parts: list[str]) -> bool:
    """Append ``node`` as allowed MathML to ``parts``; ``False`` when it holds
    anything else (an element outside MathML, a command left as text)."""
    namespace, _, name = node.tag.rpartition("}")
    if namespace.lstrip("{") != MATHML_NS or name not in ELEMENTS:
        return False
    attributes = "".join(f' {key}="{escape(value)}"' for key, value in sorted(node.attrib.items()) if key in ATTRIBUTES)
    parts.append(f'<math xmlns="{MATHML_NS}"{attributes}>' if name == "math" else f"<{name}{attributes}>")
    text = node.text or ""
    if text.lstrip().startswith("\\"):
        return False  # a command latex2mathml does not know, kept as its name
    parts.append(str(escape(text)))
    for child in node:
        if not _rebuilt(child, parts):
            return False
        parts.append(str(escape(child.tail or "")))
    parts.append(f"</{name}>")
    return True


def _placed(text: str, pieces: Sequence[tuple[str, str]]) -> list[tuple[int, int, str]]:
    """``[(start, end, mathml)]``: each formula's text found in ``text``, in the
    formulas' order, each after the one before (a snippet starts anywhere in
    the abstract: a formula not found is passed over)."""
    placed: list[tuple[int, int, str]] = []
    position = 0
    for shown, tex in pieces:
        pattern = re.escape(shown)
        if _WORDY.match(shown[0]):
            pattern = r"(?<!\w)" + pattern
        if _WORDY.match(shown[-1]):
            pattern += r"(?!\w)"
        found = re.compile(pattern).search(text, position)
        if found is None:
            continue
        mathml = formula(tex)
        if mathml is not None:
            placed.append((found.start(), found.end(), mathml))
        position = found.end()
    return placed


def with_math(text: str, matches: Iterable[Sequence[Any]] | None, original: str | None) -> Markup:
    """``text`` escaped with its matched words in ``<mark>`` (as
    :func:`searchengine.web.helpers.marked`) and the formulas of ``original``
    (the source's title or abstract, ``None`` when it held no math) drawn as
    MathML. A match inside a formula gives way to the formula."""
    from searchengine.tex import math_pieces
    from searchengine.web.helpers import marked

    placed = _placed(text, math_pieces(original)) if original else []
    if not placed:
        return marked(text, matches)
    parts: list[str] = []
    position = 0
    for start, end, mathml in placed:
        inside = [
            (s - position, e - position)
            for s, e in _spans(matches)
            if position <= s and e <= start  # marks wholly before this formula
        ]
        parts.append(str(marked(text[position:start], inside)))
        parts.append(mathml)
        position = end
    parts.append(
        str(marked(text[position:], [(s - position, e - position) for s, e in _spans(matches) if s >= position]))
    )
    return Markup("".join(parts))


def _spans(matches: Iterable[Sequence[Any]] | None) -> list[tuple[int, int]]:
    spans = []
    for span in matches or ():
        try:
            spans.append((int(span[0]), int(span[1])))
        except (TypeError, ValueError, IndexError):
            continue
    return spans
