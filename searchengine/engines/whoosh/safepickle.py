"""An index folder's pickles read without running code.

Whoosh keeps an index's table of contents (its schema and segment list), a
compound file's directory, each term's block header, each block of
postings, a rare term's inlined postings and each document's stored fields
as pickles, and Python's ``pickle`` runs whatever callable a pickle names:
an index folder crafted by someone else could run code on ``searchengine
search``. :class:`IndexUnpickler` builds only what an index written by this
product holds: plain containers, numbers and text, and the exact classes
and functions of :data:`ALLOWED` (measured on the arXiv sample's index and
a fresh one of the seed pages: schema, fields, formats, analyzers,
segment and column classes), each one whose building runs no code of
consequence (a class is made by ``cls.__new__`` and given its attributes,
never ``__init__``; ``_codecs.encode`` makes bytes of text, ``re._compile``
a pattern). Any other name is refused with :class:`pickle.UnpicklingError`,
which reading an index reports as damage (exit status 3, a 503 on the web).

:func:`install` puts it in Whoosh's place for every one of those reads. A
block of postings (a tuple of numbers and bytes, read for each block a
search decodes that the term arrays do not hold) costs about 5 µs with
``pickle.loads`` and about 12 µs checked (measured on the arXiv sample's
blocks); decoded blocks are kept per file (``codec.BLOCKS_KEPT``), so a
query reads few (``benchmarks/table.py --rows query``: docs/reliability.md).
Segments written now (:mod:`.arraypostings`) hold no pickled postings at
all: no blocks, and a term entry flagged as inlining them is damage, never
unpickled; the table of contents, compound directories and stored fields
remain pickles.
"""

from __future__ import annotations

import io
import pickle
import types
from _compat_pickle import IMPORT_MAPPING, NAME_MAPPING

# Builtins a Whoosh pickle holds: containers, numbers, text.
_BUILTINS = frozenset(
    {"bool", "bytearray", "bytes", "complex", "dict", "float", "frozenset", "int", "list", "set", "str", "tuple"}
)
#: Everything else an index's pickles may name, by module: classes built
#: without running their ``__init__``, and the functions pickles of bytes,
#: arrays and patterns call.
ALLOWED: dict[str, frozenset[str]] = {
    "_codecs": frozenset({"encode"}),
    "array": frozenset({"array", "_array_reconstructor"}),
    "collections": frozenset({"defaultdict", "OrderedDict"}),
    "copyreg": frozenset({"_reconstructor"}),
    "datetime": frozenset({"date", "datetime", "timedelta", "timezone"}),
    "re": frozenset({"_compile", "Pattern"}),
    "whoosh.fields": frozenset({"COLUMN", "ID", "KEYWORD", "NUMERIC", "STORED", "TEXT", "Schema"}),
    "whoosh.formats": frozenset({"Existence", "Frequency", "Positions"}),
    "whoosh.columns": frozenset({"NumericColumn", "VarBytesColumn"}),
    "whoosh.codec.whoosh3": frozenset({"W3Codec", "W3Segment"}),
    "whoosh.analysis.analyzers": frozenset({"CompositeAnalyzer"}),
    "whoosh.analysis.filters": frozenset({"CharsetFilter", "LowercaseFilter"}),
    "whoosh.analysis.tokenizers": frozenset({"IDTokenizer", "RegexTokenizer"}),
    "searchengine.engines.whoosh.analysis": frozenset(
        {"AcronymStopFilter", "CompoundFilter", "InflectionStemFilter", "TechTokenizer", "UmlautFilter"}
    ),
    "searchengine.engines.whoosh.codec": frozenset({"CompactPositions", "DictionaryCodec", "CompactCodec"}),
    "searchengine.engines.whoosh.arraypostings": frozenset({"ArrayCodec"}),
    "searchengine.engines.whoosh.schema": frozenset({"SpelledTEXT"}),
}


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
        if module == "builtins" and name in _BUILTINS or name in ALLOWED.get(module, ()):
            return super().find_class(module, name)
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
    """Read the index's table of contents, compound directories, block
    headers, blocks of postings, inlined postings, stored fields and
    positions through :class:`IndexUnpickler` (once per process)."""
    global _installed
    if _installed:
        return
    import whoosh.codec.whoosh3
    import whoosh.columns
    import whoosh.formats
    import whoosh.index
    from whoosh.filedb.structfile import StructFile

    checked = types.SimpleNamespace(**vars(pickle))
    checked.loads, checked.load, checked.Unpickler = loads, load, IndexUnpickler
    # Whoosh's own names replaced in place (the ignores: their declared types are the originals').
    # The schema of the table of contents; the segment list, compound directories and block headers.
    whoosh.index.pickle = checked  # type: ignore[assignment]
    StructFile.read_pickle = lambda self: load(self.file)  # type: ignore[method-assign]
    # Blocks of postings and inlined postings (W3LeafMatcher, W3TermInfo), the stored
    # fields (PickleColumn) and Whoosh's own position lists: each module's ``loads``.
    for module in (whoosh.codec.whoosh3, whoosh.columns, whoosh.formats):
        module.loads = loads  # type: ignore[attr-defined]
    _installed = True
