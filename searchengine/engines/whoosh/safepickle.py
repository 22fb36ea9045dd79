"""An index folder's pickles read without running code.

Whoosh keeps an index's table of contents (its schema and segment list),
a compound file's directory and each term's block header as pickles, and
Python's ``pickle`` runs whatever callable a pickle names: an index folder
crafted by someone else could run code on ``searchengine search``.
:class:`IndexUnpickler` reads only what an index written by this product
holds (Whoosh's, NLTK's and this package's classes, and plain containers
and numbers) and refuses any other name with
:class:`pickle.UnpicklingError`, which opening an index reports as damage.

:func:`install` puts it in Whoosh's place for those reads. A posting
block's own data (a tuple of numbers and bytes, read for every block a
search decodes) is still read with ``pickle.loads``: checking it costs
about 4 times the read (21 µs against 5 µs a block, measured with
``timeit``), which the query path cannot afford.
"""

from __future__ import annotations

import io
import pickle
import types
from _compat_pickle import IMPORT_MAPPING, NAME_MAPPING

# Builtins a Whoosh pickle holds: containers, numbers, text.
_BUILTINS = frozenset(
    {
        "bool",
        "bytearray",
        "bytes",
        "complex",
        "dict",
        "float",
        "frozenset",
        "int",
        "list",
        "object",
        "range",
        "set",
        "slice",
        "str",
        "tuple",
    }
)
# Functions a pickle of these objects names to rebuild them.
_FUNCTIONS = frozenset(
    {("_codecs", "encode"), ("copyreg", "_reconstructor"), ("array", "_array_reconstructor"), ("re", "_compile")}
)
# Packages whose classes (never their functions) an index's pickles name.
_CLASS_PACKAGES = frozenset({"whoosh", "searchengine", "nltk", "collections", "datetime", "array", "re", "enum"})


class IndexUnpickler(pickle.Unpickler):
    """An unpickler that builds only what an index holds (see the module).

    Raises:
        pickle.UnpicklingError: the pickle names anything else, naming it.
    """

    def find_class(self, module: str, name: str):
        # Protocol 2 writes Python 2's names (__builtin__, copy_reg), as pickle's own reading maps them.
        if (module, name) in NAME_MAPPING:
            module, name = NAME_MAPPING[(module, name)]
        elif module in IMPORT_MAPPING:
            module = IMPORT_MAPPING[module]
        if module == "builtins" and name in _BUILTINS or (module, name) in _FUNCTIONS:
            return super().find_class(module, name)
        if module.split(".")[0] in _CLASS_PACKAGES and "." not in name:
            found = super().find_class(module, name)
            if isinstance(found, type):
                return found
        raise pickle.UnpicklingError(
            f"it names {module}.{name}, which no index holds (the folder may have been made to run code)"
        )


def loads(data: bytes):
    """:func:`pickle.loads` through :class:`IndexUnpickler`."""
    return IndexUnpickler(io.BytesIO(data)).load()


def load(file):
    """:func:`pickle.load` through :class:`IndexUnpickler`."""
    return IndexUnpickler(file).load()


_installed = False


def install() -> None:
    """Read the index's table of contents, compound directories and block
    headers through :class:`IndexUnpickler` (once per process)."""
    global _installed
    if _installed:
        return
    import whoosh.index
    from whoosh.filedb.structfile import StructFile

    checked = types.SimpleNamespace(**vars(pickle))
    checked.loads, checked.load, checked.Unpickler = loads, load, IndexUnpickler
    # Whoosh's own names replaced in place (the ignores: their declared types are the originals').
    # The schema of the table of contents; the segment list, compound directories and block headers.
    whoosh.index.pickle = checked  # type: ignore[assignment]
    StructFile.read_pickle = lambda self: load(self.file)  # type: ignore[method-assign]
    _installed = True
