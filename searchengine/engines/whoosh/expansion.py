"""A query's words expanded against the index's terms, at search time.

* A prefix (``spars*``) or wildcard → an OR of at most :data:`MAX_EXPANSIONS`
  index terms, the most frequent (a note says when some were dropped).
* A fuzzy word (``memroy~2``) → the index terms within its edit distance,
  the closest first: the optimal string alignment distance,
  Damerau–Levenshtein with a swap of neighbours counting one, as Lucene's
  fuzzy query, computed by ``rapidfuzz``. A word's term is compared with
  the field's terms (:func:`fuzzy_terms`, over :class:`_Vocabulary`, kept
  with the generation); in a title or abstract the word as written is also
  compared with the words as written there, and what those stem to is
  searched too (:func:`written_fuzzy_terms`), each term at its fewest edits. The expansions share one
  document frequency, the largest among them, and weigh less the more edits
  they are away (:func:`fuzzy_weights`), as Lucene's blended rewrite of a
  fuzzy query: a rare misspelling in the index does not outrank the word
  meant. A term other than the word itself is an expansion only when it may
  be fuzzy (:func:`searchengine.querylang.text.may_expand_to`: a word of
  three letters or more without a digit), and a word as written counts by
  its whole term, never by a compound's parts
  (:func:`searchengine.querylang.text.whole_term`).
* A joined word (``flashattention``) that is two indexed words → also the
  two words (:func:`split_joined`), chosen by their frequencies in the
  abstracts.

Expanding watches the search's deadline (:class:`~.clock.MatchClock`).
"""

from __future__ import annotations

from math import log

from whoosh import query as wq

from searchengine.analysis.splitting import best_split, may_split
from searchengine.engines.whoosh import internals
from searchengine.engines.whoosh.bm25f import is_bm25f_term
from searchengine.engines.whoosh.cache import generation_cache, remembered
from searchengine.engines.whoosh.clock import MatchClock
from searchengine.engines.whoosh.queries import MinShouldMatch, Proximity, WrittenFuzzy
from searchengine.engines.whoosh.querying import reweighed, word_query
from searchengine.querylang import tree as t
from searchengine.querylang.text import may_expand_to, whole_term
from searchengine.ranking import PROXIMITY_FIELDS

# The field of author names: a word it holds is never split.
NAME_FIELD = "authors"

# A prefix or fuzzy term matches at most this many index terms.
MAX_EXPANSIONS = t.MAX_EXPANSIONS


def _prefix_frequencies(reader, fieldname: str, prefix: str) -> dict[bytes, int]:
    """Each indexed term of ``fieldname`` starting with ``prefix`` → its document
    frequency, read in one pass over each segment's term list (looking each
    term up again cost half a second for a few common prefixes)."""
    counts: dict[bytes, int] = {}
    for sub, _ in reader.leaf_readers():
        for text, info in sub.iter_prefix(fieldname, prefix):
            counts[text] = counts.get(text, 0) + info.doc_frequency()
    return counts


_CHECK_EVERY = 2048  # terms read or compared between two looks at the clock


class _Vocabulary:
    """The indexed terms of one field, in term order, kept with the reader
    (its generation): from the generation's column file when it holds them,
    else read from the index's term list.

    Reading stops at a search's deadline and the next search resumes where
    it stopped: a cold process with a small budget still gets there.
    """

    def __init__(self) -> None:
        self.terms: list[str] = []
        self.resume: bytes | None = None  # the last term read; None before the first
        self.complete = False

    def read(self, reader, fieldname: str, clock: MatchClock | None) -> bool:
        """Read on until the end of the term list (``True``) or the deadline (``False``)."""
        field = reader.schema[fieldname]
        append = self.terms.append
        count = 0
        for name, btext in reader.terms_from(fieldname, self.resume or b""):
            if name != fieldname:
                break
            if btext == self.resume:
                continue  # the term list resumes at the last term already read
            append(field.from_bytes(btext))
            self.resume = btext
            count += 1
            if count % _CHECK_EVERY == 0 and clock is not None and clock.expired():
                return False
        self.complete = True
        return True

    def take(self, terms: list[str]) -> None:
        """Take the whole term list, in term order (from the column file)."""
        self.terms, self.resume, self.complete = terms, None, True


def _vocabulary(reader, fieldname: str, clock: MatchClock | None, stored=None) -> _Vocabulary | None:
    """The field's :class:`_Vocabulary`, ``None`` when the deadline came first.

    ``stored(fieldname)``, when given, is the field's term list as the
    generation's column file holds it (``None`` if it holds none), taken
    in one go rather than read from the index.
    """
    vocabulary = generation_cache(reader).vocabularies.setdefault(fieldname, _Vocabulary())
    if not vocabulary.complete and stored is not None:
        terms = stored(fieldname)
        if terms is not None:
            vocabulary.take(terms)
    if not vocabulary.complete and not vocabulary.read(reader, fieldname, clock):
        return None
    return vocabulary


def fuzzy_terms(
    reader, fieldname: str, text: str, maxdist: int, clock: MatchClock | None = None, stored=None
) -> list[str] | None:
    """The indexed terms of ``fieldname`` within ``maxdist`` edits of ``text``
    (the optimal string alignment distance: Damerau–Levenshtein with a swap
    of neighbours counting one, as Lucene's fuzzy query) that it may expand
    to (:func:`~searchengine.querylang.text.may_expand_to`: ``text`` itself,
    and words of three letters or more without a digit): at most
    :data:`MAX_EXPANSIONS`, the closest first (in term order), and among
    equally close terms that do not all fit, the most frequent.

    The distances are computed by ``rapidfuzz`` over the whole term list
    (about 50 ms for 100,000 terms); document frequencies are read only to
    choose within the closest distance that overflows the cap (in term
    order once the ``clock``'s deadline has passed). ``None`` when the
    deadline passed before the term list was read. ``stored``: see
    :func:`_vocabulary`.
    """
    from rapidfuzz import process
    from rapidfuzz.distance import OSA

    vocabulary = _vocabulary(reader, fieldname, clock, stored)
    if vocabulary is None:
        return None
    by_distance: dict[int, list[str]] = {}
    for term, distance, _ in process.extract(
        text, vocabulary.terms, scorer=OSA.distance, processor=None, score_cutoff=maxdist, limit=None
    ):
        if may_expand_to(term, distance):
            by_distance.setdefault(int(distance), []).append(term)
    found: list[str] = []
    for distance in sorted(by_distance):
        terms = sorted(by_distance[distance])
        room = MAX_EXPANSIONS - len(found)
        if len(terms) > room and (clock is None or not clock.expired()):
            terms.sort(key=lambda term: -reader.doc_frequency(fieldname, term))  # stable: ties by term
        found.extend(terms[:room])
        if len(found) >= MAX_EXPANSIONS:
            break
    return found


def written_fuzzy_terms(reader, fieldname: str, word: str, maxdist: int, words: list[str]) -> list[tuple[str, int]]:
    """The terms of ``fieldname`` that the words as written (``words``: folded,
    unstemmed, sorted) within ``maxdist`` edits of ``word`` stem to, each with
    the fewest edits of a word that stems to it: at most
    :data:`MAX_EXPANSIONS`, the closest first, then the most frequent.

    A word as written counts by its whole term
    (:func:`~searchengine.querylang.text.whole_term`: a compound's joined
    form, never its parts), and only when ``word`` may expand to that term
    (:func:`~searchengine.querylang.text.may_expand_to`): ``transformer``
    is two edits from ``transformer-2``, whose term ``transformer2`` has a
    digit, and never reaches the ``2``.

    The distances are computed by ``rapidfuzz`` over every word (about 50 ms
    for the 255,509 words of the 74,728-record sample).
    """
    from rapidfuzz import process
    from rapidfuzz.distance import OSA

    def neighbours(key: tuple[str, int]) -> list[tuple[str, int]]:
        return [
            (found, int(distance))
            for found, distance, _ in process.extract(
                key[0], words, scorer=OSA.distance, processor=None, score_cutoff=key[1], limit=None
            )
        ]

    # Kept with the generation: the title and the abstract compare the same
    # word with the same words, and the OR fallback and did-you-mean again.
    near = remembered(generation_cache(reader).written_neighbours, (word, maxdist), neighbours, _FREQUENCIES_KEPT)
    field = reader.schema[fieldname]
    closest: dict[str, int] = {}
    for written, distance in near:
        # Whoosh reuses one token object: copy what is needed as it goes.
        term = whole_term(
            [
                (token.text, getattr(token, "joined", False))
                for token in field.tokenize(written, mode="query", removestops=True)
            ]
        )
        if term is not None and may_expand_to(term, distance) and distance < closest.get(term, maxdist + 1):
            closest[term] = int(distance)
    frequency = {term: reader.doc_frequency(fieldname, term) for term in closest}
    held = sorted(
        (term for term in closest if frequency[term]), key=lambda term: (closest[term], -frequency[term], term)
    )
    return [(term, closest[term]) for term in held[:MAX_EXPANSIONS]]


def _closest(reader, fieldname: str, found: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """``(term, edits)`` pairs with each term once, at its fewest edits: at
    most :data:`MAX_EXPANSIONS`, the closest first, then the most frequent."""
    closest: dict[str, int] = {}
    for term, edits in found:
        closest[term] = min(edits, closest.get(term, edits))
    ranked = sorted(closest, key=lambda term: (closest[term], -reader.doc_frequency(fieldname, term), term))
    return [(term, closest[term]) for term in ranked[:MAX_EXPANSIONS]]


def fuzzy_weights(reader, fieldname: str, text: str, expansions: list[tuple[str, int]]) -> list[float]:
    """The boost of each of a fuzzy word's ``expansions`` (``(term, edits)``):
    its score becomes that of a term with the largest document frequency
    among them (the idf of BM25's scorer, :func:`.bm25f.weighting`), times
    ``1 - edits / len(text)`` (at least 0.1), as Lucene's
    ``TopTermsBlendedFreqScoringRewrite`` with its fuzzy similarity boost."""
    total = reader.doc_count_all()

    def idf(n: int) -> float:
        return log(1 + (total - n + 0.5) / (n + 0.5))

    frequencies = [max(1, reader.doc_frequency(fieldname, term)) for term, _ in expansions]
    blended = idf(max(frequencies, default=1))
    return [
        blended / idf(n) * max(0.1, 1 - edits / max(1, len(text))) for (_, edits), n in zip(expansions, frequencies)
    ]


def expand_wildcards(
    query: wq.Query,
    reader,
    notes: list[str],
    clock: MatchClock | None = None,
    memo: dict | None = None,
    vocabulary=None,
    written=None,
) -> wq.Query:
    """Replace each prefix, wildcard and fuzzy node with an OR of at most
    :data:`MAX_EXPANSIONS` terms.

    A prefix keeps its most frequent matching terms, so ``s*`` cannot turn
    into a query over half the vocabulary (a note says when terms were
    dropped); a fuzzy term its closest (:func:`fuzzy_terms`).

    Expanding counts against the ``clock``'s deadline: once it has passed, a
    node left to expand matches only its own text (a fuzzy word) or nothing
    (a prefix, a wildcard), and the clock says matching was cut. ``memo``
    (a dict kept for one search) holds each node's expansion, so the OR
    fallback and did-you-mean reuse them. ``vocabulary(fieldname)`` gives a
    field's stored term list for fuzzy words (see :func:`_vocabulary`);
    ``written()`` the words as written for :class:`~.queries.WrittenFuzzy`
    words (``None`` without them: such a word is then compared as its stem).
    """
    if not any(isinstance(leaf, (wq.Prefix, wq.Wildcard, wq.FuzzyTerm)) for leaf in query.leaves()):
        return query
    memo = {} if memo is None else memo

    def expired() -> bool:
        if clock is not None and clock.expired():
            clock.cut = True
            return True
        return False

    def terms_of(
        node: wq.Prefix | wq.Wildcard | wq.FuzzyTerm, fieldname: str
    ) -> tuple[list, list[str], list[float] | None]:
        """``(terms, notes, boosts)`` of one node (in ``fieldname``), ``terms``
        as the field stores them, ``boosts`` each term's (a fuzzy word's, else ``None``)."""
        if isinstance(node, wq.FuzzyTerm):
            stem, words = node.text, None
            if isinstance(node, WrittenFuzzy):
                # Compared by its stem too: "zebar" is 2 edits from "zebras", 1 from "zebra"'s stem.
                stems = [token.text for token in reader.schema[fieldname].tokenize(node.text, mode="query")]
                stem = stems[0] if stems else node.text
                words = written() if written is not None else None
            found = None
            if not expired():
                from rapidfuzz.distance import OSA

                terms = fuzzy_terms(reader, fieldname, stem, node.maxdist, clock, vocabulary)
                if terms is not None:
                    found = [(term, int(OSA.distance(stem, term))) for term in terms]
                    if words is not None:
                        found = _closest(
                            reader,
                            fieldname,
                            found + written_fuzzy_terms(reader, fieldname, node.text, node.maxdist, words),
                        )
            if found is None:
                if clock is not None:
                    clock.cut = True
                return [stem], [], None  # its stem, as typed
            return [term for term, _ in found], [], fuzzy_weights(reader, fieldname, node.text, found)
        if expired():
            return [], [], None
        if isinstance(node, wq.Prefix):
            frequency = _prefix_frequencies(reader, fieldname, node.text)
            candidates = sorted(frequency)
        else:
            candidates = internals.wildcard_terms(node, reader)
            frequency = None
        said = []
        if len(candidates) > MAX_EXPANSIONS:
            candidates.sort(
                key=frequency.__getitem__ if frequency is not None else lambda t: reader.doc_frequency(fieldname, t),
                reverse=True,
            )
            said.append(
                f"'{node.text}*' matches {len(candidates)} terms in {fieldname}; "
                f"searched the {MAX_EXPANSIONS} most frequent"
            )
            candidates = candidates[:MAX_EXPANSIONS]
        field = reader.schema[fieldname]
        return [field.from_bytes(t) for t in candidates], said, None

    def expand(node: wq.Query) -> wq.Query:
        if isinstance(node, (wq.Prefix, wq.Wildcard, wq.FuzzyTerm)):
            fieldname = node.field()
            if fieldname is None or fieldname not in reader.schema:
                return wq.NullQuery
            key = (type(node).__name__, fieldname, node.text, getattr(node, "maxdist", 0))
            if key not in memo:
                memo[key] = terms_of(node, fieldname)
            terms, said, boosts = memo[key]
            notes.extend(said)
            if not terms:
                # Matches nothing, as the word typed: Whoosh drops a NullQuery from an AND,
                # which would answer "gpu zzq*" as "gpu" alone.
                return wq.Term(fieldname, _as_typed(node))
            if boosts is None:
                return wq.Or([wq.Term(fieldname, term) for term in terms], boost=node.boost)
            return wq.Or(
                [wq.Term(fieldname, term, boost=boost) for term, boost in zip(terms, boosts)], boost=node.boost
            )
        if node.is_leaf():
            return node
        return node.apply(expand)

    return expand(query).normalize()


def _as_typed(node: wq.Prefix | wq.Wildcard | wq.FuzzyTerm) -> str:
    """A prefix or fuzzy node as typed (``zzq*``, ``memroy~2``): a term no
    field holds, since analysis never keeps ``*`` or ``~``."""
    if isinstance(node, wq.FuzzyTerm):
        return f"{node.text}~{node.maxdist}"
    return f"{node.text}*" if isinstance(node, wq.Prefix) else str(node.text)


_FREQUENCIES_KEPT = 100_000  # terms; the cache starts over past this


def abstract_frequency(reader):
    """``frequency(term)``: the number of abstracts holding ``term``, kept
    with the reader (its generation). Splitting a joined word looks up every
    cut of it, and a lookup in Whoosh's term table costs about 70 µs."""
    kept = generation_cache(reader).abstract_frequencies

    def frequency(text: str) -> int:
        return remembered(kept, text, lambda term: reader.doc_frequency("abstract", term), _FREQUENCIES_KEPT)

    return frequency


def _abstract_stem(reader):
    """``stem(word)``: the term the abstracts index for one lower-case word
    that is not a stop word (``language`` → ``languag``), by the stemmer of
    the abstract's analyzer (cached there); the word itself without one."""
    field = reader.schema["abstract"] if "abstract" in reader.schema else None
    items = getattr(getattr(field, "analyzer", None), "items", ())
    stems = [item.stem_text for item in items if hasattr(item, "stem_text")]
    return stems[-1] if stems else (lambda word: word)


def split_joined(query: wq.Query, reader) -> wq.Query:
    """Each one-field-term word of a keyword ``query`` (not a long question)
    that is two indexed words written together → the alternatives of a
    compound typed joined (the joined word, then the two words in sequence),
    as ``FlashAttention`` gets them.

    The split is :func:`searchengine.analysis.splitting.best_split`'s, by the
    abstracts' document frequencies; a word with no such split is left
    alone, and so is a word that an author's name holds (a surname typed
    alone: ``Vedaldi`` is not ``veda ldi``).
    """
    # A question ranks by many words, each by its own weight; splitting is
    # for looking up a keyword query.
    if type(query.child if type(query) is Proximity else query) is MinShouldMatch:
        return query

    stem = _abstract_stem(reader)

    def split(node: wq.Query) -> wq.Query:
        if isinstance(node, wq.Or) and is_bm25f_term(node):  # (a BM25FTerm is an Or)
            fields = [sub for sub in node.subqueries if isinstance(sub, wq.Term)]  # (all: a Term per field)
            texts = {sub.text for sub in fields if sub.fieldname in PROXIMITY_FIELDS}
            text = texts.pop() if len(texts) == 1 else None
            if text is None or not may_split(text):
                return node
            # A word some author's name holds is a name, not two words (Vedaldi, Ritter).
            if any(sub.fieldname == NAME_FIELD and reader.doc_frequency(NAME_FIELD, sub.text) for sub in fields):
                return node
            best = best_split(text, abstract_frequency(reader), stem)
            if best is None:
                return node
            found = word_query("-".join(best), reader.schema)
            return reweighed(found, node.boost) if found is not None else node
        if node.is_leaf():
            return node
        return node.apply(split)

    return split(query)
