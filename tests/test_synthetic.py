"""The generated arXiv data (``synthetic.py``) that tests read on a checkout without
../shared/data: formats the readers recognise, and the shapes the tests rely on.

Run everywhere, so that CI, which has the real data, checks the generated data too.
"""

import json
import random

from searchengine.readers import detect_format, read_records
from searchengine.readers.arxivlisting import NO_DATES

import synthetic


def read(path):
    problems = []
    records = list(read_records([path], problems))
    return records, problems


def test_generated_listing_is_read_as_the_listing_without_problems(tmp_path):
    path = tmp_path / "listing.jsonl"
    lines = synthetic.listing_lines(500)
    path.write_text("".join(lines), encoding="utf-8")
    assert detect_format(path) == "arxiv-listing"
    records, problems = read(path)
    # Generated without a table of listing dates: said once, for the file.
    assert (
        [str(p) for p in problems] == [f"{path}:0: {NO_DATES}"]
        and len(records) == 500
        and len({r.id for r in records}) == 500
    )
    assert all(r.title and r.abstract and r.authors and r.categories for r in records)
    assert {r.year for r in records} >= {2023, 2024, 2025, 2026}
    assert any(not name.isascii() for r in records for name in r.authors)
    # Every line has the listing's keys, in its order; class codes are dropped on reading.
    objects = [json.loads(line) for line in lines]
    assert {tuple(o) for o in objects} == {("id", "pdf", "abs", "authors", "title", "categories", "comment", "summary")}
    with_codes = [n for n, o in enumerate(objects) if any(c in synthetic.CLASS_CODES for c in o["categories"])]
    assert with_codes and all(set(records[n].categories) < set(objects[n]["categories"]) for n in with_codes)


def test_a_slice_of_the_listing_is_made_on_its_own():
    assert synthetic.listing_lines(5, 300) == synthetic.listing_lines(305)[300:]
    assert synthetic.listing_lines(3, synthetic.LISTING_SIZE - 1) == synthetic.listing_lines(
        0, synthetic.LISTING_SIZE - 1
    )
    assert len(synthetic.listing_lines(3, synthetic.LISTING_SIZE - 1)) == 1


def test_listing_ids_are_unique_over_the_whole_listing():
    rng = random.Random(1)
    ids = [synthetic.listing_id(number, rng) for number in range(synthetic.LISTING_SIZE)]
    assert len(set(ids)) == synthetic.LISTING_SIZE


def test_generated_samples_have_the_shapes_of_the_real_ones(tmp_path):
    oai, atom_one, atom_old, atom_new = synthetic.write_samples(tmp_path)
    assert detect_format(oai) == "arxiv-oai"
    records, problems = read(oai)
    assert problems == [] and [r.id for r in records] == [f"0704.{n:04d}" for n in range(1, 201)]
    assert records[0].version == 2 and {r.year for r in records} == {2007}
    atom_ids = []
    for path, count in ((atom_one, 1), (atom_old, 10), (atom_new, 100)):
        assert detect_format(path) == "arxiv-atom"
        records, problems = read(path)
        assert problems == [] and len(records) == count
        atom_ids += [r.id for r in records]
    assert len(set(atom_ids)) == 111 and not set(atom_ids) & {f"0704.{n:04d}" for n in range(1, 201)}
    # The older layout wraps abstracts over lines, the newer keeps each on one.
    assert "<summary>" in atom_old.read_text() and "\n</summary>" in atom_old.read_text()
    assert all("</summary>" in line for line in atom_new.read_text().splitlines() if "<summary>" in line)
