"""What an open generation keeps between searches, on its Whoosh readers.

Whoosh keeps a generation's readers (one per segment, and over several
segments one more over them all) as long as the generation is open, so what
is kept on a reader goes with its generation: a rebuild's new generation
starts empty, and nothing kept has to be checked against the index.
:func:`generation_cache` gives a reader's :class:`GenerationCache`, made on
first use and kept under one attribute of the reader (:data:`ATTRIBUTE`).

The searcher's own cache (facet columns, term document numbers) is
:class:`searchengine.engines.whoosh.facetcolumns.SearcherCache`.
"""

from __future__ import annotations

from collections import OrderedDict

# The reader attribute a GenerationCache is kept under.
ATTRIBUTE = "_searchengine_cache"

# Scored postings of recent query terms are kept per index segment, least
# recently used dropped first, up to this many postings per segment (12 bytes
# each). Reading a frequent word's postings costs tens of milliseconds; a
# cached word costs a fraction of one.
TERM_CACHE_POSTINGS = 2_000_000
# Postings with positions kept per segment for the proximity bonus and
# phrases (blocks kept whole and compact: about 40 bytes a posting), the
# least recently used words dropped first.
POSITION_CACHE_POSTINGS = 1_500_000


class PostingsCache:
    """Least-recently-used ``key -> value`` (a tuple whose first item's length
    is the number of postings it holds), bounded by the total number of postings."""

    def __init__(self, budget: int) -> None:
        self.entries: OrderedDict = OrderedDict()
        self.sizes: dict = {}  # as counted when kept: a kept value may grow later
        self.budget = budget
        self.size = 0

    def get(self, key):
        found = self.entries.get(key)
        if found is not None:
            self.entries.move_to_end(key)
        return found

    def put(self, key, value, replace: bool = False) -> None:
        """Keep ``value`` (its size: ``len(value[0]) + 1``); a key already kept
        stays as it is unless ``replace``."""
        size = len(value[0]) + 1
        if replace and key in self.entries:
            del self.entries[key]
            self.size -= self.sizes.pop(key)
        if key in self.entries or size > self.budget:
            return
        self.entries[key] = value
        self.sizes[key] = size
        self.size += size
        while self.size > self.budget:
            dropped, _ = self.entries.popitem(last=False)
            self.size -= self.sizes.pop(dropped)


class GenerationCache:
    """What searches keep on one Whoosh reader of an open generation.

    On a segment's reader, for scoring (:mod:`.bm25f`, :mod:`.proximity`,
    :mod:`.evaluate`):

    * ``postings``: scored postings of BM25F words, phrases and quoted
      phrases (:data:`TERM_CACHE_POSTINGS`);
    * ``positions``: posting blocks with positions (:data:`POSITION_CACHE_POSTINGS`);
    * ``norms``: each field's length norms.

    On the reader a search is made with (the whole index's):

    * ``frequencies``: ``(field, text) -> document frequency`` (idf);
    * ``abstract_frequencies``: ``text -> abstracts holding it``, for
      splitting joined words (:mod:`.expansion`);
    * ``vocabularies``: each field's term list, for fuzzy words (:mod:`.expansion`);
    * ``written_neighbours``: the words as written near a fuzzy word (:mod:`.expansion`);
    * ``spelling`` and ``word_frequencies``: did-you-mean's words by prefix
      and their frequencies (:mod:`.lexicon`).

    A reader over one segment is both, and holds all of them.
    """

    __slots__ = (
        "postings",
        "positions",
        "norms",
        "frequencies",
        "abstract_frequencies",
        "vocabularies",
        "written_neighbours",
        "spelling",
        "word_frequencies",
    )

    def __init__(self) -> None:
        self.postings = PostingsCache(TERM_CACHE_POSTINGS)
        self.positions = PostingsCache(POSITION_CACHE_POSTINGS)
        self.norms: dict = {}
        self.frequencies: dict = {}
        self.abstract_frequencies: dict = {}
        self.vocabularies: dict = {}
        self.written_neighbours: dict = {}
        self.spelling: dict = {}
        self.word_frequencies: dict = {}


def generation_cache(reader) -> GenerationCache:
    """The :class:`GenerationCache` of a Whoosh reader; it lives as long as the open index."""
    kept = reader.__dict__
    found = kept.get(ATTRIBUTE)
    if found is None:
        found = kept.setdefault(ATTRIBUTE, GenerationCache())
    return found


def remembered(values: dict, key, compute, most: int):
    """``values[key]``, computed as ``compute(key)`` the first time; past
    ``most`` keys ``values`` starts over (a bound on what a long-lived
    process keeps)."""
    found = values.get(key)
    if found is None:
        if len(values) >= most:
            values.clear()
        found = values[key] = compute(key)
    return found
