"""The words of the embedded index that did-you-mean chooses corrections from.

:class:`Lexicon` is what :func:`searchengine.spelling.suggest` asks of an
engine. Its words are the unstemmed words of titles and abstracts, as the
generation's column file holds them (sorted, once each:
:meth:`~searchengine.engines.whoosh.facetcolumns.FacetColumns.spelling_words`);
a word's frequency is the number of titles (or abstracts, whichever is
larger) that hold its stem, provided some title or abstract holds it as
written.
"""

from __future__ import annotations

from searchengine.engines.whoosh.cache import generation_cache, remembered

# The fields whose words the spelling vocabulary holds, stemmed: word frequencies.
STEMMED_FIELDS = ("title", "abstract")
# The field of author names: its words are names, never corrected.
NAME_FIELD = "authors"
# Word lists of this many first-letter prefixes are kept per open index
# (unless warm() loaded them all).
VOCABULARY_PREFIXES = 256
_COMPLETE = "\0complete"
# The word lists live on the Whoosh reader (its GenerationCache), so they go
# with its generation. So do the words' frequencies, up to this many words
# (then they start over).
FREQUENCIES_KEPT = 100_000


class Lexicon:
    """The spelling words of one open generation: its Whoosh reader and its
    :class:`~searchengine.engines.whoosh.facetcolumns.FacetColumns`."""

    def __init__(self, reader, columns) -> None:
        self.reader = reader
        self.columns = columns

    def doc_count(self) -> int:
        """Number of documents."""
        return self.reader.doc_count()

    @staticmethod
    def normalise(word: str) -> str | None:
        """``word`` as the spelling fields hold it (case and accents folded), or ``None`` for a stop word."""
        from searchengine.analysis.folding import fold
        from searchengine.analysis.stopwords import STOP_WORDS

        folded = fold(word)
        return None if folded in STOP_WORDS else folded

    def frequency(self, word: str) -> int:
        """Documents whose title (or abstract, the larger count) holds the stem
        of ``word``; 0 when no title or abstract holds ``word`` as written.

        Kept with the reader (its generation): every search asks it of each
        of its words (three term lookups and a stemming, 0.3 ms)."""
        return remembered(generation_cache(self.reader).word_frequencies, word, self._frequency, FREQUENCIES_KEPT)

    def _frequency(self, word: str) -> int:
        reader = self.reader
        if not self.columns.has_spelling_word(word):
            return 0
        frequency = 0
        for field in STEMMED_FIELDS:
            if field in reader.schema:
                stem = next(iter(reader.schema[field].process_text(word, mode="query")), None)
                if stem is not None:
                    frequency = max(frequency, reader.doc_frequency(field, stem))
        return frequency

    def name_frequency(self, word: str) -> int:
        """Documents whose author names hold ``word`` (folded, as the author
        field indexes it); 0 for none. A word a name holds is never corrected."""
        reader = self.reader
        if NAME_FIELD not in reader.schema:
            return 0
        terms = list(reader.schema[NAME_FIELD].process_text(word, mode="query"))
        return max((reader.doc_frequency(NAME_FIELD, term) for term in terms), default=0)

    def frequencies(self, words: list[str]) -> dict[str, int]:
        """``{word: frequency}`` of words as typed (case and accents folded
        here, as :meth:`frequency` of :meth:`normalise`; a stop word: 0)."""
        found = {}
        for word in words:
            normal = self.normalise(word)
            found[word] = self.frequency(normal) if normal else 0
        return found

    def near(self, word: str, maxdist: int) -> list[str]:
        """Candidates for the words within ``maxdist`` edits of ``word``: every
        word of the prefixes a correction may start with
        (:func:`searchengine.spelling.prefixes`); the distance is checked by
        :func:`searchengine.spelling.within`."""
        from searchengine.spelling import prefixes

        return [term for prefix in prefixes(word) for term in self.words(prefix)]

    def words(self, prefix: str) -> list[str]:
        """The sorted words starting with ``prefix``, kept with the reader."""
        cache = generation_cache(self.reader).spelling
        words = cache.get(prefix)
        if words is None:
            if _COMPLETE in cache:
                return []
            words = self.columns.spelling_words(prefix)
            if len(cache) >= VOCABULARY_PREFIXES:
                cache.clear()
            cache[prefix] = words
        return words

    def warm(self) -> int:
        """Read every word into the word lists (a server does this at start:
        about a second and 20 MB for 74,728 abstracts); returns the number of
        distinct words."""
        from searchengine.spelling import SHARED_PREFIX

        grouped: dict[str, list[str]] = {}
        for word in self.columns.spelling_words():  # sorted: so is each group
            grouped.setdefault(word[:SHARED_PREFIX], []).append(word)
        cache = dict(grouped)
        cache[_COMPLETE] = []
        generation_cache(self.reader).spelling = cache
        return sum(len(words) for words in cache.values())
