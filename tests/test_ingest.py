"""The engine-free ingest pipeline (searchengine.indexer) over a Writer that keeps
documents in memory: what every engine gets from it without writing it, and the
door (searchengine.engines) that chooses the writer."""

from __future__ import annotations

import json

import pytest

from searchengine import InputError, indexer
from searchengine.engines import check_location
from searchengine.records import Record


class MemoryWriter:
    """A Writer (searchengine.engines.Writer) holding ``{id: Record}``; ``refuse``
    names ids whose first write fails, ``existing`` is the index before the run."""

    location = "memory"
    vectors = False
    encoded = 0

    def __init__(self, existing=None, refuse=(), duplicates=0):
        self.docs = dict(existing or {})
        self.refuse = set(refuse)
        self.duplicates = duplicates
        self.updating = bool(existing)
        self.flushed = self.published = False
        self.log = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.log.append("exit" if exc[0] is None else "discarded")

    def check(self, record):
        return "id too long (skipped)" if len(record.id) > 20 else None

    def versions(self, ids):
        self.log.append(("versions", list(ids)))
        return {i: self.docs[i].version or 0 for i in ids if i in self.docs}

    def write(self, documents, on_failed):
        for document in documents:
            record = document.record
            if record.id in self.refuse and not self.flushed:
                on_failed(document, f"{record.id}: refused (skipped)")
                continue
            self.docs[record.id] = record

    def flush(self):
        self.flushed = True

    def stored(self, ids):
        return {i: self.docs[i] for i in ids if i in self.docs}

    def repair(self):
        return self.duplicates

    def delete(self, ids):
        found = [i for i in ids if self.docs.pop(i, None) is not None]
        return len(found), set(ids) - set(found)

    def publish(self):
        self.published = True
        return len(self.docs)


def records_file(tmp_path, rows):
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def run(monkeypatch, tmp_path, rows, writer, *, update=False):
    monkeypatch.setattr("searchengine.engines.open_writer", lambda location, **options: writer)
    path = records_file(tmp_path, rows)
    run_index = indexer.update_index if update else indexer.build_index
    return run_index([path], "memory")


def row(doc_id, title, version=None, authors=("A. Author",)):
    doc_id = f"{doc_id}v{version}" if version else doc_id
    return {"id": doc_id, "title": title, "abstract": "text", "authors": list(authors), "year": 2024}


def test_repeats_fold_into_one_document_and_every_record_counts(monkeypatch, tmp_path):
    writer = MemoryWriter()
    summary = run(
        monkeypatch,
        tmp_path,
        [
            row("2101.00001", "First", 1),
            row("2101.00002", "Other"),
            row("2101.00001", "Second", 2),
            row("2101.00002", "Other", authors=["B. Author"]),
        ],
        writer,
    )
    assert (summary.records, summary.added, summary.merged, summary.documents) == (4, 2, 2, 2)
    assert writer.docs["2101.00001"].title == "Second"  # the higher version wins whole
    assert writer.docs["2101.00002"].authors == ["A. Author", "B. Author"]  # equal versions merge
    assert writer.published and writer.log[-1] == "exit"


def test_an_update_checks_versions_in_batches_and_skips_older_records(monkeypatch, tmp_path):
    existing = {"2101.00001": Record(id="2101.00001", title="Indexed", abstract="", version=3)}
    writer = MemoryWriter(existing=existing, duplicates=1)
    summary = run(monkeypatch, tmp_path, [row("2101.00001", "Older", 2), row("2101.00003", "New")], writer, update=True)
    assert writer.log[0] == ("versions", ["2101.00001", "2101.00003"])  # one lookup for the batch
    assert (summary.added, summary.replaced, summary.documents) == (1, 1, 2)  # repair dropped 1 copy
    assert writer.docs["2101.00001"].title == "Indexed"
    assert [str(p) for p in summary.problems] == [
        f"{tmp_path / 'in.jsonl'}:1: 2101.00001 v2 is older than the indexed v3 (skipped)"
    ]


def test_a_refused_document_is_reported_and_taken_off_the_counts(monkeypatch, tmp_path):
    writer = MemoryWriter(refuse={"2101.00002"})
    summary = run(
        monkeypatch,
        tmp_path,
        [
            row("2101.00001", "Kept"),
            row("2101.00002", "Refused"),
            row("x" * 21, "Too long"),
            row("2101.00002", "Later copy"),
        ],
        writer,
    )
    # The later copy of a refused id stands alone, counted as the first would have been.
    assert writer.docs["2101.00002"].title == "Later copy"
    assert (summary.records, summary.added, summary.merged, summary.documents) == (4, 2, 1, 2)
    assert [p.reason for p in summary.problems] == ["2101.00002: refused (skipped)", "id too long (skipped)"]


def test_nothing_read_discards_the_run(monkeypatch, tmp_path):
    writer = MemoryWriter()
    with pytest.raises(InputError, match="nothing to index in"):
        run(monkeypatch, tmp_path, [], writer)
    assert not writer.published and writer.log == ["discarded"]


def test_one_id_given_alone_is_one_id_not_its_characters(monkeypatch):
    writer = MemoryWriter(existing={i: Record(id=i, title=i, abstract="") for i in ("1", "2", "12")})
    monkeypatch.setattr("searchengine.engines.open_writer", lambda location, **options: writer)
    summary = indexer.remove_documents("12", "memory")
    assert (summary.removed, summary.not_found, sorted(writer.docs)) == (1, [], ["1", "2"])


@pytest.mark.parametrize(
    "text, meant",
    [
        ("http:/127.0.0.1:9200/papers", "http://127.0.0.1:9200/papers"),
        ("htp://127.0.0.1:9200/papers", "http://127.0.0.1:9200/papers"),
        ("127.0.0.1:9200/papers", "http://127.0.0.1:9200/papers"),
        ("htp://user:secret@node:9200/papers", "http://node:9200/papers"),
    ],
)
def test_text_meant_as_a_url_is_never_taken_for_a_folder(text, meant):
    with pytest.raises(InputError) as caught:
        check_location(text)
    assert f"(did you mean {meant!r}?)" in str(caught.value)
    assert "secret" not in str(caught.value)


def test_folders_and_cluster_urls_keep_their_form(tmp_path):
    assert check_location("http://127.0.0.1:9200/papers") == "http://127.0.0.1:9200/papers"
    assert check_location(str(tmp_path / "a:b")) == tmp_path / "a:b"
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="is a file, not an index folder"):
        check_location(str(tmp_path / "file"))
