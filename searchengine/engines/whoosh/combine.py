"""Combining the scores of a keyword query's words over many documents, with numpy.

A query of common words (``large language models``) matches tens of
thousands of documents per segment; adding their scores document by
document in Python dictionaries was most of such a query's time. Here a
node's scores are two arrays (ascending document numbers, their scores),
and ``Or`` (sum), ``And`` (intersection, sum) and ``DisjunctionMax`` (best)
combine them in C: over arrays as long as the segment for an ``Or`` or a
``DisjunctionMax`` (indexed by document number), by binary search for an
``And``.

The floating-point operations are those of the dictionary path
(:func:`searchengine.engines.whoosh.evaluate._node_scores`), in the same
order, so the scores are the same numbers: a sum starts at 0.0 and adds the
subqueries' scores in their order; an intersection adds the shortest
part's scores first, as the dictionary path does.

Only trees of BM25F words under ``And``, ``Or`` (without ``Not``) and
``DisjunctionMax`` come here (:func:`applies`); numpy is imported only when
one is large enough (:data:`DENSE_FROM`), so that a command-line search for
rare words does not pay its import.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

# A tree whose words have at least this many postings in a segment, and at
# least a SEGMENT_SHARE of its documents, is combined here.
DENSE_FROM = 5000
SEGMENT_SHARE = 1 / 64
# Once numpy is imported (a process that has searched before), its fixed cost
# is a few arrays as long as the segment: cheaper than dictionaries from
# this many postings on, and the best hits are then ranked in C too.
LOADED_DENSE_FROM = 500


def applies(q, leaf) -> bool:
    """Whether ``q`` is made of ``And``, ``Or`` (no ``Not`` under it, any
    ``minmatch``) and ``DisjunctionMax`` nodes over words for which ``leaf(word)``
    is true."""
    from whoosh import query as wq

    if leaf(q):
        return True
    kind = type(q)
    if kind is wq.And or kind is wq.DisjunctionMax or (isinstance(q, wq.Or) and kind is not wq.DisjunctionMax):
        return bool(q.subqueries) and all(type(s) is not wq.Not and applies(s, leaf) for s in q.subqueries)
    return False


def dense(postings: int, documents: int) -> bool:
    """Whether ``postings`` postings over a segment of ``documents`` are worth combining here:
    from :data:`LOADED_DENSE_FROM` once numpy is imported, else from :data:`DENSE_FROM`."""
    if loaded():
        return postings >= LOADED_DENSE_FROM
    return postings >= DENSE_FROM and postings >= documents * SEGMENT_SHARE


def loaded() -> bool:
    """Whether numpy is imported already (then using it costs no import)."""
    return "numpy" in sys.modules


def arrays_of(part):
    """``(docs, scores)`` numpy arrays of a node's scores: a ``{doc: score}``
    (its documents in the dict's order) or such arrays already."""
    import numpy as np

    if not isinstance(part, dict):
        return part
    return (
        np.fromiter(part.keys(), dtype=np.int64, count=len(part)),
        np.fromiter(part.values(), dtype=np.float64, count=len(part)),
    )


def leaf_arrays(docs, scores, factor: float):
    """numpy views of a word's ``docs`` (``array('i')``) and ``scores``
    (``array('d')``), the scores times ``factor`` (a new array) unless it is 1."""
    import numpy as np

    found = np.frombuffer(scores, dtype=np.float64) if len(scores) else np.zeros(0)
    return (
        np.frombuffer(docs, dtype=np.intc) if len(docs) else np.zeros(0, dtype=np.intc),
        found if factor == 1 else found * factor,
    )


def union(parts, size: int, needed: int = 1):
    """``Or``: each document in at least ``needed`` of ``parts`` (``(docs,
    scores)`` pairs, documents below ``size``), its scores added in the
    parts' order."""
    import numpy as np

    total = np.zeros(size)
    counts = np.zeros(size, dtype=np.int32)
    for docs, scores in parts:
        total[docs] += scores  # a part's documents are distinct
        counts[docs] += 1
    found = np.flatnonzero(counts >= max(needed, 1))
    return found, total[found]


def best(parts, size: int):
    """``DisjunctionMax``: each document in any of ``parts`` with its best
    score; a later part replaces a score only when it is higher."""
    import numpy as np

    top = np.full(size, -1.0)
    for docs, scores in parts:
        higher = scores > top[docs]
        top[docs[higher]] = scores[higher]
    found = np.flatnonzero(top > -1.0)
    return found, top[found]


def intersection(parts):
    """``And``: the documents in every one of ``parts``, their scores added
    from the shortest part on (the parts' order among equal lengths)."""
    import numpy as np

    parts = sorted(parts, key=lambda part: len(part[0]))
    docs, scores = parts[0]
    for other_docs, other_scores in parts[1:]:
        if not len(docs) or not len(other_docs):
            return np.zeros(0, dtype=np.intc), np.zeros(0)
        at = np.minimum(np.searchsorted(other_docs, docs), len(other_docs) - 1)
        kept = other_docs[at] == docs
        docs, scores = docs[kept], scores[kept] + other_scores[at[kept]]
    return docs, scores


def scaled(pair, boost: float):
    """``(docs, scores)`` with the scores times ``boost`` (unchanged when it is 1)."""
    docs, scores = pair
    return pair if boost == 1 else (docs, scores * boost)


def as_dict(pair) -> dict[int, float]:
    """``{doc: score}`` of ``(docs, scores)``, as Python numbers."""
    docs, scores = pair
    return dict(zip(docs.tolist(), scores.tolist()))


class ScoredDocs(Mapping):
    """``{docnum: score}`` held as two numpy arrays: ascending document
    numbers and their scores (float64).

    What :func:`~searchengine.engines.whoosh.evaluate.score_documents` returns
    for a query matching many documents: building and ranking a dictionary
    of them cost more than the matching. It reads as a dictionary (lookups
    by binary search), and answers the questions a search asks of all its
    matches in C: the documents in order (:meth:`ascending`), those of a set
    (:meth:`within`), the best ones (:meth:`top`, :meth:`at_least`).
    """

    __slots__ = ("docs", "scores")

    def __init__(self, docs, scores) -> None:
        self.docs = docs
        self.scores = scores

    def __len__(self) -> int:
        return len(self.docs)

    def __iter__(self):
        return iter(self.docs.tolist())

    def _at(self, doc) -> int:
        import numpy as np

        at = int(np.searchsorted(self.docs, doc))
        return at if at < len(self.docs) and self.docs[at] == doc else -1

    def __getitem__(self, doc: int) -> float:
        at = self._at(doc)
        if at < 0:
            raise KeyError(doc)
        return float(self.scores[at])

    def __contains__(self, doc) -> bool:
        return isinstance(doc, int) and self._at(doc) >= 0

    def items(self):
        """``(doc, score)`` pairs in document order (a list)."""
        return list(zip(self.docs.tolist(), self.scores.tolist()))

    def ascending(self) -> list[int]:
        """The documents, ascending."""
        return self.docs.tolist()

    def within(self, docnums) -> list[int]:
        """The documents of ``docnums`` (ascending) that are here, ascending."""
        import numpy as np

        wanted = np.asarray(docnums, dtype=np.int64)
        return wanted[np.isin(wanted, self.docs, assume_unique=True)].tolist()

    def restricted(self, allowed) -> ScoredDocs:
        """The documents that are also in ``allowed`` (a set or sequence of docnums)."""
        import numpy as np

        wanted = np.fromiter(allowed, dtype=np.int64, count=len(allowed))
        kept = np.isin(self.docs, wanted)
        return ScoredDocs(self.docs[kept], self.scores[kept])

    def top(self, count: int) -> list[tuple[int, float]]:
        """The ``count`` best ``(doc, score)``: by score, ties by the lower
        document number (as ``heapq.nlargest`` keyed on ``(score, -doc)``)."""
        import numpy as np

        if not count or not len(self.docs):
            return []
        chosen = self._at_least_index(self.kth_score(count))
        order = np.lexsort((self.docs[chosen], -self.scores[chosen]))[:count]
        picked = chosen[order]
        return list(zip(self.docs[picked].tolist(), self.scores[picked].tolist()))

    def kth_score(self, count: int) -> float:
        """The ``count``-th best score (the lowest, when there are fewer)."""
        import numpy as np

        if count >= len(self.scores):
            return float(self.scores.min())
        return float(-np.partition(-self.scores, count - 1)[count - 1])

    def _at_least_index(self, cut: float):
        import numpy as np

        return np.flatnonzero(self.scores >= cut)

    def at_least(self, cut: float) -> list[tuple[int, float]]:
        """Every ``(doc, score)`` scoring ``cut`` or more, in document order."""
        chosen = self._at_least_index(cut)
        return list(zip(self.docs[chosen].tolist(), self.scores[chosen].tolist()))

    def add(self, bonuses: dict[int, float]) -> None:
        """Add ``bonuses`` (``{doc: value}``, documents that are here) to their scores, in place."""
        import numpy as np

        if not bonuses:
            return
        wanted = np.fromiter(bonuses.keys(), dtype=np.int64, count=len(bonuses))
        # A dict's documents are distinct: one addition each, as score + value.
        self.scores[np.searchsorted(self.docs, wanted)] += np.fromiter(
            bonuses.values(), dtype=np.float64, count=len(bonuses)
        )


def joined(parts) -> ScoredDocs:
    """One :class:`ScoredDocs` of segments' ``(docs, scores)`` (arrays, or a
    ``{doc: score}``) with their documents already offset, in segment order."""
    import numpy as np

    docs, scores = [], []
    for part in parts:
        if isinstance(part, dict):
            part = (
                np.fromiter(part.keys(), dtype=np.int64, count=len(part)),
                np.fromiter(part.values(), dtype=np.float64, count=len(part)),
            )
            order = np.argsort(part[0], kind="stable")
            part = (part[0][order], part[1][order])
        docs.append(part[0].astype(np.int64))
        scores.append(part[1])
    return ScoredDocs(
        np.concatenate(docs) if docs else np.zeros(0, dtype=np.int64), np.concatenate(scores) if scores else np.zeros(0)
    )


def ascending(scores) -> list[int]:
    """The document numbers of ``scores`` (a ``{doc: score}`` or a :class:`ScoredDocs`), ascending."""
    return scores.ascending() if isinstance(scores, ScoredDocs) else sorted(scores)
