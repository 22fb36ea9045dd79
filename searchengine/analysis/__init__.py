"""The product's text analysis, as plain Python: what both engines index and search.

One analyzer serves titles and abstracts, for indexing and queries alike
(:mod:`.analyzer`), built by job:

* :mod:`.tokens` -- the token pattern and the tokenizer (words, their
  positions and offsets in the text as written);
* :mod:`.folding` -- NFKC, case and accent folding (:mod:`.accents`: the
  folding table), umlaut spellings;
* :mod:`.compounds` -- compounds as their parts and one joined word, CJK
  runs as character pairs;
* :mod:`.stopwords` -- stop words, acronyms kept;
* :mod:`.stemming` -- the plural rewrites and Porter's stemmer without
  step 4 (NLTK, imported on first use);
* :mod:`.splitting` -- a joined keyword read as two words;
* :mod:`.snippets` -- the parts of a hit's text that show why it matched.

Nothing here imports a search engine's code: the embedded engine wraps
these steps as Whoosh tokenizer and filters
(:mod:`searchengine.engines.whoosh.analysis`), the cluster indexes their
terms (:mod:`searchengine.engines.opensearch.terms`), and the query
language (:mod:`searchengine.querylang`) and filters
(:mod:`searchengine.filters`) use the same facts. Importing this package
imports none of its modules.
"""
