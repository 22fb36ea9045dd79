import pytest

from searchengine import InputError, build_index, open_index
from searchengine.engines.whoosh import store

from conftest import CORPUS, write

CB_SPMV = "CB-SpMV:A Data Aggregating and Balance Algorithm for Cache-Friendly Block-Based SpMV on GPUs"

SECOND_PAGE = """arXiv subjects

Ada Lovelace

Publications and source records attributed to Ada Lovelace.

2 recordsLinked to original sources

arXiv2026

CB-SpMV: A Data Aggregating and  Balance Algorithm for Cache-Friendly Block-Based SpMV on GPUs

Same paper, listed again on a second author's page.

cs.PF↗

arXiv2024

Analytical Engines Revisited

An abstract about engines.

cs.DC↗
"""


def test_corpus_builds_24_documents(corpus_index):
    assert corpus_index.doc_count == 24


def test_paper_on_two_pages_is_one_document_with_both_authors(tmp_path):
    extra = write(tmp_path / "pages" / "lovelace.txt", SECOND_PAGE)
    summary = build_index([CORPUS, extra], tmp_path / "index")
    assert (summary.documents, summary.records, summary.merged) == (25, 26, 1)
    index = open_index(tmp_path / "index")
    hits = index.search("Cache-Friendly Block-Based").hits
    assert [h.title for h in hits] == [CB_SPMV]
    assert hits[0].authors == ["Depei Qian", "Ada Lovelace"]
    assert hits[0].categories == ["cs.DC", "cs.PF"]


def test_reindexing_keeps_ids_and_replaces_the_generation(tmp_path):
    first = build_index([CORPUS], tmp_path)
    gen_one = store.current_generation(tmp_path)
    ids_one = {h.id for h in open_index(tmp_path).search("GPU", limit=100).hits}
    second = build_index([CORPUS], tmp_path)
    gen_two = store.current_generation(tmp_path)
    ids_two = {h.id for h in open_index(tmp_path).search("GPU", limit=100).hits}
    assert first.documents == second.documents == 24
    assert gen_one != gen_two and ids_one == ids_two and len(ids_one) == 12
    # The previous generation stays for readers that still have it open.
    assert sorted(p.name for p in tmp_path.glob("gen-*")) == sorted([gen_one.name, gen_two.name])


def test_nothing_to_index_leaves_the_existing_index_untouched(tmp_path):
    build_index([CORPUS], tmp_path / "index")
    before = store.current_generation(tmp_path / "index")
    empty = write(tmp_path / "empty.jsonl", "\n")
    with pytest.raises(InputError, match="nothing to index"):
        build_index([empty], tmp_path / "index")
    assert store.current_generation(tmp_path / "index") == before
    assert open_index(tmp_path / "index").doc_count == 24


def test_missing_input_path_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no-such-dir: no such file or directory"):
        build_index([tmp_path / "no-such-dir"], tmp_path / "index")
    assert store.current_generation(tmp_path / "index") is None


def test_unfinished_generation_of_a_killed_build_is_cleaned_by_the_next(tmp_path):
    build_index([CORPUS], tmp_path)
    leftover = store.new_generation(tmp_path)
    (leftover / "partial.seg").write_bytes(b"half")
    build_index([CORPUS], tmp_path)
    assert not leftover.exists()
    assert open_index(tmp_path).doc_count == 24


def test_a_record_without_an_abstract_is_indexed_with_a_note(tmp_path):
    write(
        tmp_path / "p.jsonl",
        '{"id": "t-000000000001", "title": "Qubit routing"}\n'
        '{"id": "t-000000000002", "title": "Qubit mapping", "abstract": "We map."}\n',
    )
    summary = build_index([tmp_path / "p.jsonl"], tmp_path / "ix")
    assert (summary.documents, summary.skipped, summary.without_abstract, summary.problems) == (2, 0, 1, [])
    assert summary.to_dict()["without_abstract"] == 1
    assert [hit.id for hit in open_index(tmp_path / "ix").search("qubit routing").hits] == ["t-000000000001"]


def test_a_folder_of_other_files_is_never_taken_over(tmp_path):
    folder = tmp_path / "mine"
    (folder / "gen-mydata").mkdir(parents=True)
    write(folder / "gen-mydata" / "important.txt", "keep me")
    write(folder / "notes.txt", "and me")
    with pytest.raises(
        InputError,
        match=r"mine holds other files \(gen-mydata, notes.txt\) and no index: name an "
        r"empty or new folder for the index \(nothing was written\)",
    ):
        build_index([CORPUS], folder)
    assert sorted(p.name for p in folder.iterdir()) == ["gen-mydata", "notes.txt"]
    # a folder holding only hidden files (.gitkeep) is an index's
    empty = tmp_path / "index"
    write(empty / ".gitkeep", "")
    assert build_index([CORPUS], empty).documents == 24


def test_only_generations_are_cleaned_up_from_an_index_folder(tmp_path):
    build_index([CORPUS], tmp_path / "ix")
    (tmp_path / "ix" / "gen-mine").mkdir()
    build_index([CORPUS], tmp_path / "ix")
    build_index([CORPUS], tmp_path / "ix")
    assert (tmp_path / "ix" / "gen-mine").is_dir()
