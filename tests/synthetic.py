"""Generated arXiv metadata, for a checkout without ``../shared/data``.

The files have the layouts of the real samples (see ``shareddata.py``): the
arXiv listing's JSON lines, the Kaggle OAI snapshot's JSON lines and the two
layouts of arXiv API Atom feeds. Their text is made of the words of the
bundled ``corpus/`` (a word chain over its 24 abstracts), with a few topic
words per category so that category filters and the drills' probe queries
(``quantum``, ``galaxy``, ``robot`` ...) find something. Everything comes from
fixed seeds: the same call gives the same bytes on every machine, and listing
record ``i`` depends on ``i`` alone, so any slice can be made on its own.
"""

from __future__ import annotations

import json
import random
import re
from functools import cache
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

CORPUS = Path(__file__).resolve().parent.parent / "corpus"

# Records in the generated listing: as far as the drills read (the
# input-fuzzing drill reads records 60,000 to 65,050).
LISTING_SIZE = 70_000

# (category, weight as a primary category, topic words)
CATEGORIES = [
    ("cs.CV", 24, ["image segmentation", "diffusion models", "object detection", "video", "point clouds"]),
    ("cs.CL", 16, ["language models", "machine translation", "question answering", "attention"]),
    ("cs.AI", 10, ["reasoning", "planning", "agents", "knowledge graphs"]),
    ("cs.LG", 10, ["reinforcement learning", "neural network", "federated learning", "transformer"]),
    ("cs.DC", 6, ["GPU", "sparse matrix", "cluster scheduling", "benchmark"]),
    ("cs.RO", 4, ["robot", "motion control", "manipulation"]),
    ("cs.CR", 3, ["privacy", "adversarial attacks", "encryption"]),
    ("eess.SP", 3, ["spectral analysis", "signal denoising", "radar"]),
    ("stat.ML", 3, ["causal inference", "Bayesian optimization", "kernel methods"]),
    ("math.OC", 3, ["convex optimization", "optimal control", "gradient descent"]),
    ("quant-ph", 3, ["quantum circuits", "qubit", "entanglement"]),
    ("astro-ph.GA", 2, ["galaxy cluster", "galaxy", "redshift"]),
    ("q-bio.BM", 2, ["protein", "molecular dynamics", "folding"]),
    ("math.NA", 2, ["finite element", "spectral methods", "preconditioner"]),
    ("cs.SE", 2, ["program repair", "testing", "microservices"]),
    ("physics.flu-dyn", 1, ["turbulence", "Navier-Stokes", "boundary layer"]),
]
CLASS_CODES = ["I.2.7", "I.4.8", "68T07", "68U10, 90C26", "I.2.10", "F.2.2"]
FIRST_NAMES = [
    "Wei",
    "Jing",
    "Li",
    "Xin",
    "Yuki",
    "Hiroshi",
    "Min-jun",
    "Ji-woo",
    "Arjun",
    "Priya",
    "Anil",
    "Maria",
    "José",
    "François",
    "Zoë",
    "Björn",
    "Åsa",
    "Søren",
    "Jürgen",
    "Łukasz",
    "Małgorzata",
    "Tomáš",
    "Radek",
    "Ana",
    "João",
    "Chloé",
    "İlker",
    "Ayşe",
    "Mehmet",
    "Olga",
    "Dmitri",
    "Nikolai",
    "Fatima",
    "Omar",
    "Amara",
    "Kwame",
    "Sarah",
    "David",
    "Emily",
    "Michael",
    "Laura",
    "Thomas",
    "Élodie",
    "Núria",
    "Raúl",
    "Hélène",
    "Ngọc",
    "Thảo",
    "Depei",
    "Longbin",
]
LAST_NAMES = [
    "Wang",
    "Zhang",
    "Chen",
    "Liu",
    "Yang",
    "Huang",
    "Zhao",
    "Qian",
    "Zeng",
    "Tanaka",
    "Suzuki",
    "Kim",
    "Park",
    "Sharma",
    "Patel",
    "Gupta",
    "García",
    "Martínez",
    "Sánchez",
    "Müller",
    "Schäfer",
    "Weiß",
    "Dvořák",
    "Novák",
    "Kowalski",
    "Wójcik",
    "Øbro",
    "Ångström",
    "Lefèvre",
    "Dubois",
    "Gonçalves",
    "Çelik",
    "Yılmaz",
    "Nguyễn",
    "Trần",
    "Ivanov",
    "Petrović",
    "O'Brien",
    "D'Angelo",
    "Smith",
    "Johnson",
    "Brown",
    "Del Maestro",
    "van der Berg",
    "Okafor",
    "Mensah",
    "Haddad",
    "Rossi",
    "Bianchi",
    "Šrámek",
]
# TeX spellings, as the OAI snapshot writes accented names in its "authors" string.
TEX_LETTERS = {
    "á": "\\'a",
    "é": "\\'e",
    "í": "\\'i",
    "ó": "\\'o",
    "ú": "\\'u",
    "ä": '\\"a',
    "ö": '\\"o',
    "ü": '\\"u',
    "è": "\\`e",
    "ç": "\\c{c}",
    "č": "\\v{c}",
    "ř": "\\v{r}",
    "š": "\\v{s}",
    "Š": "\\v{S}",
    "ß": "\\ss{}",
    "ø": "\\o{}",
    "Ø": "\\O{}",
    "å": "\\aa{}",
    "Å": "\\AA{}",
}
COMMENTS = [
    "12 pages, 5 figures",
    "Accepted at CVPR 2025",
    "Work in progress",
    "Camera-ready version",
    "8 pages, 3 tables; code available",
    "Submitted to a journal",
    "25 pages, 10 figures, 4 tables",
]
# Months of the generated new-style ids (2023-01 to 2026-06) and of a few older ids.
MONTHS = [f"{year % 100:02d}{month:02d}" for year in range(2023, 2027) for month in range(1, 13)][:42]
OLD_MONTHS = [f"{year % 100:02d}{month:02d}" for year in range(2008, 2015) for month in range(1, 13)]


# --- words -------------------------------------------------------------------------

# Sentences walked once along the corpus's word chain; records are made of them
# (walking the chain per record takes ten times as long).
POOL_SENTENCES = 8_000


def pick(rng: random.Random, items: list):
    """``rng.choice`` without its checks."""
    return items[int(rng.random() * len(items))]


def wrap(text: str, width: int = 79) -> str:
    """Hard line wraps as arXiv writes them."""
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return "\n".join(lines + [line])


@cache
def sentences() -> tuple[list[str], list[str]]:
    """Sentences of the corpus's word chain, and short ones (5 to 12 words) for titles.

    The chain links each word of the corpus abstracts to the words that follow
    it there; the abstracts are read by the author pages' layout (``arXivYYYY``,
    title, abstract), not by the product's reader.
    """
    follows: dict[str, list[str]] = {}
    starts: list[str] = []
    for page in sorted(CORPUS.glob("*.txt")):
        lines = [line.strip() for line in page.read_text(encoding="utf-8").splitlines() if line.strip()]
        for number, line in enumerate(lines):
            if re.fullmatch(r"arXiv\s*\d{4}", line):
                words = lines[number + 2].split()
                starts.append(words[0])
                for word, after in zip(words, words[1:]):
                    follows.setdefault(word, []).append(after)
                    if word.endswith("."):
                        starts.append(after)
    rng = random.Random("sentences")

    def walk(most: int) -> list[str]:
        words = [pick(rng, starts)]
        while not words[-1].endswith(".") and len(words) < most:
            words.append(pick(rng, follows.get(words[-1]) or starts))
        return words

    long = [" ".join(walk(35)).rstrip(".,;:") + "." for _ in range(POOL_SENTENCES)]
    short = [" ".join(walk(rng.randint(5, 12))).rstrip(".,;:") for _ in range(POOL_SENTENCES // 4)]
    return long, short


def with_topic(rng: random.Random, text: str, topic: str) -> str:
    """``text`` with ``topic`` put in after one of its words."""
    words = text.split(" ")
    words.insert(rng.randrange(1, len(words) + 1), topic)
    return " ".join(words)


def title(rng: random.Random, topic: str) -> str:
    text = pick(rng, sentences()[1])
    if rng.random() < 0.6:
        text = with_topic(rng, text, topic)
    return text[0].upper() + text[1:]


def abstract(rng: random.Random, topics: list[str]) -> str:
    pool = sentences()[0]
    parts, size, length = [], rng.randint(600, 1800), 0
    while length < size:
        part = pick(rng, pool)
        if rng.random() < 0.4:
            part = with_topic(rng, part[:-1], pick(rng, topics)) + "."
        parts.append(part)
        length += len(part) + 1
    return " ".join(parts)


def author(rng: random.Random) -> tuple[str, str]:
    """(first name or initials, last name)."""
    first = rng.choice(FIRST_NAMES)
    if rng.random() < 0.15:
        first = first[0] + "."
    return first, rng.choice(LAST_NAMES)


def authors(rng: random.Random) -> list[tuple[str, str]]:
    count = rng.choice([1, 2, 2, 3, 3, 3, 4, 4, 5, 6, 8]) if rng.random() > 0.005 else rng.randint(30, 120)
    found: dict[tuple[str, str], None] = {}
    while len(found) < count:
        found.setdefault(author(rng), None)
    return list(found)


def categories(rng: random.Random) -> list[str]:
    names = [name for name, _, _ in CATEGORIES]
    chosen = rng.choices(names, weights=[weight for _, weight, _ in CATEGORIES])
    for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
        other = rng.choice(names)
        if other not in chosen:
            chosen.append(other)
    return chosen


def topics_of(codes: list[str]) -> list[str]:
    table = {name: words for name, _, words in CATEGORIES}
    return [word for code in codes for word in table.get(code, [])]


# --- the arXiv listing (JSON lines) ------------------------------------------------------


def listing_id(number: int, rng: random.Random) -> str:
    """A unique id per record number: mostly new style (``2503.01234``), a few older (``1207.4321``)."""
    if number % 500 == 499:
        step = number // 500
        return f"{OLD_MONTHS[step % len(OLD_MONTHS)]}.{step // len(OLD_MONTHS) * 97 + 1000 + rng.randrange(97):04d}"
    return f"{MONTHS[number % len(MONTHS)]}.{number // len(MONTHS) * 7 + 1 + rng.randrange(7):05d}"


def listing_record(number: int) -> dict:
    """Listing record ``number``, as one object of the listing's JSON lines."""
    rng = random.Random(f"listing-{number}")
    arxiv_id = listing_id(number, rng)
    codes = categories(rng)
    topics = topics_of(codes)
    record_categories = codes + ([rng.choice(CLASS_CODES)] if rng.random() < 0.03 else [])
    return {
        "id": arxiv_id,
        "pdf": f"https://arxiv.org/pdf/{arxiv_id}",
        "abs": f"https://arxiv.org/abs/{arxiv_id}",
        "authors": [f"{first} {last}" for first, last in authors(rng)],
        "title": title(rng, rng.choice(topics)),
        "categories": record_categories,
        "comment": rng.choice(COMMENTS) if rng.random() < 0.5 else None,
        # The listing keeps arXiv's hard line wraps.
        "summary": wrap(abstract(rng, topics)),
    }


def listing_lines(count: int, start: int = 0) -> list[str]:
    """Lines ``start .. start+count`` of the generated listing (to its end if ``count`` is 0)."""
    end = LISTING_SIZE if count == 0 else min(start + count, LISTING_SIZE)
    return [json.dumps(listing_record(number), ensure_ascii=False) + "\n" for number in range(start, end)]


# --- the Kaggle OAI snapshot (JSON lines) ------------------------------------------------------


def tex(name: str) -> str:
    return "".join(TEX_LETTERS.get(letter, letter) for letter in name)


def oai_record(number: int) -> dict:
    """Record ``number`` (from 1) of the OAI sample: ids ``0704.0001`` on, as in the snapshot."""
    rng = random.Random(f"oai-{number}")
    codes = categories(rng)
    names = authors(rng)[:12]
    # v1 in 2007 (the year the reader takes), later versions a year apart; the
    # first record has two, as in the snapshot.
    count = 2 if number == 1 else rng.choice([1, 1, 2, 2, 3])
    versions = [
        {
            "version": f"v{n}",
            "created": f"Mon, {rng.randint(1, 28)} Apr {2006 + n} {rng.randint(10, 23)}:"
            f"{rng.randint(10, 59)}:{rng.randint(10, 59)} GMT",
        }
        for n in range(1, count + 1)
    ]
    return {
        "id": f"0704.{number:04d}",
        "submitter": " ".join(names[0]),
        "authors": ", ".join(f"{first} {tex(last)}" for first, last in names),
        # The snapshot wraps titles and abstracts ("\n  " inside a title).
        "title": wrap(title(rng, rng.choice(topics_of(codes))), 70).replace("\n", "\n  "),
        "comments": rng.choice(COMMENTS) if rng.random() < 0.6 else None,
        "journal-ref": None,
        "doi": None,
        "report-no": None,
        "categories": " ".join(codes),
        "license": None,
        "abstract": "  " + wrap(abstract(rng, topics_of(codes))) + "\n",
        "versions": versions,
        "update_date": f"2008-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
        "authors_parsed": [[last, first, ""] for first, last in names],
    }


# --- arXiv API Atom feeds --------------------------------------------------------------


def atom_feed(name: str, count: int, *, old_layout: bool, taken: set[str]) -> str:
    """A feed of ``count`` entries in the API's older layout (namespaces on each element,
    abstracts wrapped over lines) or its newer one (namespaces on ``<feed>``, one line).

    Its ids are new ones, not in ``taken``; they are added to it.
    """
    rng = random.Random(f"atom-{name}")
    head = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">\n'
        if old_layout
        else "<?xml version='1.0' encoding='UTF-8'?>\n<feed xmlns:opensearch=\"http://a9.com/-/spec/opensearch/1.1/\" "
        'xmlns:arxiv="http://arxiv.org/schemas/atom" xmlns="http://www.w3.org/2005/Atom">\n'
    )
    # The older layout declares the namespaces on each element that uses them.
    arxiv_ns = ' xmlns:arxiv="http://arxiv.org/schemas/atom"' if old_layout else ""
    opensearch_ns = ' xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/"' if old_layout else ""
    lines = [
        head.rstrip("\n"),
        f"  <title>arXiv Query: {escape(name)}</title>",
        f"  <id>http://arxiv.org/api/{rng.randrange(16**12):012x}</id>",
        f"  <opensearch:totalResults{opensearch_ns}>{count}</opensearch:totalResults>",
    ]
    entries = 0
    while entries < count:
        year = rng.randint(2004, 2014) if old_layout else rng.randint(2015, 2025)
        month = rng.randint(1, 12)
        if year < 2007:
            arxiv_id = (
                f"{rng.choice(['cond-mat', 'hep-th', 'quant-ph'])}/{year % 100:02d}{month:02d}{rng.randint(1, 999):03d}"
            )
        elif year < 2015:
            arxiv_id = f"{year % 100:02d}{month:02d}.{rng.randint(1, 9999):04d}"
        else:
            arxiv_id = f"{year % 100:02d}{month:02d}.{rng.randint(1, 29999):05d}"
        if arxiv_id in taken:
            continue
        taken.add(arxiv_id)
        entries += 1
        version = f"v{rng.randint(1, 3)}"
        codes = categories(rng)
        topics = topics_of(codes)
        date = f"{year}-{month:02d}-{rng.randint(1, 28):02d}T{rng.randint(10, 23)}:15:02Z"
        text = abstract(rng, topics)
        summary = ("  " + wrap(text) + "\n") if old_layout else text
        lines += [
            "  <entry>",
            f"    <id>http://arxiv.org/abs/{arxiv_id}{version}</id>",
            f"    <updated>{date}</updated>",
            f"    <published>{date}</published>",
            f"    <title>{escape(title(rng, rng.choice(topics)))}</title>",
            f"    <summary>{escape(summary)}</summary>",
        ]
        for first, last in authors(rng)[:10]:
            lines += ["    <author>", f"      <name>{escape(first + ' ' + last)}</name>", "    </author>"]
        if rng.random() < 0.5:
            lines.append(f"    <arxiv:comment{arxiv_ns}>{escape(rng.choice(COMMENTS))}</arxiv:comment>")
        lines += [
            f'    <link href="http://arxiv.org/abs/{arxiv_id}{version}" rel="alternate" type="text/html"/>',
            f'    <link title="pdf" href="http://arxiv.org/pdf/{arxiv_id}{version}" rel="related" '
            'type="application/pdf"/>',
            f"    <arxiv:primary_category{arxiv_ns} term={quoteattr(codes[0])}/>",
        ]
        lines += [f'    <category term={quoteattr(code)} scheme="http://arxiv.org/schemas/atom"/>' for code in codes]
        lines.append("  </entry>")
    lines.append("</feed>")
    return "\n".join(lines) + "\n"


def write_samples(folder: Path) -> tuple[Path, Path, Path, Path]:
    """Write an OAI sample of 200 records and Atom feeds of 1 and 10 entries (older
    layout) and 100 entries (newer layout) to ``folder``, as the real samples go:
    no id is in two of them. Returns their paths in that order."""
    atom = folder / "atom"
    atom.mkdir(parents=True, exist_ok=True)
    oai = [oai_record(number) for number in range(1, 201)]
    paths = [folder / "oai.jsonl", atom / "old-layout-1.xml", atom / "old-layout-10.xml", atom / "new-layout-100.xml"]
    paths[0].write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in oai), encoding="utf-8")
    taken = {record["id"] for record in oai}
    for path, (query, count, old_layout) in zip(
        paths[1:], [("id_list=one", 1, True), ("au:someone", 10, True), ("all:testing", 100, False)]
    ):
        path.write_text(atom_feed(query, count, old_layout=old_layout, taken=taken), encoding="utf-8")
    return paths[0], paths[1], paths[2], paths[3]
