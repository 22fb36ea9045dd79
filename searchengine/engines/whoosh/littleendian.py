"""Arrays of numbers as the index's own files write them: little-endian,
whatever the machine (the text stores, :mod:`.textstore`, and the term
arrays, :mod:`.termarrays`), and numpy's faster ways with them once a
search has loaded it."""

from __future__ import annotations

import sys
from array import array


def to_bytes(values: array) -> bytes:
    """The items of ``values`` as little-endian bytes."""
    if sys.byteorder != "little":
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def from_bytes(typecode: str, data: bytes) -> array:
    """An ``array(typecode)`` of the little-endian items in ``data``."""
    values = array(typecode)
    values.frombytes(data)
    if sys.byteorder != "little":
        values.byteswap()
    return values


def loaded_numpy():
    """The numpy module when this process has imported it, else ``None``
    (the index is read without numpy until a search needs it).

    A module that another thread is still importing (the query encoder's,
    for one) is waited for: ``sys.modules`` holds it half made until then.
    """
    if "numpy" not in sys.modules:
        return None
    import numpy  # waits for the thread importing it, if any

    return numpy
