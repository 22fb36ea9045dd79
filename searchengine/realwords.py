"""Real words beside the index's own: how common a word is in English.

Did-you-mean (:mod:`searchengine.spelling`) replaces a word the index does
not hold with a close word it does. That is right for a typo (``tranformer``)
and wrong for a real word that no paper of this index happens to use
(``neutrino`` in a computer-science collection is not ``neurino``). This
module tells them apart by the word frequencies of
`wordfreq <https://pypi.org/project/wordfreq/>`_ (Robyn Speer, 2022): its
``large`` English list, about 320,000 words from web text, books, subtitles
and Wikipedia, each with its Zipf frequency (log10 of uses per billion
words, 1 to 8). The list ships inside the package: nothing is downloaded.

The list is read from the package's data file (the ``cBpack`` format
wordfreq documents: a header, then buckets of words, bucket ``i`` holding
the words of frequency ``10 ** (-i / 100)``), which takes about 0.1 s once
per process instead of the 0.6 s of importing wordfreq and building its
dictionary; without the file (another layout), wordfreq's own
``zipf_frequency`` answers.
"""

from __future__ import annotations

import threading

# A word at least this many Zipf units rarer than a word one or two edits
# away is taken for a misspelling of it even when the list holds it: web
# text holds common typos too (atention 1.4 against attention 5.1). Real
# rare words stand close to that (inflaton 1.1 and inflation 4.1; pion 2.1
# and pin 4.2), as do some typos (protien 1.4 and protein 4.5): those are
# taken for real words, so they are suggested rather than replaced.
TYPO_MARGIN = 3.5

_lock = threading.Lock()
_buckets: list[list[str]] | None = None


def _read() -> list[list[str]] | None:
    """The list's buckets, read once; ``None`` when the data file is not where it is expected."""
    global _buckets
    with _lock:
        if _buckets is None:
            import gzip
            import importlib.util
            import os

            spec = importlib.util.find_spec("wordfreq")
            if spec is None or not spec.submodule_search_locations:
                return None
            path = os.path.join(spec.submodule_search_locations[0], "data", "large_en.msgpack.gz")
            try:
                import msgpack

                with gzip.open(path, "rb") as packed:
                    data = msgpack.load(packed, raw=False)
            except (OSError, ValueError, ImportError):
                return None
            if not data or not isinstance(data[0], dict) or data[0].get("format") != "cB":
                return None
            _buckets = [list(bucket) for bucket in data[1:]]
        return _buckets


def zipf(word: str) -> float:
    """The Zipf frequency of the lower-case ``word`` in English: log10 of its
    uses per billion words, from 1 (the rarest the list holds) to about 8
    (``the``); 0.0 for a word the list does not hold (``tranformer``)."""
    buckets = _read()
    if buckets is None:
        from wordfreq import zipf_frequency

        return zipf_frequency(word, "en", wordlist="large")
    for number, bucket in enumerate(buckets):
        if word in bucket:
            # Bucket i holds the words of frequency 10 ** (-i / 100); Zipf adds 9.
            return round(9 - number / 100, 2)
    return 0.0


def is_real(word: str, look_alikes=()) -> bool:
    """Whether ``word`` (lower case) is a real word: English text uses it, and
    no word of ``look_alikes`` (words one or two edits away) is
    :data:`TYPO_MARGIN` Zipf units more common (then it is a typo common
    enough to be written on the web: ``langauge``)."""
    found = zipf(word)
    if not found:
        return False
    return all(zipf(other) < found + TYPO_MARGIN for other in look_alikes)
