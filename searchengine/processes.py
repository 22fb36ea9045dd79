"""Child processes that must not outlive their parent (indexing workers, server processes)."""

from __future__ import annotations

import os
import threading
import time


def exit_with_parent(parent: int) -> None:
    """Exit this (forked) process when ``parent`` is gone, e.g. killed by
    SIGKILL: a thread checks twice a second. Used by indexing workers and
    by the web's server processes."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="parent-watch").start()
