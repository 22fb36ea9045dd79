"""A Griffe extension for the Python API page: Sphinx roles in docstrings as code.

The package's docstrings name other objects with Sphinx roles
(``:class:`~searchengine.indexer.IndexSummary```, ``:data:`MAX_EXPANSIONS```),
which mkdocstrings would print as written. Each role becomes a code span of
the name it points at (its last part when written with ``~``).
"""

from __future__ import annotations

import re

from griffe import Extension

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|data|mod|exc|obj|const):`(~?)([^`]+)`")


def _as_code(match: re.Match) -> str:
    short, target = match.group(1), match.group(2).strip()
    if short:
        target = target.rsplit(".", 1)[-1]
    return f"`{target}`"


def plain_roles(text: str) -> str:
    """``text`` with every Sphinx role turned into a Markdown code span."""
    return ROLE.sub(_as_code, text)


class SphinxRoles(Extension):
    """Rewrite the roles of every docstring Griffe loads."""

    def _rewrite(self, obj) -> None:
        docstring = getattr(obj, "docstring", None)
        if docstring is not None and docstring.value:
            docstring.value = plain_roles(docstring.value)

    def on_instance(self, *, obj, **kwargs) -> None:
        self._rewrite(obj)

    def on_object(self, *, obj, **kwargs) -> None:
        self._rewrite(obj)
