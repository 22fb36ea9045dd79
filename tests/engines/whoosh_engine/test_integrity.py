"""Checksums of a generation: what is written, what an open trusts, what it hashes, and network file systems."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from searchengine import IndexDamagedError, build_index, open_index
from searchengine.cli import main
from searchengine.engines.whoosh import integrity, store

from conftest import CORPUS


@pytest.fixture
def index_dir(tmp_path):
    build_index([CORPUS], tmp_path / "index", jobs=1)
    return tmp_path / "index"


def generation(index_dir):
    return store.current_generation(index_dir)


def test_every_file_is_listed_with_its_size_and_crc32(index_dir):
    folder = generation(index_dir)
    listed = integrity.read_checksums(folder)
    assert sorted(listed) == sorted(
        p.name for p in folder.iterdir() if p.name not in ("CHECKSUMS", "VERIFIED", "MAIN_WRITELOCK")
    )
    for name, (crc, size) in listed.items():
        assert (integrity.crc32(folder / name), (folder / name).stat().st_size) == (crc, size)
    lines = (folder / "CHECKSUMS").read_text().splitlines()
    assert lines[0] == "searchengine checksums 1: crc32 bytes name" and lines[-1].startswith("end ")


def test_an_unchanged_file_is_trusted_and_a_written_one_hashed(index_dir, monkeypatch):
    folder = generation(index_dir)
    hashed = []
    real = integrity.crc32
    monkeypatch.setattr(integrity, "crc32", lambda path: hashed.append(path.name) or real(path))
    integrity.verify(folder)
    assert hashed == []  # the writer's stamps stand
    columns = folder / "facet.columns"
    os.utime(columns, ns=(columns.stat().st_atime_ns, columns.stat().st_mtime_ns + 1))
    integrity.verify(folder)
    assert hashed == ["facet.columns"]
    integrity.verify(folder)  # its new stamp was recorded
    assert hashed == ["facet.columns"]
    integrity.verify(folder, everything=True)
    assert sorted(hashed[1:]) == sorted(integrity.read_checksums(folder))


def test_a_read_only_index_is_hashed_at_every_open_and_still_searched(index_dir, monkeypatch):
    folder = generation(index_dir)
    (folder / "VERIFIED").unlink()

    def refuse(path, text):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(integrity, "_replace", refuse)  # as on a folder the user cannot write
    hashed = []
    real = integrity.crc32
    monkeypatch.setattr(integrity, "crc32", lambda path: hashed.append(path.name) or real(path))
    for _ in range(2):
        index = open_index(index_dir)
        assert index.search("gpu").total == 12
        index.close()
    assert not (folder / "VERIFIED").exists()
    assert len(hashed) == 2 * len(integrity.read_checksums(folder))


@pytest.mark.parametrize(
    "text, shown",
    [
        ("", "is damaged (not the list written)"),
        ("searchengine checksums 1: crc32 bytes name\nend 00000000\n", "is damaged (not the list written)"),
    ],
)
def test_a_damaged_list_is_named(index_dir, text, shown):
    folder = generation(index_dir)
    (folder / "CHECKSUMS").write_text(text)
    with pytest.raises(IndexDamagedError) as caught:
        open_index(index_dir)
    assert str(caught.value) == (
        f"{index_dir}: the index is damaged: {folder.name}/CHECKSUMS {shown}; "
        f"rebuild it with 'searchengine index PATH... --index-dir {index_dir}'"
    )


def test_a_file_written_under_an_open_index_is_never_read(index_dir):
    index = open_index(index_dir)
    assert index.search("gpu").total == 12
    (segment,) = generation(index_dir).glob("*.seg")
    os.truncate(segment, segment.stat().st_size // 2)  # read through a map, this would kill the process
    with pytest.raises(IndexDamagedError, match=r"MAIN_\w+\.seg is cut short"):
        index.search("gpu")
    with pytest.raises(IndexDamagedError, match="is cut short"):  # still, and without hashing again
        index.stats()
    build_index([CORPUS], index_dir, jobs=1)  # a rebuild: served again by the same open index
    assert index.search("gpu").total == 12
    index.close()


MOUNTINFO = """\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw
99 27 0:99 / /mnt/papers rw,relatime - nfs4 server:/export rw
100 27 0:98 / /mnt/my\\040share rw - cifs //server/share rw
101 99 8:2 / /mnt/papers/local rw - ext4 /dev/sdb1 rw
"""


@pytest.mark.parametrize(
    "path, kind",
    [
        ("/mnt/papers/index", "nfs4"),
        ("/mnt/papers", "nfs4"),
        ("/mnt/paperstack/index", None),
        ("/mnt/my share/x", "cifs"),
        ("/mnt/papers/local/index", None),
        ("/home/x", None),
    ],
)
def test_network_file_systems_are_told_from_mounts(path, kind):
    from pathlib import Path

    assert store.network_filesystem(Path(path), MOUNTINFO) == kind


def test_an_index_is_not_written_on_a_network_file_system(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(store, "network_filesystem", lambda path, mountinfo=None: "nfs4")
    monkeypatch.delenv(store.ALLOW_NETWORK_ENV, raising=False)
    result = CliRunner().invoke(main, ["index", str(CORPUS), "--index-dir", str(tmp_path / "index"), "-q"])
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: {tmp_path / 'index'} is on a network file system (nfs4): an index needs a local disk, whose "
        "locks and memory maps work across processes; build it on a local disk and copy it, or set "
        "SEARCHENGINE_ALLOW_NETWORK_FS=1 to write it there anyway (nothing was written)\n"
    )
    assert not (tmp_path / "index").exists()
    monkeypatch.setenv(store.ALLOW_NETWORK_ENV, "1")
    result = CliRunner().invoke(main, ["index", str(CORPUS), "--index-dir", str(tmp_path / "index"), "-q"])
    assert result.exit_code == 0
    result = CliRunner().invoke(main, ["search", "gpu", "--index-dir", str(tmp_path / "index")])
    assert result.exit_code == 0
    assert caplog.messages == [
        f"warning: {tmp_path / 'index'} is on a network file system (nfs4): a rebuild from "
        "another machine can stop this process; keep the index on a local disk"
    ]


def test_check_says_sound_with_the_counts(index_dir):
    result = CliRunner().invoke(main, ["check", "--index-dir", str(index_dir)])
    folder = generation(index_dir)
    size = sum(size for _, size in integrity.read_checksums(folder).values())
    assert (result.exit_code, result.stdout) == (
        0,
        f"{index_dir}: sound ({folder.name}: 5 files, {size / 1e6:,.1f} MB, 24 documents)\n",
    )


def test_a_file_this_user_cannot_read_is_not_called_damage(index_dir, monkeypatch):
    from searchengine import IndexUnreadableError

    folder = generation(index_dir)
    real = integrity.Stamp.of

    def refuse(path):
        if path.name == "facet.columns":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(integrity.Stamp, "of", staticmethod(refuse))
    with pytest.raises(IndexUnreadableError) as caught:
        open_index(index_dir)
    assert str(caught.value) == (
        f"{folder / 'facet.columns'}: permission denied: this user cannot read the index (it is not damaged)"
    )
    result = CliRunner().invoke(main, ["search", "gpu", "--index-dir", str(index_dir)])
    assert (result.exit_code, result.stderr) == (1, f"Error: {caught.value}\n")
    from searchengine.search import SearchIndex
    from searchengine.web import create_app

    client = create_app(index=SearchIndex(index_dir, lazy=True)).test_client()
    answer = client.get("/api/search?q=gpu")
    assert (answer.status_code, answer.get_json(), answer.headers["Retry-After"]) == (
        503,
        {"error": "the index is not available right now"},
        "30",
    )


def test_a_missing_package_is_named_not_called_damage(index_dir, monkeypatch):
    import sys

    from searchengine import IndexUnreadableError

    monkeypatch.setitem(sys.modules, "whoosh.filedb.filestore", None)  # as if Whoosh were not installed
    with pytest.raises(IndexUnreadableError) as caught:
        open_index(index_dir)
    assert str(caught.value) == (
        f"{index_dir}: cannot be read: the package 'whoosh' is not installed in this Python ({sys.executable}); "
        "install searchengine with its dependencies (pip install searchengine, or pip install . in a clone)"
    )
    result = CliRunner().invoke(main, ["search", "gpu", "--index-dir", str(index_dir)])
    assert (result.exit_code, result.stderr) == (1, f"Error: {caught.value}\n")
    result = CliRunner().invoke(main, ["check", "--index-dir", str(index_dir)])
    assert result.exit_code == 1 and "is not installed" in result.stderr and "damaged" not in result.stderr


def test_an_update_hashes_only_the_files_it_wrote_and_keeps_the_others_checksums(index_dir, tmp_path, monkeypatch):
    import json

    from searchengine import update_index

    before = generation(index_dir)
    old = integrity.read_checksums(before)
    record = {"id": "2501.00001", "title": "Sparse matrix kernels", "abstract": "SpMV on GPUs.", "authors": ["A. B"]}
    extra = tmp_path / "new.jsonl"
    extra.write_text(json.dumps(record) + "\n")
    hashed = []
    real = integrity.crc32
    monkeypatch.setattr(integrity, "crc32", lambda path: hashed.append(path.name) or real(path))
    update_index([extra], index_dir, jobs=1)
    after = generation(index_dir)
    assert after != before
    new = integrity.read_checksums(after)
    linked = [name for name in new if name in old and (after / name).stat().st_ino == (before / name).stat().st_ino]
    assert linked  # the earlier segment's files, carried over as links
    for name in linked:
        assert new[name] == old[name]
    written = {name for name in new if name not in linked}
    assert "facet.columns" in written
    # Read once before the update (the base is checked whole), never to list the new generation's.
    assert not set(linked) & set(hashed[len(old) :])
    assert written <= set(hashed[len(old) :])
    for name, (crc, size) in new.items():
        assert (real(after / name), (after / name).stat().st_size) == (crc, size)
