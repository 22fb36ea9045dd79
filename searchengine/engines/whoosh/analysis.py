"""The product's analysis (:mod:`searchengine.analysis`) as a Whoosh analyzer.

Each step of :func:`searchengine.analysis.analyzer.text_analyzer` becomes a
Whoosh tokenizer or filter by taking Whoosh's base class too: the steps'
code is the engine-free one, so the embedded engine indexes and searches
exactly the cluster's terms. Whoosh composes them (``|``) into the
``CompositeAnalyzer`` that fields hold.

The classes stay in this module, under these names: an index's table of
contents pickles its schema, analyzers included, by import path
(``searchengine.engines.whoosh.analysis.TechTokenizer`` and so on), so
indexes already on disk open only while the names are here.
"""

from __future__ import annotations

from whoosh.analysis import CharsetFilter, Filter, LowercaseFilter, Token, Tokenizer
from whoosh.analysis.analyzers import CompositeAnalyzer

from searchengine.analysis import compounds, folding, stemming, stopwords, tokens
from searchengine.analysis.accents import ACCENT_MAP

# Existing indexes' pickled schemas name the classes below by this module's path: they stay here.
# The filters' ``__call__`` is the engine-free step's (tokens as an Iterator, no keyword arguments),
# narrower than Whoosh's declared Filter/Composable signatures: Whoosh only ever passes the iterator.


class TechTokenizer(tokens.TechTokenizer, Tokenizer):
    """:class:`searchengine.analysis.tokens.TechTokenizer` as a Whoosh tokenizer (yields Whoosh tokens)."""

    token_class = Token


class CompoundFilter(compounds.CompoundFilter, Filter):  # type: ignore[misc]  # see above
    """:class:`searchengine.analysis.compounds.CompoundFilter` as a Whoosh filter."""


class AcronymStopFilter(stopwords.AcronymStopFilter, Filter):  # type: ignore[misc]  # see above
    """:class:`searchengine.analysis.stopwords.AcronymStopFilter` as a Whoosh filter."""


class UmlautFilter(folding.UmlautFilter, Filter):  # type: ignore[misc]  # see above
    """:class:`searchengine.analysis.folding.UmlautFilter` as a Whoosh filter."""


class InflectionStemFilter(stemming.InflectionStemFilter, Filter):  # type: ignore[misc]  # see above
    """:class:`searchengine.analysis.stemming.InflectionStemFilter` as a Whoosh filter."""


def text_analyzer() -> CompositeAnalyzer:
    """The Whoosh analyzer for title and abstract text (indexing, queries and
    phrases): :func:`searchengine.analysis.analyzer.text_analyzer`'s steps."""
    return TechTokenizer() | CompoundFilter() | AcronymStopFilter() | UmlautFilter() | InflectionStemFilter()


def name_analyzer() -> CompositeAnalyzer:
    """The Whoosh analyzer for author names: words folded for case and accents,
    not stemmed (:func:`searchengine.analysis.analyzer.name_terms`)."""
    return TechTokenizer() | LowercaseFilter() | CharsetFilter(ACCENT_MAP)
