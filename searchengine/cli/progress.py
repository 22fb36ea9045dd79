"""Progress of ``index`` on standard error: reading, committing, encoding vectors."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, NoReturn, TextIO

import click

if TYPE_CHECKING:
    import os
    import threading
    from collections.abc import Iterable

    from tqdm import tqdm


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

    def _tick(self, stop: threading.Event) -> None:
        while not stop.wait(0.5):
            self.bar.refresh()

    def close(self) -> None:
        """Stop the timer and clear the bar."""
        if self._stop is not None:
            self._stop.set()
        self.bar.close()


class EncodeProgress:
    """Progress of encoding vectors (after the index is written): a bar with
    the ETA on a terminal, else a line every :attr:`EVERY_SECONDS` seconds;
    ``bar``, the reading bar, is closed when encoding starts."""

    EVERY_SECONDS = 30.0

    def __init__(self, stream: TextIO, bar: IndexProgress | None) -> None:
        self.stream, self.reading = stream, bar
        self.bar: tqdm[NoReturn] | None = None
        self.started = self.said = 0.0

    def __call__(self, done: int, total: int) -> None:
        """The writer's callback: ``done`` of ``total`` records encoded."""
        import time

        now = time.monotonic()
        if self.started == 0.0:
            self.started = self.said = now
            if self.reading is not None:
                self.reading.close()
            if self.stream.isatty():
                from tqdm import tqdm

                self.bar = tqdm(
                    total=total,
                    unit=" records",
                    file=self.stream,
                    mininterval=0.5,
                    leave=False,
                    desc="Encoding vectors",
                    unit_scale=True,
                    smoothing=0.1,
                )
            else:
                click.echo(f"Encoding vectors of {total:,} records", err=True)
        if self.bar is not None:
            self.bar.update(done - self.bar.n)
        elif now - self.said >= self.EVERY_SECONDS and done:
            self.said = now
            left = (now - self.started) / done * (total - done)
            click.echo(f"  {done:,} of {total:,} encoded, about {left / 60:.0f} min left", err=True)

    def close(self) -> None:
        """Clear the bar."""
        if self.bar is not None:
            self.bar.close()


def progress_bar(quiet: bool, paths: Iterable[str | os.PathLike[str]]) -> IndexProgress | None:
    """The progress bar on stderr when it is a terminal, else nothing."""
    if quiet or not sys.stderr.isatty():
        return None
    from searchengine.indexer import input_size

    return IndexProgress(input_size(paths), sys.stderr)
