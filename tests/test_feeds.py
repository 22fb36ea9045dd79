"""Saved searches as Atom feeds: the document, the web route and the command line."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

import feedparser
import pytest
from click.testing import CliRunner

from searchengine import build_index
from searchengine.cli import main
from searchengine.feeds import atom_feed, entry_updated, feed_title
from searchengine.web import create_app

RECORDS = Path(__file__).parent / "data" / "web_records.jsonl"


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("feed-index")
    build_index([RECORDS], folder)
    return folder


@pytest.fixture(scope="module")
def client(index_dir):
    return create_app(index_dir=index_dir).test_client()


def test_an_entry_is_dated_by_its_update_then_first_version_then_year():
    assert [
        entry_updated(row)
        for row in [
            {"updated": "2025-04-01", "submitted": "2025-03-14", "year": 2025},
            {"updated": None, "submitted": "2025-03-14", "year": 2025},
            {"year": 2019},
            {},
        ]
    ] == ["2025-04-01T00:00:00Z", "2025-03-14T00:00:00Z", "2019-01-01T00:00:00Z", "1970-01-01T00:00:00Z"]


def test_feed_titles_say_what_was_searched():
    assert (
        feed_title([("q", "gpu"), ("year", "2024-"), ("author", "^Qian")])
        == "searchengine: gpu (year 2024-, author ^Qian)"
    )
    assert feed_title([("category", "cs.DC")]) == "searchengine: category cs.DC"
    assert feed_title([]) == "searchengine: latest papers"


def test_the_document_is_atom_that_a_reader_parses_and_control_characters_are_dropped():
    rows = [
        {
            "id": "2101.00001",
            "title": "Bell\x07 states & <qubits>",
            "authors": ["Ada Lovelace", "Bo Okafor"],
            "year": 2021,
            "categories": ["quant-ph", "cs.ET"],
            "submitted": "2021-01-04",
            "updated": "2021-02-01",
            "abstract": "We\x00 entangle.",
            "url": "",
        },
        {"id": "t-0123456789ab", "title": "", "authors": [], "year": None, "categories": [], "url": ""},
    ]
    text = atom_feed(
        rows,
        title="searchengine: qubits",
        self_url="http://h/feed.atom?q=qubits",
        page_url="http://h/?q=qubits&sort=newest",
        record_url=lambda i: f"http://h/records/{i}",
        now=datetime(2026, 1, 2, tzinfo=timezone.utc),
    )
    feed = feedparser.parse(text.encode("utf-8"))
    assert not feed.bozo, feed.bozo_exception
    assert (feed.feed.id, feed.feed.title, feed.feed.updated) == (
        "http://h/feed.atom?q=qubits",
        "searchengine: qubits",
        "2021-02-01T00:00:00Z",
    )
    first, second = feed.entries
    assert (first.id, first.title, first.summary) == (
        "http://h/records/2101.00001",
        "Bell states & <qubits>",
        "We entangle.",
    )
    assert (first.published, first.updated) == ("2021-01-04T00:00:00Z", "2021-02-01T00:00:00Z")
    assert [a.name for a in first.authors] == ["Ada Lovelace", "Bo Okafor"]
    assert [t.term for t in first.tags] == ["quant-ph", "cs.ET"]
    assert [(link.rel, link.href) for link in first.links] == [
        ("alternate", "http://h/records/2101.00001"),
        ("related", "https://arxiv.org/abs/2101.00001"),
        ("related", "https://arxiv.org/pdf/2101.00001"),
    ]
    # a record without title, authors or date still makes a valid entry
    assert (second.title, second.updated) == ("t-0123456789ab", "1970-01-01T00:00:00Z")
    empty = feedparser.parse(
        atom_feed(
            [],
            title="t",
            self_url="http://h/f",
            page_url="http://h/",
            record_url=str,
            now=datetime(2026, 1, 2, tzinfo=timezone.utc),
        ).encode()
    )
    assert (empty.bozo, empty.feed.updated, empty.entries) == (False, "2026-01-02T00:00:00Z", [])


def test_the_web_feed_lists_a_search_newest_first_and_every_link_answers(client):
    response = client.get("/feed.atom?q=SpMV&year=2020-")
    assert (response.status_code, response.content_type) == (200, "application/atom+xml; charset=utf-8")
    feed = feedparser.parse(response.get_data())
    assert not feed.bozo, feed.bozo_exception
    newest = client.get("/api/search?q=SpMV&year=2020-&sort=newest").get_json()["hits"]
    assert [entry.id for entry in feed.entries] == [f"http://localhost/records/{hit['id']}" for hit in newest]
    assert feed.feed.title == "searchengine: SpMV (year 2020-)"
    for entry in feed.entries:
        assert client.get(entry.link).status_code == 200
    page = next(link.href for link in feed.feed.links if link.rel == "alternate")
    assert client.get(page).status_code == 200
    # the results page offers the feed of its search, whatever its sort and page
    html = client.get("/?q=SpMV&year=2020-&sort=title").get_data(as_text=True)
    assert re.findall(r'<link rel="alternate" type="application/atom\+xml"[^>]*href="([^"]*)"', html) == [
        "/feed.atom?q=SpMV&amp;year=2020-"
    ]
    assert 'class="feed">Follow this search' in html


def test_a_feed_without_query_or_filter_is_the_latest_papers(client, index_dir):
    response = client.get("/feed.atom?sort=oldest&page=2")  # a feed is newest first, from its first entry
    assert response.status_code == 200
    feed = feedparser.parse(response.get_data())
    assert not feed.bozo, feed.bozo_exception
    assert (feed.feed.id, feed.feed.title) == ("http://localhost/feed.atom", "searchengine: latest papers")
    latest = client.get("/api/search?sort=newest").get_json()
    assert latest["total"] == 6
    assert [entry.id for entry in feed.entries] == [f"http://localhost/records/{hit['id']}" for hit in latest["hits"]]
    assert [entry.id.rsplit("/", 1)[1] for entry in feed.entries][:2] == ["2502.00006", "2501.00004"]
    page = next(link.href for link in feed.feed.links if link.rel == "alternate")
    assert page == "http://localhost/?sort=newest"
    # the latest papers' page offers this feed
    html = client.get("/?sort=newest").get_data(as_text=True)
    assert re.findall(r'<link rel="alternate" type="application/atom\+xml"[^>]*href="([^"]*)"', html) == ["/feed.atom"]
    # and the command line prints the same document
    cli = CliRunner().invoke(
        main,
        [
            "search",
            "--sort",
            "newest",
            "--format",
            "atom",
            "--base-url",
            "http://localhost",
            "--index-dir",
            str(index_dir),
        ],
    )
    assert cli.exit_code == 0, cli.output
    # (but for the self link, the address the web's feed was asked at)
    asked = 'rel="self" type="application/atom+xml" href="http://localhost/feed.atom?sort=oldest&amp;page=2"'
    assert asked in response.get_data(as_text=True)
    assert cli.stdout == response.get_data(as_text=True).replace(
        asked, 'rel="self" type="application/atom+xml" href="http://localhost/feed.atom"'
    )


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("/feed.atom?q=SpMV&limit=101", "limit must be between 1 and 100, not 101"),
        ("/feed.atom?q=SpMV&year=20x", "20x"),
    ],
)
def test_a_feed_that_cannot_be_made_is_a_400_naming_why(client, url, message):
    response = client.get(url)
    assert response.status_code == 400 and message in response.get_data(as_text=True)


def test_the_command_line_prints_the_same_feed(client, index_dir):
    web = client.get("/feed.atom?q=SpMV&limit=3").get_data(as_text=True)
    cli = CliRunner().invoke(
        main,
        [
            "search",
            "SpMV",
            "--format",
            "atom",
            "--limit",
            "3",
            "--base-url",
            "http://localhost/",
            "--index-dir",
            str(index_dir),
        ],
    )
    assert cli.exit_code == 0, cli.output
    # (but for the self link, the address the web's feed was asked at)
    asked = 'rel="self" type="application/atom+xml" href="http://localhost/feed.atom?q=SpMV&amp;limit=3"'
    assert asked in web
    assert cli.stdout == web.replace(
        asked, 'rel="self" type="application/atom+xml" href="http://localhost/feed.atom?q=SpMV"'
    )
    # without --limit, as many entries as the web's feed
    whole = CliRunner().invoke(
        main, ["search", "SpMV", "--format", "atom", "--base-url", "http://localhost", "--index-dir", str(index_dir)]
    )
    assert whole.stdout == client.get("/feed.atom?q=SpMV").get_data(as_text=True)


@pytest.mark.parametrize(
    "base_url",
    [
        "localhost:8000",
        "http://[::1",
        "http://h/?q=1",
        "http://h/#top",
        "http://h/ x",
        'http://a"b',
        "http://host:99999",
        "ftp://h",
    ],
)
def test_a_base_url_that_cannot_prefix_links_is_a_usage_error(index_dir, base_url):
    bad = CliRunner().invoke(
        main, ["search", "SpMV", "--format", "atom", "--base-url", base_url, "--index-dir", str(index_dir)]
    )
    assert bad.exit_code == 2 and f"{base_url!r} is not an http(s) address of a web page" in bad.stderr


def test_a_feed_has_no_page(client, index_dir):
    paged = CliRunner().invoke(
        main, ["search", "SpMV", "--format", "atom", "--page", "2", "--index-dir", str(index_dir)]
    )
    assert paged.exit_code == 2 and "--format atom is the search's feed, newest first; it has no --page" in paged.stderr
    plain = feedparser.parse(client.get("/feed.atom?q=SpMV").get_data())
    paged = feedparser.parse(client.get("/feed.atom?q=SpMV&page=11&sort=title&more=author").get_data())
    assert paged.feed.id == plain.feed.id == "http://localhost/feed.atom?q=SpMV"
    assert [entry.id for entry in paged.entries] == [entry.id for entry in plain.entries]
    assert len(plain.entries) == 4
    # the self link is the address asked at, every parameter kept
    assert next(link.href for link in paged.feed.links if link.rel == "self") == (
        "http://localhost/feed.atom?q=SpMV&page=11&sort=title&more=author"
    )


def test_a_feed_asked_with_a_host_that_is_no_host_is_a_400(client):
    for host in ['a"b<c>', "x y", ""]:
        response = client.get("/feed.atom?q=SpMV", headers={"Host": host})
        assert response.status_code == 400, host


def test_the_feed_names_a_stylesheet_the_app_serves_and_stays_valid_atom(client):
    response = client.get("/feed.atom?q=SpMV")
    text = response.get_data(as_text=True)
    assert text.splitlines()[:2] == [
        '<?xml version="1.0" encoding="utf-8"?>',
        '<?xml-stylesheet type="text/css" href="http://localhost/static/feed.css"?>',
    ]
    feed = feedparser.parse(response.get_data())
    assert not feed.bozo, feed.bozo_exception
    assert len(feed.entries) == 4
    sheet = client.get("/static/feed.css")
    assert (sheet.status_code, sheet.mimetype) == (200, "text/css")
    assert "entry > summary { display: block;" in sheet.get_data(as_text=True)


def test_a_browser_gets_the_feed_as_xml_and_a_reader_as_atom(client):
    browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
    shown = client.get("/feed.atom?q=SpMV", headers={"Accept": browser})
    read = client.get("/feed.atom?q=SpMV", headers={"Accept": "application/atom+xml, application/rss+xml"})
    anything = client.get("/feed.atom?q=SpMV", headers={"Accept": "*/*"})
    assert shown.content_type == "application/xml; charset=utf-8"
    assert read.content_type == anything.content_type == "application/atom+xml; charset=utf-8"
    assert shown.get_data() == read.get_data() and shown.headers["Vary"] == "Accept"
    assert not feedparser.parse(shown.get_data()).bozo
