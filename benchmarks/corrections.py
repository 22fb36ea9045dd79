"""Did-you-mean on rare valid words and on real typos: left alone, suggested or replaced.

    python benchmarks/corrections.py [--index DIR ...] [--work DIR] [--verbose]

Two lists, written before the policy was measured on them:

* ``RARE_WORDS``: valid words of physics, mathematics, biology and
  chemistry that 1 to 20 papers of the arXiv listing sample hold (counted
  by searching each word with ``exact=True``), many of them a letter or two
  from a common word (``boson``/``boost``, ``matroid``/``matrix``). Each is
  searched alone; it should be left alone (no suggestion). Where the index
  does not hold the word, replacing it is allowed (no paper holds it).
* ``TYPOS``: real misspellings of common scientific words (letters left
  out, doubled, swapped or mistaken), each a query with the one it meant.
  It should be corrected (the intended query's hits shown) or suggested;
  where no paper has every word of the intended query, there is nothing to
  correct it to (``nothing to find``).

Without ``--index`` the script builds, once (kept in ``--work``), an index
of ``../shared/data/arxiv/arxiv_listing_sample.jsonl.gz`` (74,728 records,
about five minutes) and one of the bundled corpus (``corpus/``, 24
records), and prints one table per index. Searches get a 30-second budget,
so that what is measured is the policy, not the load of the machine.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO.parent / "shared" / "data" / "arxiv" / "arxiv_listing_sample.jsonl.gz"
sys.path.insert(0, str(REPO))

# Each held by 1 to 20 papers of the listing sample.
RARE_WORDS = {
    "physics": [
        "boson",
        "lepton",
        "gluon",
        "muon",
        "hadron",
        "pulsar",
        "quasar",
        "tokamak",
        "quark",
        "kaon",
        "isotope",
        "neutron",
    ],
    "mathematics": [
        "matroid",
        "braid",
        "graphons",
        "sheaf",
        "functor",
        "monoid",
        "operad",
        "quiver",
        "tableau",
        "poset",
    ],
    "biology": ["codon", "exon", "allele", "phage", "histone", "mitosis", "chromatin", "axon", "zebrafish"],
    "chemistry": [
        "ligand",
        "isomer",
        "alkane",
        "benzene",
        "solvent",
        "zeolite",
        "electrolyte",
        "anode",
        "cathode",
        "titanium",
    ],
}

# (query as typed, query meant)
TYPOS = [
    ("sparce matrix", "sparse matrix"),
    ("nueral network", "neural network"),
    ("reinforcment learning", "reinforcement learning"),
    ("transfomer", "transformer"),
    ("grpah neural network", "graph neural network"),
    ("retreival augmented generation", "retrieval augmented generation"),
    ("algoritm", "algorithm"),
    ("optimzation", "optimization"),
    ("probabilty", "probability"),
    ("classifcation", "classification"),
    ("image segmantation", "image segmentation"),
    ("speech recogntion", "speech recognition"),
    ("convolutinal network", "convolutional network"),
    ("gaussain process", "gaussian process"),
    ("bayesian infernce", "bayesian inference"),
    ("stochastic gradeint descent", "stochastic gradient descent"),
    ("quantum entanglment", "quantum entanglement"),
    ("superconductivty", "superconductivity"),
    ("magnetic feild", "magnetic field"),
    ("black hloe", "black hole"),
    ("gravitaional waves", "gravitational waves"),
    ("eigenvlaue", "eigenvalue"),
    ("differential equaiton", "differential equation"),
    ("hamiltonain", "hamiltonian"),
    ("topolgical insulator", "topological insulator"),
    ("semiconducter", "semiconductor"),
    ("spectrocsopy", "spectroscopy"),
    ("thermodynamcis", "thermodynamics"),
    ("molecular dynamcis", "molecular dynamics"),
    ("protien folding", "protein folding"),
    ("populaton dynamics", "population dynamics"),
    ("epidemic modle", "epidemic model"),
    ("regresion", "regression"),
    ("interpolaton", "interpolation"),
    ("anomaly detecton", "anomaly detection"),
    ("langauge model", "language model"),
    ("atention mechanism", "attention mechanism"),
    ("varational inference", "variational inference"),
    ("computer vison", "computer vision"),
    ("markov chian", "markov chain"),
    ("monte carlo simluation", "monte carlo simulation"),
    ("galaxy clustres", "galaxy clusters"),
    ("neutorn star", "neutron star"),
]

BUDGET = 30.0


def rare_outcome(index, word: str) -> tuple[int, str, str | None]:
    """(papers holding ``word`` as typed, outcome, suggestion) of searching ``word`` alone:
    ``left alone``, ``suggested`` or ``replaced``."""
    typed = index.search(word, exact=True, limit=1, time_budget=BUDGET, with_snippets=False)
    results = index.search(word, limit=1, time_budget=BUDGET, with_snippets=False)
    held = 0 if typed.relaxed else typed.total
    if results.corrected is not None:
        return held, "replaced", results.corrected
    if results.suggestion is not None:
        return held, "suggested", results.suggestion
    return held, "left alone", None


def typo_outcome(index, query: str, meant: str) -> tuple[str, str | None]:
    """(outcome, suggestion) of searching ``query``: ``corrected`` or
    ``suggested`` (to ``meant``), ``wrong`` (another correction), ``missed``,
    or ``nothing to find`` (no suggestion, and no paper has every word of ``meant``)."""
    results = index.search(query, limit=1, time_budget=BUDGET, with_snippets=False)
    if results.suggestion is None:
        found = index.search(meant, exact=True, limit=1, time_budget=BUDGET, with_snippets=False)
        return ("nothing to find" if found.relaxed or not found.total else "missed"), None
    if results.suggestion != meant:
        return "wrong", results.suggestion + (" (replaced)" if results.corrected else "")
    return ("corrected" if results.corrected else "suggested"), results.suggestion


def measure(location, verbose: bool = False) -> dict[str, int]:
    """Search both lists on the index at ``location``; print the table (and
    each word's outcome with ``verbose``) and return the counts."""
    from searchengine import open_index

    index = open_index(location)
    counts: dict[str, int] = {}

    def count(key: str) -> None:
        counts[key] = counts.get(key, 0) + 1

    try:
        for field, words in RARE_WORDS.items():
            for word in words:
                held, outcome, suggestion = rare_outcome(index, word)
                count(f"rare {'held' if held else 'not held'}: {outcome}")
                if verbose:
                    print(f"  rare  {field:<12} {word:<16} {held:>4} papers  {outcome:<10} {suggestion or ''}")
        for query, meant in TYPOS:
            outcome, suggestion = typo_outcome(index, query, meant)
            count(f"typo: {outcome}")
            if verbose:
                print(f"  typo  {query:<32} {outcome:<10} {suggestion or ''}")
        documents = index.doc_count
    finally:
        index.close()
    rare_total = sum(len(words) for words in RARE_WORDS.values())
    print(f"\n{location} ({documents:,} papers)\n")
    print("| list | outcome | queries | share |")
    print("|---|---|---|---|")
    for held in ("held", "not held"):
        for outcome in ("left alone", "suggested", "replaced"):
            number = counts.get(f"rare {held}: {outcome}", 0)
            print(
                f"| rare words the index {'holds' if held == 'held' else 'lacks'} | {outcome} | {number} "
                f"| {number / rare_total:.0%} |"
            )
    for outcome in ("corrected", "suggested", "wrong", "missed", "nothing to find"):
        number = counts.get(f"typo: {outcome}", 0)
        print(f"| typos | {outcome} | {number} | {number / len(TYPOS):.0%} |")
    return counts


def build(source: Path, folder: Path) -> Path:
    """An index of ``source`` in ``folder``, built unless one is there."""
    from searchengine import build_index
    from searchengine.engines import needs_build

    if needs_build(folder):
        print(f"indexing {source} into {folder} ...", file=sys.stderr)
        build_index([source], folder)
    return folder


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--index",
        action="append",
        default=[],
        help="an index to measure (repeatable); default: build the sample's and the corpus's",
    )
    parser.add_argument(
        "--work",
        type=Path,
        default=Path(tempfile.gettempdir()) / "searchengine-corrections",
        help="where the built indexes are kept and reused",
    )
    parser.add_argument("--verbose", action="store_true", help="print each query's outcome")
    args = parser.parse_args()
    locations = args.index or [build(SAMPLE, args.work / "arxiv"), build(REPO / "corpus", args.work / "corpus")]
    for location in locations:
        measure(location, args.verbose)
    return 0


if __name__ == "__main__":
    sys.exit(main())
