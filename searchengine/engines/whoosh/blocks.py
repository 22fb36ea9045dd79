"""A term's postings in one segment, read a block at a time.

Whoosh reads postings in blocks of up to 128 and hands them out one call
per posting; taking each block's arrays whole (document numbers, weights,
and when asked the encoded positions) is several times faster. That reaches
below Whoosh's public API (:mod:`searchengine.engines.whoosh.internals`), so
a matcher of another shape (a term of a few postings kept in its term entry)
is read the public way. Deleted documents are left out. A common term's
document numbers and weights are also kept whole in the segment's term
arrays (:mod:`.termarrays`), faster still when no positions are wanted;
segments written now keep every term so (:mod:`.arraypostings`), and have
no blocks.

* :func:`posting_blocks`: every posting, whole or block by block (scoring
  a word: :mod:`.bm25f`).
* :func:`postings_at`: the postings of given documents only, passing over
  the blocks that hold none of them unread (re-ranking a few documents,
  positions for phrases and the proximity bonus: :mod:`.proximity`);
  :func:`segment_docs` hands each segment its share of such documents.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left

from searchengine.engines.whoosh import internals
from searchengine.engines.whoosh.clock import MatchClock


def leaf_matcher(reader, fieldname: str, text):
    """``(matcher, deleted docnums or None, whether its blocks can be read whole)``
    for a term's postings in a segment, with Whoosh's deleted-document filter taken off."""
    matcher, deleted = internals.unfiltered(reader.postings(fieldname, text))
    return matcher, deleted, internals.reads_blocks(matcher)


def term_arrays(reader, fieldname: str, text):
    """A common term's :class:`~.termarrays.TermPostings` in a segment
    (deleted documents included), from its term arrays; ``None`` when the
    segment keeps none for it."""
    from searchengine.engines.whoosh.termarrays import segment_term_arrays

    found = segment_term_arrays(reader)
    if found is None:
        return None
    if isinstance(text, str):
        text = reader.schema[fieldname].to_bytes(text)
    return found.postings(fieldname, text, reader.doc_frequency)


def arrays_at(whole, docs: list[int], positions: bool = False) -> dict:
    """:func:`postings_at` from a term's :class:`~.termarrays.TermPostings`
    (``whole``; with positions kept when they are asked for)."""
    ids, weights = whole.ids, whole.weights
    found = {}
    at, size = 0, len(ids)
    for doc in docs:
        at = bisect_left(ids, doc, at)
        if at == size:
            break
        if ids[at] == doc:
            found[doc] = (weights[at], whole.positions(at) if positions else None)
    return found


def posting_blocks(reader, fieldname: str, text):
    """A term's postings in a segment, as ``(document numbers, weights)`` pairs of sequences.

    The weight is the term's frequency times the field's boost, as
    ``items_as("weight")`` gives it; deleted documents are left out. A
    common term comes whole from the segment's term arrays, when it has
    them. Otherwise Whoosh reads postings in blocks of up to 128: taking
    each block's arrays whole is several times faster than a call per
    posting. That reaches below Whoosh's public API, so a matcher of another
    shape is read the public way.
    """
    whole = term_arrays(reader, fieldname, text)
    if whole is not None:
        ids, weights = whole.ids, whole.weights
        deleted = reader.deleted_docs_set if reader.has_deletions() else None
        if deleted:
            kept = [i for i, doc in enumerate(ids) if doc not in deleted]
            ids, weights = array("i", [ids[i] for i in kept]), [weights[i] for i in kept]
        yield ids, weights
        return
    matcher, deleted, blockwise = leaf_matcher(reader, fieldname, text)
    if not blockwise:
        if deleted is not None:
            from whoosh.matching.wrappers import FilterMatcher

            matcher = FilterMatcher(matcher, deleted, exclude=True)
        pairs = list(matcher.items_as("weight"))
        yield [doc for doc, _ in pairs], [weight for _, weight in pairs]
        return
    while matcher.is_active():
        ids, weights, _ = internals.read_block(matcher)
        if deleted:
            kept = [i for i, doc in enumerate(ids) if doc not in deleted]
            ids, weights = [ids[i] for i in kept], [weights[i] for i in kept]
        yield ids, weights
        internals.next_block(matcher)


def segment_docs(searcher, docnums: list[int]):
    """``(segment searcher, its first document number, its documents)`` for
    each segment of ``searcher`` holding some of ``docnums`` (top-level,
    ascending); its documents are those of ``docnums``, numbered as the
    segment numbers them."""
    parts = [(searcher, 0)] if searcher.is_atomic() else searcher.subsearchers
    for number, (sub, offset) in enumerate(parts):
        end = parts[number + 1][1] if number + 1 < len(parts) else offset + sub.doc_count_all()
        local = [doc - offset for doc in docnums if offset <= doc < end]
        if local:
            yield sub, offset, local


def postings_at(
    reader, fieldname: str, text: str, docs: list[int], positions: bool = False, clock: MatchClock | None = None
) -> dict:
    """``{doc: (weight, set of positions or None)}`` of a term for each of
    the ascending live ``docs`` that has it; positions only when asked.
    Reading stops at the ``clock``'s deadline (its ``cut`` set): the documents
    read by then.

    Blocks holding none of ``docs`` are passed over unread, as in
    :func:`posting_blocks`; a matcher of another shape is read the public way.
    """
    from whoosh.matching import ReadTooFar

    if (fieldname, text) not in reader:
        return {}
    whole = term_arrays(reader, fieldname, text)
    if whole is not None and (whole.has_positions or not positions):
        return arrays_at(whole, docs, positions)
    found = {}
    matcher, _, blockwise = leaf_matcher(reader, fieldname, text)  # docs are live documents already
    if blockwise:
        decode = matcher.format.decode_positions
        at = 0
        while matcher.is_active() and at < len(docs):
            if clock is not None and clock.expired():
                clock.cut = True
                break
            last = internals.block_max_id(matcher)
            if last < docs[at]:
                internals.next_block(matcher)
                continue
            ids, weights, values = internals.read_block(matcher, positions)
            while at < len(docs) and docs[at] <= last:
                i = bisect_left(ids, docs[at])
                if i < len(ids) and ids[i] == docs[at]:
                    found[docs[at]] = (weights[i], set(decode(values[i])) if positions else None)
                at += 1
            internals.next_block(matcher)
        return found
    for doc in docs:
        if not matcher.is_active():
            break
        try:
            matcher.skip_to(doc)
        except ReadTooFar:
            break
        if matcher.is_active() and matcher.id() == doc:
            found[doc] = (matcher.weight(), set(matcher.value_as("positions")) if positions else None)
    return found
