"""Search engines: each translates the query tree of :mod:`searchengine.querylang`."""
