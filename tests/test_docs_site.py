"""The documentation site served where it is deployed: under ``/searchengine/docs/``.

The site is built with ``mkdocs build --strict`` into a temporary folder and
served by a small loopback HTTP server (started and stopped here) that answers
a missing page with ``404.html`` and status 404, as a web server configured for
the site does. Headless Chromium (``tests/live.py``) then asks for missing pages
at several depths: the page must be styled by the site's stylesheet and every
link, stylesheet, script and image on it must load.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest

from live import chromium

REPO = Path(__file__).resolve().parent.parent
PREFIX = "/searchengine/docs/"
PAGE_LOAD_SECONDS = 30


class _SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Files of the built site under :data:`PREFIX`; ``404.html`` (status 404) for anything else."""

    def translate_path(self, path: str) -> str:
        path = urlsplit(path).path
        inside = path[len(PREFIX) :] if path.startswith(PREFIX) else "\0missing"
        return super().translate_path("/" + inside)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        missing_page = Path(self.directory) / "404.html"
        if code != 404 or not missing_page.is_file():
            return super().send_error(code, message, explain)
        body = missing_page.read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, format: str, *args) -> None:  # quiet: the test reports what matters
        pass


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        """A browser that drops a connection it no longer needs is not an error."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site built by ``mkdocs build --strict`` (skipped without mkdocs, failed under ``CI``)."""
    if importlib.util.find_spec("mkdocs") is None:
        reason = "mkdocs is not installed (pip install '.[docs]')"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    folder = tmp_path_factory.mktemp("docs-site") / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    env.pop("SEARCHENGINE_DOCS_URL", None)  # the default address, whose path is PREFIX
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(folder)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    return folder


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    """The site on a free loopback port under :data:`PREFIX`; yields the server's base URL."""
    server = _Server(("127.0.0.1", 0), functools.partial(_SiteHandler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with chromium(tmp_path_factory.mktemp("chromium-docs-profile"), PAGE_LOAD_SECONDS) as driver:
        yield driver


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code


def test_the_server_answers_a_missing_page_with_the_404_page(served):
    assert _status(served + PREFIX) == 200
    assert _status(served + PREFIX + "no-such-page/") == 404


@pytest.mark.parametrize("missing", ["no-such-page", "no/such/page/", "searching/no-such-section/deeper.html"])
def test_the_404_page_is_styled_and_its_links_resolve(served, browser, missing):
    url = served + PREFIX + missing
    browser.get(url)
    assert "404" in browser.find_element("css selector", "h1").text
    # Material's stylesheet applied: its header is sticky and its font size is set on the root.
    header = browser.find_element("css selector", "header.md-header")
    assert header.value_of_css_property("position") == "sticky"
    loaded = browser.execute_script(
        "return Array.from(document.styleSheets).filter(s => s.href).map(s => [s.href, s.cssRules.length])"
    )
    assert loaded and all(rules > 0 for _, rules in loaded), loaded
    # Every address on the page, resolved as the browser resolves it, is served.
    addresses = browser.execute_script(
        "return [...document.querySelectorAll('a[href], link[href], script[src], img[src]')].map(e => e.href || e.src)"
    )
    own = {address.split("#")[0] for address in addresses if address.startswith(served)}
    assert served + PREFIX in own  # the home link
    assert all(urlsplit(address).path.startswith(PREFIX) for address in own), sorted(own)
    broken = sorted(address for address in own if _status(address) != 200)
    assert not broken, f"{url}: {broken}"
    # The search index is found where the page's configuration says.
    config_base = browser.execute_script("return JSON.parse(document.getElementById('__config').textContent).base")
    assert _status(urljoin(url, config_base).rstrip("/") + "/search/search_index.json") == 200
