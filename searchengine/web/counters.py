"""Rate-limit counters that every server process of one ``serve`` shares.

``serve --workers N`` forks N processes from one supervisor; each would keep
its own counters with the ``limits`` library's memory storage, so a client
whose connections land on several processes would get up to N times its
budget. :class:`SharedCounters` is a ``limits`` storage (fixed windows) over a
table in anonymous shared memory, made by :func:`shared_table` in the
supervisor before it forks: every process reads and adds to the same counts.

The table has a fixed number of places (:data:`PLACES`); a client's key is
hashed to one of :data:`PROBES` neighbouring places. When all of them hold
live windows of other clients, the one ending soonest is taken over (that
client starts afresh): memory stays bounded whatever the number of clients.
"""

from __future__ import annotations

import hashlib
import mmap
import time
from typing import Any

from limits.storage import Storage

#: Places in the table (about 24 bytes each).
PLACES = 1 << 16
#: Places a key may occupy, from its hash on.
PROBES = 16
# Seconds a process waits for the table's lock before counting without it
# (a process killed while holding it must not stop the others).
_LOCK_WAIT = 0.5


class SharedTable:
    """Counts, window ends and key hashes of :data:`PLACES` places in shared
    memory, with a lock shared by the processes forked after it was made."""

    def __init__(self, places: int = PLACES) -> None:
        import multiprocessing

        self.places = places
        self._memory = mmap.mmap(-1, 24 * places)  # anonymous and shared: forked processes see one copy
        view = memoryview(self._memory)
        self.keys = view[: 8 * places].cast("Q")
        self.ends = view[8 * places : 16 * places].cast("d")
        self.counts = view[16 * places :].cast("q")
        self.lock = multiprocessing.get_context("fork").Lock()

    def place(self, key: str, now: float, *, claim: bool) -> int | None:
        """The place of ``key``'s live window, or (``claim``) one to start it
        in: a free or expired place, else the neighbour whose window ends
        soonest. ``None`` when the key has no live window and ``claim`` is false."""
        digest = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little") or 1
        first = digest % self.places
        free: int | None = None
        soonest: int | None = None
        for step in range(PROBES):
            at = (first + step) % self.places
            live = self.ends[at] > now
            if self.keys[at] == digest and live:
                return at
            if not live and free is None:
                free = at
            if soonest is None or self.ends[at] < self.ends[soonest]:
                soonest = at
        if not claim:
            return None
        chosen = free if free is not None else soonest
        assert chosen is not None
        self.keys[chosen], self.ends[chosen], self.counts[chosen] = digest, 0.0, 0
        return chosen


class SharedCounters(Storage):
    """A ``limits`` storage (scheme ``searchengine-shared://``) over a
    :class:`SharedTable` given as the ``table`` option; fixed windows only."""

    STORAGE_SCHEME = ["searchengine-shared"]

    def __init__(self, uri: str | None = None, wrap_exceptions: bool = False, **options: Any) -> None:
        super().__init__(uri, wrap_exceptions=wrap_exceptions)
        table = options.get("table")
        if not isinstance(table, SharedTable):
            raise ValueError("SharedCounters needs table=SharedTable(...)")
        self.table = table

    @property
    def base_exceptions(self) -> type[Exception] | tuple[type[Exception], ...]:
        return ValueError

    def _locked(self) -> bool:
        return self.table.lock.acquire(timeout=_LOCK_WAIT)

    def incr(self, key: str, expiry: float, amount: int = 1) -> int:
        """Add ``amount`` to ``key``'s window (a new one of ``expiry`` seconds
        when it has none); returns the window's count."""
        locked = self._locked()
        try:
            now = time.time()
            table = self.table
            at = table.place(key, now, claim=True)
            assert at is not None
            if table.ends[at] <= now:
                table.ends[at], table.counts[at] = now + expiry, 0
            table.counts[at] += amount
            return int(table.counts[at])
        finally:
            if locked:
                self.table.lock.release()

    def get(self, key: str) -> int:
        """``key``'s count in its live window (0: none)."""
        at = self.table.place(key, time.time(), claim=False)
        return 0 if at is None else int(self.table.counts[at])

    def get_expiry(self, key: str) -> float:
        """When ``key``'s window ends (Unix time; now when it has none)."""
        now = time.time()
        at = self.table.place(key, now, claim=False)
        return now if at is None else float(self.table.ends[at])

    def check(self) -> bool:
        return True

    def reset(self) -> int | None:
        locked = self._locked()
        try:
            for at in range(self.table.places):
                self.table.ends[at] = 0.0
            return None
        finally:
            if locked:
                self.table.lock.release()

    def clear(self, key: str) -> None:
        at = self.table.place(key, time.time(), claim=False)
        if at is not None:
            self.table.ends[at] = 0.0


_shared: SharedTable | None = None


def share_between_processes() -> SharedTable:
    """Make the table the apps of this process and of the processes forked
    from it count in (call it before forking); returns it."""
    global _shared
    _shared = SharedTable()
    return _shared


def shared() -> SharedTable | None:
    """The table made by :func:`share_between_processes`, or ``None``."""
    return _shared
