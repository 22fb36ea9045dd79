"""Stemming: Porter's steps 1 to 3 and 5 (NLTK's), after the plural rewrites.

:class:`InflectionStemmer` stems with Porter's algorithm minus its
root-cutting step 4, after rewriting the word endings Porter parts
(:data:`PLURAL_REWRITES`): ``GPUs`` → ``gpu``, ``matrices``/``matrix`` →
``matrix``, ``radii``/``radius`` → ``radius``, ``criteria``/``criterion``
→ ``criteria``; ``university`` and ``universe``, ``organic`` and
``organization`` stay apart. :class:`InflectionStemFilter` folds case and
accents too, and leaves upper-case acronyms unstemmed (``AWS`` stays
``aws``).

NLTK's stemmer module is imported on first use, and without NLTK's package
initialiser (:func:`nltk_module`): that initialiser imports all of NLTK,
and SciPy where it is installed, which costs more than the rest of a
command-line search put together. The private names of NLTK used here are
checked by :func:`searchengine.engines.whoosh.internals.missing`. Plain
Python; no search engine's code.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import re
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

from searchengine.analysis.folding import fold

# Word endings rewritten, in order, on a folded word before stemming (both
# engines), so that a singular and its plural reach one stem. Porter only
# strips English -s/-es, and unevenly: gas → ga but gases → gase, virus → viru but
# viruses → virus, radius → radiu but radii → radii. Each rule is
# (pattern, replacement); ``$1`` is the pattern's first group (the OpenSearch
# chain applies the same table with ``pattern_replace``, Java's syntax). The
# lists are word stems, not open rules, where an open rule would collide
# (-i: multi, mini; -ium: zirconium/zirconia; -on: neuron; -as: ideas).
PLURAL_REWRITES = (
    # matrix/matrices, vertex/vertices, index/indices: the Latin plurals of a
    # list, made singular (Porter takes -ixes/-exes itself). Singulars turned
    # into -ices met Porter's -icate/-ical stems: index/indicate,
    # complex/complication, vertex/vertical.
    (r"^(matr|append|hel|cerv|rad)ices$", "$1ix"),
    (r"^(vert|ind|cort|vort|simpl|cod|ap)ices$", "$1ex"),
    # analysis/analyses (Porter: analys); not basis, whose bases is base's
    (r"(?<=\w{3})sis$", "ses"),
    # formulae/formulas
    (r"(?<=\w{3})ae$", "as"),
    # axis/axes (both Porters agree on ax, not on axes)
    (r"^(ax)(?:is|es)$", "$1"),
    # Latin -us/-i: radii, stimuli, nuclei, foci → radius, ... (then the -us rule)
    (
        r"^(radi|stimul|nucle|foc|loc|modul|calcul|tor|syllab|termin|thesaur|glomerul|menisc|gyr|thromb|papyr"
        r"|styl|octop|fung|cact|alumn|annul|bacill|hippocamp|sulc|vill)i$",
        "$1us",
    ),
    # genus/genera, corpus/corpora
    (r"^(gen)era$", "$1us"),
    (r"(corp)ora$", "$1us"),
    # plurals of -u words, which the -us rule would take for singulars
    (r"^(menu|guru|relu|haiku|sudoku|tofu)s$", "$1"),
    # -us → -use, the form the plural -uses shares (virus/viruses → virus);
    # not -ous adjectives or -aus, nor words of four letters or ending in
    # -pus (acronym plurals written lower-case: gpus, cpus, spmv-gpus)
    # but for the three below
    (r"(?<=\w{3})(?<![aop])us$", "use"),
    (r"(corp|camp|octop)us$", "$1use"),
    # singulars in -s with a plural in -ses: gas/gases, bias/biases, lens/lenses
    (r"^(gas|bias|alias|atlas|canvas|pancreas|lens|bus|plus|iris)$", "$1e"),
    # Latin -um/-a (and English -ums): spectrum/spectra, maximum/maxima,
    # forum/forums/fora, datum/data; not -ium (elements: zirconium/zirconia,
    # cerium/ceria), -sum (checksum), aluminum (alumina), quorum (Quora)
    (r"(?<=\w{3})(?<![is])(?<!^alumin)(?<!^quor)ums?$", "a"),
    (
        r"(medi|equilibri|consorti|millenni|herbari|bacteri|symposi|compendi|cili|epitheli|endotheli|myceli"
        r"|gymnasi|stadi|podi|crani|auditori|aquari|sanatori|moratori)ums?$",
        "$1a",
    ),
    # Greek -on/-a: criterion/criteria, phenomenon/phenomena, polyhedron/polyhedra
    (r"(criteri|phenomen|automat|hedr|gangli|mitochondri|legomen|tax)ons?$", "$1a"),
    # Greek -ma/-mata: schema/schemata, lemma/lemmata
    (r"(schem|lemm|stom|stigm|dogm)ata$", "$1a"),
)


# The plural rewrites (:data:`PLURAL_REWRITES`) in Python's syntax.
_PLURALS = tuple((re.compile(pattern), replacement.replace("$1", r"\g<1>")) for pattern, replacement in PLURAL_REWRITES)
# Whether any rewrite applies: one search instead of a substitution per rewrite
# (a word none of them matches is left as it is by all of them).
_ANY_PLURAL = re.compile("|".join(f"(?:{pattern})" for pattern, _ in PLURAL_REWRITES))


# --- NLTK: imports --------------------------------------------------------------------------

# The NLTK packages the stemmer module lives in (see nltk_module).
_NLTK_PACKAGES = ("nltk", "nltk.stem")
# NLTK modules that the stemmer module imports but uses only in its demo:
# nltk.redos imports the ``regex`` engine (30 ms); loaded on first use.
_NLTK_DEFERRED = ("nltk.redos",)


class _DeferredModule(types.ModuleType):
    """A stand-in for an NLTK module, which imports it (:func:`nltk_module`) on first attribute use."""

    def __getattr__(self, name: str) -> Any:
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        return getattr(nltk_module(self.__name__), name)


def nltk_module(name: str) -> types.ModuleType:
    """Import the NLTK module ``name`` (``"nltk.stem.porter"``) without NLTK's
    package initialisers, unless NLTK is already imported.

    ``import nltk`` runs ``nltk/__init__.py``, which imports nearly all of
    NLTK and, through its collocation measures, SciPy: 0.14 s, or 0.6 s with
    SciPy installed, against 0.04 s for the tokenizer and stemmer modules
    alone. Stand-in package modules are placed in ``sys.modules`` while
    ``name`` is imported, then removed, so a later ``import nltk`` by other
    code runs the real initialiser and reuses the modules loaded here. The
    modules of :data:`_NLTK_DEFERRED` get stand-ins too, which import them
    when first used. If anything about NLTK's layout differs, the ordinary
    import is used.
    """
    if name in sys.modules or "nltk" in sys.modules:
        return importlib.import_module(name)
    placed = []
    try:
        for package in _NLTK_PACKAGES:
            spec = importlib.util.find_spec(package)
            if spec is None or not spec.submodule_search_locations:
                raise ImportError(package)
            stand_in = types.ModuleType(package)
            stand_in.__spec__ = spec
            stand_in.__path__ = list(spec.submodule_search_locations)
            sys.modules[package] = stand_in
            placed.append(package)
        for module in _NLTK_DEFERRED:
            if module != name and module not in sys.modules:
                sys.modules[module] = _DeferredModule(module)
                placed.append(module)
        return importlib.import_module(name)
    except ImportError:
        return _import_normally(name, placed)
    finally:
        for module in placed:  # a deferred module imported meanwhile stays
            if module in _NLTK_PACKAGES or isinstance(sys.modules.get(module), _DeferredModule):
                sys.modules.pop(module, None)


def _import_normally(name: str, placed: list[str]) -> types.ModuleType:
    for module in [m for m in sys.modules if m == "nltk" or m.startswith("nltk.")]:
        del sys.modules[module]
    placed.clear()
    return importlib.import_module(name)


# --- NLTK: stemming -------------------------------------------------------------------------


def porter_steps(porter: Any, word: str) -> str:
    """NLTK Porter's steps 1a to 5b on ``word``, without step 4 (root cutting).
    ``porter`` is NLTK's ``PorterStemmer`` (NLTK is untyped: its steps give ``Any``)."""
    word = porter._step1c(porter._step1b(porter._step1a(word)))
    word = porter._step3(porter._step2(word))
    stem: str = porter._step5b(porter._step5a(word))
    return stem


class InflectionStemmer:
    """Porter's stemmer without its step 4, plus Latin and Greek plurals.

    Porter (1980), "An algorithm for suffix stripping": step 1 removes
    inflection (plural ``-s``/``-es``/``-ies``, ``-ed``, ``-ing``; final
    ``y`` → ``i``), steps 2 and 3 map compound suffixes to shorter ones
    (``-ization`` → ``-ize``, ``-ational`` → ``-ate``, ``-fulness`` →
    ``-ful``), and step 5 drops a final ``-e`` and undoubles ``-ll``. Step 4,
    which cuts a word down to a root by removing ``-ic``, ``-ity``, ``-ize``,
    ``-al``, ``-ment`` and the like, is what conflates unrelated words
    (``university``/``universe`` → ``univers``, ``organic``/``organization``
    → ``organ``), so it is left out. Against full Porter this changes
    nDCG@10 by −0.004 on Cranfield and +0.005 on CISI; leaving out steps 2
    and 3 as well costs about 0.01 on both (docs/evaluation.md).

    NLTK's implementation of the steps is used (imported on first use).
    Words of two letters or fewer, and words with anything but ASCII
    letters, are returned lower-cased and otherwise unchanged.
    """

    def __init__(self) -> None:
        self._porter = nltk_module("nltk.stem.porter").PorterStemmer()

    def stem(self, word: str) -> str:
        """Return the stem of ``word`` (lower-case)."""
        word = word.lower()
        if len(word) <= 2 or not (word.isascii() and word.isalpha()):
            return word
        porter = self._porter
        if word in porter.pool:  # NLTK's irregular forms: dying → die, skies → sky
            irregular: str = porter.pool[word]
            return irregular
        if _ANY_PLURAL.search(word):
            for pattern, replacement in _PLURALS:
                word = pattern.sub(replacement, word, count=1)
        return porter_steps(porter, word)


class InflectionStemFilter:
    """Fold case and accents, then stem with :class:`InflectionStemmer`.

    It sees the original case: an all-capitals acronym is folded but not
    stemmed (``AWS``, ``GPUS`` stay), and an acronym followed by a lower-case
    ``s`` is its plural (``GPUs`` → ``gpu``). Folding here rather than in
    Whoosh's ``LowercaseFilter`` and ``CharsetFilter`` lets one cached call do
    all three per distinct word. Stems are cached
    (``cachesize`` distinct words); the cache is rebuilt after unpickling
    rather than stored in the index's schema.

    A token's new text starts with the first character of its folded text
    (:func:`fold`): stemming and the plural rewrites change only a word's
    ending and keep at least its first letter (``ies`` → ``i``), and words
    of two letters or fewer are kept whole. Highlighting relies on this to
    stem only the words that can be query terms
    (:class:`~searchengine.analysis.snippets.WordAnalysis`).
    """

    token_local = True  # see searchengine.analysis.analyzer.index_positions

    def __init__(self, cachesize: int = 200_000) -> None:
        self.cachesize = cachesize
        self._stem: Callable[[str], str] | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"cachesize": self.cachesize}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.cachesize = state["cachesize"]
        self._stem = None

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.cachesize == self.cachesize

    def _stemmer(self) -> Callable[[str], str]:
        if self._stem is None:
            stemmer = InflectionStemmer()

            def stem(text: str) -> str:
                if text.isupper():
                    return fold(text)
                if len(text) > 2 and text[-1] == "s" and text[:-1].isupper():
                    return fold(text[:-1])
                return stemmer.stem(fold(text))

            self._stem = functools.lru_cache(maxsize=self.cachesize)(stem)
        return self._stem

    def stem_text(self, text: str) -> str:
        """The text this filter gives a token of ``text`` that is not a stop word."""
        return self._stemmer()(text)

    def __call__(self, tokens: Iterator[Any]) -> Iterator[Any]:
        stem = self._stemmer()
        for token in tokens:
            token.text = fold(token.text) if token.stopped else stem(token.text)
            yield token
