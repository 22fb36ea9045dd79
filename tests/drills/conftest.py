"""Shared pieces of the drills: the arXiv subset index and the figures each drill prints.

Every test under ``tests/drills/`` carries the ``drills`` marker, so
``python -m pytest -m drills`` runs the suite alone and ``-m "not drills"``
leaves it out. A drill records what it measured with the ``figures``
fixture; the numbers are printed as one table at the end of the run.

The drills read arXiv listing records: those of the real sample in
``../shared/data`` when it is there, generated ones otherwise (see
``tests/shareddata.py``), so that they run on a fresh clone too.
``DRILL_RECORDS`` sets the size of the arXiv subset the drills search
(default 10,000 real or 2,000 generated records; ``0`` means all 74,728
records of the sample, or all 70,000 generated ones).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from shareddata import present, write_listing

REPO = Path(__file__).resolve().parents[2]
DEFAULT_RECORDS = 10_000
# Fewer generated records: the drills keep a fresh clone's test run short.
DEFAULT_GENERATED_RECORDS = 2_000

_FIGURES: list[tuple[str, str, str]] = []


def pytest_collection_modifyitems(items):
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.drills)


@dataclass
class Figures:
    """Collects ``(drill, figure, value)`` rows for the end-of-run table."""

    drill: str
    rows: list = field(default_factory=lambda: _FIGURES)

    def add(self, figure: str, value) -> None:
        """Record one figure; numbers are printed with thousands separators."""
        if isinstance(value, float):
            text = f"{value:,.3f}".rstrip("0").rstrip(".")
        elif isinstance(value, int):
            text = f"{value:,}"
        else:
            text = str(value)
        self.rows.append((self.drill, figure, text))


@pytest.fixture
def figures(request) -> Figures:
    """A recorder named after the drill's module (``test_query_fuzzing`` → ``query fuzzing``)."""
    name = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_").replace("_", " ")
    return Figures(name)


def pytest_terminal_summary(terminalreporter):
    if not _FIGURES:
        return
    terminalreporter.section("drill figures")
    width = max(len(drill) for drill, _, _ in _FIGURES)
    name_width = max(len(figure) for _, figure, _ in _FIGURES)
    for drill, figure, value in _FIGURES:
        terminalreporter.write_line(f"{drill:<{width}}  {figure:<{name_width}}  {value:>12}")


def drill_records() -> int:
    """The subset size from ``DRILL_RECORDS`` (0: the whole sample)."""
    default = DEFAULT_RECORDS if present() else DEFAULT_GENERATED_RECORDS
    return int(os.environ.get("DRILL_RECORDS", default))


@pytest.fixture(scope="session")
def arxiv_subset(tmp_path_factory) -> Path:
    """The drills' arXiv records as one listing JSON-lines file."""
    path = tmp_path_factory.mktemp("drill-records") / "arxiv.jsonl"
    write_listing(path, drill_records())
    return path


@pytest.fixture(scope="session")
def arxiv_index_dir(arxiv_subset, tmp_path_factory) -> Path:
    """An index of :func:`arxiv_subset`, built once per run; drills must not write to it."""
    from searchengine import build_index

    index_dir = tmp_path_factory.mktemp("drill-index")
    build_index([arxiv_subset], index_dir)
    return index_dir


@pytest.fixture(scope="module")
def figure_totals(request):
    """A dict of figures summed over a module's tests (e.g. parametrized cases),
    recorded under the drill's name when the module's last test is done."""
    name = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_").replace("_", " ")
    totals: dict = {}
    yield totals
    recorder = Figures(name)
    for figure, value in totals.items():
        recorder.add(figure, value)
