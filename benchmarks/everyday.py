"""Everyday queries: author names, short topics, absent words and typos, as researchers type them.

    python benchmarks/everyday.py [--index DIR] [--work DIR] [--lists DIR] [--seed 7]
                                  [--limit N] [--verbose]

Six lists of queries are drawn from the 74,728 records of
``../shared/data/arxiv/arxiv_listing_sample.jsonl.gz``, read with the
product's reader (TeX turned into text, one name per author, as indexed).
Each query is searched once through ``open_index(DIR).search(query,
limit=10)`` (snippets on, as a results page shows them) with a 30-second
budget, so that what is measured is the answer, not the load of the machine.

Words of the sample are counted two ways:

* a *word* of a text is a run of letters of it folded: NFKD with the
  combining marks dropped, then casefolded (``Vlček`` -> ``vlcek``);
* a *term* of a text is what the product's analyzer for titles and
  abstracts indexes (``searchengine.analysis.analyzer.text_analyzer``
  through ``term_positions``: stemmed, plurals singular, compounds split).
  A paper *holds* a word when every term of the word alone is a term of
  the paper's title and abstract (authors apart).

A *surname* is the last word of an author name, with ``Jr``, ``Sr``,
``II``, ``III`` and ``IV`` left off and dots and commas stripped; two
surnames are the same when their folded forms are. The lists:

1. ``absent surnames`` (200): surnames of letters only, at least 4 of them,
   whose word is in no title and no abstract and whose terms no paper holds,
   drawn uniformly from the distinct (folded) surnames, each typed alone as
   most authors write it (``Vedaldi``). Pass: not corrected (``corrected``
   is None; a suggestion is allowed) and the first hit has an author with
   that surname. Target 98%.
2. ``random surnames`` (300): surnames of letters only, at least 4 of them,
   drawn the same way from all of them, typed alone; judged as list 1. An
   informative figure, no target.
3. ``full names`` (80): author names as written (``Yann LeCun``, two words
   or more, a surname of letters only) of authors with two papers or more
   (counted by the exact name), whose surname is a word of the title or
   abstract of a paper none of whose authors has that surname. Pass: the
   first hit has an author with that surname whose first name is the same
   (folded), or, when either is an initial (``Y.``, ``J.-P.``), whose first
   name has the same first letter. Target 90%.
4. ``four-word topics`` (80): a paper is drawn at random and four words of
   its title are drawn among those that are letters only, at least 4 of
   them, not stop words (``searchengine.analysis.stopwords.STOP_WORDS``), one
   term each, the terms distinct and held by at most 5% of the papers;
   kept when at least 5 papers hold all four (else another paper is drawn).
   The query is the four words lower-cased, in title order. Pass: there
   are 5 hits or more and each of the first 5 holds all four words.
   Target 95%.
5. ``absent words``: the words of :data:`ABSENT_WORDS` (real physics,
   chemistry, biology and astronomy words) that no paper holds and no
   author name has as a word, each typed alone. Pass: the query is not
   replaced by a correction (``corrected`` is None; a suggestion is
   allowed). Target 100%.
6. ``typos``: ``tranformer`` and the ``TYPOS`` of ``benchmarks/corrections.py``,
   judged as that script judges them (``typo_outcome``). Pass: corrected or
   suggested to the query meant; a typo whose query meant no paper has
   every word of (``nothing to find``) is left out of the count. No target.

Lists 1 to 4 are drawn with ``random.Random(f"{seed}:{key}")``, ``key``
being the list's file name (``absent-surnames``, ``random-surnames``,
``full-names``, ``topics``, ``absent-words``, ``typos``). Every list is
saved as ``KEY.json`` in ``--lists`` (default ``WORK/lists``) and read from
there when saved with the same seed, so runs repeat on the same queries;
only drawing reads the sample (about a minute and a half). ``--limit N``
searches the first N queries of each list.

Printed: one table (list, queries, passed, rate, target, met), the load
average before and after, and the time of the searches (each query's first
search in this new process, including the first search's start-up): the
first search and the median. ``--verbose`` prints each failure and why.
Without ``--index``, an index of the sample is built once in ``--work``
(about five minutes).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import re
import statistics
import string
import sys
import tempfile
import time
import unicodedata
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from corrections import BUDGET, SAMPLE, TYPOS, build, typo_outcome  # noqa: E402

# Real words no paper of the sample holds (checked again when the list is drawn).
ABSENT_WORDS = [
    # particles and condensed matter
    "neutrino",
    "baryon",
    "phonon",
    "axion",
    "pion",
    "meson",
    "fermion",
    "magnon",
    "exciton",
    "polariton",
    "plasmon",
    "skyrmion",
    "graviton",
    "inflaton",
    "nucleon",
    "deuteron",
    "hyperon",
    "quarkonium",
    "bremsstrahlung",
    "cyclotron",
    "superfluid",
    "cuprate",
    # astronomy and space
    "magnetar",
    "blazar",
    "protostar",
    "meteorite",
    "nucleosynthesis",
    "magnetosphere",
    "ionosphere",
    # chemistry
    "fullerene",
    "enantiomer",
    "micelle",
    "colloid",
    "aerogel",
    "electrolysis",
    # biology and earth
    "ribosome",
    "cytokine",
    "chloroplast",
    "polymerase",
    "ubiquitin",
    "basalt",
    "estuary",
]

# Hits searched per query: one results page.
PAGE = 10
# Words in more papers than this share are too common to make a topic.
TOPIC_WORD_SHARE = 0.05
# Papers that must hold all four words of a topic; hits of it that are judged.
TOPIC_PAPERS = 5
SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv"})
_LETTERS = re.compile(r"[^\W\d_]+")


# --- words and names ---------------------------------------------------------------------------------------


def fold(text: str) -> str:
    """``text`` without accents (NFKD, combining marks dropped), casefolded."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


def words(text: str) -> set[str]:
    """The folded runs of letters of ``text``."""
    return set(_LETTERS.findall(fold(text)))


def surname(name: str) -> str:
    """The last word of ``name`` as written, suffixes (``Jr.``, ``III``) left off."""
    parts = [part.strip(".,") for part in name.split()]
    while len(parts) > 1 and fold(parts[-1]) in SUFFIXES:
        parts.pop()
    return parts[-1] if parts else ""


def is_initial(first: str) -> bool:
    """Whether a first name is written as initials (``Y.``, ``J.-P.``): one letter per hyphenated part."""
    parts = [part.replace(".", "") for part in first.split("-")]
    return all(len(part) <= 1 for part in parts) and any(parts)


def same_person(typed: str, author: str) -> bool:
    """Whether ``author`` can be the person ``typed`` names: the same surname, and
    the same first name, or the same first letter when either is an initial."""
    if fold(surname(typed)) != fold(surname(author)):
        return False
    mine, theirs = typed.split()[0], author.split()[0]
    if is_initial(mine) or is_initial(theirs):
        return fold(mine)[:1] == fold(theirs)[:1]
    return fold(mine) == fold(theirs)


@functools.cache
def _analyzer():
    """The product's analyzer of titles and abstracts (one, for its cache of analysed words)."""
    from searchengine.analysis.analyzer import text_analyzer

    return text_analyzer()


def terms(analyzer, text: str) -> set[str]:
    """The terms the product indexes for ``text`` (title and abstract analysis)."""
    from searchengine.analysis.analyzer import term_positions

    return set(term_positions(analyzer, text))


# --- the sample --------------------------------------------------------------------------------------------


@dataclass
class Sample:
    """What drawing needs to know of the records: titles, authors, and
    which papers hold each word and each term of their title and abstract."""

    titles: list[str]
    authors: list[list[str]]
    words: dict[str, array]
    terms: dict[str, array]
    name_words: set[str]

    @classmethod
    def of(cls, records: Iterable) -> Sample:
        """The sample of ``records`` (objects with ``title``, ``abstract`` and ``authors``)."""
        analyzer = _analyzer()
        titles, authors, name_words = [], [], set()
        word_papers: dict[str, array] = defaultdict(lambda: array("I"))
        term_papers: dict[str, array] = defaultdict(lambda: array("I"))
        for number, record in enumerate(records):
            text = f"{record.title}\n{record.abstract}"
            titles.append(record.title)
            authors.append(list(record.authors))
            for name in record.authors:
                name_words.update(words(name))
            for word in words(text):
                word_papers[word].append(number)
            for term in terms(analyzer, text):
                term_papers[term].append(number)
        return cls(titles, authors, dict(word_papers), dict(term_papers), name_words)

    @classmethod
    def read(cls, path: Path) -> Sample:
        """The sample of the records in ``path``, read as the indexer reads them."""
        from searchengine.readers import read_records

        return cls.of(read_records([path], []))

    @property
    def papers(self) -> int:
        return len(self.titles)

    def holders(self, term_set: Iterable[str]) -> set[int]:
        """The papers holding every term of ``term_set``."""
        found: set[int] | None = None
        for term in sorted(term_set, key=lambda t: len(self.terms.get(t, ()))):
            papers = self.terms.get(term, ())
            found = set(papers) if found is None else found.intersection(papers)
            if not found:
                return set()
        return found or set()

    def surnames(self, shortest: int = 4) -> dict[str, tuple[str, int]]:
        """``{folded surname: (as most often written, papers)}`` of the surnames of
        letters only and at least ``shortest`` letters long."""
        written: dict[str, Counter] = defaultdict(Counter)
        papers: Counter = Counter()
        for names in self.authors:
            seen = set()
            for name in names:
                last = surname(name)
                if last.isalpha() and len(last) >= shortest:
                    written[fold(last)][last] += 1
                    seen.add(fold(last))
            papers.update(seen)
        return {
            key: (min(forms.items(), key=lambda kv: (-kv[1], kv[0]))[0], papers[key]) for key, forms in written.items()
        }


# --- drawing ------------------------------------------------------------------------------------------------


def draw_absent_surnames(sample: Sample, rng: random.Random, count: int) -> list[dict]:
    """List 1: surnames no title or abstract has, as words or as terms."""
    analyzer = _analyzer()
    absent = [
        (key, form, papers)
        for key, (form, papers) in sorted(sample.surnames().items())
        if key not in sample.words and not any(t in sample.terms for t in terms(analyzer, form))
    ]
    return [{"query": form, "papers": papers} for _, form, papers in rng.sample(absent, min(count, len(absent)))]


def draw_surnames(sample: Sample, rng: random.Random, count: int) -> list[dict]:
    """List 2: any surnames."""
    every = sorted(sample.surnames().items())
    return [{"query": form, "papers": papers} for _, (form, papers) in rng.sample(every, min(count, len(every)))]


def draw_full_names(sample: Sample, rng: random.Random, count: int) -> list[dict]:
    """List 3: names of authors of two papers or more whose surname papers not
    by anyone of that surname mention."""
    papers = Counter(name for names in sample.authors for name in names)
    candidates = sorted(
        name for name, n in papers.items() if n >= 2 and len(name.split()) >= 2 and surname(name).isalpha()
    )
    mentions: dict[str, int] = {}
    for key in {fold(surname(name)) for name in candidates}:
        mentions[key] = sum(
            1
            for paper in sample.words.get(key, ())
            if key not in {fold(surname(author)) for author in sample.authors[paper]}
        )
    chosen = [name for name in candidates if mentions[fold(surname(name))]]
    return [
        {"query": name, "papers": papers[name], "mentioned": mentions[fold(surname(name))]}
        for name in rng.sample(chosen, min(count, len(chosen)))
    ]


def title_words(sample: Sample, analyzer, title: str, share: float = TOPIC_WORD_SHARE) -> list[tuple[str, str]]:
    """``(word, term)`` of the words of ``title`` a topic may take, in title order
    (``share``: the most papers that may hold a word, as a share of all)."""
    found: dict[str, str] = {}
    for raw in title.split():
        word = raw.strip(string.punctuation + "\u2018\u2019\u201c\u201d")
        if not (word.isalpha() and len(word) >= 4) or word.casefold() in _stop_words():
            continue
        analysed = terms(analyzer, word)
        if len(analysed) != 1:
            continue
        term = next(iter(analysed))
        if term not in found.values() and 0 < len(sample.terms.get(term, ())) <= share * sample.papers:
            found[word] = term
    return list(found.items())


def draw_topics(
    sample: Sample,
    rng: random.Random,
    count: int,
    share: float = TOPIC_WORD_SHARE,
    least: int = TOPIC_PAPERS,
    tries: int = 200,
) -> list[dict]:
    """List 4: four words of a random paper's title that at least ``least``
    papers hold all of (``tries`` papers drawn per topic at most)."""
    analyzer = _analyzer()
    topics, seen = [], set()
    for _ in range(count * tries):
        if len(topics) == count:
            break
        candidates = title_words(sample, analyzer, sample.titles[rng.randrange(sample.papers)], share)
        if len(candidates) < 4:
            continue
        chosen = [candidates[i] for i in sorted(rng.sample(range(len(candidates)), 4))]
        key = frozenset(term for _, term in chosen)
        holders = len(sample.holders(key))
        if key in seen or holders < least:
            continue
        seen.add(key)
        topics.append(
            {
                "query": " ".join(word.lower() for word, _ in chosen),
                "terms": [term for _, term in chosen],
                "papers": holders,
            }
        )
    return topics


def draw_absent_words(sample: Sample, candidates: Iterable[str] = ABSENT_WORDS) -> list[dict]:
    """List 5: the ``candidates`` no paper holds and no author name has as a word."""
    analyzer = _analyzer()
    return [
        {"query": word}
        for word in candidates
        if fold(word) not in sample.name_words and not any(t in sample.terms for t in terms(analyzer, word))
    ]


def typo_list() -> list[dict]:
    """List 6: the typos, each with the query meant."""
    return [{"query": query, "meant": meant} for query, meant in [("tranformer", "transformer"), *TYPOS]]


def _stop_words() -> frozenset:
    from searchengine.analysis.stopwords import STOP_WORDS

    return STOP_WORDS


# --- judging: each returns None for a pass, else why it failed -----------------------------------------------


class LeftOut(str):
    """A judgement that leaves the query out of its list's count; the text says why."""


def _first_hit(results) -> str:
    hit = results.hits[0]
    more = f" +{len(hit.authors) - 3}" if len(hit.authors) > 3 else ""
    return f"first hit {hit.id} by {', '.join(hit.authors[:3])}{more}: {hit.title[:60]}"


def judge_surname(index, item: dict, results) -> str | None:
    """Lists 1 and 2: not corrected, and the first hit has an author of that surname."""
    if results.corrected is not None:
        return f"corrected to {results.corrected!r}"
    if not results.hits:
        return "no hits" + (f" (suggested {results.suggestion!r})" if results.suggestion else "")
    key = fold(item["query"])
    if any(fold(surname(author)) == key for author in results.hits[0].authors):
        return None
    return _first_hit(results)


def judge_full_name(index, item: dict, results) -> str | None:
    """List 3: the first hit has that author (:func:`same_person`)."""
    if not results.hits:
        return "no hits" + (f" (corrected to {results.corrected!r})" if results.corrected else "")
    if any(same_person(item["query"], author) for author in results.hits[0].authors):
        return None
    return (f"corrected to {results.corrected!r}; " if results.corrected else "") + _first_hit(results)


def judge_topic(index, item: dict, results) -> str | None:
    """List 4: each of the first :data:`TOPIC_PAPERS` hits holds all four words."""
    analyzer = _analyzer()
    if len(results.hits) < TOPIC_PAPERS:
        return f"{len(results.hits)} hits"
    wanted = set(item["terms"])
    for rank, hit in enumerate(results.hits[:TOPIC_PAPERS], 1):
        missing = wanted - terms(analyzer, f"{hit.title}\n{hit.abstract}")
        if missing:
            return (
                f"hit {rank} ({hit.id}) lacks {', '.join(sorted(missing))}"
                + (" (relaxed)" if results.relaxed else "")
                + (f" (corrected to {results.corrected!r})" if results.corrected else "")
            )
    return None


def judge_absent_word(index, item: dict, results) -> str | None:
    """List 5: the word is searched as typed."""
    return None if results.corrected is None else f"replaced by {results.corrected!r}"


def judge_typo(index, item: dict, results) -> str | None:
    """List 6: corrected or suggested to the query meant, as ``corrections.py`` judges."""
    outcome, suggestion = typo_outcome(index, item["query"], item["meant"])
    if outcome in ("corrected", "suggested"):
        return None
    if outcome == "nothing to find":  # no paper has every word of the query meant
        return LeftOut(outcome)
    return outcome + (f": {suggestion}" if suggestion else "")


# --- the lists ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class QueryList:
    """One list: how it is drawn and judged, and its target pass rate."""

    key: str
    label: str
    draw: Callable[[Sample, random.Random], list[dict]]
    judge: Callable
    target: float | None


LISTS = (
    QueryList(
        "absent-surnames",
        "1 surnames only author names hold",
        lambda sample, rng: draw_absent_surnames(sample, rng, 200),
        judge_surname,
        0.98,
    ),
    QueryList(
        "random-surnames", "2 random surnames", lambda sample, rng: draw_surnames(sample, rng, 300), judge_surname, None
    ),
    QueryList(
        "full-names",
        "3 First Last, surname in other abstracts",
        lambda sample, rng: draw_full_names(sample, rng, 80),
        judge_full_name,
        0.90,
    ),
    QueryList(
        "topics",
        "4 four-word topics (>= 5 papers)",
        lambda sample, rng: draw_topics(sample, rng, 80),
        judge_topic,
        0.95,
    ),
    QueryList(
        "absent-words", "5 absent real words", lambda sample, rng: draw_absent_words(sample), judge_absent_word, 1.0
    ),
    QueryList("typos", "6 typos", lambda sample, rng: typo_list(), judge_typo, None),
)


def load_lists(folder: Path, seed: int, source: Path = SAMPLE) -> dict[str, list[dict]]:
    """Every list, read from ``folder`` when saved there with ``seed``, else
    drawn from ``source`` (read once) and saved."""
    folder.mkdir(parents=True, exist_ok=True)
    found: dict[str, list[dict]] = {}
    sample: Sample | None = None
    for spec in LISTS:
        path = folder / f"{spec.key}.json"
        if path.exists():
            saved = json.loads(path.read_text(encoding="utf-8"))
            if saved.get("seed") == seed:
                found[spec.key] = saved["items"]
                continue
        if sample is None:
            print(f"reading {source} to draw the lists ...", file=sys.stderr, flush=True)
            sample = Sample.read(source)
        items = spec.draw(sample, random.Random(f"{seed}:{spec.key}"))
        path.write_text(
            json.dumps({"seed": seed, "papers": sample.papers, "items": items}, ensure_ascii=False, indent=1) + "\n",
            encoding="utf-8",
        )
        found[spec.key] = items
    return found


# --- measuring ------------------------------------------------------------------------------------------------


def rate_row(label: str, passed: int, count: int, target: float | None, left_out: int = 0) -> list[str]:
    """The table cells of one list (``left_out``: queries not counted)."""
    rate = passed / count if count else 0.0
    met = "" if target is None or not count else ("met" if rate >= target else "NOT met")
    goal = "" if target is None else "100%" if target >= 1 else f"≥ {target:.0%}"
    return [label + (f" ({left_out} left out)" if left_out else ""), str(count), str(passed), f"{rate:.1%}", goal, met]


def measure(location, lists: dict[str, list[dict]], limit: int | None = None, verbose: bool = False) -> list[list[str]]:
    """Search and judge every list on the index at ``location``; print the
    table, load and times (and each failure with ``verbose``); return the rows."""
    from searchengine import open_index
    from searchengine.errors import QueryError

    load_before = os.getloadavg()
    started = time.perf_counter()
    index = open_index(location)
    opened = time.perf_counter() - started
    times: list[float] = []
    searched: set[str] = set()
    rows, mode = [], ""
    try:
        for spec in LISTS:
            items = lists[spec.key][:limit]
            passed = left_out = 0
            for item in items:
                started = time.perf_counter()
                try:
                    results = index.search(item["query"], limit=PAGE, time_budget=BUDGET)
                except QueryError as exc:  # a surname that is a stop word ("Than") is refused
                    results, why = None, f"error: {exc}"
                took = time.perf_counter() - started
                if item["query"] not in searched:  # a repeat may come from a cache
                    searched.add(item["query"])
                    times.append(took)
                if results is not None:
                    mode = results.mode
                    why = spec.judge(index, item, results)
                passed += why is None
                left_out += isinstance(why, LeftOut)
                if why is not None and verbose:
                    print(
                        f"  {spec.key:<16} {item['query']!r:<34} {why}"
                        + (" (left out)" if isinstance(why, LeftOut) else "")
                    )
            rows.append(rate_row(spec.label, passed, len(items) - left_out, spec.target, left_out))
        documents = index.doc_count
    finally:
        index.close()
    load_after = os.getloadavg()
    print(f"\n{location} ({documents:,} papers, {mode} ranking)\n")
    print("| list | queries | passed | rate | target | met |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print(f"\nload average (1, 5, 15 min): before {_load(load_before)}, after {_load(load_after)}")
    if times:
        print(
            f"time per query (first search of each of {len(times)} queries, new process; index opened in "
            f"{opened * 1000:.0f} ms): first {times[0] * 1000:.0f} ms, "
            f"median {statistics.median(times) * 1000:.1f} ms"
        )
    return rows


def _load(values) -> str:
    return " ".join(f"{value:.2f}" for value in values)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, help="the index of the sample to search; default: build one in --work")
    parser.add_argument(
        "--work",
        type=Path,
        default=Path(tempfile.gettempdir()) / "searchengine-everyday",
        help="where the built index (and, by default, the lists) are kept and reused",
    )
    parser.add_argument("--lists", type=Path, help="where the drawn lists are saved and read (default: WORK/lists)")
    parser.add_argument("--seed", type=int, default=7, help="seed of the drawing")
    parser.add_argument("--limit", type=int, help="queries searched per list (the first N)")
    parser.add_argument("--verbose", action="store_true", help="print each failure and why")
    args = parser.parse_args()
    lists = load_lists(args.lists or args.work / "lists", args.seed)
    location = args.index or build(SAMPLE, args.work / "arxiv")
    measure(location, lists, args.limit, args.verbose)
    return 0


if __name__ == "__main__":
    sys.exit(main())
