"""The public server's limits (searchengine.web.guard) through Flask's test client:
per-client rate limits counted in cost units, the cap on concurrent expensive
requests, export and feed caps, and trust in a reverse proxy's headers.

The index holds the six records of ``tests/data/web_records.jsonl``; ``SpMV GPU``
matches four of them (see tests/test_web.py).
"""

from __future__ import annotations

import re
import threading
from html import unescape
from pathlib import Path

import feedparser
import pytest
from click.testing import CliRunner

from searchengine import build_index
from searchengine.cli import main
from searchengine.search import SearchIndex
from searchengine.web import create_app
from searchengine.web.guard import ServeLimits, behind_proxy, is_expensive

DATA = Path(__file__).parent / "data"
RECORDS = DATA / "web_records.jsonl"
ABSTRACT = " ".join(["sparse matrix vector multiplication on graphics processors"] * 5)


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("guard-index")
    build_index([RECORDS], folder)
    return folder


@pytest.fixture(scope="module")
def index(index_dir):
    opened = SearchIndex(index_dir)
    yield opened
    opened.close()


def client_of(index, **limits):
    limits.setdefault("refusal_delay", 0)  # refusals at once, unless a test says otherwise
    return create_app(index=index, limits=ServeLimits(**limits)).test_client()


def peer(address: str, **headers: str) -> dict:
    """Test-client keywords of a request from socket address ``address`` with ``headers``."""
    return {"environ_base": {"REMOTE_ADDR": address}, "headers": headers}


@pytest.mark.parametrize(
    ("url", "expensive"),
    [
        ("/api/search?q=SpMV+GPU", False),
        ("/?q=gpu*", False),
        ("/?q=matri*+vect*", True),  # two wildcards
        ("/?q=ma*", True),  # a wildcard after two letters
        ("/?q=spmv~2", True),
        ("/?q=spmv~1", False),
        ("/?q=spmv~", False),
        ("/api/search?q=" + ABSTRACT.replace(" ", "+"), True),  # a pasted abstract
        ("/api/export?q=gpu&format=csv", True),
        ("/api/similar?id=2301.00001", True),
        ("/api/records/2301.00001/similar", True),
        ("/api/records/2301.00001", False),
        ("/feed.atom?q=gpu", False),
        ("/feed.atom?q=gpu&limit=50", False),
        ("/feed.atom?q=gpu&limit=100", True),
        ("/api/search?q=gpu&mode=semantic", True),
    ],
)
def test_what_counts_as_expensive(url, expensive):
    app = create_app(index=object(), limits=None)  # type: ignore[arg-type]
    with app.test_request_context(url):
        assert is_expensive() is expensive


def test_a_client_past_its_limit_gets_a_429_with_retry_after_and_a_json_body(index):
    client = client_of(index, rate="3/minute")
    for _ in range(3):
        assert client.get("/api/search?q=SpMV+GPU", **peer("203.0.113.5")).status_code == 200
    refused = client.get("/api/search?q=SpMV+GPU", **peer("203.0.113.5"))
    assert refused.status_code == 429
    assert refused.content_type == "application/json"
    message = refused.get_json()["error"]
    assert message.startswith("too many requests from your address (limit 3 per 1 minute); try again in ")
    wait = int(refused.headers["Retry-After"])
    assert 1 <= wait <= 60 and message.endswith(f"in {wait} s")
    # another client still has its whole budget; the page and the API share one
    assert client.get("/api/search?q=SpMV+GPU", **peer("203.0.113.6")).status_code == 200
    page = client.get("/?q=SpMV+GPU", **peer("203.0.113.5"))
    assert page.status_code == 429 and page.content_type.startswith("text/html")
    html = page.get_data(as_text=True)
    assert "<h1>Error 429</h1>" in html
    assert re.search(r"<p>too many requests from your address \(limit 3 per 1 minute\); try again in \d+ s</p>", html)
    assert page.headers["Retry-After"].isdigit()
    # style sheets are not counted
    assert client.get("/static/style.css", **peer("203.0.113.5")).status_code == 200


def test_a_refusal_is_held_back(index):
    import time

    client = client_of(index, rate="1/minute", refusal_delay=0.3)
    assert client.get("/api/search?q=gpu", **peer("203.0.113.12")).status_code == 200
    began = time.monotonic()
    assert client.get("/api/search?q=gpu", **peer("203.0.113.12")).status_code == 429
    assert 0.3 <= time.monotonic() - began < 2


def test_a_spoofed_forwarded_for_changes_nothing_without_a_trusted_proxy(index):
    client = client_of(index, rate="2/minute")
    statuses = [
        client.get("/api/search?q=gpu", **peer("203.0.113.7", **{"X-Forwarded-For": f"198.51.100.{n}"})).status_code
        for n in range(4)
    ]
    assert statuses == [200, 200, 429, 429]


def test_a_trusted_proxy_names_the_client_and_another_peer_cannot(index):
    client = client_of(index, rate="2/minute", trusted_proxies=("127.0.0.1",))
    via_proxy = [
        client.get("/api/search?q=gpu", **peer("127.0.0.1", **{"X-Forwarded-For": f"198.51.100.{n}"})).status_code
        for n in range(4)
    ]
    assert via_proxy == [200] * 4  # four clients behind the proxy, one request each
    same = [
        client.get("/api/search?q=gpu", **peer("127.0.0.1", **{"X-Forwarded-For": "198.51.100.9"})).status_code
        for _ in range(3)
    ]
    assert same == [200, 200, 429]
    # a peer that is not the proxy is itself the client, whatever it says
    direct = [
        client.get("/api/search?q=gpu", **peer("203.0.113.8", **{"X-Forwarded-For": f"198.51.100.{n}"})).status_code
        for n in range(20, 23)
    ]
    assert direct == [200, 200, 429]


def test_expensive_requests_cost_more(index):
    client = client_of(index, rate="25/minute", expensive_cost=10)
    cheap = [client.get("/api/search?q=gpu", **peer("203.0.113.9")).status_code for _ in range(5)]
    exports = [client.get("/api/export?q=gpu&format=csv", **peer("203.0.113.9")).status_code for _ in range(3)]
    assert (cheap, exports) == ([200] * 5, [200, 200, 429])  # 5 + 10 + 10 = 25, then 35 > 25
    # a refused request counts too: hammering does not earn a request back
    assert client.get("/api/search?q=gpu", **peer("203.0.113.9")).status_code == 429


def test_no_rate_limit_when_off(index):
    client = client_of(index, rate=None)
    assert {client.get("/api/search?q=gpu", **peer("203.0.113.10")).status_code for _ in range(50)} == {200}


def test_an_expensive_request_that_finds_every_slot_busy_gets_a_503_and_cheap_ones_flow(index_dir):
    started, release = threading.Event(), threading.Event()

    class Slow(SearchIndex):
        def run(self, request):
            if request.export:
                started.set()
                release.wait(10)
            return super().run(request)

    slow = Slow(index_dir)
    app = create_app(index=slow, limits=ServeLimits(rate=None, expensive_slots=1, expensive_wait=0.2))
    first: dict = {}
    holder = threading.Thread(
        target=lambda: first.update(status=app.test_client().get("/api/export?q=gpu&format=csv").status_code)
    )
    holder.start()
    try:
        assert started.wait(10)
        busy = app.test_client().get("/api/export?q=gpu&format=jsonl")
        assert busy.status_code == 503 and busy.headers["Retry-After"] == "5"
        assert busy.get_json() == {"error": "the server is busy with other long requests; try again in a few seconds"}
        assert app.test_client().get("/api/search?q=SpMV+GPU").get_json()["total"] == 4  # cheap ones flow
    finally:
        release.set()
        holder.join(10)
        slow.close()
    assert first["status"] == 200
    # the slot is given back
    assert app.test_client().get("/api/export?q=gpu&format=csv").status_code == 200


def test_exports_and_feeds_are_capped(index):
    client = client_of(index, rate=None, max_export=2, max_feed=3)
    export = client.get("/api/export?q=SpMV+GPU&format=jsonl")
    assert (export.headers["X-Total-Hits"], export.headers["X-Exported-Hits"]) == ("4", "2")
    assert len(export.get_data(as_text=True).splitlines()) == 2
    feed = feedparser.parse(client.get("/feed.atom?sort=newest&limit=100").get_data())
    assert len(feed.entries) == 3


def links(html: str) -> list[str]:
    return [unescape(href) for href in re.findall(r'(?:href|action)="([^"]*)"', html)]


def test_behind_a_trusted_proxy_links_and_feeds_use_its_public_address_and_prefix(index):
    client = client_of(index, rate=None, trusted_proxies=("10.0.0.0/8",))
    proxy = {
        "X-Forwarded-For": "198.51.100.20",
        "X-Forwarded-Proto": "https",
        "X-Forwarded-Host": "papers.example.org",
        "X-Forwarded-Prefix": "/search",
    }
    html = client.get("/?q=SpMV+GPU&sort=newest", **peer("10.1.2.3", **proxy)).get_data(as_text=True)
    local = [link for link in links(html) if not link.startswith(("http", "data:", "#"))]
    assert local and all(link.startswith("/search/") for link in local), local
    assert "/search/?q=SpMV+GPU&sort=newest&page=2" not in local  # one page: no page links
    assert "/search/api/search?q=SpMV+GPU&sort=newest" in local
    assert "/search/feed.atom?q=SpMV+GPU" in local
    assert "/search/api/export?q=SpMV+GPU&sort=newest&format=bibtex" in local
    assert "/search/static/style.css" in local
    feed = feedparser.parse(client.get("/feed.atom?q=SpMV+GPU&sort=newest", **peer("10.1.2.3", **proxy)).get_data())
    assert feed.feed.id == "https://papers.example.org/search/feed.atom?q=SpMV+GPU"
    assert {link.rel: link.href for link in feed.feed.links} == {
        "self": "https://papers.example.org/search/feed.atom?q=SpMV+GPU&sort=newest",
        "alternate": "https://papers.example.org/search/?q=SpMV+GPU&sort=newest",
    }
    assert len(feed.entries) == 4
    assert all(entry.id.startswith("https://papers.example.org/search/records/") for entry in feed.entries)
    assert all(entry.link == entry.id for entry in feed.entries)
    # the same headers from a peer that is not the proxy change nothing
    spoofed = client.get("/feed.atom?q=SpMV+GPU", **peer("203.0.113.11", **proxy)).get_data()
    assert feedparser.parse(spoofed).feed.id == "http://localhost/feed.atom?q=SpMV+GPU"
    plain = client.get("/?q=SpMV+GPU", **peer("203.0.113.11", **proxy)).get_data(as_text=True)
    assert not any(link.startswith("/search/") for link in links(plain))
    # a redirect of a year range goes under the prefix too
    moved = client.get("/?q=gpu&year_from=2020&year_to=2024", **peer("10.1.2.3", **proxy))
    assert moved.status_code == 303 and moved.headers["Location"].startswith("/search/?q=gpu")


def test_behind_proxy_is_the_app_itself_without_trusted_proxies():
    def app(environ, start_response):
        return []

    assert behind_proxy(app, ()) is app


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--rate-limit", "lots"], "rate limit 'lots' is not understood (write e.g. 120/minute"),
        (["--trusted-proxy", "proxy.example"], "trusted proxy 'proxy.example' is not an IP address or network"),
        (["--max-export", "5000"], "5000 is not in the range 1<=x<=1000"),
    ],
)
def test_serve_refuses_limits_it_cannot_read(index_dir, options, message):
    result = CliRunner().invoke(main, ["serve", "--index-dir", str(index_dir), *options])
    assert result.exit_code == 2 and message in result.stderr, result.stderr


def test_serve_passes_its_limits_to_the_server(index_dir, monkeypatch):
    seen = {}
    monkeypatch.setattr("searchengine.web.serve.serve", lambda index, where, **options: seen.update(options))
    monkeypatch.setenv("SEARCHENGINE_RATE_LIMIT", "30/minute;5/second")
    result = CliRunner().invoke(
        main,
        ["serve", "--index-dir", str(index_dir), "--trusted-proxy", "127.0.0.1,::1", "--proxy-count", "2"]
        + ["--expensive-slots", "3", "--max-feed", "20", "--workers", "2"],
    )
    assert result.exit_code == 0, result.output
    assert seen["limits"] == ServeLimits(
        rate="30/minute;5/second",
        expensive_slots=3,
        max_feed=20,
        trusted_proxies=("127.0.0.1", "::1"),
        proxy_count=2,
    )
    assert seen["workers"] == 2


def test_serve_verify_on_start_finds_damage_written_in_place_with_its_times_put_back(tmp_path, monkeypatch):
    import os
    import shutil

    from searchengine.engines.whoosh import store

    folder = tmp_path / "index"
    build_index([RECORDS], folder)
    started = []
    monkeypatch.setattr("searchengine.web.serve.serve", lambda index, where, **options: started.append(where))
    sound = CliRunner().invoke(main, ["serve", "--index-dir", str(folder), "--verify-on-start", "--workers", "1"])
    assert sound.exit_code == 0, sound.output
    generation = store.current_generation(folder)
    files = sorted(path for path in generation.iterdir() if path.name not in ("CHECKSUMS", "VERIFIED", "LAYOUT"))
    assert re.fullmatch(rf"Verified \d+ files of {generation.name} \(0\.\d MB\) in \d+\.\d s\n", sound.stderr), (
        sound.stderr
    )
    assert started == [folder]
    # one byte of the biggest file changed, its times put back: its stamp is as verified
    victim = max(files, key=lambda path: path.stat().st_size)
    before = victim.stat()
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0xFF
    victim.write_bytes(bytes(data))
    os.utime(victim, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert victim.stat().st_mtime_ns == before.st_mtime_ns
    damaged = CliRunner().invoke(main, ["serve", "--index-dir", str(folder), "--verify-on-start", "--workers", "1"])
    assert damaged.exit_code == 3, damaged.output
    assert f"{victim.name} is damaged (its bytes differ from those written: checksum mismatch)" in damaged.stderr
    assert "searchengine index" in damaged.stderr  # how to rebuild
    assert started == [folder]  # never served
    shutil.rmtree(folder)


def test_shared_counters_count_across_forked_processes_and_stay_bounded():
    import os

    from searchengine.web.counters import SharedCounters, SharedTable

    counters = SharedCounters(table=SharedTable(places=64))
    children = []
    for _ in range(2):
        pid = os.fork()
        if pid == 0:  # each child adds 1 fifty times and 10 five times
            try:
                for _ in range(50):
                    counters.incr("LIMITER/203.0.113.1", 60)
                for _ in range(5):
                    counters.incr("LIMITER/203.0.113.1", 60, amount=10)
            finally:
                os._exit(0)
        children.append(pid)
    for pid in children:
        assert os.waitpid(pid, 0)[1] == 0
    assert counters.get("LIMITER/203.0.113.1") == 2 * (50 + 50)
    assert 59 <= counters.get_expiry("LIMITER/203.0.113.1") - __import__("time").time() <= 60
    assert counters.get("LIMITER/203.0.113.2") == 0
    # far more clients than places: the table holds at most 64, the newest always counted
    for n in range(1000):
        assert counters.incr(f"LIMITER/198.51.{n // 250}.{n % 250}", 60) == 1
    assert counters.get("LIMITER/198.51.3.249") == 1
    counters.clear("LIMITER/198.51.3.249")
    assert counters.get("LIMITER/198.51.3.249") == 0
    # a window that ended starts again from the request's cost
    assert counters.incr("LIMITER/203.0.113.3", 0.05, amount=7) == 7
    __import__("time").sleep(0.06)
    assert counters.incr("LIMITER/203.0.113.3", 60, amount=2) == 2
