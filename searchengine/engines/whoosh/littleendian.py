"""Arrays of numbers as the index's own files write them: little-endian,
whatever the machine (the text stores, :mod:`.textstore`, and the term
arrays, :mod:`.termarrays`)."""

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
