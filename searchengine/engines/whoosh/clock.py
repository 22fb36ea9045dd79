"""The deadline of one search's matching and scoring, and what it cut short.

A search has a time budget (:class:`searchengine.pipeline.Clock`), and its
matching a deadline within it. What can take long watches one
:class:`MatchClock`: reading positions (quoted phrases, a compound's parts
in sequence, the proximity bonus: :mod:`.proximity`), checking quoted
phrases against the stored text (:mod:`.queries`), combining the words of a
long ``Or`` (:mod:`.evaluate`) and expanding prefixes and fuzzy words
(:mod:`.expansion`). Each stops at the deadline with what it has and notes
it on the clock, so that the answer can say so.
"""

from __future__ import annotations

import time


class MatchClock:
    """The deadline (a ``time.monotonic()`` value) of one search's matching and
    scoring, and what it cut short.

    ``cut`` says matching stopped (papers may be missing); ``approximate``
    says the proximity bonus stopped (the order of the best hits is
    approximate).
    """

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.cut = False
        self.approximate = False

    def expired(self) -> bool:
        """Whether the deadline has passed."""
        return time.monotonic() > self.deadline
