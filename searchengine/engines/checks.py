"""What a whole-index check found (:func:`searchengine.engines.check_index`):
value types both engines fill in, kept below the engines so that neither
imports the package that chooses between them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class PartCheck:
    """One part of an index as :func:`~searchengine.engines.check_index` found it: a file of the
    embedded index (``size`` in bytes) or a shard copy on a cluster (``size``:
    its documents). ``problem`` is ``None`` for a sound part."""

    name: str
    size: int | None
    problem: str | None = None


@dataclass
class IndexCheck:
    """What :func:`~searchengine.engines.check_index` found.

    ``version`` names what was checked (a generation folder, or the
    cluster's physical index); ``problem`` is ``None`` when the index is
    sound, else one line naming the first damaged part and how to rebuild.
    """

    location: str
    engine: str
    version: str | None
    documents: int | None
    parts: list[PartCheck] = field(default_factory=list)
    problem: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape: ``{"location", "engine", "version", "documents",
        "sound", "problem", "parts": [{"name", "size", "problem"}]}``."""
        return {"location": self.location, "engine": self.engine, "version": self.version,
                "documents": self.documents, "sound": self.problem is None, "problem": self.problem,
                "parts": [vars(part) for part in self.parts]}
