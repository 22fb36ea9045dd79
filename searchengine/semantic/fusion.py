"""One ranking from a keyword ranking and a vector ranking (hybrid mode), for both engines.

Convex combination of normalised scores (Bruch, Gai and Ingber, "An
analysis of fusion functions for hybrid retrieval", ACM TOIS 2023, who
found it better than reciprocal rank fusion and robust with each score
divided by its theoretical-minimum-to-maximum range)::

    fused = w · bm25f / max bm25f  +  (1 − w) · max(cos, 0) / max cos

over the query's candidates: its keyword matches (within the filters) and
the :data:`~searchengine.ranking.HYBRID_NEAREST` papers nearest to it in
meaning (a paper that is not a keyword match has ``bm25f = 0``). Both
minima are the theoretical 0, so a paper's fused score does not depend on
which other papers are candidates. ``w`` is
:data:`~searchengine.ranking.HYBRID_LEXICAL_WEIGHT`, chosen on the
development collections (documentation, "Evaluation").

The embedded engine calls :func:`fuse`; the cluster runs the same formula
as a Painless script over its candidates, and
``tests/contract/test_fusion_contract.py`` holds the two to the same scores.

A query written with operators (a quoted phrase, a field, a prefix, a
fuzzy word, an excluded word, ``OR``) keeps exactly its keyword matches:
:func:`open_query` is false and meaning only re-ranks them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from searchengine.querylang import tree as t

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike, NDArray

# Nodes a query of plain words is made of (the parser's forms of "a b c").
_PLAIN = (t.Word, t.Joined, t.And, t.MinMatch, t.Alternatives, t.Proximity)


def open_query(node: t.Node | None) -> bool:
    """Whether the query tree ``node`` is plain words, so that papers near it in
    meaning may be added to its keyword matches (``None``: no query text: false)."""
    if node is None or not isinstance(node, _PLAIN):
        return False
    if isinstance(node, (t.Word, t.Joined)):
        return True
    if isinstance(node, t.Proximity):
        return open_query(node.child)
    return all(open_query(child) for child in node.children)


def fuse(lexical: ArrayLike, similarities: ArrayLike, weight: float) -> NDArray[np.float64]:
    """Fused scores (float64 array) of candidates whose keyword scores are
    ``lexical`` (float array, 0 for a paper that is no keyword match) and
    whose cosine similarities to the query are ``similarities`` (same length),
    ``weight`` the keyword side's share (0..1)."""
    keyword, meaning = fuse_parts(lexical, similarities, weight)
    return keyword + meaning


def fuse_parts(
    lexical: ArrayLike, similarities: ArrayLike, weight: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The two parts of :func:`fuse`'s scores, ``(keyword part, meaning part)``
    (float64 arrays whose sum is the fused score): what a hit's "why" shows."""
    import numpy as np

    lexical = np.asarray(lexical, dtype=np.float64)
    similarities = np.clip(np.asarray(similarities, dtype=np.float64), 0.0, None)
    top_lexical = lexical.max() if len(lexical) else 0.0
    top_similarity = similarities.max() if len(similarities) else 0.0
    keyword = lexical / top_lexical if top_lexical > 0 else np.zeros_like(lexical)
    meaning = similarities / top_similarity if top_similarity > 0 else np.zeros_like(similarities)
    return weight * keyword, (1.0 - weight) * meaning


def query_text(text: str, node: t.Node | None) -> str:
    """What a query is encoded from: its text as written when it is plain words
    (a question keeps its wording), else the words, phrases and fields' words
    it asks for, in order, without operators and excluded words."""
    if open_query(node):
        return text
    parts: list[str] = []

    def walk(item: t.Node) -> None:
        if isinstance(item, t.Not):
            return
        if isinstance(item, t.AndNot):
            walk(item.a)
            return
        if isinstance(item, t.Joined):
            parts.append(" ".join(item.words))
        elif isinstance(item, (t.Word, t.FieldWord, t.Phrase, t.Prefix, t.Fuzzy)):
            parts.append(item.text)
        for name in ("child", "a", "b"):
            if hasattr(item, name) and not isinstance(item, t.AndNot):
                walk(getattr(item, name))
        for child in getattr(item, "children", ()):
            walk(child)

    if node is not None:
        walk(node)
    return " ".join(parts) or text
