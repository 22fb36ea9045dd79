"""The embedded engine: Whoosh index folders, searched in this process.

The only package that imports Whoosh:

* :mod:`.engine` -- :class:`~.engine.WhooshEngine`: generations opened,
  verified and followed; :mod:`.searcher` -- its searcher: matching,
  ranking a page, ranking by meaning, snippets, facets, records;
* :mod:`.querying` -- the query language parsed into Whoosh queries and the
  filters as one; :mod:`.queries` -- the query classes it adds;
  :mod:`.expansion` -- prefixes, fuzzy and joined words expanded at search time;
* :mod:`.evaluate` -- a query tree's matching documents and scores, without
  Whoosh's matchers; :mod:`.combine` -- scores combined with numpy;
  :mod:`.clock` -- the deadline matching keeps;
* :mod:`.bm25f` -- the BM25F model; :mod:`.blocks` -- posting blocks read
  whole; :mod:`.proximity` -- phrases and the proximity bonus;
  :mod:`.feedback` -- pseudo-relevance feedback terms;
* :mod:`.cache` -- what an open generation keeps on its readers;
* :mod:`.columns` -- facet and sort columns, packed and written;
  :mod:`.facetcolumns` -- read, sorted and counted, and the searcher's cache;
* :mod:`.snippets` -- the terms a query's snippets mark; :mod:`.lexicon` -- did-you-mean words;
* :mod:`.analysis` -- the product's analysis (:mod:`searchengine.analysis`) as Whoosh filters;
  :mod:`.schema` -- fields and documents; :mod:`.codec` -- the on-disk encodings;
* :mod:`.writer` -- indexing (parallel writers, versions and repeats);
  :mod:`.postings` -- the writers' posting buffer;
  :mod:`.store` -- generations, the ``CURRENT`` pointer and the write lock;
* :mod:`.internals` -- every private name of Whoosh and NLTK used, checked.
"""

from searchengine.engines.whoosh import internals as _internals

_internals.defer_morphology()
