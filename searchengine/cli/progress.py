"""Progress of ``index`` on standard error: reading, merging, committing, encoding vectors.

On a terminal, bars redrawn in place (:class:`IndexProgress`,
:class:`EncodeProgress`); elsewhere (a log file, a pipe, a batch job), a
line every :data:`EVERY_SECONDS` seconds in every phase, each with the time
left (:class:`ProgressLines`), and the encoding's estimate before it starts.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, NoReturn, TextIO

import click

if TYPE_CHECKING:
    import os
    import threading
    from collections.abc import Callable, Iterable

    from tqdm import tqdm


#: Seconds between two progress lines off a terminal.
EVERY_SECONDS = 30.0
#: The commit (merging the workers' segments, writing the generation) takes
#: about this share of the reading and analysing time: measured 29.8 s after
#: 57.2 s for 20,000 listing records (0.52) on 2 cores.
COMMIT_SHARE = 0.52
#: Records one core encodes a second: 93.4 records/s measured on 2 cores
#: (docs/performance.md), for the estimate said before encoding starts.
ENCODED_PER_CORE = 46.7


def duration(seconds: float) -> str:
    """``45 s``, ``3 min``, ``1 h 05 min``: a time left, as said in the progress lines."""
    seconds = max(0.0, seconds)
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours} h {minutes:02d} min"


class ProgressLines:
    """The progress of ``index`` off a terminal: a line on ``stream`` every
    ``every`` seconds while reading and analysing (the share of the input's
    bytes read, the records, the time left including the commit's estimate,
    :data:`COMMIT_SHARE`), while merging and while committing (the time
    spent and the estimate left), so that a log shows the run is alive. The
    same callback protocol as :class:`IndexProgress`. A run shorter than
    ``every`` says nothing. ``clock`` and ``ticker`` (the timer thread of the
    commit's lines, off: call :meth:`commit_line`) are for tests."""

    def __init__(
        self,
        total_bytes: int | None,
        stream: TextIO,
        every: float = EVERY_SECONDS,
        clock: Callable[[], float] | None = None,
        ticker: bool = True,
    ) -> None:
        import time

        from searchengine.readers import POSITION

        self.stream, self.every, self.total, self.ticker = stream, every, total_bytes or 0, ticker
        self.clock = clock or time.monotonic
        self.start_bytes = POSITION.total()
        self.records = 0
        self.started = self.said = self.clock()
        self.phase_name = "reading"
        self.phase_started = self.started
        self.commit_estimate: float | None = None
        self.commit_began = self.started
        self.talked = False
        self._stop: threading.Event | None = None

    def _say(self, text: str) -> None:
        self.talked = True
        self.stream.write(text + "\n")
        self.stream.flush()

    def __call__(self, records: int) -> None:
        """The indexer's callback: ``records`` more read, or 0 when merging begins."""
        if not records:
            self.phase("merging")
            return
        self.records += records
        if self.records % IndexProgress.EVERY < records and self.clock() - self.said >= self.every:
            self.said = self.clock()
            self._say(self.reading_line())

    def reading_line(self) -> str:
        """``Reading and analysing: 42% of 25.1 MB, 31,000 records, 60 s so far;
        about 2 min left (83 s reading, 75 s merging and committing)``."""
        from searchengine.readers import POSITION

        spent = self.clock() - self.started
        done = f"{self.records:,} records, {duration(spent)} so far"
        if not self.total:
            return f"Reading and analysing: {done} ({self.records / max(spent, 1e-9):,.0f} records/s)"
        share = min(1.0, (POSITION.total() - self.start_bytes) / self.total)
        head = f"Reading and analysing: {share:.0%} of {self.total / 1e6:,.1f} MB, {done}"
        if share <= 0:
            return head
        reading = spent / share
        self.commit_estimate = COMMIT_SHARE * reading
        left = reading - spent
        return (
            f"{head}; about {duration(left + self.commit_estimate)} left "
            f"({duration(left)} reading, {duration(self.commit_estimate)} merging and committing)"
        )

    def phase(self, name: str) -> None:
        """A new phase begins: ``merging`` (the workers' segments into the new
        generation) or ``committing`` (repeats folded in, the generation written
        and published). Said at once, then every ``every`` seconds by a timer
        thread (started only now, after the indexing workers were forked)."""
        import threading

        now = self.clock()
        # A run that has said nothing yet (under EVERY_SECONDS) stays quiet at its phases too.
        talked = self.talked or now - self.started >= self.every
        if self.phase_name == "reading":
            spent = now - self.started
            self.commit_estimate = COMMIT_SHARE * spent
            if talked:
                self._say(
                    f"Read {self.records:,} records in {duration(spent)}; merging the index "
                    f"(about {duration(self.commit_estimate)} with committing)"
                )
        elif talked:
            self._say(f"Merged in {duration(now - self.phase_started)}; committing the new index")
        if name == "merging":
            self.commit_began = now
        self.phase_name, self.phase_started, self.said = name, now, now
        if self._stop is None and self.ticker:
            self._stop = threading.Event()
            threading.Thread(target=self._tick, args=(self._stop,), name="searchengine-progress", daemon=True).start()

    def commit_line(self) -> str:
        """``Merging: 1 min so far; about 30 s left`` (or ``longer than estimated``)."""
        now = self.clock()
        line = f"{self.phase_name.capitalize()}: {duration(now - self.phase_started)} so far"
        if self.commit_estimate is not None:
            left = self.commit_estimate - (now - self.commit_began)
            line += f"; about {duration(left)} left" if left > 0 else "; longer than estimated"
        return line

    def _tick(self, stop: threading.Event) -> None:
        while not stop.wait(1.0):
            if self.clock() - self.said >= self.every:
                self.said = self.clock()
                self._say(self.commit_line())

    def close(self) -> None:
        """Stop the timer."""
        if self._stop is not None:
            self._stop.set()


class IndexProgress:
    """The progress bar of ``index`` on ``stream``: while reading, a percentage,
    the ETA and the records read, the input's size known (bytes of the files as
    on disk, a ``.gz`` file's compressed bytes: :data:`searchengine.readers.POSITION`);
    without a size, the records read and their rate. Then the commit phase,
    its elapsed time kept current by a timer thread (started only then, after
    the indexing workers were forked)."""

    # Records between two looks at the read position (a look is a tell()).
    EVERY = 64

    def __init__(self, total_bytes: int | None, stream: TextIO) -> None:
        from tqdm import tqdm

        from searchengine.readers import POSITION

        tqdm.monitor_interval = 0  # no monitor thread: indexing forks worker processes
        self.records = 0
        self.start = POSITION.total()  # what this process read before (a library user's earlier runs)
        self.sized = bool(total_bytes)
        self.total = total_bytes or 0  # the bar's total, when sized
        self.bar: tqdm[NoReturn]
        if self.sized:
            self.bar = tqdm(
                total=total_bytes,
                unit="B",
                unit_scale=True,
                unit_divisor=1024,
                file=stream,
                mininterval=0.5,
                desc="Reading",
                leave=False,
                bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} "
                "[{elapsed}, ETA {remaining}{postfix}]",
            )
        else:
            self.bar = tqdm(unit=" records", unit_scale=True, file=stream, mininterval=0.5, desc="Reading", leave=False)
        self._stop: threading.Event | None = None

    def __call__(self, records: int) -> None:
        """The indexer's progress callback: ``records`` more read, or 0 when the commit begins."""
        if records:
            self.records += records
            if not self.sized:
                self.bar.update(records)
            elif self.records % self.EVERY < records:
                from searchengine.readers import POSITION

                self.bar.set_postfix_str(f"{self.records:,} records", refresh=False)
                self.bar.update(min(POSITION.total() - self.start, self.total) - self.bar.n)
            return
        self._commit()

    def _commit(self) -> None:
        import threading

        # No share of the commit can be measured from outside Whoosh or the cluster: its time so far is shown.
        self.bar.bar_format = "{desc}: {elapsed}{postfix}"
        self.bar.set_description_str("Committing", refresh=False)
        self.bar.set_postfix_str(f"{self.records:,} records read; merging and writing the index", refresh=True)
        self._stop = threading.Event()
        ticker = threading.Thread(target=self._tick, args=(self._stop,), name="searchengine-progress", daemon=True)
        ticker.start()

    def phase(self, name: str) -> None:
        """Committing begins (after merging): the bar says so."""
        self.bar.set_postfix_str(f"{self.records:,} records read; {name} the new index", refresh=True)

    def _tick(self, stop: threading.Event) -> None:
        while not stop.wait(0.5):
            self.bar.refresh()

    def close(self) -> None:
        """Stop the timer and clear the bar."""
        if self._stop is not None:
            self._stop.set()
        self.bar.close()


def encoding_estimate(total: int, cores: int | None = None) -> str:
    """The line said before encoding starts: ``Encoding vectors of 74,728
    records: about 13 min (93 records/s on 2 cores)``, at
    :data:`ENCODED_PER_CORE` records a second per core (``cores``: this
    machine's by default)."""
    import os

    cores = cores or os.cpu_count() or 1
    rate = ENCODED_PER_CORE * cores
    took = duration(total / rate)
    return f"Encoding vectors of {total:,} records: about {took} ({rate:,.0f} records/s on {cores} cores)"


class EncodeProgress:
    """Progress of encoding vectors (after the index is written): a bar with
    the ETA on a terminal, else a line every :attr:`EVERY_SECONDS` seconds;
    ``bar``, the reading bar, is closed when encoding starts."""

    EVERY_SECONDS = EVERY_SECONDS

    def __init__(self, stream: TextIO, bar: IndexProgress | ProgressLines | None) -> None:
        self.stream, self.reading = stream, bar
        self.bar: tqdm[NoReturn] | None = None
        self.started = self.said = self.graph_started = 0.0

    def __call__(self, done: int, total: int) -> None:
        """The writer's callback: ``done`` of ``total`` records encoded."""
        if self.started == 0.0:
            if self.reading is not None:
                self.reading.close()
            click.echo(encoding_estimate(total), err=True)
        self.started = self._step(self.started, done, total, "records", "Encoding vectors", "Encoding: {} encoded")

    def graph(self, done: int, total: int) -> None:
        """The writer's callback while the approximate-search graph is
        built (after encoding): ``done`` of ``total`` documents added."""
        if self.graph_started == 0.0:
            self.close()
            click.echo(f"Building the vector graph of {total:,} documents", err=True)
        self.graph_started = self._step(
            self.graph_started, done, total, "documents", "Vector graph", "Vector graph: {} added"
        )

    def _step(self, started: float, done: int, total: int, unit: str, title: str, line: str) -> float:
        """One phase's progress: its bar (opened on its first call, on a
        terminal) moved to ``done``, or ``line`` (``{}``: done of total) with
        the time left every :attr:`EVERY_SECONDS`. Returns the phase's start."""
        import time

        now = time.monotonic()
        if started == 0.0:
            started = self.said = now
            if self.stream.isatty():
                from tqdm import tqdm

                self.bar = tqdm(
                    total=total,
                    unit=" " + unit,
                    file=self.stream,
                    mininterval=0.5,
                    leave=False,
                    desc=title,
                    unit_scale=True,
                    smoothing=0.1,
                )
        if self.bar is not None:
            self.bar.update(done - self.bar.n)
        elif now - self.said >= self.EVERY_SECONDS and done:
            self.said = now
            left = (now - started) / done * (total - done)
            click.echo(f"{line.format(f'{done:,} of {total:,}')}, about {duration(left)} left", err=True)
        return started

    def close(self) -> None:
        """Clear the bar."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def progress_bar(quiet: bool, paths: Iterable[str | os.PathLike[str]]) -> IndexProgress | ProgressLines | None:
    """The progress on stderr: a bar on a terminal, else a line every
    :data:`EVERY_SECONDS` seconds; nothing when ``quiet``."""
    if quiet:
        return None
    from searchengine.indexer import input_size

    if not sys.stderr.isatty():
        return ProgressLines(input_size(paths), sys.stderr)
    return IndexProgress(input_size(paths), sys.stderr)
