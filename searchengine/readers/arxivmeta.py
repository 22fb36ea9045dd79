"""What the arXiv readers share: identifiers, versions, years, categories, TeX names.

arXiv identifiers come in two styles (https://info.arxiv.org/help/arxiv_identifier.html):

* new style since April 2007: ``YYMM.NNNN`` (to 2014) or ``YYMM.NNNNN``, e.g.
  ``2101.00003``;
* old style before: ``archive[.subject]/YYMMNNN``, e.g. ``cond-mat/0102536``.

Either may carry a version suffix (``2101.00003v2``). One paper is one
document, so the suffix is split off the id and kept as the record's version.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_VERSIONED = re.compile(r"^(?P<id>.+?)v(?P<version>\d+)$")
_NEW_STYLE = re.compile(r"^(?P<yy>\d{2})(?P<mm>\d{2})\.\d{4,5}$")
_OLD_STYLE = re.compile(r"^[a-z-]+(?:\.[A-Za-z-]+)?/(?P<yy>\d{2})(?P<mm>\d{2})\d{3}$")
# An arXiv subject category (cs.DC, math.NA, hep-ph, q-bio.NC); ACM and MSC
# class codes such as "I.2.7" or "68T07" do not match.
_CATEGORY = re.compile(r"^[a-z-]+(?:\.[A-Za-z-]+)?$")
_ABS_URL = re.compile(r"^https?://(?:export\.)?arxiv\.org/abs/(?P<id>.+)$")


def split_version(raw_id: str) -> tuple[str, int | None]:
    """Split ``"2101.00003v2"`` into ``("2101.00003", 2)``.

    An id without a version suffix gives ``(id, None)``. Ids that are not
    arXiv ids are returned unchanged (``"t-5d48c11362a2"`` → ``(that, None)``).
    """
    raw_id = raw_id.strip()
    found = _VERSIONED.match(raw_id)
    if found and (_NEW_STYLE.match(found["id"]) or _OLD_STYLE.match(found["id"])):
        return found["id"], int(found["version"])
    return raw_id, None


def id_from_url(url: str) -> str:
    """The id part of an abstract-page URL (``http://arxiv.org/abs/1111.2011v2`` → ``1111.2011v2``).

    Anything else is returned stripped, unchanged.
    """
    found = _ABS_URL.match(url.strip())
    return found["id"] if found else url.strip()


def year_from_id(arxiv_id: str) -> int | None:
    """The submission year encoded in an arXiv id (``2506.06837`` → 2025), or None.

    Old-style ids start at 1991 (``9108``); two-digit years 91-99 are 19YY.
    """
    found = _NEW_STYLE.match(arxiv_id) or _OLD_STYLE.match(arxiv_id)
    if not found or not 1 <= int(found["mm"]) <= 12:
        return None
    yy = int(found["yy"])
    return 1900 + yy if yy >= 91 else 2000 + yy


def arxiv_categories(values: Iterable[str]) -> list[str]:
    """Keep the arXiv subject categories of ``values`` in order, each once.

    Class codes that some listings mix in (ACM ``I.2.7``, MSC ``68T07``,
    even ``"68U10, 90C26"`` as one value) are dropped.
    """
    return list(dict.fromkeys(v.strip() for v in values if _CATEGORY.match(v.strip())))
