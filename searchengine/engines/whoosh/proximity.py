"""Word positions: phrases, and the bonus of query words standing together.

Both read the positions of a term's postings for candidate documents only
(those with every word of a phrase, a query's best hits), and keep what
they read per segment (:func:`cached_positions`): the best hits of queries sharing a word (a page,
a filter, a facet, the next query with that word) fall mostly in the blocks
read before.

* A phrase (:func:`phrase_postings`): the documents with the words at
  consecutive positions, scored as Whoosh scores a phrase (the sum of the
  words' BM25 scores in the field).
* The proximity bonus (:func:`proximity_bonus`): each pair of neighbouring
  query words is a pseudo-term of the title and abstract whose frequency is
  the pair's occurrences in order, each within
  :data:`~searchengine.ranking.PROXIMITY_SLOP` extra positions counting
  ``1 / (1 + extra)`` (Lucene's sloppy phrase frequency), scored by BM25F
  with the two words' idf added up (the idf Lucene gives a phrase) and
  weighing :data:`~searchengine.ranking.PROXIMITY_WEIGHT`; only a query's
  best hits get it (:mod:`searchengine.ranking` says how the numbers were
  chosen).

Reading positions stops at the search's deadline (:class:`~.clock.MatchClock`).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from itertools import accumulate

from searchengine.engines.whoosh import internals
from searchengine.engines.whoosh.blocks import arrays_at, leaf_matcher, postings_at, segment_docs, term_arrays
from searchengine.engines.whoosh.bm25f import idf, indexed, length_norms, saturated, term_postings
from searchengine.engines.whoosh.cache import generation_cache
from searchengine.engines.whoosh.clock import MatchClock
from searchengine.engines.whoosh.littleendian import loaded_numpy
from searchengine.ranking import PROXIMITY_SLOP, PROXIMITY_WEIGHT, TITLE_BOOST

# A phrase inside a conjunction with fewer candidate documents than this
# reads its words' positions for those documents only, not whole posting lists.
FEW_CANDIDATES = 2000


def proximity_bonus(searcher, pairs, docnums, clock: MatchClock | None = None) -> dict[int, float]:
    """The proximity bonus of each of ``docnums`` that has a pair of the query's
    neighbouring words together (see :data:`PROXIMITY_WEIGHT`).

    Args:
        searcher: a Whoosh searcher (atomic or over several segments).
        pairs: ``(field, first stem, second stem, gap)`` per pair of
            neighbouring query words and field (``gap``: their distance in
            positions in the query).
        docnums: top-level document numbers.
        clock: stops reading positions at its deadline (noting
            ``approximate``): the pairs read by then give the bonus.

    Returns:
        ``{docnum: bonus}`` for the documents with some pair together: per
        pair, ``PROXIMITY_WEIGHT * (idf1 + idf2) * tf * (K1 + 1) / (tf + K1)``,
        ``tf`` summing the field's sloppy phrase frequency times the field's
        weight (the title's :data:`~searchengine.ranking.TITLE_BOOST`)
        over its length norm, as BM25F does for a word.
    """

    weights = {"title": TITLE_BOOST}
    by_pair: dict[tuple[str, str, int], list[str]] = {}
    for fieldname, a, b, gap in pairs:
        by_pair.setdefault((a, b, gap), []).append(fieldname)
    found: dict[int, float] = {}
    for sub, offset, local in segment_docs(searcher, sorted(set(docnums))):
        reader = sub.reader()
        positions: dict[tuple[str, str], dict] = {}
        for (a, b, _), fieldnames in by_pair.items():
            for key in ((fieldname, text) for fieldname in fieldnames for text in (a, b)):
                if key not in positions:
                    if clock is not None and clock.expired():
                        clock.approximate = True
                        break
                    positions[key] = cached_positions(reader, *key, local)
        for (a, b, gap), fieldnames in by_pair.items():
            tf: dict[int, float] = {}
            for fieldname in fieldnames:
                first, second = positions.get((fieldname, a)), positions.get((fieldname, b))
                if not first or not second:
                    continue
                norms = length_norms(sub, reader, fieldname)
                weight = weights.get(fieldname, 1.0)
                for doc, (_, starts) in first.items():
                    if doc not in second:
                        continue
                    ends = second[doc][1]
                    freq = sum(
                        1.0 / (1 + extra)
                        for start in starts
                        for extra in range(PROXIMITY_SLOP + 1)
                        if start + gap + extra in ends
                    )
                    if freq:
                        tf[doc] = tf.get(doc, 0.0) + weight * freq / norms[doc]
            if not tf:
                continue
            pair_idf = sum(
                idf(searcher, keys)
                for keys in (indexed(searcher, [(f, word) for f in fieldnames]) for word in (a, b))
                if keys
            )
            for doc, value in tf.items():
                found[doc + offset] = found.get(doc + offset, 0.0) + PROXIMITY_WEIGHT * saturated(pair_idf, value)
    return found


def phrase_postings(
    searcher, reader, fieldname: str, words: list[str], within: set[int] | None = None, clock: MatchClock | None = None
) -> tuple[array, array]:
    """``(docs, scores)`` of the segment's documents with ``words`` at
    consecutive positions in ``fieldname``, each scored as the sum of the
    words' BM25 scores there.

    When ``within`` holds fewer than :data:`FEW_CANDIDATES` documents only
    those are checked; otherwise every document with all the words is, and
    the result is kept with the segment reader (when the deadline did not
    cut it short).
    """
    key = ("phrase", fieldname, tuple(words))
    cache = generation_cache(reader).postings
    found = cache.get(key)
    if found is None:
        if within is not None and len(within) < FEW_CANDIDATES:
            found, _ = _phrase_matches(searcher, reader, fieldname, words, within, clock)
        else:  # checking most documents anyway: check all, and keep the result (when complete)
            found, complete = _phrase_matches(searcher, reader, fieldname, words, None, clock)
            if complete:
                cache.put(key, found)
    return found


def _phrase_matches(
    searcher, reader, fieldname: str, words: list[str], within: set[int] | None, clock: MatchClock | None = None
) -> tuple[tuple[array, array], bool]:
    """``((docs, scores), complete)`` of a phrase: candidates are the documents
    with every word, or those of ``within`` (few, when given); positions are
    read for those only, once per distinct word. At the ``clock``'s deadline
    the candidates checked so far are the hits (``complete`` False, the clock's
    ``cut`` set)."""
    distinct = list(dict.fromkeys(words))
    if within is not None:
        candidates = sorted(within)
        read = _positions(reader, fieldname, distinct, candidates, clock)
        postings = [read[word] for word in words]
        candidates = [doc for doc in candidates if all(doc in found for found in postings)]
        norms = length_norms(searcher, reader, fieldname)
        idfs = [idf(searcher, ((fieldname, word),)) for word in words]
        total = {
            doc: sum(saturated(word_idf, found[doc][0] / norms[doc]) for word_idf, found in zip(idfs, postings))
            for doc in candidates
        }
    else:
        total = word_conjunction(searcher, reader, fieldname, words)
        candidates = sorted(total)
        kept = _phrase_docs_at_once(reader, fieldname, words, candidates)
        if kept is not None:
            return (array("i", kept), array("d", (total[doc] for doc in kept))), True
        read = _positions(reader, fieldname, distinct, candidates, clock)
        postings = [read[word] for word in words]
    kept = []
    complete = clock is None or not clock.cut
    for number, doc in enumerate(candidates):
        if not all(doc in found for found in postings):  # positions not read: the deadline came first
            continue
        if number % 256 == 255 and clock is not None and clock.expired():
            clock.cut, complete = True, False
            break
        first, following = postings[0][doc][1], [found[doc][1] for found in postings[1:]]
        if any(all(start + i + 1 in later for i, later in enumerate(following)) for start in first):
            kept.append(doc)
    return (array("i", kept), array("d", (total[doc] for doc in kept))), complete


# Candidates from which a phrase of common words is checked over whole
# position tables (numpy) rather than document by document.
TABLE_CANDIDATES = 256


def _phrase_docs_at_once(reader, fieldname: str, words: list[str], candidates: list[int]) -> list[int] | None:
    """Those of ``candidates`` (ascending) with ``words`` at consecutive
    positions, found over the words' whole position tables (a document and
    position made one key per word, shifted by the word's place in the
    phrase; the keys all words share are the phrase's starts); ``None`` when
    a word's positions are not kept whole (:mod:`.termarrays`), numpy is not
    loaded or the candidates are few."""
    np = loaded_numpy()
    if np is None or len(candidates) < TABLE_CANDIDATES:
        return None
    by_word = {}
    for word in dict.fromkeys(words):
        whole = term_arrays(reader, fieldname, word)
        if whole is None or not whole.has_positions:
            return None
        by_word[word] = whole.position_table(np)
    shared = None
    for place, word in enumerate(words):
        docs, positions = by_word[word]
        keys = (docs << 32) + positions + (len(words) - place)  # distinct: a posting's positions are
        shared = keys if shared is None else np.intersect1d(shared, keys, assume_unique=True)
    assert shared is not None, "a phrase has words"
    if len(shared) == 0:
        return []
    starts = shared >> 32  # ascending (np.intersect1d sorts), a document once per start
    found = starts[np.concatenate(([True], starts[1:] != starts[:-1]))]
    return np.intersect1d(found, np.asarray(candidates, dtype=np.int64), assume_unique=True).tolist()


def word_conjunction(searcher, reader, fieldname: str, words: list[str]) -> dict[int, float]:
    """``{doc: score}`` of the segment's documents with every one of ``words``
    (stems) in ``fieldname``, wherever they stand: the sum of the words' BM25
    scores there (a word given twice counts twice), as a phrase of them is scored."""
    per_word = [term_postings(searcher, reader, ((fieldname, word),)) for word in words]
    ordered = sorted(per_word, key=lambda found: len(found[0]))
    total = dict(zip(*ordered[0]))
    for docs, scores in ordered[1:]:
        if not total:
            break
        other = dict(zip(docs, scores))
        total = {doc: score + other[doc] for doc, score in total.items() if doc in other}
    return total


def _positions(reader, fieldname: str, words: list[str], docs: list[int], clock: MatchClock | None) -> dict:
    """``{word: cached_positions(...)}`` for each of ``words`` (distinct);
    past the ``clock``'s deadline the words left are read as absent (``cut`` noted)."""
    found: dict[str, dict] = {}
    for word in words:
        if clock is not None and clock.expired():
            clock.cut = True
            found[word] = {}
            continue
        found[word] = cached_positions(reader, fieldname, word, docs, clock)
    return found


# --- the position cache ---------------------------------------------------------------------


class _TermPositions:
    """The posting blocks of one term (one field) read so far in a segment,
    with their positions.

    A block covers the documents from the one after its predecessor's last
    to its own last: a document in a covered range that has no posting does
    not have the term. A block is kept compact (document numbers and
    weights as arrays, the encoded positions as one string with their
    offsets), so that a long-lived cache holds few objects; a document's
    positions are decoded each time they are asked for (a few microseconds:
    a set per document kept would cost nine times the posting's bytes).
    """

    __slots__ = ("firsts", "lasts", "blocks", "postings")

    def __init__(self) -> None:
        self.firsts: list[int] = []  # covered ranges (disjoint), by first document
        self.lasts: list[int] = []
        self.blocks: list[tuple] = []  # (ids, weights, positions, offsets) per range
        self.postings = 0

    def __len__(self) -> int:
        return self.postings

    def covers(self, doc: int) -> bool:
        at = bisect_right(self.firsts, doc) - 1
        return at >= 0 and doc <= self.lasts[at]

    def add(self, first: int, last: int, ids, weights, values: bytes, offsets: array) -> None:
        """Keep a block covering ``first .. last``: its document numbers,
        weights, and encoded positions (one string, each posting's from
        ``offsets[i]`` to ``offsets[i + 1]``)."""
        at = bisect_right(self.firsts, first)
        self.firsts.insert(at, first)
        self.lasts.insert(at, last)
        self.blocks.insert(at, (array("i", ids), array("d", weights), values, offsets))
        self.postings += len(ids)

    def positions(self, docs: list[int], decode) -> dict:
        """``{doc: (weight, set of positions)}`` of the covered ``docs`` (ascending) that have the term."""
        found = {}
        firsts, lasts, blocks = self.firsts, self.lasts, self.blocks
        for doc in docs:
            at = bisect_right(firsts, doc) - 1
            if at < 0 or doc > lasts[at]:
                continue
            ids, weights, values, offsets = blocks[at]
            i = bisect_left(ids, doc)
            if i < len(ids) and ids[i] == doc:
                found[doc] = (weights[i], set(decode(values[offsets[i] : offsets[i + 1]])))
        return found


def cached_positions(reader, fieldname: str, text: str, docs: list[int], clock: MatchClock | None = None) -> dict:
    """:func:`~.blocks.postings_at` with positions for ``docs`` (ascending, live),
    kept with the segment reader as :class:`_TermPositions`.

    The best hits of queries sharing a word (a page, a filter, a facet, the
    next query with that word) fall mostly in blocks read before, and
    decoding a block costs far more than a lookup: only the blocks holding a
    document no block read before covers are read, and each is kept whole.
    A read the ``clock`` cut short keeps what it read. A common word's
    positions come from the segment's term arrays instead (:mod:`.termarrays`),
    which keep them whole.
    """
    if (fieldname, text) not in reader:
        return {}
    whole = term_arrays(reader, fieldname, text)
    if whole is not None and whole.has_positions:  # a common word's positions, kept whole (termarrays.py)
        return arrays_at(whole, docs, positions=True)
    matcher, _, blockwise = leaf_matcher(reader, fieldname, text)
    if not blockwise:  # a few postings kept in the term's entry
        return postings_at(reader, fieldname, text, docs, positions=True, clock=clock)
    cache = generation_cache(reader).positions
    key = (fieldname, text)
    entry = cache.get(key)
    term = entry[0] if entry is not None else _TermPositions()
    missing = [doc for doc in docs if not term.covers(doc)]
    if missing:
        _read_position_blocks(matcher, term, missing, clock)
        cache.put(key, (term,), replace=True)  # counted again: it holds more
    return term.positions(docs, matcher.format.decode_positions)


def _read_position_blocks(matcher, term: _TermPositions, docs: list[int], clock: MatchClock | None) -> None:
    """Read into ``term`` the blocks of ``matcher`` (a fresh block-wise leaf
    matcher) holding ``docs`` (ascending, none covered yet); stops at the
    ``clock``'s deadline (its ``cut`` set)."""
    at = 0
    before = -1  # the last document of the block before the current one
    while matcher.is_active() and at < len(docs):
        last = internals.block_max_id(matcher)
        if last < docs[at]:
            before = last
            internals.next_block(matcher)
            continue
        if clock is not None and clock.expired():
            clock.cut = True
            return
        if getattr(matcher, "packs_values", False):  # the block's values already in one string (codec.py)
            ids, weights, _ = internals.read_block(matcher)
            values, offsets = matcher.packed_values()
            # The ids start where the matcher stands in the block (past deleted
            # documents a filter skipped); the offsets are the whole block's.
            term.add(before + 1, last, ids, weights, values, offsets[len(offsets) - 1 - len(ids) :])
        else:
            ids, weights, values = internals.read_block(matcher, True)
            term.add(
                before + 1, last, ids, weights, b"".join(values), array("I", accumulate(map(len, values), initial=0))
            )
        while at < len(docs) and docs[at] <= last:
            at += 1
        before = last
        internals.next_block(matcher)
    if at < len(docs) and not matcher.is_active():  # past the last posting
        term.add(before + 1, 2**31, (), (), b"", array("I", [0]))
