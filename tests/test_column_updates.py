"""An update's column file, assembled from its base generation's (columnmerge).

Each check compares the assembled file with the arrays a full build of the
same generation gives (columns.build_arrays), by the values they stand for:
value ids may differ, the strings, orders and documents may not.
"""

import json
import random
from pathlib import Path

import numpy as np
import pytest

from searchengine import build_index, open_index, remove_documents, update_index
from searchengine.engines.whoosh import columnmerge, columns, store
from searchengine.engines.whoosh.columns import COLUMNS_FILE

SURNAMES = ["Qian", "Zeng", "Müller", "van der Berg", "Okafor", "Tanaka", "Li", "García", "Nowak", "Smith"]
GIVEN = ["Ada", "Depei", "Longbin", "Jan", "Chidi", "Yuki", "Wei", "María", "Ola", "John"]
WORDS = "sparse matrix kernel graph tensor solver gpu cache vector lattice quantum spectral".split()
CATEGORIES = ["cs.DC", "cs.LG", "math.NA", "hep-th", "quant-ph", "cs.PF"]


def records(count: int, seed: int, start: int = 0, prefix: str = "u") -> list[dict]:
    """``count`` records with ids ``{prefix}{start}``..., names drawn from a small
    pool (so that names and keys repeat), a date, only a year, or neither."""
    rng = random.Random(seed)
    made = []
    for number in range(start, start + count):
        when = rng.random()
        record = {
            "id": f"{prefix}{number:05d}",
            "title": " ".join(rng.choice(WORDS) for _ in range(4)).capitalize(),
            "abstract": " ".join(rng.choice(WORDS) for _ in range(20)),
            "authors": [f"{rng.choice(GIVEN)} {rng.choice(SURNAMES)}" for _ in range(rng.randint(0, 3))],
            "categories": rng.sample(CATEGORIES, rng.randint(0, 2)),
        }
        if when < 0.6:
            record["submitted"] = f"20{rng.randint(10, 24)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        elif when < 0.9:
            record["year"] = rng.randint(2005, 2024)
        made.append(record)
    return made


def write(path: Path, made: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in made), encoding="utf-8")
    return path


def generation_arrays(index_dir: Path):
    """``(the column file's arrays, a full build's arrays, live document numbers)``."""
    generation = store.current_generation(index_dir)
    with store.open_generation(generation).reader() as reader:
        stored = columns.map_columns(generation / COLUMNS_FILE, reader)
        assert stored is not None
        stored = {name: np.asarray(values) for name, values in stored.items()}
        full = columns.build_arrays(reader)
        live = [doc for doc in range(reader.doc_count_all()) if not reader.is_deleted(doc)]
    return stored, full, live


def strings(arrays, table: str) -> list[str]:
    return columns._strings(arrays, table)


def per_document(arrays, column: str) -> list[list[str]]:
    names, offsets, values = strings(arrays, column), arrays[column + ".offsets"], arrays[column + ".values"]
    return [[names[v] for v in values[offsets[d] : offsets[d + 1]]] for d in range(len(offsets) - 1)]


def keyed_names(arrays) -> dict[str, set[str]]:
    """Author key → the names having it that some document holds."""
    names, keys = strings(arrays, "author"), strings(arrays, "author_key")
    held = {names[v] for v in arrays["author.values"]}
    offsets, values = arrays["author_key.offsets"], arrays["author_key.values"]
    found = {key: {names[v] for v in values[offsets[k] : offsets[k + 1]]} & held for k, key in enumerate(keys)}
    return {key: found_names for key, found_names in found.items() if found_names}


def assert_same_meaning(stored, full, live) -> None:
    for name in columns.NUMBER_COLUMNS:
        assert stored[name].tolist() == full[name].tolist(), name
    for column in columns.SET_COLUMNS:
        assert per_document(stored, column) == per_document(full, column), column
        # Each name's rank: the same string order over the names both hold.
        ranked = {
            which: sorted(
                strings(arrays, column), key=dict(zip(strings(arrays, column), arrays[column + ".name_rank"])).get
            )
            for which, arrays in (("stored", stored), ("full", full))
        }
        common = set(ranked["full"])
        assert [n for n in ranked["stored"] if n in common] == ranked["full"], column
    for sort in columns.SORT_ORDERS:
        in_order = {
            which: [d for d in np.argsort(arrays["order." + sort]).tolist() if d in set(live)]
            for which, arrays in (("stored", stored), ("full", full))
        }
        assert in_order["stored"] == in_order["full"], sort
    assert keyed_names(stored) == keyed_names(full)
    names = {which: strings(arrays, "author") for which, arrays in (("stored", stored), ("full", full))}
    for part in ("all", "first"):
        docs = {}
        for which, arrays in (("stored", stored), ("full", full)):
            offsets, held = arrays[f"author.{part}_offsets"], arrays[f"author.{part}_docs"]
            docs[which] = {
                name: held[offsets[v] : offsets[v + 1]].tolist()
                for v, name in enumerate(names[which])
                if offsets[v + 1] > offsets[v]
            }
        assert docs["stored"] == docs["full"], part
    for name in ("spelling.names", "vocabulary.title", "vocabulary.abstract", "vocabulary.authors"):
        assert stored[name].tobytes() == full[name].tobytes(), name


@pytest.fixture
def index_dir(tmp_path):
    folder = tmp_path / "index"
    build_index([write(tmp_path / "base.jsonl", records(600, seed=1))], folder, jobs=1)
    return folder


def test_an_update_assembles_the_column_file_from_its_base(index_dir, tmp_path, monkeypatch):
    new = records(40, seed=2, start=600)  # new papers, some with names the index has not seen
    new[0]["authors"] = ["Hiroshi Ōkubo", "Longbin Zeng"]
    replaced = records(25, seed=3, start=100)  # new versions: other titles, names, dates
    update = write(tmp_path / "update.jsonl", new + replaced)

    def full_build(*args, **kwargs):
        raise AssertionError("the update's column file was built from every document")

    with monkeypatch.context() as patched:
        patched.setattr(columns, "build_arrays", full_build)
        update_index([update], index_dir, jobs=1)
    stored, full, live = generation_arrays(index_dir)
    assert len(live) == 640 and len(stored["order.newest"]) == 665  # the 25 old versions kept, deleted
    assert_same_meaning(stored, full, live)
    index = open_index(index_dir)
    try:
        found = index.search("", author="Okubo", limit=5)
        assert [hit.id for hit in found.hits] == ["u00600"]
        zeng = sum(1 for d in live if any(name.endswith(" Zeng") for name in per_document(full, "author")[d]))
        assert zeng > 50 and index.search("", author="Zeng").total == zeng
    finally:
        index.close()


def test_a_second_update_and_a_removal_build_on_the_assembled_file(index_dir, tmp_path):
    update_index([write(tmp_path / "one.jsonl", records(30, seed=4, start=700))], index_dir, jobs=1)
    update_index([write(tmp_path / "two.jsonl", records(30, seed=5, start=50))], index_dir, jobs=1)
    remove_documents(["u00010", "u00011"], index_dir)
    stored, full, live = generation_arrays(index_dir)
    assert len(live) == 628
    assert_same_meaning(stored, full, live)


def test_a_base_file_without_segments_or_of_other_name_keys_seeds_nothing(index_dir, tmp_path, monkeypatch):
    generation = store.current_generation(index_dir)
    assert columnmerge.base_segments(generation / COLUMNS_FILE) is not None
    old, other = tmp_path / "old", tmp_path / "other"
    old.mkdir(), other.mkdir()
    with store.open_generation(generation).reader() as reader:
        with monkeypatch.context() as patched:  # as written before segments were recorded
            patched.setattr(columns, "segments_of", lambda reader: [])
            columns.write_columns(old, reader)
        with monkeypatch.context() as patched:  # by a version that keys names otherwise
            patched.setattr(columns, "name_keys_fingerprint", lambda: 7)
            columns.write_columns(other, reader)
        assert columnmerge.base_segments(old / COLUMNS_FILE) is None
        assert columnmerge.base_segments(other / COLUMNS_FILE) is None
        assert columnmerge.merged_arrays(np, reader, old / COLUMNS_FILE) is None
