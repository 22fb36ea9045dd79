"""The large test data: ``../shared/data`` beside the checkout. A fresh clone has none.

Tests that need the real files take the ``shared_data`` fixture
(``tests/conftest.py``) or call :func:`require`: without the data they skip,
all with the one reason :data:`REASON`. Tests that only need records of the
same formats take them from :func:`write_listing` and :func:`arxiv_samples`:
the real files when they are there, generated ones (``synthetic.py``)
otherwise, so they run on a fresh clone too.

Under CI (``CI`` set, as ``.ci/run`` runs) missing data is a failure, never a
skip or a quiet switch to generated records. Run as a script, this file
checks that the data is there (``.ci/run`` does, before the tests); pytest is
imported only where a test needs it, so the check runs before anything is
installed.
"""

from __future__ import annotations

import gzip
import itertools
import os
import sys
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
REASON = "needs ../shared/data (the large test data; see README 'Tests')"
# The files the tests read there.
NEEDED = [
    "arxiv/arxiv_listing_sample.jsonl.gz",
    "arxiv/listing_dates.tsv.gz",
    "arxiv/kaggle_oai_snapshot_sample.jsonl",
    "arxiv/api_atom_samples/api2016_id_list_1111.2011v2.xml",
    "arxiv/api_atom_samples/api2016_search_query_au_del_maestro.xml",
    "arxiv/api_atom_samples/api2026_search_query_testing_start0_max100.xml",
]
LISTING = DATA / "arxiv" / "arxiv_listing_sample.jsonl.gz"


def missing() -> list[str]:
    """The needed files that are not there."""
    return [name for name in NEEDED if not (DATA / name).is_file()]


def in_ci() -> bool:
    return bool(os.environ.get("CI"))


def problem(absent: list[str]) -> str:
    """Why CI cannot run the tests on the real data."""
    what = f"{DATA} is not there" if not DATA.is_dir() else f"{DATA} lacks {', '.join(absent)}"
    return f"CI runs the tests on the large test data, but {what}: put it at ../shared/data beside the checkout"


def present() -> bool:
    """Whether the data is there; under CI its absence fails the calling test."""
    absent = missing()
    if absent and in_ci():
        import pytest

        pytest.fail(problem(absent), pytrace=False)
    return not absent


def require() -> Path:
    """``../shared/data``, or skip the calling test (fail it under CI)."""
    if not present():
        import pytest

        pytest.skip(REASON)
    return DATA


def write_listing(path: Path, count: int, start: int = 0) -> int:
    """Write arXiv listing records ``start .. start+count`` (all from ``start`` on if
    ``count`` is 0) to ``path`` as listing JSON lines; return how many were written.

    The records are those of the real sample, or generated ones without it.
    """
    if present():
        with gzip.open(LISTING, "rt", encoding="utf-8") as lines:
            chosen = list(itertools.islice(lines, start, start + count if count else None))
    else:
        from synthetic import listing_lines

        chosen = listing_lines(count, start)
    path.write_text("".join(chosen), encoding="utf-8")
    return len(chosen)


@dataclass(frozen=True)
class ArxivSamples:
    """Small arXiv files in the formats the readers know, besides the listing."""

    oai: Path  # Kaggle OAI snapshot, 200 records from id 0704.0001
    atom_one: Path  # Atom feed, older layout, 1 entry
    atom_old: Path  # Atom feed, older layout, 10 entries (abstracts wrapped over lines)
    atom_new: Path  # Atom feed, newer layout, 100 entries

    @property
    def atom_folder(self) -> Path:
        return self.atom_new.parent


def arxiv_samples(folder: Path) -> ArxivSamples:
    """The real samples, or generated files of the same shapes written to ``folder``."""
    if present():
        atom = DATA / "arxiv" / "api_atom_samples"
        return ArxivSamples(
            DATA / "arxiv" / "kaggle_oai_snapshot_sample.jsonl",
            atom / "api2016_id_list_1111.2011v2.xml",
            atom / "api2016_search_query_au_del_maestro.xml",
            atom / "api2026_search_query_testing_start0_max100.xml",
        )
    from synthetic import write_samples

    return ArxivSamples(*write_samples(folder))


if __name__ == "__main__":
    absent = missing()
    if absent:
        print(f"error: {problem(absent)}", file=sys.stderr)
    sys.exit(1 if absent else 0)
