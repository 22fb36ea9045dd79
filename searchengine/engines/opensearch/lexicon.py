"""Did-you-mean on the cluster: the index's words and the hits of corrections.

:class:`ClusterLexicon` and :class:`ClusterCorrections` are what
:func:`searchengine.spelling.suggest` asks of an engine; the policy (which
words are checked, which corrections win in context) is the product's, the
same as on the embedded engine.

Candidates come from OpenSearch's ``term`` suggester over ``title.spell``
and ``abstract.spell`` (the words folded for case and accents, not stemmed:
what the embedded engine's ``spell_*`` fields hold), which finds the terms
within two edits with a Levenshtein automaton on each shard. A word's
frequency is the number of titles (or abstracts, whichever is larger) that
hold its stem, provided some title or abstract holds it as written: one
``filters`` aggregation answers that for every candidate of a word at once.
Hits of a corrected query are counts within the search's filters; the share
of them that hold a two-word phrase is counted over all of them, not a
sample.
"""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING, Any, Protocol

from searchengine import querylang
from searchengine.analysis.stopwords import STOP_WORDS

if TYPE_CHECKING:
    from searchengine.filters import Filters

#: The fields the term suggester reads (multi-fields of title and abstract).
SPELL_FIELDS = ("title.spell", "abstract.spell")
# Candidates asked of the suggester per field and word: the spelling policy
# keeps the closest few, after its own prefix and distance rule.
_SUGGESTIONS = 25


def fold(word: str) -> str:
    """``word`` lower-cased, accents stripped (``Vlček`` → ``vlcek``), as
    ``lowercase`` and ``asciifolding`` index it."""
    decomposed = unicodedata.normalize("NFKD", word.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


class ClusterRequests(Protocol):
    """What the lexicon asks of the cluster's searcher (:class:`.searcher.OpenSearchSearcher`)."""

    def doc_count(self) -> int: ...

    def count(self, query: dict[str, Any]) -> int: ...

    def request(self, action: str, body: dict[str, Any]) -> dict[str, Any]: ...


class ClusterLexicon:
    """The spelling words of an index on a cluster, for one search.

    Frequencies are cached for the lexicon's life (one search). Requests go
    through ``searcher`` and raise what it raises
    (:class:`~searchengine.errors.ClusterError` when the cluster fails).
    """

    def __init__(self, searcher: ClusterRequests) -> None:
        self.searcher = searcher
        self._frequencies: dict[str, int] = {}
        self._names: dict[str, int] = {}

    def doc_count(self) -> int:
        """Number of documents."""
        return self.searcher.doc_count()

    @staticmethod
    def normalise(word: str) -> str | None:
        """``word`` as the spelling fields hold it, or ``None`` for a stop word."""
        folded = fold(word)
        return None if folded in STOP_WORDS else folded

    def frequency(self, word: str) -> int:
        """Documents whose title (or abstract, the larger count) holds the stem
        of ``word``; 0 when no title or abstract holds ``word`` as written."""
        if word not in self._frequencies:
            self._count([word])
        return self._frequencies[word]

    def name_frequency(self, word: str) -> int:
        """Documents whose author names hold ``word``; 0 for none (one count,
        kept for the search). A word a name holds is never corrected."""
        from searchengine.engines.opensearch.querying import field_word

        if word not in self._names:
            query = field_word("authors", word)
            self._names[word] = self.searcher.count(query) if query is not None else 0
        return self._names[word]

    def frequencies(self, words: list[str]) -> dict[str, int]:
        """``{word: frequency}`` of words as typed (see :meth:`frequency`; a
        stop word: 0), the unknown ones counted in one request."""
        normal = {word: self.normalise(word) for word in words}
        self._count(sorted({n for n in normal.values() if n}))
        return {word: self._frequencies[n] if n else 0 for word, n in normal.items()}

    def near(self, word: str, maxdist: int) -> set[str]:
        """Indexed words the term suggester finds within ``maxdist`` (1 or 2)
        edits of ``word``; their frequencies are fetched in the same go."""
        options = {
            "prefix_length": 0,
            "min_word_length": 1,
            "max_edits": max(1, min(maxdist, 2)),
            "suggest_mode": "always",
            "size": _SUGGESTIONS,
            "string_distance": "damerau_levenshtein",
        }
        body = {
            "size": 0,
            "suggest": {
                str(number): {"text": word, "term": {"field": field, **options}}
                for number, field in enumerate(SPELL_FIELDS)
            },
        }
        found = self.searcher.request("find spelling corrections", body)
        words = {
            option["text"]
            for entries in found.get("suggest", {}).values()
            for entry in entries
            for option in entry.get("options", [])
        }
        self._count(sorted(words))
        return words

    def _count(self, words: list[str]) -> None:
        """Frequencies of ``words`` not yet known, in one request (three filters each)."""
        from searchengine.engines.opensearch.querying import field_word

        wanted = [word for word in words if word not in self._frequencies]
        if not wanted:
            return
        filters = {}
        for number, word in enumerate(wanted):
            filters[f"{number}w"] = {"bool": {"should": [{"term": {field: word}} for field in SPELL_FIELDS]}}
            filters[f"{number}t"] = field_word("title", word) or {"match_none": {}}
            filters[f"{number}a"] = field_word("abstract", word) or {"match_none": {}}
        body = {"size": 0, "query": {"match_all": {}}, "aggs": {"words": {"filters": {"filters": filters}}}}
        buckets = self.searcher.request("count word frequencies", body)["aggregations"]["words"]["buckets"]
        for number, word in enumerate(wanted):
            written = buckets[f"{number}w"]["doc_count"]
            self._frequencies[word] = (
                0 if not written else max(buckets[f"{number}t"]["doc_count"], buckets[f"{number}a"]["doc_count"])
            )


class ClusterCorrections:
    """Hits of candidate corrections of a query, within the query's filters.

    ``hits`` and ``phrase_share`` parse with the product's query language,
    so a correction that cannot be parsed raises
    :class:`~searchengine.errors.QueryError`, as on the embedded engine.
    """

    def __init__(self, searcher: ClusterRequests, filters: Filters) -> None:
        self.searcher = searcher
        self.filters = filters
        self._hits: dict[str, int] = {}

    def _query(self, *texts: str) -> dict:
        from searchengine.engines.opensearch.querying import filter_clauses, to_dsl

        must = [to_dsl(querylang.parse(text).tree) for text in texts]
        return {"bool": {"must": must, "filter": filter_clauses(self.filters)}}

    def hits(self, text: str) -> int:
        """Number of papers the query ``text`` finds within the filters."""
        if text not in self._hits:
            self._hits[text] = self.searcher.count(self._query(text))
        return self._hits[text]

    def phrase_share(self, phrase: str, text: str, sample: int) -> float:
        """The share (0 to 1) of the hits of ``text`` that hold the quoted
        ``phrase`` (all of them: a count costs no more than a sample)."""
        total = self.hits(text)
        if not total:
            return 0.0
        return self.searcher.count(self._query(text, phrase)) / total
