"""Versions and duplicates, ``index --update`` and ``remove``.

The OAI and Atom samples are the real ones in ../shared/data, or generated
files of the same shapes (``shareddata.arxiv_samples``): 200 OAI records with
ids 0704.0001 to 0704.0200, the first at version 2, and Atom feeds of 1, 10
and 100 entries whose ids are not among them.
"""

import json
import re

import pytest
from click.testing import CliRunner

from searchengine import IndexNotFoundError, build_index, open_index
from searchengine.cli import main
from searchengine.engines.whoosh import integrity, store
from searchengine.engines.whoosh.writer import IDS_UNIQUE
from searchengine.indexer import remove_documents, update_index

from conftest import CORPUS, write
from shareddata import arxiv_samples


def jsonl(path, *records):
    return write(path, "".join(json.dumps(r) + "\n" for r in records))


def titles(index, query):
    return sorted(h.title for h in index.search(query, limit=100).hits)


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    return arxiv_samples(tmp_path_factory.mktemp("samples"))


@pytest.fixture(scope="module")
def oai(samples):
    return samples.oai


def first_title(oai) -> str:
    """The title of the sample's first record (0704.0001), hard line wraps collapsed."""
    return " ".join(json.loads(oai.read_text(encoding="utf-8").splitlines()[0])["title"].split())


@pytest.fixture(scope="module")
def oai_index(oai, tmp_path_factory):
    """An index of the 200 OAI records, built once; tests copy it before changing it."""
    path = tmp_path_factory.mktemp("oai") / "index"
    assert build_index([oai], path).documents == 200
    return path


@pytest.fixture
def index_copy(oai_index, tmp_path):
    import shutil

    shutil.copytree(oai_index, tmp_path / "index")
    return tmp_path / "index"


def test_versions_of_one_paper_are_one_document_and_the_latest_wins(tmp_path):
    source = jsonl(
        tmp_path / "v.jsonl",
        {"id": "2101.00003v2", "title": "Second version title", "authors": ["B"]},
        {"id": "2101.00003", "title": "Unversioned copy", "authors": ["C"]},
        {"id": "2101.00003v1", "title": "First version title", "authors": ["A"]},
        {"id": "2101.00004", "title": "Another paper", "authors": ["D"]},
        {"id": "2101.00004", "title": "Another paper again", "authors": ["E"]},
    )
    summary = build_index([source], tmp_path / "index")
    assert (summary.documents, summary.records, summary.merged) == (2, 5, 3)
    index = open_index(tmp_path / "index")
    hits = index.search("id:2101.00003").hits
    assert [(h.id, h.title, h.authors) for h in hits] == [("2101.00003", "Second version title", ["B"])]
    # Equal (no) versions merge: first-seen fields, authors of both.
    hits = index.search("id:2101.00004").hits
    assert [(h.title, h.authors) for h in hits] == [("Another paper", ["D", "E"])]


def test_reindexing_the_same_input_keeps_the_count(oai, index_copy, tmp_path):
    again = update_index([oai], index_copy)
    assert (again.documents, again.added, again.replaced, again.skipped) == (200, 0, 200, 0)
    assert build_index([oai], index_copy).documents == 200
    assert open_index(index_copy).doc_count == 200


def test_update_adds_new_documents_and_replaces_by_id(samples, index_copy, tmp_path):
    before = store.current_generation(index_copy)
    # The three longest words of the v2 title find it, until v3 replaces it.
    old_title = first_title(samples.oai)
    words = " ".join(sorted(re.findall(r"[A-Za-z]{4,}", old_title), key=len, reverse=True)[:3])
    index = open_index(index_copy)
    assert old_title in titles(index, words)
    index.close()
    summary = update_index([samples.atom_folder], index_copy)
    # 1 + 10 + 100 entries, none with an id of the OAI sample.
    assert (summary.records, summary.added, summary.replaced, summary.documents) == (111, 111, 0, 311)
    # The generation readers had open before the update is unchanged, and kept.
    from whoosh import index as whoosh_index

    assert whoosh_index.open_dir(str(before)).doc_count() == 200
    newer = jsonl(tmp_path / "newer.jsonl", {"id": "0704.0001v3", "title": "Diphoton production revisited"})
    summary = update_index([newer], index_copy)
    assert (summary.added, summary.replaced, summary.documents) == (0, 1, 311)
    index = open_index(index_copy)
    assert [h.title for h in index.search("id:0704.0001").hits] == ["Diphoton production revisited"]
    assert old_title not in titles(index, words)  # the replaced v2 title is gone
    # Only the current and the previous generation are kept.
    assert len(list(index_copy.glob("gen-*"))) == 2 and not before.exists()
    # Every file of the new generation belongs to a segment its table of contents names
    # (but the facet and sort columns, one file for all segments, and the layout's number).
    from searchengine.engines.whoosh.columns import COLUMNS_FILE

    current = store.current_generation(index_copy)
    segments = {s.segment_id() for s in whoosh_index.open_dir(str(current))._segments()}
    assert (current / COLUMNS_FILE).is_file()
    assert (current / store.LAYOUT_FILE).read_text() == f"{store.LAYOUT}\n"
    files = {p.name for p in current.iterdir()} - {
        "MAIN_WRITELOCK",
        COLUMNS_FILE,
        store.LAYOUT_FILE,
        "CHECKSUMS",
        "VERIFIED",
        IDS_UNIQUE,
    }
    tocs = {name for name in files if name.startswith("_MAIN_")}
    assert len(tocs) == 1 and files - tocs and all(name.split(".")[0] in segments for name in files - tocs), sorted(
        files
    )


def test_an_older_version_does_not_replace_a_newer_one(oai, index_copy, tmp_path):
    older = jsonl(tmp_path / "older.jsonl", {"id": "0704.0001v1", "title": "Old title"})
    summary = update_index([older], index_copy)
    assert (summary.added, summary.replaced, summary.documents) == (0, 0, 200)
    assert [str(p) for p in summary.problems] == [f"{older}:1: 0704.0001 v1 is older than the indexed v2 (skipped)"]
    assert [h.title for h in open_index(index_copy).search("id:0704.0001").hits] == [first_title(oai)]


def test_update_repairs_an_id_the_index_holds_twice(index_copy, tmp_path):
    from whoosh import index as whoosh_index

    from searchengine.engines.whoosh.schema import document_fields
    from searchengine.records import Record

    ix = whoosh_index.open_dir(str(store.current_generation(index_copy)))
    writer = ix.writer()
    writer.add_document(**document_fields(Record(id="0704.0005", title="Injected copy", version=9)))
    writer.commit()
    generation = store.current_generation(index_copy)
    (generation / "facet.columns").unlink()  # (its documents changed)
    (generation / IDS_UNIQUE).unlink()  # an index of an older version has no mark
    integrity.write_checksums(generation)  # as if the index was written so
    assert len(open_index(index_copy).search("id:0704.0005").hits) == 2
    unrelated = jsonl(tmp_path / "one.jsonl", {"id": "2101.00001", "title": "Unrelated"})
    summary = update_index([unrelated], index_copy)
    assert (summary.added, summary.replaced, summary.documents) == (1, 1, 201)
    # The copy with the higher version is kept.
    assert [h.title for h in open_index(index_copy).search("id:0704.0005").hits] == ["Injected copy"]
    assert (store.current_generation(index_copy) / IDS_UNIQUE).exists()


def test_an_index_marked_with_unique_ids_is_not_scanned_for_copies(index_copy, tmp_path, monkeypatch):
    from whoosh.reading import IndexReader

    assert (store.current_generation(index_copy) / IDS_UNIQUE).exists()  # written by the build
    scanned = []
    real = IndexReader.iter_field
    monkeypatch.setattr(IndexReader, "iter_field", lambda self, name, *a: scanned.append(name) or real(self, name, *a))
    newer = jsonl(tmp_path / "newer.jsonl", {"id": "0704.0003v9", "title": "A newer version"})
    summary = update_index([newer], index_copy)
    assert (summary.added, summary.replaced, summary.documents) == (0, 1, 200)
    assert "id" not in scanned
    assert (store.current_generation(index_copy) / IDS_UNIQUE).exists()
    assert [h.title for h in open_index(index_copy).search("id:0704.0003").hits] == ["A newer version"]


def test_update_without_an_index_builds_one(oai, tmp_path):
    summary = update_index([oai], tmp_path / "new")
    assert (summary.documents, summary.added) == (200, 200)


def test_remove_by_id_with_or_without_version(index_copy):
    summary = remove_documents(["0704.0001v2", "0704.0002", "0704.0002", "9999.99999"], index_copy)
    assert (summary.removed, summary.not_found, summary.documents) == (2, ["9999.99999"], 198)
    index = open_index(index_copy)
    assert index.doc_count == 198 and index.search("id:0704.0002").total == 0


def test_remove_without_an_index_is_an_error(tmp_path):
    with pytest.raises(IndexNotFoundError, match="no index here"):
        remove_documents(["x"], tmp_path)


def test_cli_update_and_remove_print_summaries(index_copy, tmp_path):
    runner = CliRunner()
    bad = write(
        tmp_path / "more.jsonl",
        '{"id": "0704.0003v9", "title": "Replaced title"}\n{"id": "2101.1"}\n{"id": "2101.2", "title": "New one"}\n',
    )
    result = runner.invoke(main, ["index", "--update", str(bad), "--index-dir", str(index_copy)])
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        f"{bad}:2: record has no title (skipped)\n"
        "Note: 2 records have no abstract; they are found by title and authors only\n"
    )
    assert result.stdout.startswith(
        f"Updated {index_copy}: 1 added, 1 replaced, 1 skipped (2 records read); 201 documents in "
    )
    result = runner.invoke(main, ["remove", "0704.0003", "nope", "--index-dir", str(index_copy)])
    assert result.exit_code == 0
    assert result.stderr == "nope: not in the index\n"
    assert result.stdout.startswith(f"Removed 1 document from {index_copy}; 200 documents in ")
    result = runner.invoke(main, ["remove", "2101.2", "--json", "--index-dir", str(index_copy)])
    data = json.loads(result.stdout)
    assert (data["removed"], data["documents"], data["not_found"]) == (1, 199, [])
    assert runner.invoke(main, ["remove", "--index-dir", str(index_copy)]).exit_code == 2


def test_cli_quiet_hides_skipped_lines_and_format_is_checked(oai, tmp_path):
    runner = CliRunner()
    bad = write(tmp_path / "bad.jsonl", '{"title": "Good"}\n{broken\n')
    result = runner.invoke(main, ["index", str(bad), "--quiet", "--index-dir", str(tmp_path / "ix")])
    assert result.exit_code == 0 and result.stderr == ""
    assert result.stdout.startswith(f"Indexed 1 document into {tmp_path / 'ix'} (1 record read, 1 skipped) in ")
    result = runner.invoke(main, ["index", str(bad), "--format", "nonsense"])
    assert result.exit_code == 2
    assert "Invalid value for '--format': 'nonsense' is not one of arxiv-oai, " in result.stderr
    # The help names every format there is.
    from searchengine.readers import FORMATS

    help_text = " ".join(runner.invoke(main, ["index", "--help"]).stdout.split())
    help_text = help_text.replace("- ", "-")  # click may wrap a line after a name's hyphen
    assert all(name in help_text for name in FORMATS)
    result = runner.invoke(
        main, ["index", str(oai), "--format", "jsonl", "--json", "--index-dir", str(tmp_path / "ix")]
    )
    assert result.exit_code == 0
    assert json.loads(result.stdout)["documents"] == 200


def test_replaced_documents_do_not_pile_up_in_old_segments(oai, index_copy):
    from whoosh import index as whoosh_index

    for _ in range(2):
        update_index([oai], index_copy)
    ix = whoosh_index.open_dir(str(store.current_generation(index_copy)))
    segments = ix._segments()
    # Every document was replaced twice; the segments holding the old copies are gone.
    assert sum(s.doc_count_all() for s in segments) == 200
    assert sum(s.deleted_count() for s in segments) == 0


def test_update_or_remove_on_a_damaged_index_is_a_one_line_error(oai, tmp_path):
    (tmp_path / "index" / "gen-x").mkdir(parents=True)
    (tmp_path / "index" / "gen-x" / "_MAIN_1.toc").write_bytes(b"garbage")
    (tmp_path / "index" / "CURRENT").write_text("gen-x\n")
    runner = CliRunner()
    (tmp_path / "index" / "gen-x" / "LAYOUT").write_text(f"{store.LAYOUT}\n")
    integrity.write_checksums(tmp_path / "index" / "gen-x")  # damage the checksums cannot see
    for args in (["index", "--update", str(oai)], ["remove", "0704.0001"]):
        result = runner.invoke(main, [*args, "--index-dir", str(tmp_path / "index")])
        assert result.exit_code == 3
        assert result.stderr.startswith(f"Error: {tmp_path / 'index'}: the index is damaged: gen-x cannot be opened (")
        assert len(result.stderr.splitlines()) == 1
    # Nothing was switched or left behind.
    assert sorted(p.name for p in (tmp_path / "index").glob("gen-*")) == ["gen-x"]


def _stderr_on_a_terminal(args):
    """Run ``searchengine ARGS`` with stderr on a pseudo-terminal; return what it wrote there."""
    import fcntl
    import os
    import pty
    import struct
    import subprocess
    import sys
    import termios

    master, slave = pty.openpty()
    # A new pseudo-terminal is 0 columns wide; give it a normal size.
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "searchengine", *args], stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the terminal closed: the process ended
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=120)
    os.close(master)
    return b"".join(chunks).decode("utf-8", "replace"), process.stdout.read().decode()


def test_progress_bar_shows_on_a_terminal_unless_quiet(oai, tmp_path):
    shown, stdout = _stderr_on_a_terminal(["index", str(oai), "--index-dir", str(tmp_path / "a")])
    # the input's size is known: a share read with the time left, then the commit
    size = f"/{oai.stat().st_size / 1024:.0f}k [00:00, ETA ?]"  # the bar counts kibibytes
    assert "\rReading:   0%|" in shown and size in shown
    assert "Committing: " in shown and "200 records read; merging and writing the index" in shown
    assert stdout.startswith(f"Indexed 200 documents into {tmp_path / 'a'} (200 records read, 0 skipped) in ")
    quiet, stdout = _stderr_on_a_terminal(["index", str(oai), "--quiet", "--index-dir", str(tmp_path / "b")])
    assert quiet == "" and stdout.startswith("Indexed 200 documents")


def _damage_segments(index_dir, how: str) -> None:
    """Truncate every segment file, or overwrite its second half or its head with junk."""
    for segment in store.current_generation(index_dir).glob("*.seg"):
        size = segment.stat().st_size
        with segment.open("r+b") as handle:
            if how == "truncate":
                handle.truncate(1000)
            elif how == "head":  # the compound file's directory offset becomes junk
                handle.write(bytes(range(200, 256)) * 2)
            else:
                handle.seek(size // 2)
                handle.write(b"\x07" * (size // 4))


WORDS = ("gpu", "memory", "model", "learning", "sparse", "graph")


@pytest.mark.parametrize(
    "how, shown",
    [
        ("truncate", "is cut short (1,000 bytes, written as "),
        ("overwrite", "is damaged (its bytes differ from those written"),
        ("head", "is damaged (its bytes differ from those written"),
    ],
)
def test_damaged_segments_are_named_by_their_checksums(oai, tmp_path, how, shown):
    build_index([CORPUS], tmp_path / "index", jobs=1)
    generation = store.current_generation(tmp_path / "index")
    (segment,) = generation.glob("*.seg")
    written = segment.stat().st_size
    _damage_segments(tmp_path / "index", how)
    runner = CliRunner()
    message = f"Error: {tmp_path / 'index'}: the index is damaged: {generation.name}/{segment.name} {shown}"
    for args in (
        ["search", "gpu"],
        ["search", "--author", "Qian"],
        ["stats"],
        ["show", "0704.0001"],
        ["index", "--update", str(oai)],
        ["remove", "0704.0001"],
    ):
        result = runner.invoke(main, [*args, "--index-dir", str(tmp_path / "index")])
        assert result.exit_code == 3, (args, result.output)
        assert result.stderr.startswith(message) and result.stderr.endswith(
            f"; rebuild it with 'searchengine index PATH... --index-dir {tmp_path / 'index'}'\n"
        )
    assert sorted(tmp_path.joinpath("index").glob("gen-*")) == [generation]  # nothing published
    result = runner.invoke(main, ["check", "--index-dir", str(tmp_path / "index")])
    assert result.exit_code == 3
    problem = f"1,000 bytes, written as {written:,}" if how == "truncate" else "checksum mismatch"
    assert result.stderr.splitlines() == [
        f"  {generation.name}/{segment.name}: {problem}",
        f"Error: {tmp_path / 'index'}: the index is damaged: 1 of 5 files of {generation.name} ({segment.name}); "
        f"rebuild it with 'searchengine index PATH... --index-dir {tmp_path / 'index'}'",
    ]


@pytest.mark.parametrize("how", ["truncate", "overwrite", "head"])
def test_damage_the_checksums_cannot_see_is_still_one_line(oai, tmp_path, how):
    """Segments damaged before their checksums were taken (written so): each
    read that meets the damage is a one-line error, never a traceback."""
    from searchengine import open_index
    from searchengine.errors import IndexDamagedError

    build_index([CORPUS], tmp_path / "index", jobs=1)
    _damage_segments(tmp_path / "index", how)
    integrity.write_checksums(store.current_generation(tmp_path / "index"))
    runner = CliRunner()
    failed = 0
    for word in ("gpu", "memory", "model", "learning", "sparse", "graph"):
        result = runner.invoke(main, ["search", word, "--index-dir", str(tmp_path / "index")])
        assert result.exit_code in (0, 3) and "Traceback" not in result.output
        if result.exit_code == 3:
            failed += 1
            assert re.search(r"index cannot be|the index is damaged: gen-\S+ cannot be (read|opened)", result.stderr)
            assert "internal error" not in result.stderr and len(result.stderr.splitlines()) == 1
    assert failed >= 1
    result = runner.invoke(main, ["index", "--update", str(oai), "--index-dir", str(tmp_path / "index")])
    assert "Aborted" not in result.stderr and "Traceback" not in result.output
    if how != "overwrite":  # an update opens every segment: it stops, with nothing published or left behind
        assert result.exit_code == 3 and "index cannot be" in result.stderr
        assert len(result.stderr.splitlines()) == 1
        assert len(list((tmp_path / "index").glob("gen-*"))) == 1
    try:
        index = open_index(tmp_path / "index")
        found = {word: [hit.id for hit in index.search(word, limit=50).hits] for word in WORDS}
    except IndexDamagedError:
        return  # the damaged segment is still there, and says so
    # Only an update that went through may have rewritten the damaged part: it holds the right documents.
    assert how == "overwrite" and result.exit_code == 0
    build_index([CORPUS, oai], tmp_path / "clean", jobs=1)
    clean = open_index(tmp_path / "clean")
    assert found == {word: [hit.id for hit in clean.search(word, limit=50).hits] for word in WORDS}


def test_an_index_restored_in_place_is_read_again_after_damage(tmp_path):
    from searchengine import open_index
    from searchengine.errors import IndexDamagedError

    build_index([CORPUS], tmp_path / "index", jobs=1)
    segments = list(store.current_generation(tmp_path / "index").glob("*.seg"))
    backup = {segment: segment.read_bytes() for segment in segments}
    expected = {word: open_index(tmp_path / "index").search(word).total for word in WORDS}
    index = open_index(tmp_path / "index")  # open, but no postings read yet
    _damage_segments(tmp_path / "index", "overwrite")
    with pytest.raises(IndexDamagedError):
        for word in WORDS:
            index.search(word)
    for segment, data in backup.items():  # restored from a backup: new files, same generation name
        segment.unlink()
        segment.write_bytes(data)
    assert {word: index.search(word).total for word in WORDS} == expected
    index.close()


def _overwrite(path, offset: int, junk: bytes) -> None:
    with open(path, "r+b") as handle:
        handle.seek(offset)
        handle.write(junk)


def test_text_that_is_no_longer_utf8_is_a_damaged_index_for_search_and_update(oai, tmp_path):
    """The column file's names and a segment's packed facet values are UTF-8
    text: bytes that do not decode are damage, reported as such."""
    from whoosh.filedb.compound import CompoundStorage
    from whoosh.filedb.filestore import FileStorage

    from searchengine import open_index
    from searchengine.engines.whoosh.columns import COLUMNS_FILE
    from searchengine.errors import IndexDamagedError

    build_index([CORPUS], tmp_path / "index", jobs=1)
    generation = store.current_generation(tmp_path / "index")
    # The author names in the column file: every byte of the blob becomes 0xff.
    index = open_index(tmp_path / "index")
    arrays = index.engine.current().cache.columns().arrays
    names = arrays["author.names"]
    index.close()
    whole = (generation / COLUMNS_FILE).read_bytes()
    start = whole.index(bytes(names[:64]))
    _overwrite(generation / COLUMNS_FILE, start, b"\xff" * len(names))
    integrity.write_checksums(generation)  # damage the checksums cannot see
    with pytest.raises(
        IndexDamagedError, match=r"the index is damaged: gen-\S+ cannot be read \(UnicodeDecodeError.*rebuild"
    ):
        open_index(tmp_path / "index").search("gpu", facets=["author"])
    # A segment's facet_data column: its values (at the column's start) become 0xff;
    # the column file is rebuilt from them by an update.
    (segment,) = generation.glob("*.seg")
    files = CompoundStorage(FileStorage(str(generation)).open_file(segment.name), use_mmap=False)
    offset, _ = files.range(segment.stem + ".facet_data.col")
    files.close()
    _overwrite(segment, offset, b"\xff" * 64)
    integrity.write_checksums(generation)
    result = CliRunner().invoke(main, ["index", "--update", str(oai), "--index-dir", str(tmp_path / "index")])
    assert result.exit_code == 3 and "Traceback" not in result.output
    assert "index cannot be read (UnicodeDecodeError" in result.stderr and "internal error" not in result.stderr
    assert len(list((tmp_path / "index").glob("gen-*"))) == 1  # nothing published
