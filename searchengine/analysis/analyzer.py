"""The product's analyzer: one chain of steps, for indexing and queries alike::

    TechTokenizer | CompoundFilter | AcronymStopFilter | UmlautFilter | InflectionStemFilter

* :class:`~.tokens.TechTokenizer` cuts the text's NFKC form into words
  (:mod:`.tokens`);
* :class:`~.compounds.CompoundFilter` indexes a compound as its parts and
  one joined word, a CJK run as character pairs (:mod:`.compounds`);
* :class:`~.stopwords.AcronymStopFilter` drops stop words but keeps
  acronyms (:mod:`.stopwords`);
* :class:`~.folding.UmlautFilter` adds an umlaut word's spelled-out form
  when indexing (:mod:`.folding`);
* :class:`~.stemming.InflectionStemFilter` folds case and accents and stems
  (:mod:`.stemming`).

Modes (the ``mode`` keyword): ``"index"`` and ``"query"`` emit everything
above (the parser builds the alternatives from the joined word and the
parts); ``"phrase"`` leaves out joined words. The embedded engine wraps
the same steps as Whoosh tokenizer and filters
(:mod:`searchengine.engines.whoosh.analysis`); the cluster indexes this
analyzer's terms (:mod:`searchengine.engines.opensearch.terms`), so both
hold the same terms at the same positions. Author names are analysed by
:func:`name_terms` (words folded, not stemmed).

Plain Python; no search engine's code.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol

from searchengine.analysis.accents import ACCENT_MAP
from searchengine.analysis.compounds import CompoundFilter
from searchengine.analysis.folding import UmlautFilter, normalize
from searchengine.analysis.stemming import InflectionStemFilter
from searchengine.analysis.stopwords import AcronymStopFilter
from searchengine.analysis.tokens import TechTokenizer, Token, analyzed_pattern

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    # A step after the tokenizer: tokens in, tokens out (one Token object, reused).
    TokenFilter = Callable[[Iterator[Any]], Iterator[Any]]
    from searchengine.analysis.tokens import Expansion


class Chain(Protocol):
    """An analyzer as a tokenizer and the filters after it, in ``items``
    (:class:`Analyzer`, or Whoosh's ``CompositeAnalyzer`` of the same steps)."""

    items: list[Any]


class Analyzer:
    """A tokenizer and the filters after it, called as one: ``analyzer(text,
    positions=..., chars=..., mode=..., removestops=...)`` yields the
    tokens (one reused object). ``items`` holds the steps, as a Whoosh
    ``CompositeAnalyzer`` does, so :func:`index_positions` reads either."""

    def __init__(self, *items: Any) -> None:
        self.items = list(items)

    def __call__(self, value: str, **kwargs: Any) -> Iterator[Any]:
        tokens: Iterator[Any] = self.items[0](value, **kwargs)
        for item in self.items[1:]:
            tokens = item(tokens)
        return tokens


def text_analyzer() -> Analyzer:
    """The analyzer for title and abstract text (indexing, queries and phrases)."""
    return Analyzer(TechTokenizer(), CompoundFilter(), AcronymStopFilter(), UmlautFilter(), InflectionStemFilter())


def name_terms(text: str) -> list[str]:
    """The terms the author-name analysis makes of ``text``, in order: its
    words (:class:`~.tokens.TechTokenizer`'s), lower-cased and stripped of
    accents, not stemmed (``Jean-Pierre O'Brien`` → ``jean-pierre``,
    ``o``, ``brien``)."""
    normal = normalize(text)[0]
    return [word.lower().translate(ACCENT_MAP) for word in analyzed_pattern(normal).findall(normal)]


# Distinct words whose analysis index_positions keeps (per analyzer).
EXPANSION_CACHE_SIZE = 100_000
# A word after the one analysed: where it lands says how many positions the word took.
_NEXT_WORD = "zz"


def index_positions(analyzer: object, value: str) -> dict[str, list[int]] | None:
    """The terms ``analyzer`` indexes for ``value``, each with its positions.

    The same terms and positions as the analyzer's token stream in
    ``"index"`` mode (stopped tokens left out), in the order they first
    come, but each distinct word of the tokenizer is analysed once: its
    terms (with their positions relative to the word's) and the number of
    positions it takes are kept, for the :data:`EXPANSION_CACHE_SIZE` words
    seen last, and reused; the words new to the cache go through the
    filters together (:func:`_expand_all`). Whoosh's way runs every token through a chain of
    generators, half of an indexing worker's time. This holds because every
    filter after :class:`TechTokenizer` is ``token_local``: what it makes of
    a token depends on the token's text alone, and it moves later tokens by
    a fixed number of positions.

    Returns ``None`` when ``analyzer`` is not such a chain (the caller then
    uses the token stream).
    """
    items = getattr(analyzer, "items", None)
    if (
        not items
        or not isinstance(items[0], TechTokenizer)
        or not all(getattr(item, "token_local", False) for item in items[1:])
    ):
        return None
    tokenizer: TechTokenizer = items[0]
    filters: tuple[TokenFilter, ...] = tuple(items[1:])
    caches: dict[tuple[int, ...], dict[str, Expansion]] = tokenizer.__dict__.setdefault("_expansions", {})
    key = tuple(map(id, filters))  # filters compare by value and are not hashable
    cache = caches.get(key)
    if cache is None:
        cache = caches[key] = {}
    positions: dict[str, list[int]] = {}
    at = 0
    normal = normalize(value)[0]
    words = tokenizer._tokenizer(normal).findall(normal)
    new = [word for word in dict.fromkeys(words) if word not in cache]
    if new:
        expanded = _expand_all(filters, new)
        if expanded is None:
            return None
        cache.update(expanded)
    for word in words:
        terms, width = cache[word]
        for text, offset in terms:
            found = positions.get(text)
            if found is None:
                positions[text] = [at + offset]
            else:
                found.append(at + offset)
        at += width
    if len(cache) > EXPANSION_CACHE_SIZE:
        cache.clear()
    return positions


def term_positions(analyzer: Callable[..., Iterable[Any]], value: str) -> dict[str, list[int]]:
    """``{term: positions}`` of ``value`` as ``analyzer`` indexes it:
    :func:`index_positions`, or the token stream for a chain it cannot read."""
    found = index_positions(analyzer, value)
    if found is None:
        found = {}
        for token in analyzer(value, positions=True, mode="index", removestops=True):
            found.setdefault(token.text, []).append(token.pos)
    return found


def _expand_all(filters: tuple[TokenFilter, ...], words: list[str]) -> dict[str, Expansion] | None:
    """``{word: (terms, width)}`` of distinct ``words`` as :func:`_expand`
    gives them, the words run through ``filters`` as one stream (a filter
    chain's generators cost more to set up than a word to analyse), each
    followed by a marker word whose position tells the width; ``None`` when
    a word's analysis cannot be told. Words whose analysis gives the marker
    itself are analysed one by one."""
    found: dict[str, Expansion] = {}
    terms: list[tuple[str, int]] = []
    start = 0  # where the current word's terms start
    for t in _marked(filters, words):
        if t.stopped:
            continue
        if t.boost != 1.0:
            return None
        if t.text != _NEXT_WORD:
            terms.append((t.text, t.pos - start))
            continue
        if len(found) == len(words):  # more markers than words: a word gave one
            break
        found[words[len(found)]] = (tuple(terms), t.pos - start)
        terms, start = [], t.pos + 1
    else:
        if len(found) == len(words) and not terms:
            return found
    one_by_one = {}
    for word in words:
        expansion = _expand(filters, word)
        if expansion is None:
            return None
        one_by_one[word] = expansion
    return one_by_one


def _marked(filters: tuple[TokenFilter, ...], words: list[str]) -> Iterator[Any]:
    """The tokens ``filters`` make of ``words``, each word followed by the
    marker :data:`_NEXT_WORD` (positions 0, 1, 2 ...); one token object is
    reused, so each is read before the next is asked for."""
    token = Token(positions=True, chars=False, removestops=True, mode="index", boosts=True)

    def stream() -> Iterator[Any]:
        for pos, text in enumerate(text for word in words for text in (word, _NEXT_WORD)):
            token.text, token.pos, token.boost = text, pos, 1.0
            token.stopped = token.joined = False
            token.charmap = None
            yield token

    tokens: Iterator[Any] = stream()
    for item in filters:
        tokens = item(tokens)
    return tokens


def _expand(filters: tuple[TokenFilter, ...], word: str) -> Expansion | None:
    """``(terms, width)``: ``word``'s ``(term, position)`` pairs through ``filters``
    (positions from 0) and the number of positions it takes; ``None`` when
    that cannot be told (the next word did not come out as written)."""
    out = [(t.text, t.pos, t.boost) for t in _marked(filters, [word]) if not t.stopped]
    if not out or out[-1][0] != _NEXT_WORD or any(boost != 1.0 for _, _, boost in out):
        return None
    *terms, (_, width, _) = out
    return tuple((text, pos) for text, pos, _ in terms), width
