"""Did-you-mean on the cluster: the index's words and the hits of corrections.

:class:`ClusterLexicon` and :class:`ClusterCorrections` are what
:func:`searchengine.spelling.suggest` asks of an engine; the policy (which
words are checked, which corrections win in context) is the product's, the
same as on the embedded engine.

The words are the product's: each document's ``spelling`` field holds the
words of its title and abstract as the embedded index keeps them for
did-you-mean (:func:`.terms.spelling_words`: folded, whole, unstemmed).
Candidates come from OpenSearch's ``term`` suggester over that field, which
finds the words within two edits with a Levenshtein automaton on each shard
(a superset of what the product's rule keeps, :func:`searchengine.spelling.within`,
applied here before anything is counted). A word's frequency is the number
of titles (or abstracts, whichever is larger) that hold its stem, provided
some paper holds it as written: counts that the searcher keeps for the
index's generation (:class:`.scoring.IndexStatistics`), so a word costs a
request once per process, and a search's own words are counted with its
matches (:meth:`.searcher.OpenSearchSearcher.match`). Hits of a corrected
query are counts within the search's filters; the share of them that hold
a two-word phrase is counted over all of them, not a sample.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from searchengine import querylang
from searchengine.analysis.stopwords import STOP_WORDS

if TYPE_CHECKING:
    from searchengine.engines.opensearch.scoring import IndexStatistics
    from searchengine.filters import Filters

# Candidates asked of the suggester per word and shard: every word within the
# edits (the product's rule keeps the closest few).
_SUGGESTIONS = 200


def fold(word: str) -> str:
    """``word`` folded for case and accents (``Vlček`` → ``vlcek``), as the
    spelling words are kept (:func:`searchengine.analysis.folding.fold`)."""
    from searchengine.analysis.folding import fold as folded

    return folded(word)


def word_keys(word: str) -> dict:
    """``{name: (key, query)}`` of what :meth:`ClusterLexicon.frequency` and
    :meth:`ClusterLexicon.name_frequency` count for a folded ``word``:
    ``spelled`` (the papers holding it as written), ``title`` and
    ``abstract`` (its stem there: the term's own statistics key when the
    word is one term, shared with the scores) and ``authors`` (the word in
    the author names)."""
    from searchengine.engines.opensearch.mapping import SPELLING
    from searchengine.engines.opensearch.querying import author_key, field_word, term_key
    from searchengine.engines.opensearch.terms import query_tokens

    none: dict = {"match_none": {}}
    tokens = query_tokens(word)
    keys = {"spelled": (("spelled", word), {"term": {SPELLING: word}}), "authors": author_key(word)}
    for field in ("title", "abstract"):
        if len(tokens) == 1 and not tokens[0][2]:
            keys[field] = term_key(field, tokens[0][0])
        else:
            keys[field] = ((f"{field} words", word), field_word(field, word) or none)
    return keys


def word_counts(word: str) -> dict:
    """``{key: query}`` of :func:`word_keys`."""
    return dict(word_keys(word).values())


def hits_key(filters: Filters, *texts: str, translate=None) -> tuple[tuple, dict]:
    """The key under which the papers within ``filters`` that every query of
    ``texts`` finds are counted, and the query counting them (parsed by the
    product's query language: may raise :class:`~searchengine.errors.QueryError`).
    ``translate(tree)``: the Query DSL of a parsed tree (default
    :func:`.querying.to_dsl`; the searcher's expands fuzzy words and prefixes
    as its searches do)."""
    import json

    from searchengine.engines.opensearch.querying import filter_clauses, to_dsl

    clauses = filter_clauses(filters)
    must = [(translate or to_dsl)(querylang.parse(text).tree) for text in texts]
    return ("hits", json.dumps(clauses, sort_keys=True), *texts), {"bool": {"must": must, "filter": clauses}}


class ClusterRequests(Protocol):
    """What the lexicon asks of the cluster's searcher (:class:`.searcher.OpenSearchSearcher`)."""

    known: IndexStatistics

    def doc_count(self) -> int: ...

    def count(self, query: dict[str, Any]) -> int: ...

    def fetch(self, wanted: dict) -> None: ...

    def counting_query(self, tree: Any) -> dict[str, Any] | None: ...

    def request(self, action: str, body: dict[str, Any]) -> dict[str, Any]: ...


class ClusterLexicon:
    """The spelling words of an index on a cluster.

    Counts are the searcher's (:attr:`.searcher.OpenSearchSearcher.known`,
    kept for the index's generation). Requests go through ``searcher`` and
    raise what it raises (:class:`~searchengine.errors.ClusterError` when
    the cluster fails).
    """

    def __init__(self, searcher: ClusterRequests) -> None:
        self.searcher = searcher

    def doc_count(self) -> int:
        """Number of documents (as the search's count of its matches read them)."""
        known = self.searcher.known
        return known.total if known.generation is not None else self.searcher.doc_count()

    @staticmethod
    def normalise(word: str) -> str | None:
        """``word`` as the spelling words hold it, or ``None`` for a stop word."""
        folded = fold(word)
        return None if folded in STOP_WORDS else folded

    def _counts(self, words: list[str]) -> dict:
        wanted: dict = {}
        for word in words:
            wanted.update(word_counts(word))
        self.searcher.fetch(wanted)
        return self.searcher.known.frequencies

    def frequency(self, word: str) -> int:
        """Documents whose title (or abstract, the larger count) holds the stem
        of ``word``; 0 when no title or abstract holds ``word`` as written."""
        return self.frequencies_of([word])[word]

    def frequencies_of(self, words: list[str]) -> dict[str, int]:
        """``{word: frequency}`` of folded ``words`` (see :meth:`frequency`), counted in one request."""
        counts = self._counts(words)
        found = {}
        for word in words:
            keys = word_keys(word)
            spelled = counts.get(keys["spelled"][0], 0)
            found[word] = max(counts.get(keys["title"][0], 0), counts.get(keys["abstract"][0], 0)) if spelled else 0
        return found

    def name_frequency(self, word: str) -> int:
        """Documents whose author names hold ``word``; 0 for none. A word a
        name holds is never corrected."""
        from searchengine.engines.opensearch.querying import author_key

        key, _ = author_key(word)
        return self._counts([word]).get(key, 0)

    def frequencies(self, words: list[str]) -> dict[str, int]:
        """``{word: frequency}`` of words as typed (see :meth:`frequency`; a
        stop word: 0), the unknown ones counted in one request."""
        normal = {word: self.normalise(word) for word in words}
        found = self.frequencies_of(sorted({n for n in normal.values() if n}))
        return {word: found[n] if n else 0 for word, n in normal.items()}

    def near(self, word: str, maxdist: int) -> set[str]:
        """Indexed words within ``maxdist`` (1 or 2) edits of ``word`` that
        start as the product's rule wants (:func:`searchengine.spelling.within`):
        the term suggester's over the spelling words, the word and the word
        with its first two letters swapped (the automaton keeps the first
        letter within two edits); their frequencies are counted in the same
        go. Kept for the generation."""
        from searchengine import spelling

        expansions = self.searcher.known.expansions
        key = ("near", word)
        if key not in expansions:
            expansions[key] = self._near(word)
        return {term for term in expansions[key] if spelling.edit_distance(word, term) <= maxdist}

    def _near(self, word: str) -> set[str]:
        """The words within two edits of ``word`` that start as the product's
        rule wants, their counts fetched (two requests)."""
        from searchengine import spelling
        from searchengine.engines.opensearch.mapping import SPELLING

        options = {
            "prefix_length": 0,
            "min_word_length": 1,
            "max_edits": 2,
            "suggest_mode": "always",
            "size": _SUGGESTIONS,
            "shard_size": _SUGGESTIONS,
            "max_inspections": 10,
            "accuracy": 0.1,
            "max_term_freq": 2147483647,
            "string_distance": "damerau_levenshtein",
        }
        texts = dict.fromkeys([word, word[1::-1] + word[2:]])
        body = {
            "size": 0,
            "suggest": {
                str(number): {"text": text, "term": {"field": SPELLING, **options}} for number, text in enumerate(texts)
            },
        }
        found = self.searcher.request("find spelling corrections", body)
        suggested = {
            option["text"]
            for entries in found.get("suggest", {}).values()
            for entry in entries
            for option in entry.get("options", [])
        }
        starts = spelling.prefixes(word)
        words = {
            term
            for term in suggested
            if term[: spelling.SHARED_PREFIX] in starts and spelling.edit_distance(word, term) <= 2
        }
        self._counts(sorted(words))
        return words


class ClusterCorrections:
    """Hits of candidate corrections of a query, within the query's filters.

    ``hits`` and ``phrase_share`` parse with the product's query language,
    so a correction that cannot be parsed raises
    :class:`~searchengine.errors.QueryError`, as on the embedded engine.
    """

    def __init__(self, searcher: ClusterRequests, filters: Filters) -> None:
        self.searcher = searcher
        self.filters = filters

    def _count(self, *texts: str) -> int:
        key, query = hits_key(self.filters, *texts, translate=self.searcher.counting_query)
        self.searcher.fetch({key: query})
        return self.searcher.known.frequencies[key]

    def prefetch(self, texts: list[str], pairs: list[tuple[str, str]]) -> None:
        """Count, in one request, the papers within the filters that each
        query of ``texts`` finds and that each ``(phrase, text)`` pair finds
        together (what :meth:`hits` and :meth:`phrase_share` will be asked);
        a text the query language refuses is left to them."""
        from searchengine.errors import QueryError

        wanted = {}
        for texts_of in [(text,) for text in texts] + [(text, phrase) for phrase, text in pairs]:
            try:
                key, query = hits_key(self.filters, *texts_of, translate=self.searcher.counting_query)
            except QueryError:
                continue
            wanted[key] = query
        self.searcher.fetch(wanted)

    def hits(self, text: str) -> int:
        """Number of papers the query ``text`` finds within the filters (kept for the generation)."""
        return self._count(text)

    def phrase_share(self, phrase: str, text: str, sample: int) -> float:
        """The share (0 to 1) of the hits of ``text`` that hold the quoted
        ``phrase`` (all of them: a count costs no more than a sample)."""
        total = self.hits(text)
        if not total:
            return 0.0
        return self._count(text, phrase) / total
