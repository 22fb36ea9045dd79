"""The Whoosh query classes the product adds to its BM25F words (:mod:`.bm25f`).

* :class:`MinShouldMatch`: an ``Or`` that applies its ``minmatch`` (a long
  question: at least so many of its words).
* :class:`Proximity`: a query's hits, with a bonus where its neighbouring
  words stand together (:func:`.proximity.proximity_bonus`).
* :class:`ExactText`: a quoted phrase, the hits of the stemmed phrase whose
  stored text has the words as written (:func:`exact_pattern`), checked
  until the search's deadline (:func:`time_phrases`).
* :class:`DocumentSet`: a given set of documents (an author filter, answered
  from the generation's column file).
* :class:`WrittenFuzzy`: a fuzzy word as written (``optimizaton~2``),
  expanded against the words titles and abstracts hold as written, then
  searched as what those words stem to (:mod:`.expansion`).

Each gives Whoosh a matcher of its own, so that Whoosh can search, count and
highlight any tree holding them; :mod:`.evaluate` computes the same scores
and documents without Whoosh's matchers (and :class:`Proximity`'s matcher
asks it for them).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from whoosh import query as wq
from whoosh.matching import Matcher, NullMatcher
from whoosh.query.wrappers import WrappingQuery

from searchengine.analysis.folding import fold
from searchengine.analysis.tokens import is_cjk_run, written_words
from searchengine.engines.whoosh.bm25f import scored_list
from searchengine.engines.whoosh.clock import MatchClock
from searchengine.engines.whoosh.evaluate import score_documents
from searchengine.engines.whoosh.textstore import TextStore, segment_text_store


class MinShouldMatch(wq.Or):
    """Documents matching at least ``minmatch`` of the subqueries, scored by their sum.

    Whoosh's ``Or`` accepts ``minmatch`` but ignores it; this query applies
    it. Matches are gathered up front (one pass over each subquery's
    postings), which suits the long queries it is used for.
    """

    JOINT = " MSM "

    def apply(self, fn):
        return self.__class__([fn(q) for q in self.subqueries], boost=self.boost, minmatch=self.minmatch)

    def _matcher(self, subs, searcher, context) -> Matcher:
        needed = max(1, self.minmatch)
        scores: dict[int, float] = {}
        counts: dict[int, int] = {}
        scored = context.weighting is not None if context else True
        for sub in subs:
            matcher = sub.matcher(searcher, context)
            while matcher.is_active():
                doc = matcher.id()
                scores[doc] = scores.get(doc, 0.0) + (matcher.score() if scored else 1.0)
                counts[doc] = counts.get(doc, 0) + 1
                matcher.next()
        docs = sorted(doc for doc, count in counts.items() if count >= needed)
        if not docs:
            return NullMatcher()
        boost = self.boost
        return scored_list(docs, [scores[doc] * boost for doc in docs])


class Proximity(WrappingQuery):
    """The hits of ``child``, with a bonus where the query's neighbouring words
    stand together (:func:`searchengine.engines.whoosh.proximity.proximity_bonus`).

    ``pairs`` are ``(field, first stem, second stem, gap)`` as
    :meth:`searchengine.engines.whoosh.querying._Translator.pairs` makes them.
    The fast scorer (:func:`~searchengine.engines.whoosh.evaluate.score_documents`)
    adds the bonus to the best hits of ``child``; Whoosh's matchers ask it
    for the scores.
    """

    def __init__(self, child, pairs: tuple) -> None:
        super().__init__(child)
        self.pairs = pairs

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other.child == self.child and other.pairs == self.pairs

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.child, self.pairs))

    def __str__(self) -> str:
        words = [self.pairs[0][1]] + [b for f, _, b, _ in self.pairs if f == self.pairs[0][0]]
        return f"near({self.child}, {' '.join(words)})"

    def _rewrap(self, child):
        return Proximity(child, self.pairs)

    def normalize(self):
        child = self.child.normalize()
        return wq.NullQuery if child is wq.NullQuery else Proximity(child, self.pairs)

    def matcher(self, searcher, context=None):
        scored = context.weighting is not None if context else True
        scores = score_documents(self, searcher) if scored else None
        if scores is None:
            return self.child.matcher(searcher, context)
        pairs = sorted(scores.items())
        return scored_list([doc for doc, _ in pairs], [score for _, score in pairs]) if pairs else NullMatcher()


def time_phrases(query: wq.Query, clock: MatchClock) -> None:
    """Give every :class:`ExactText` in ``query`` the ``clock`` of its search."""
    if isinstance(query, ExactText):
        query.clock = clock
    for child in query.children():
        time_phrases(child, clock)


class ExactText(WrappingQuery):
    """Keeps the hits of ``child`` whose stored ``fieldname`` text has ``pattern``.

    Quoted phrases are searched on the stemmed index (fast, positional) and
    then checked against the stored text as written, folded for case and
    accents: ``"objectivity"`` finds the stem ``objectiv`` in papers about
    objectives too, and the check keeps only those that say ``objectivity``.

    The check reads each segment's text store (:mod:`.textstore`; the
    stored fields of a segment written without one). It costs time per
    candidate, so it is made once per searcher (counting and ranking reuse
    it) and stops at the deadline of its
    :class:`~searchengine.engines.whoosh.clock.MatchClock` (set by
    :func:`time_phrases`): the candidates checked by then are the hits.
    """

    def __init__(self, child, fieldname: str, pattern: str, clock: MatchClock | None = None) -> None:
        super().__init__(child)
        self.fieldname = fieldname
        self.pattern = pattern
        self.clock = clock
        self._regex = re.compile(pattern)
        self._checked: dict[int, tuple] = {}  # id(searcher) → (searcher, documents with the text)

    def __eq__(self, other) -> bool:
        return (
            type(other) is type(self)
            and other.child == self.child
            and other.fieldname == self.fieldname
            and other.pattern == self.pattern
        )

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.child, self.fieldname, self.pattern))

    def __str__(self) -> str:
        return f"exact({self.child})"

    # The stemmed child does the scoring, so its boost is the phrase's. (The ignores: Whoosh's
    # Query declares no boost; the child, a Term or Phrase, has one.)
    @property
    def boost(self) -> float:
        return self.child.boost  # type: ignore[attr-defined]

    @boost.setter
    def boost(self, value: float) -> None:
        self.child.boost = value  # type: ignore[attr-defined]

    def _rewrap(self, child):
        return ExactText(child, self.fieldname, self.pattern, self.clock)

    def holds(self, stored: dict) -> bool:
        """Whether a document's stored fields (``{field: value}``) have the text as written."""
        value = stored.get(self.fieldname) or ""
        if isinstance(value, list):
            value = "\n".join(value)
        return self._regex.search(fold(value)) is not None

    def text_store(self, reader) -> TextStore | None:
        """The text store of segment ``reader`` (:mod:`.textstore`) when it
        keeps this phrase's field; ``None`` for a segment written without it."""
        found = segment_text_store(reader)
        return found if found is not None and found.holds(self.fieldname) else None

    def matching(self, searcher, reader, docs: list[int]) -> tuple[list[int], bool]:
        """``(found, complete)``: those of ``docs`` (ascending segment
        document numbers) whose text has the words as written; at the clock's
        deadline the documents checked so far (``complete`` False)."""
        texts = self.text_store(reader)
        if texts is not None:
            return texts.matching(self.fieldname, self._regex.search, docs, fold, self.out_of_time)
        found: list[int] = []
        for doc in docs:
            if self.out_of_time():
                return found, False
            if self.holds(searcher.stored_fields(doc)):
                found.append(doc)
        return found, True

    def checker(self, searcher) -> Callable[[int], bool]:
        """``check(doc)``: whether segment document ``doc`` has the words as written."""
        texts = self.text_store(searcher.reader())
        if texts is not None:
            get, search, name = texts.get, self._regex.search, self.fieldname
            return lambda doc: search(fold(get(name, doc) or "")) is not None
        return lambda doc: self.holds(searcher.stored_fields(doc))

    def out_of_time(self) -> bool:
        """Whether the clock of this phrase's search has run out (noted on the clock)."""
        if self.clock is not None and self.clock.expired():
            self.clock.cut = True
            return True
        return False

    def matcher(self, searcher, context=None) -> Matcher:
        matcher = self.child.matcher(searcher, context)
        scored = context.weighting is not None if context else True
        known = self._checked.get(id(searcher))
        known = known[1] if known is not None and known[0] is searcher else None
        passed: set[int] = set()
        docs, scores = [], []
        check = self.checker(searcher) if known is None else None
        while matcher.is_active():
            doc = matcher.id()
            if known is not None:
                found = doc in known
            else:
                if self.out_of_time():
                    break
                assert check is not None  # made when nothing is known yet
                found = check(doc)
                if found:
                    passed.add(doc)
            if found:
                docs.append(doc)
                scores.append(matcher.score() if scored else 1.0)
            matcher.next()
        if known is None:
            self._checked[id(searcher)] = (searcher, passed)
        return scored_list(docs, scores) if docs else NullMatcher()


def exact_pattern(text: str) -> str | None:
    """A regular expression for the words of ``text`` in sequence, as written.

    Words are cut as the tokenizer cuts them (a hyphenated word counts as its
    parts) and folded; anything that is not a letter or digit may separate
    them. ``None`` when ``text`` has no word.
    """
    words = written_words(text)
    if not words:
        return None
    first = re.escape(words[0])
    body = r"[\W_]+".join([first] + [re.escape(word) for word in words[1:]])
    # The first word's literal leads, so the search skips to where it occurs;
    # the look-behind (of its fixed width) then checks no letter comes before.
    start = "" if is_cjk_run(words[0][0]) else rf"(?<![^\W_]{first})"
    end = "" if is_cjk_run(words[-1][-1]) else r"(?![^\W_])"
    return first + start + body[len(first) :] + end


class DocumentSet(wq.Query):
    """A query matching a given set of documents, shown as ``label``.

    ``docnums``: ascending document numbers in the whole index, whose
    segments are ``leaves`` (``reader.leaf_readers()``: ``(segment reader,
    first docnum)``); a segment's searcher gets its own part of them. Deleted
    documents never match.
    """

    def __init__(self, label: str, docnums: list[int], leaves) -> None:
        self.label = label
        self.docnums = docnums
        self._leaves = list(leaves)
        self.boost = 1.0

    def __str__(self) -> str:
        return self.label

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.label!r}, {len(self.docnums)} documents)"

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and (other.label, other.docnums) == (self.label, self.docnums)

    def __hash__(self) -> int:
        return hash((type(self), self.label))

    def is_leaf(self) -> bool:
        return True

    def estimate_size(self, ixreader) -> int:
        return len(self.docnums)

    def docnums_in(self, reader) -> list[int]:
        """The matching document numbers of ``reader`` (a segment of the
        index, or the whole index), ascending, as that reader numbers them."""
        from bisect import bisect_left

        docs = self.docnums
        for leaf, offset in self._leaves:
            if leaf is reader:
                end = offset + reader.doc_count_all()
                docs = [d - offset for d in docs[bisect_left(docs, offset) : bisect_left(docs, end)]]
                break
        if reader.has_deletions():
            docs = [d for d in docs if not reader.is_deleted(d)]
        return docs

    def matcher(self, searcher, context=None):
        from whoosh.matching import ListMatcher

        docs = self.docnums_in(searcher.reader())
        return ListMatcher(docs, all_weights=1.0) if docs else NullMatcher()

    def docs(self, searcher, deleting=False):
        return iter(self.docnums_in(searcher.reader()))


class WrittenFuzzy(wq.FuzzyTerm):
    """A fuzzy word of a title or abstract field, ``text`` as written (folded,
    unstemmed): its edits are counted between words as written, where a
    typo keeps the rest of the word (``optimizaton`` is one edit from
    ``optimization``, and four from its stem ``optim``). Expanded before
    searching (:func:`.expansion.expand_wildcards`); Whoosh's own matcher
    would compare it with stems."""

    JOINT = "~"
