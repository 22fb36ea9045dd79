"""The layout an embedded index records, and what becomes of an index of another layout."""

import shutil

import pytest
from click.testing import CliRunner

from searchengine import build_index, open_index
from searchengine.cli import main
from searchengine.engines.whoosh import store
from searchengine.errors import IndexOutdatedError
from searchengine.indexer import remove_documents, update_index

from conftest import CORPUS, write


def generation(index_dir):
    return store.current_generation(index_dir)


def outdated(index_dir, layout=None):
    """Make the index look written by an older version: no LAYOUT file, or
    another number, and no checksums (layouts before 3 had none)."""
    path = generation(index_dir) / store.LAYOUT_FILE
    path.unlink()
    (generation(index_dir) / "CHECKSUMS").unlink()
    if layout is not None:
        path.write_text(f"{layout}\n")


def test_every_write_records_the_layout(tmp_path):
    write(tmp_path / "a.jsonl", '{"id": "a", "title": "Sparse kernels on GPUs"}\n')
    write(tmp_path / "b.jsonl", '{"id": "b", "title": "Dense kernels on CPUs"}\n')
    index_dir = tmp_path / "ix"
    build_index([tmp_path / "a.jsonl"], index_dir)
    assert (generation(index_dir) / store.LAYOUT_FILE).read_text() == f"{store.LAYOUT}\n"
    first = generation(index_dir)
    update_index([tmp_path / "b.jsonl"], index_dir)
    assert generation(index_dir) != first
    assert (generation(index_dir) / store.LAYOUT_FILE).read_text() == f"{store.LAYOUT}\n"
    remove_documents(["a"], index_dir)
    assert (generation(index_dir) / store.LAYOUT_FILE).read_text() == f"{store.LAYOUT}\n"
    index = open_index(index_dir)
    assert [hit.id for hit in index.search("kernels").hits] == ["b"]
    index.close()


@pytest.mark.parametrize("layout, shown", [(None, "not recorded: an older version"), (1, "1")])
def test_an_index_of_another_layout_is_refused_with_a_rebuild_hint(tmp_path, layout, shown):
    index_dir = tmp_path / "ix"
    build_index([CORPUS], index_dir)
    outdated(index_dir, layout)
    message = (
        f"{index_dir}: this index was built by another version of searchengine (layout {shown}, "
        f"this version reads layout {store.LAYOUT}); rebuild it with "
        f"'searchengine index PATHS --index-dir {index_dir}'"
    )
    with pytest.raises(IndexOutdatedError) as caught:
        open_index(index_dir)
    assert str(caught.value) == message
    runner = CliRunner()
    result = runner.invoke(main, ["search", "SpMV", "--index-dir", str(index_dir)])
    assert (result.exit_code, result.stderr) == (3, f"Error: {message}\n")
    # An update would mix documents of two layouts: refused too, and the index is left as it was.
    before = sorted(p.name for p in index_dir.iterdir())
    result = runner.invoke(main, ["index", "--update", str(CORPUS), "--index-dir", str(index_dir)])
    assert (result.exit_code, result.stderr.splitlines()[-1]) == (3, f"Error: {message}")
    assert sorted(p.name for p in index_dir.iterdir()) == before
    # A rebuild makes it searchable again.
    assert runner.invoke(main, ["index", str(CORPUS), "--index-dir", str(index_dir), "-q"]).exit_code == 0
    assert runner.invoke(main, ["search", "SpMV", "--index-dir", str(index_dir)]).exit_code == 0


def test_the_default_index_of_an_older_version_is_built_again(tmp_path, monkeypatch):
    shutil.copytree(CORPUS, tmp_path / "corpus")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SEARCHENGINE_INDEX", raising=False)
    runner = CliRunner()
    assert runner.invoke(main, ["search", "SpMV GPU"]).exit_code == 0
    outdated(tmp_path / "index")
    result = runner.invoke(main, ["search", "SpMV GPU"])
    assert result.exit_code == 0
    assert result.stderr.splitlines()[0] == "No index in index/; building it from corpus/ ..."
    assert result.stdout.startswith("1 hit for 'SpMV GPU' (")
    assert (generation(tmp_path / "index") / store.LAYOUT_FILE).read_text() == f"{store.LAYOUT}\n"
