"""The embedded engine: Whoosh index folders with NLTK analysis, searched in this process.

The only package that imports Whoosh (and, in :mod:`.analysis`, NLTK):

* :mod:`.engine` -- :class:`~.engine.WhooshEngine` and its searcher: matching,
  ranking a page, snippets, facets, records;
* :mod:`.query` -- the query language parsed into Whoosh queries, prefixes
  expanded, filters as Whoosh queries;
* :mod:`.ranking` -- BM25F scoring, fast over cached posting arrays;
  :mod:`.feedback` -- pseudo-relevance feedback terms;
* :mod:`.columns` -- facet and sort columns, and counting over them;
* :mod:`.snippets` -- highlighting; :mod:`.lexicon` -- did-you-mean words;
* :mod:`.analysis` -- the analyzer (tokenizer | filters, NLTK parts);
  :mod:`.schema` -- fields and documents;
* :mod:`.writer` -- indexing (parallel writers, versions and repeats);
  :mod:`.postings` -- the writers' posting buffer;
  :mod:`.store` -- generations, the ``CURRENT`` pointer and the write lock;
* :mod:`.internals` -- every private name of Whoosh and NLTK used, checked.
"""

from searchengine.engines.whoosh import internals as _internals

_internals.defer_morphology()
