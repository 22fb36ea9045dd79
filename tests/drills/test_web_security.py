"""Web security drill: the JSON API against its OpenAPI document, HTML/JS payloads in a real
browser, and paths outside the app.

1. **API fuzzing.** Schemathesis reads ``/api/openapi.json`` from the Flask app and
   generates requests for every ``/api/*`` operation, schema-valid ones and
   schema-violating ones, over the arXiv subset index (``arxiv_index_dir``) and
   over the payload index below, record ids drawn from the index as well as
   generated. Every response must match the document (status, content type,
   body), no response may be a 5xx, schema-violating requests must be refused,
   and a schema-valid request may be refused (400) only by a rule the document
   states but cannot express as a schema (listed in :data:`DOCUMENTED_400`).
   Generation is derandomized, so a run is reproducible.
2. **Payloads.** Records whose title, abstract, authors, categories, id and link
   carry ``<script>``, ``onerror``, ``javascript:``, attribute-breaking quotes,
   ``</textarea>``, SVG ``onload`` and more are indexed, and queries, filters and
   parameters carrying the same payloads are sent to search pages, record pages,
   error pages and the JSON API of a real server (``searchengine serve``). Headless
   Chromium loads each page with the Content-Security-Policy switched off (so
   escaping alone is tested; the policy is checked as a header): no dialog may
   open, no request may reach a sentinel HTTP server the payloads point at, no
   element or attribute the templates do not write may appear, and the payload
   text must be shown literally. JSON answers must be ``application/json`` with
   ``nosniff``, stay JSON in the browser and give the payloads back exactly.
3. **Paths.** Traversal and odd paths are sent raw (a socket, since HTTP clients
   resolve ``..``) to ``searchengine serve`` with its default processes and
   with one (``--workers 1``), and through Flask's test client: never a file
   from outside ``searchengine/web/static``, never a 5xx, always 404.

Environment:
    DRILL_API_EXAMPLES  generated requests per API operation and mode (positive,
                        negative) over the arXiv index; a quarter of that over
                        the payload index (default 100)
    DRILL_RECORDS       size of the arXiv subset (see conftest.py)
"""

from __future__ import annotations

import http.server
import json
import os
import re
import socket
import threading
from pathlib import Path
from urllib.parse import parse_qs, quote, urlencode, urlsplit

import pytest

from searchengine import build_index
from searchengine.web import mathml

from .conftest import REPO
from live import chromium, serving
from shareddata import write_listing

API_EXAMPLES = int(os.environ.get("DRILL_API_EXAMPLES", 100))
# Ordinary arXiv listing records indexed beside the payload records.
REAL_RECORDS = 200
PAGE_LOAD_SECONDS = 20
# The browser drill stops after this many problems.
MAX_PROBLEMS = 30
# A word only the payload records hold, so one query finds them all.
MARKER = "zebrafish"
# An author of several payload records: more than one page at LIMIT.
SHARED_AUTHOR = "\"'><img src=x onerror=alert(77)> Mallory"
SHARED_AUTHOR_RECORDS = 12
LIMIT = 5

# Text of files outside searchengine/web/static that a traversal could reach (paths from the repository root).
OUTSIDE_STATIC = {
    "searchengine/web/app.py": "def create_app",
    "pyproject.toml": "[build-system]",
    "searchengine/web/templates/base.html": "{% block title %}",
    "/etc/passwd": "root:x:0:0",
}

# 400 answers the OpenAPI document states for schema-valid requests: rules
# about the query text or about several parameters together, which JSON
# Schema cannot express. Any other 400 to a schema-valid request means the
# document and the app disagree.
DOCUMENTED_400 = [
    re.compile(
        r"^the query is empty(: give query text or a filter, or sort by newest, oldest or title "
        r"to list every paper)?$"
    ),
    re.compile(r"^(semantic|hybrid) mode needs record vectors, and this index has none"),
    # The author pattern admits any character past ASCII (JSON Schema's \w is ASCII-only, and no
    # class both Python and ECMA-262 read names every Unicode letter); a value without one is refused.
    re.compile(r"^author filter '[^A-Za-z0-9]*' holds no name$"),
    re.compile(r"^the query .* has no searchable words"),
    re.compile(r"^'.*': the edit distance of a fuzzy word must be"),
    re.compile(r"^'.*': proximity search is not supported"),
    re.compile(r"^'.*': fuzzy words are searched in"),
    re.compile(r"^cannot parse the query "),
    re.compile(r"^unknown field '"),
    re.compile(r"^'.*:' has no value"),
    re.compile(r"^'.*': a wildcard needs at least"),
    re.compile(r"^filter .* cannot be combined with OR, NOT or parentheses"),
    re.compile(r"^page \d+ with limit \d+ reaches past hit 1000"),
    re.compile(r"^year filter .* is reversed"),
    re.compile(r"^the dates are reversed: 'since .*' starts after 'until .*' ends"),
    re.compile(r"^(since|until) date '\d{4}-\d{2}-(29|30|31)' is not a date"),  # a day its month lacks
]
# Filter errors are documented for values written in the query text (q); for
# the filter parameters their patterns in the document must keep them out.
FILTER_ERROR = re.compile(r"^(year|author|category) filter '(.*)' (is not|holds no)")


def payloads(sentinel: str) -> list[str]:
    """HTML/JS payloads; those that would load something point at ``sentinel``."""
    return [
        "<script>alert(1)</script>",
        f'<script src="{sentinel}/script.js"></script>',
        "<img src=x onerror=alert(2)>",
        f'<img src="{sentinel}/img.png">',
        '"><img src=x onerror=alert(3)>',
        "'><svg onload=alert(4)>",
        '" onmouseover="alert(5)" autofocus onfocus="alert(5)" x="',
        "' onfocus='alert(6)' autofocus='",
        "</textarea><script>alert(7)</script>",
        "</title><script>alert(8)</script>",
        "<svg/onload=alert(9)>",
        "javascript:alert(10)",
        '<a href="javascript:alert(11)">click</a>',
        f'<iframe src="{sentinel}/frame"></iframe>',
        f'<link rel="stylesheet" href="{sentinel}/style.css">',
        f"<style>@import '{sentinel}/import.css';</style>",
        f'<meta http-equiv="refresh" content="0;url={sentinel}/meta">',
        f'<base href="{sentinel}/">',
        f'<object data="{sentinel}/object"></object>',
        f'<form action="{sentinel}/form"><button>go</button></form>',
        "<input autofocus onfocus=alert(12)>",
        "<details open ontoggle=alert(13)>",
        "<body onload=alert(14)>",
        "<video><source onerror=alert(15)></video>",
        f'<div style="background:url({sentinel}/css-url)">styled</div>',
        "{{7*7}} ${7*7} <%= 7*7 %>",
        "<!-- --!> <![CDATA[ ]]>",
        "&lt;script&gt;alert(16)&lt;/script&gt; &amp;",
        "%3Cscript%3Ealert(17)%3C%2Fscript%3E",
        "\u2028\u2029</script><script>alert(18)</script>",
        f"data:text/html,<script>alert(19)</script><img src={sentinel}/data>",
        "<math><mtext><table><mglyph><style><img src=x onerror=alert(20)>",
    ]


def hostile_records(payload_list: list[str], sentinel: str) -> list[dict]:
    """Records in the plain JSON-lines format, every text field carrying payloads.

    Record ``i`` has payload ``i`` in its title, abstract and id, payload
    ``i+1`` in its authors and categories, and a ``javascript:``/sentinel link.
    The first :data:`SHARED_AUTHOR_RECORDS` also share one hostile author.
    """
    count = len(payload_list)
    records = []
    for i, payload in enumerate(payload_list):
        following = payload_list[(i + 1) % count]
        authors = [f"{following} Smith", f"Ada {payload}"]
        if i < SHARED_AUTHOR_RECORDS:
            authors.append(SHARED_AUTHOR)
        records.append(
            {
                "id": f"{i:02d}/../{payload}" if i % 3 == 0 else f"evil-{i:02d}{payload}",
                "title": f"{payload} {MARKER} title {i}",
                "abstract": f"An abstract about {MARKER} {i} with {payload} and {following} inside.",
                "authors": authors,
                "year": 1990 + i,  # plausible years (up to next year) for every payload
                "categories": [following, "cs.CR"],
                "url": ["javascript:alert(99)", f"{sentinel}/link", " JaVaScRiPt:alert(98)", "data:text/html,x"][i % 4],
            }
        )
    return records


# --- fixtures -----------------------------------------------------------------


class Sentinel:
    """A local HTTP server that counts every request it receives.

    ``/control`` answers with the payloads as raw HTML (the drill's check
    that its detectors work); everything else is an empty 204.
    """

    def __init__(self) -> None:
        self.hits: list[str] = []
        self.control_html = ""
        sentinel = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (the stdlib's name)
                if self.path.startswith("/control"):
                    body = sentinel.control_html.encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html; charset=utf-8")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                sentinel.hits.append(self.path)
                self.send_response(204)
                self.end_headers()

            do_POST = do_GET  # noqa: N815

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def sentinel():
    server = Sentinel()
    yield server
    server.close()


@pytest.fixture(scope="module")
def payload_list(sentinel) -> list[str]:
    return payloads(sentinel.url)


@pytest.fixture(scope="module")
def raw_records(payload_list, sentinel) -> list[dict]:
    return hostile_records(payload_list, sentinel.url)


@pytest.fixture(scope="module")
def records(raw_records) -> list[dict]:
    """The payload records as the readers read them: each author string split
    into people (a payload with a ``;`` names two), names without a letter or
    digit dropped."""
    from searchengine.records import has_name, split_authors

    return [
        dict(r, authors=[person for name in r.get("authors", []) for person in split_authors(name) if has_name(person)])
        if "authors" in r
        else r
        for r in raw_records
    ]


@pytest.fixture(scope="module")
def payload_index_dir(raw_records, tmp_path_factory) -> Path:
    """The payload records and :data:`REAL_RECORDS` arXiv listing records, indexed."""
    folder = tmp_path_factory.mktemp("websec")
    hostile = folder / "hostile.jsonl"
    hostile.write_text("".join(json.dumps(r) + "\n" for r in raw_records), encoding="utf-8")
    inputs = [hostile]
    real = folder / "real.jsonl"
    if write_listing(real, REAL_RECORDS):
        inputs.append(real)
    index_dir = folder / "index"
    summary = build_index(inputs, index_dir)
    assert not [p for p in summary.problems if p.skipped], summary.problems
    return index_dir


@pytest.fixture(scope="module")
def servers(payload_index_dir):
    """The default server (one process per core) and a single-process one: name → base URL."""
    # Hundreds of requests from one address on purpose: no per-client limit.
    with (
        serving(payload_index_dir, "--rate-limit", "off") as (_, processes),
        serving(payload_index_dir, "--workers", "1", "--rate-limit", "off") as (_, single),
    ):
        yield {"processes": processes, "single": single}


# Counts calls of the dialog functions before any page script runs; the
# dialogs still open, so they are also seen as real prompts.
DIALOG_HOOK = """
window.__dialogs = 0;
for (const name of ['alert', 'confirm', 'prompt', 'print']) {
  const original = window[name];
  window[name] = function (...args) { window.__dialogs += 1; return original.apply(this, args); };
}
"""


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """Headless Chromium that ignores pages' Content-Security-Policy (escaping alone is under test)."""
    with chromium(
        tmp_path_factory.mktemp("chromium-profile"),
        PAGE_LOAD_SECONDS,
        capabilities={"unhandledPromptBehavior": "ignore"},
    ) as driver:
        driver.execute_cdp_cmd("Page.enable", {})
        driver.execute_cdp_cmd("Page.setBypassCSP", {"enabled": True})
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": DIALOG_HOOK})
        yield driver


# --- 1. API fuzzing -------------------------------------------------------------


def _documented_400(case, response) -> bool:
    """True when a 400 to a schema-valid request comes from a rule the document states."""
    try:
        message = json.loads(response.content)["error"]
    except (ValueError, KeyError, TypeError):
        return False
    if any(rule.search(message) for rule in DOCUMENTED_400):
        return True
    bad_filter = FILTER_ERROR.match(message)
    if bad_filter:
        # a filter written in the query text, not one of the filter parameters
        name, value = bad_filter.group(1, 2)
        sent = case.query.get(name) if case.query else None
        sent = sent if isinstance(sent, list) else [sent] if sent is not None else []
        return value not in [" ".join(str(v).split()) for v in sent]
    return False


def _fuzz(app, ids: list[str], examples: int, failures: dict, counts: dict) -> None:
    """Run every API operation of ``app`` with ``examples`` generated requests per mode.

    Failures are collected as ``{(operation, mode, problem): the request's parameters}``.
    """
    import schemathesis
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st
    from schemathesis import GenerationMode
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi.checks import (
        content_type_conformance,
        negative_data_rejection,
        response_headers_conformance,
        response_schema_conformance,
        status_code_conformance,
    )

    received = _Received(app)
    schema = schemathesis.openapi.from_wsgi("/api/openapi.json", received)
    schema.validate()  # the document itself is valid OpenAPI 3.1
    checks = [
        not_a_server_error,
        status_code_conformance,
        content_type_conformance,
        response_headers_conformance,
        response_schema_conformance,
    ]

    for result in schema.get_all_operations():
        operation = result.ok()
        counts["operations"].add(operation.label)
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            strategies = [operation.as_strategy(generation_mode=mode)]
            if "{id}" in operation.path and ids:
                # real ids as well as generated ones, so that records are found
                strategies.append(
                    st.sampled_from(ids).flatmap(
                        lambda record_id, op=operation, m=mode: op.as_strategy(
                            generation_mode=m, path_parameters={"id": record_id}
                        )
                    )
                )
            mode_checks = checks + ([negative_data_rejection] if mode.is_negative else [])
            run = settings(
                max_examples=examples,
                derandomize=True,
                database=None,
                deadline=None,
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=list(HealthCheck),
            )(
                given(case=st.one_of(strategies))(
                    _checker(operation.label, mode, mode_checks, failures, counts, received)
                )
            )
            try:
                run()
            except Exception as exc:
                # a path id of any string has no schema-violating values
                if type(exc).__name__ != "Unsatisfiable":
                    raise


# A JSON number, as the OpenAPI document's "integer" is read from a query string.
_JSON_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")


def _valid_on_the_wire(operation, url: str) -> bool:
    """True when the query string actually sent satisfies the operation's parameters.

    A schema-violating value that form serialization turns into a valid one
    (an empty list into no parameter, an object into other parameters, a
    string into a one-value array) does not make a schema-violating request.
    """
    import jsonschema_rs

    sent = parse_qs(urlsplit(url).query, keep_blank_values=True)
    for parameter in operation.definition.raw.get("parameters", []):
        if parameter["in"] != "query" or parameter["name"] not in sent:
            continue
        schema, values = parameter["schema"], sent[parameter["name"]]
        if schema.get("type") == "array":
            instance = values
        elif len(values) > 1:
            return False
        elif values == [""] and parameter.get("allowEmptyValue"):
            continue
        elif schema.get("type") == "integer":
            if not _JSON_NUMBER.fullmatch(values[0]) or not float(values[0]).is_integer():
                return False
            instance = int(float(values[0]))
        else:
            instance = values[0]
        if not jsonschema_rs.validator_for(schema).is_valid(instance):
            return False
    return True


class _Received:
    """The app, remembering the query string of the last request it received.

    Schemathesis reports a request's URL as it would send it, but hands the
    test client an object parameter (``q`` as ``{"a": [], "b": [""]}``) as
    one value, which the client writes as its text: the app then receives
    one ``q``, where the reported URL repeats ``q``.
    """

    def __init__(self, app) -> None:
        self.app = app
        self.query = ""

    def __call__(self, environ, start_response):
        # WSGI gives the query string as Latin-1 text of the bytes sent.
        self.query = environ.get("QUERY_STRING", "").encode("latin-1").decode("utf-8", "replace")
        return self.app(environ, start_response)


def _checker(label: str, mode, checks: list, failures: dict, counts: dict, received: _Received):
    """The test body for one operation and mode: call, count, validate, collect failures."""

    def check(case):
        response = case.call()
        counts["requests"] += 1
        counts["5xx"] += response.status_code >= 500
        try:
            case.validate_response(response, checks=checks)
            problem = None
        except BaseException as exc:  # schemathesis raises a group of failures
            found = [
                f
                for f in getattr(exc, "exceptions", None) or [exc]
                if not (
                    getattr(f, "title", "") == "Schema-violating request accepted"
                    and _valid_on_the_wire(case.operation, "http://localhost/?" + received.query)
                )
            ]
            problem = "; ".join(sorted({getattr(f, "title", type(f).__name__) for f in found})) or None
        if problem is None and mode.is_positive and response.status_code == 400 and not _documented_400(case, response):
            problem = f"schema-valid request refused: {response.content[:200]!r}"
        if problem:
            counts["violations"] += 1
            failures.setdefault(
                (label, mode.value, problem),
                f"path id {case.path_parameters!r}, query {case.query!r}, "
                f"received {received.query!r}, answered {response.status_code}",
            )

    return check


def test_api_fuzzing_finds_no_5xx_and_no_schema_violation(
    arxiv_index_dir, arxiv_subset, payload_index_dir, records, figures
):
    from searchengine.web import create_app

    real_ids = [json.loads(line)["id"] for line in arxiv_subset.read_text(encoding="utf-8").splitlines()[:300]]
    failures: dict = {}
    counts = {"operations": set(), "requests": 0, "5xx": 0, "violations": 0}
    _fuzz(create_app(index_dir=arxiv_index_dir), real_ids, API_EXAMPLES, failures, counts)
    payload_ids = [r["id"] for r in records] + real_ids[:10]
    _fuzz(create_app(index_dir=payload_index_dir), payload_ids, max(10, API_EXAMPLES // 4), failures, counts)

    # the document's own operation, which schemathesis leaves out
    client = create_app(index_dir=payload_index_dir).test_client()
    document = client.get("/api/openapi.json")
    assert document.status_code == 200 and document.mimetype == "application/json"
    assert set(document.get_json()["paths"]) == {
        "/api/search",
        "/api/export",
        "/api/records",
        "/api/records/{id}",
        "/api/records/{id}/similar",
        "/api/similar",
        "/api/openapi.json",
    }
    counts["operations"].add("GET /api/openapi.json")
    counts["requests"] += 1

    figures.add("API operations fuzzed", len(counts["operations"]))
    figures.add("API requests generated", counts["requests"])
    figures.add("API 5xx responses", counts["5xx"])
    figures.add("API schema violations", counts["violations"])
    report = "\n".join(f"{op} [{mode}] {problem}\n    {sent}" for (op, mode, problem), sent in failures.items())
    assert not failures, report
    assert counts["5xx"] == 0
    assert len(counts["operations"]) == 7
    assert counts["requests"] >= 7 * API_EXAMPLES


# --- 2. payloads in a real browser --------------------------------------------------

# Every element and attribute the templates (and Chromium's JSON and text
# views) write; anything else in a page came from a payload.
TAGS = {
    "html",
    "head",
    "meta",
    "title",
    "link",
    "body",
    "header",
    "a",
    "form",
    "label",
    "div",
    "input",
    "select",
    "option",
    "button",
    "main",
    "footer",
    "section",
    "h1",
    "h2",
    "h3",
    "p",
    "aside",
    "svg",
    "rect",
    "ul",
    "li",
    "span",
    "q",
    "ol",
    "nav",
    "mark",
    "article",
    "dl",
    "dt",
    "dd",
    "code",
    "pre",
    "details",
    "summary",
    "table",
    "tr",
    "th",
    "td",
} | mathml.ELEMENTS  # formulas drawn on the page: only the sanitiser's elements
ATTRIBUTES = {
    "action",
    "data-format",
    "download",
    "aria-current",
    "aria-hidden",
    "aria-label",
    "aria-labelledby",
    "autocomplete",
    "charset",
    "class",
    "content",
    "data-facet",
    "data-value",
    "data-past",
    "for",
    "height",
    "href",
    "id",
    "inputmode",
    "lang",
    "maxlength",
    "method",
    "name",
    "pattern",
    "placeholder",
    "rel",
    "role",
    "size",
    "start",
    "tabindex",
    "title",
    "type",
    "value",
    "viewBox",
    "width",
    "x",
    "y",
    "selected",
    "xmlns",
} | mathml.ATTRIBUTES
INSPECT = """
const tags = new Set(arguments[0]), attributes = new Set(arguments[1]);
const found = [];
for (const el of document.querySelectorAll('*')) {
  const tag = el.tagName.toLowerCase();
  if (!tags.has(tag)) found.push('<' + tag + '>');
  for (const attr of el.attributes) {
    // Chromium's own view of text/plain answers styles its <pre>
    const viewer = tag === 'pre' && attr.name === 'style' && document.contentType === 'text/plain';
    if (!attributes.has(attr.name) && !viewer) found.push(tag + '[' + attr.name + ']');
  }
  for (const name of ['href', 'action']) {
    if (!el.hasAttribute(name)) continue;
    const url = new URL(el.getAttribute(name), location.href);
    const icon = tag === 'link' && el.getAttribute('rel') === 'icon' && url.href === 'data:,';
    const external = tag === 'a' && el.getAttribute('rel') && el.getAttribute('rel').includes('noopener');
    if (!icon && !['http:', 'https:'].includes(url.protocol)) found.push(tag + '[' + name + '=' + url.href + ']');
    else if (!icon && !external && url.origin !== location.origin) found.push(tag + '[' + name + '=' + url.href + ']');
  }
}
return {found: found, dialogs: window.__dialogs, type: document.contentType, title: document.title};
"""


class Pages:
    """Loads pages in the browser and records what each one did."""

    def __init__(self, driver, sentinel: Sentinel):
        self.driver = driver
        self.sentinel = sentinel
        self.loaded = 0
        self.dialogs = 0
        self.problems: list[str] = []
        self.url = ""

    def _dismiss(self) -> int:
        """Accept every open dialog; return how many there were."""
        from selenium.common.exceptions import NoAlertPresentException

        opened = 0
        while True:
            try:
                alert = self.driver.switch_to.alert
            except NoAlertPresentException:
                return opened
            opened += 1
            alert.accept()

    def _ask(self, command):
        """Run a browser command; a dialog in the way is counted, closed, and the command retried."""
        from selenium.common.exceptions import UnexpectedAlertPresentException

        for _ in range(20):
            try:
                return command()
            except UnexpectedAlertPresentException:
                opened = self._dismiss() or 1
                self.dialogs += opened
                self.problems.append(f"{self.url}: {opened} dialog(s)")
        raise AssertionError(f"{self.url}: dialogs keep opening")

    def load(self, url: str) -> dict:
        """Open ``url``; note any dialog, sentinel request or foreign markup; return the page's facts."""
        if len(self.problems) >= MAX_PROBLEMS:  # enough to see what is wrong; stop early
            raise AssertionError("\n".join(problem[:1500] for problem in self.problems))
        before = len(self.sentinel.hits)
        self.url = url
        self._ask(lambda: self.driver.get(url))
        self.loaded += 1
        opened = self._dismiss()
        facts = self._ask(lambda: self.driver.execute_script(INSPECT, sorted(TAGS), sorted(ATTRIBUTES)))
        opened = max(opened, facts["dialogs"] or 0)
        self.dialogs += opened
        if opened:
            self.problems.append(f"{url}: {opened} dialog(s)")
        if facts["found"]:
            self.problems.append(f"{url}: markup not from the templates: {sorted(set(facts['found']))[:6]}")
        if len(self.sentinel.hits) > before:
            self.problems.append(f"{url}: sentinel requests {self.sentinel.hits[before:]}")
        return facts

    def text(self, selector: str) -> list[str]:
        from selenium.webdriver.common.by import By

        return self._ask(
            lambda: [el.get_attribute("textContent") for el in self.driver.find_elements(By.CSS_SELECTOR, selector)]
        )

    def attribute(self, selector: str, name: str) -> list[str]:
        from selenium.webdriver.common.by import By

        return self._ask(
            lambda: [el.get_attribute(name) for el in self.driver.find_elements(By.CSS_SELECTOR, selector)]
        )

    def json(self, url: str):
        """Load a JSON answer in the browser: it must stay JSON (not HTML); returns the decoded body ({} if none)."""
        facts = self.load(url)
        if facts["type"] != "application/json":
            self.problems.append(f"{url}: shown as {facts['type']}")
        text = self._ask(lambda: self.driver.execute_script("return document.body ? document.body.innerText : ''"))
        try:
            return json.loads(text)
        except ValueError:
            self.problems.append(f"{url}: not JSON: {text[:200]!r}")
            return {}

    def expect(self, condition: bool, message: str) -> None:
        if not condition:
            self.problems.append(message)


def spaced(text: str) -> str:
    """Whitespace collapsed, as records, queries and filter values are stored and echoed."""
    return " ".join(text.split())


# What the JSON form of a record holds beside the fields the payload records give:
# no other link or identifier (their ids are not arXiv's), and no date.
UNGIVEN = {
    "pdf_url": "",
    "doi": "",
    "arxiv_doi": "",
    "journal_ref": "",
    "comments": "",
    "license": "",
    "submitted": None,
    "updated": None,
    "versions": [],
}


def as_stored(record: dict) -> dict:
    """A record as the index gives it back: text fields but the id with whitespace collapsed."""
    return {
        **UNGIVEN,
        **{
            name: value
            if name == "id"
            else [spaced(v) for v in value]
            if isinstance(value, list)
            else spaced(value)
            if isinstance(value, str)
            else value
            for name, value in record.items()
        },
    }


def test_the_drill_notices_a_dialog_a_sentinel_request_and_foreign_markup(browser, sentinel):
    sentinel.control_html = (
        f'<p>control</p><img src=x onerror=alert(1)><img src="{sentinel.url}/probe-img"><svg onload=alert(2)></svg>'
    )
    pages = Pages(browser, sentinel)
    before = len(sentinel.hits)
    pages.load(sentinel.url + "/control")
    for _ in range(50):  # the image request may land after the load event
        if "/probe-img" in sentinel.hits[before:]:
            break
        threading.Event().wait(0.1)
    assert pages.dialogs >= 1
    assert "/probe-img" in sentinel.hits[before:]
    assert any("<img>" in problem for problem in pages.problems)
    del sentinel.hits[before:]


def test_payloads_are_inert_and_literal_in_the_browser(servers, browser, sentinel, payload_list, records, figures):
    base = servers["processes"]
    pages = Pages(browser, sentinel)

    # every payload record on one results page; their links as the browser resolves them
    pages.load(f"{base}/?{urlencode({'q': MARKER, 'limit': 50})}")
    titles = pages.text("ol.hits h2.title a")
    pages.expect(
        sorted(titles) == sorted(as_stored(r)["title"] for r in records), f"results page titles differ: {titles[:3]}"
    )
    links = dict(zip(pages.text("ol.hits h2.title a"), pages.attribute("ol.hits h2.title a", "href")))
    facet_values = set(pages.attribute('a[data-facet="author"]', "data-value"))
    pages.expect(SHARED_AUTHOR in facet_values, "the hostile author is not a facet value")

    for record in map(as_stored, records):
        link = links.get(record["title"])
        pages.expect(link is not None and urlsplit(link).netloc == urlsplit(base).netloc, f"no link to {record['id']}")
        if link is None:
            continue
        facts = pages.load(link)
        pages.expect(facts["title"] == f"{record['title']} · searchengine", f"{link}: page title {facts['title']!r}")
        shown = {
            "title": pages.text("article.record h1"),
            "abstract": pages.text("p.abstract"),
            "authors": pages.text("ul.authors li"),
            "categories": pages.text("ul.categories li a"),
            "id": pages.text("dd code"),
        }
        wanted = {
            "title": [record["title"]],
            "abstract": [record["abstract"]],
            "authors": record["authors"],
            "categories": record["categories"],
            "id": [record["id"]],
        }
        pages.expect(shown == wanted, f"{link}: shown {shown} instead of {wanted}")
        # the source's link, under the title and among the fields, and no other
        pages.expect(
            set(pages.attribute("a[rel~=nofollow]", "href")) <= {record["url"]},
            f"{link}: source link {pages.attribute('a[rel~=nofollow]', 'href')}",
        )
        exports = pages.attribute("dd a", "href")[-2:]
        if len(exports) != 2:
            pages.problems.append(f"{link}: no export links")
            continue
        bibtex, api = exports
        data = pages.json(api)
        pages.expect(data == record, f"{api}: {data} instead of {record}")
        if pages.load(bibtex)["type"] != "text/plain":
            pages.problems.append(f"{bibtex}: not text/plain")

    # a filter value carrying a payload: chips, facet links and page links keep it
    url = f"{base}/?{urlencode({'author': SHARED_AUTHOR, 'limit': LIMIT})}"
    pages.load(url)
    pages.expect(pages.text(".chips .chip span") == [f"Author: {SHARED_AUTHOR}"], f"{url}: chips")
    heading = pages.text("#results-heading")
    pages.expect(bool(heading) and heading[0].strip().startswith(f"{SHARED_AUTHOR_RECORDS} hits"), f"{url}: {heading}")
    following = pages.attribute('nav.pages a[rel="next"]', "href")
    pages.expect(len(following) == 1, f"{url}: no next page link")
    if following:
        pages.load(following[0])
        pages.expect(pages.text(".chips .chip span") == [f"Author: {SHARED_AUTHOR}"], f"{following[0]}: chips")
        pages.expect(len(pages.text("ol.hits li.hit")) == LIMIT, f"{following[0]}: hits")

    suggested = 0
    for payload in payload_list:
        # the JSON API gives the payload back as data, or refuses the query
        # by a rule of the query language
        query = f"{payload} {MARKER}"
        url = f"{base}/api/search?{urlencode({'q': query, 'author': payload})}"
        answer = pages.json(url)
        refused = answer.get("error", "")
        pages.expect(
            answer.get("query") == spaced(query) or any(rule.search(refused) for rule in DOCUMENTED_400),
            f"{url}: {answer}",
        )
        # the search box, the heading, notices and chips echo query and filter
        url = f"{base}/?{urlencode({'q': query, 'author': payload})}"
        pages.load(url)
        pages.expect(pages.attribute("input#q", "value") == [spaced(query)], f"{url}: search box")
        if refused:
            pages.expect(pages.text("section.error p")[:1] == [refused], f"{url}: {pages.text('section.error p')}")
        else:
            pages.expect(pages.text(".chips .chip span") == [f"Author: {spaced(payload)}"], f"{url}: chips")
        # a misspelled query: "did you mean" repeats the payload in text and link
        misspelled = f"{payload} {MARKER[:-2]}{MARKER[-1]}"
        answer = pages.json(f"{base}/api/search?{urlencode({'q': misspelled})}")
        suggestion, corrected = answer.get("suggestion"), answer.get("corrected")
        url = f"{base}/?{urlencode({'q': misspelled})}"
        pages.load(url)
        if corrected:
            # "showing results for" the correction, a link back to the query as typed
            suggested += 1
            pages.expect(pages.text("p.corrected q")[:1] == [corrected], f"{url}: {pages.text('p.corrected q')}")
            link = pages.attribute("p.corrected a", "href")
            pages.expect(
                len(link) == 1
                and parse_qs(urlsplit(link[0]).query).get("q") == [spaced(misspelled)]
                and parse_qs(urlsplit(link[0]).query).get("exact") == ["1"],
                f"{url}: search-instead link {link}",
            )
        elif suggestion:
            suggested += 1
            pages.expect(pages.text("p.suggestion q") == [suggestion], f"{url}: {pages.text('p.suggestion q')}")
            link = pages.attribute("p.suggestion a", "href")
            pages.expect(
                len(link) == 1 and parse_qs(urlsplit(link[0]).query).get("q") == [suggestion],
                f"{url}: suggestion link {link}",
            )
        # an error page naming the payload
        url = f"{base}/?{urlencode({'q': payload, 'category': payload})}"
        pages.load(url)
        message = f"category filter {spaced(payload)!r} is not a category code (like cs.DC, cs or cs.*)"
        pages.expect(pages.text("section.error p")[:1] == [message], f"{url}: {pages.text('section.error p')[:1]}")
        pages.expect(pages.attribute("input#q", "value") == [spaced(payload)], f"{url}: search box")
        # a missing record named by the payload
        url = f"{base}/records/{quote(payload, safe='')}"
        pages.load(url)
        pages.expect(pages.text("section.error p")[:1] == [f"no record with id {payload!r}"], f"{url}: message")
        url = f"{base}/api/search?{urlencode({'q': MARKER, 'category': payload})}"
        pages.expect(pages.json(url) == {"error": message}, f"{url}: error")

    threading.Event().wait(0.5)  # let a late request reach the sentinel
    figures.add("payloads", len(payload_list))
    figures.add("pages rendered in the browser", pages.loaded)
    figures.add("dialogs opened", pages.dialogs)
    figures.add("sentinel requests", len(sentinel.hits))
    assert not pages.problems, "\n".join(problem[:1500] for problem in pages.problems[:40])
    assert pages.dialogs == 0
    assert sentinel.hits == []
    assert pages.loaded >= 3 * len(records) + 6 * len(payload_list)
    assert suggested >= len(payload_list) // 2  # most payload queries get a "did you mean"


def test_json_answers_give_payloads_back_exactly_and_never_as_html(payload_index_dir, records, payload_list):
    from searchengine.feeds import id_path
    from searchengine.web import create_app

    client = create_app(index_dir=payload_index_dir).test_client()
    for record in map(as_stored, records):
        response = client.get(f"/api/records/{id_path(record['id'])}")
        assert response.status_code == 200, record["id"]
        assert response.headers["Content-Type"] == "application/json"
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert json.loads(response.get_data(as_text=True)) == record
    for payload in payload_list:
        response = client.get("/api/search", query_string={"q": f"{payload} {MARKER}", "limit": 50})
        assert response.headers["Content-Type"] == "application/json"
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        data = response.get_json()
        if response.status_code == 400:  # a rule of the query language
            assert any(rule.search(data["error"]) for rule in DOCUMENTED_400), data
            continue
        assert data["query"] == spaced(f"{payload} {MARKER}")
        by_id = {hit["id"]: hit for hit in data["hits"]}
        for record in map(as_stored, records):
            if record["id"] in by_id:
                hit = by_id[record["id"]]
                assert (hit["title"], hit["authors"], hit["categories"]) == (
                    record["title"],
                    record["authors"],
                    record["categories"],
                )


SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}


def test_every_kind_of_answer_carries_the_security_headers(servers, records):
    from searchengine.feeds import id_path

    record = f"/records/{id_path(records[0]['id'])}"
    kinds = {
        "/": "text/html; charset=utf-8",
        f"/?{urlencode({'q': MARKER})}": "text/html; charset=utf-8",
        "/?q=x&limit=0": "text/html; charset=utf-8",
        "/nowhere": "text/html; charset=utf-8",
        record: "text/html; charset=utf-8",
        record + "/bibtex": "text/plain; charset=utf-8",
        record + "/ris": "text/plain; charset=utf-8",
        f"/api/export?{urlencode({'q': MARKER, 'format': 'ris'})}": (
            "application/x-research-info-systems; charset=utf-8"
        ),
        "/api" + record: "application/json",
        f"/api/search?{urlencode({'q': MARKER})}": "application/json",
        "/api/search?q=x&limit=0": "application/json",
        "/api/nowhere": "application/json",
        "/api/openapi.json": "application/json",
        "/static/style.css": "text/css; charset=utf-8",
    }
    for url, content_type in kinds.items():
        status, headers, _ = raw_get(servers["processes"], url.encode())
        assert status in (200, 400, 404), url
        assert headers["content-type"] == content_type, url
        for name, value in SECURITY_HEADERS.items():
            assert headers[name.lower()] == value, (url, name)
        if url.startswith("/api/"):
            assert headers["access-control-allow-origin"] == "*", url


# --- 3. paths outside the app ----------------------------------------------------------

STATIC = REPO / "searchengine" / "web" / "static"
# Request targets sent as raw bytes: traversal in every spelling, absolute and
# doubled paths, NUL, backslashes, overlong UTF-8, very long paths.
PATHS = [
    b"/../",
    b"/..",
    b"/%2e%2e/",
    b"/%2E%2E/",
    b"/..%2f",
    b"/..%2F",
    b"/.%2e/",
    b"/%252e%252e%252f",
    b"/..\\",
    b"/..%5c",
    b"/static/../app.py",
    b"/static/%2e%2e/app.py",
    b"/static/..%2fapp.py",
    b"/static/%2e%2e%2fapp.py",
    b"/static/%252e%252e%252fapp.py",
    b"/static/..%252fapp.py",
    b"/static/..\\app.py",
    b"/static/..%5capp.py",
    b"/static\\..\\app.py",
    b"/static/%5c..%5capp.py",
    b"/static/.%2e/app.py",
    b"/static/../../pyproject.toml",
    b"/static/../templates/base.html",
    b"/static/%2e%2e/templates/base.html",
    b"/static/../../../../../../etc/passwd",
    b"/static/%2e%2e/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    b"/static/..%2f..%2f..%2f..%2f..%2fetc%2fpasswd",
    b"//etc/passwd",
    b"///etc/passwd",
    b"/static//etc/passwd",
    b"/static/%2fetc%2fpasswd",
    b"/static/%2Fetc/passwd",
    b"/static/..;/app.py",
    b"/static/%c0%ae%c0%ae/app.py",
    b"/static/%c0%af%c0%afetc/passwd",
    b"/static/%e0%80%ae%e0%80%ae/app.py",
    b"/static/.%00./app.py",
    b"/static/%00",
    b"/static/style.css%00.png",
    b"/%00",
    b"/static/\x00",
    b"/\x00../app.py",
    b"/static/style.css/../../app.py",
    b"/records/../app.py",
    b"/api/../app.py",
    b"/api/records/../../app.py",
    b"/records/..%2f..%2fapp.py",
    b"/web/app.py",
    b"/app.py",
    b"/templates/base.html",
    b"/static/.",
    b"/static/",
    b"/static",
    b"/.git/config",
    b"/static/.git/config",
    b"/static/%2e%2e",
    b"/static/~/.bashrc",
    b"/static/%7e/.bashrc",
    b"/static/C:%5cwindows%5cwin.ini",
    b"http://127.0.0.1/static/../app.py",
    b"/static/" + b"a" * 5000,
    b"/" + b"../" * 2000,
    b"/static/" + b"%2e%2e/" * 1000 + b"etc/passwd",
    b"/static/./style.css",
    b"/static/style.css",
]


def raw_get(base: str, target: bytes) -> tuple[int, dict, bytes]:
    """Send ``GET target`` as is over a socket; return (status, lower-cased headers, body)."""
    host, port = urlsplit(base).hostname, urlsplit(base).port
    with socket.create_connection((host, port), timeout=20) as connection:
        connection.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := connection.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(lines[0].split()[1]), headers, body


def test_paths_outside_the_app_are_404_and_never_a_file(servers, payload_index_dir, figures):
    from searchengine.web import create_app

    stylesheet = (STATIC / "style.css").read_bytes()
    for path, marker in OUTSIDE_STATIC.items():  # each marker would be seen in its file
        assert marker in (REPO / path).read_text(encoding="utf-8"), path
    client = create_app(index_dir=payload_index_dir).test_client()
    outside = []
    wrong = []
    tried = 0
    for target in PATHS:
        answers = [(name, *raw_get(base, target)) for name, base in servers.items()]
        response = client.get(target.decode("latin-1"))
        answers.append(("test client", response.status_code, dict(response.headers), response.get_data()))
        for server, status, _, body in answers:
            tried += 1
            if any(marker.encode() in body for marker in OUTSIDE_STATIC.values()):
                outside.append((server, target[:80], status))
            if target in (b"/static/style.css", b"/static/./style.css"):
                # the drill sees a file served: the stylesheet, inside searchengine/web/static
                assert (status, body) == (200, stylesheet), (server, target)
                continue
            if status != 404:
                wrong.append((server, target[:80], status))
    figures.add("paths tried", len(PATHS))
    figures.add("path requests (two servers, test client)", tried)
    figures.add("served outside static", len(outside))
    assert outside == []
    assert wrong == []
