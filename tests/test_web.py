"""The web front end through Flask's test client: pages, API, errors, escaping, freshness.

The fixture index holds the six records of ``tests/data/web_records.jsonl``;
for the query ``SpMV GPU`` four of them match (every record whose title or
abstract has both words: 2301.00001, 2401.00002, 2402.00003, hep-th/9901001),
so the expected counts below can be checked by reading that file.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from html import unescape
from pathlib import Path

import pytest
from click.testing import CliRunner

from searchengine import build_index, open_index
from searchengine.cli import main
from searchengine.engines.whoosh.querying import parse
from searchengine.search import SearchResults
from searchengine.web import create_app
from searchengine.web.helpers import marked

DATA = Path(__file__).parent / "data"
RECORDS = DATA / "web_records.jsonl"
SPMV_GPU = {"2301.00001", "2401.00002", "2402.00003", "hep-th/9901001"}
HOSTILE_TITLE = "<script>alert('t')</script> SpMV GPU autotuning"
HOSTILE_AUTHOR = '"><img src=x onerror=alert(1)>'


@pytest.fixture(scope="module")
def web_index_dir(tmp_path_factory) -> Path:
    index_dir = tmp_path_factory.mktemp("web-index")
    build_index([RECORDS], index_dir)
    return index_dir


@pytest.fixture(scope="module")
def client(web_index_dir):
    app = create_app(index_dir=web_index_dir)
    return app.test_client()


def facet_links(html: str, facet: str) -> dict[str, str]:
    """Sidebar facet values of one facet → the URL each link leads to."""
    pattern = re.compile(rf'<a href="([^"]*)"[^>]*data-facet="{facet}" data-value="([^"]*)"')
    return {unescape(value): unescape(href) for href, value in pattern.findall(html)}


def facet_counts(html: str, facet: str) -> dict[str, int]:
    pattern = re.compile(
        rf'data-facet="{facet}" data-value="([^"]*)"><span class="value">[^<]*</span>\s*'
        r'<span class="count">(\d+)</span>'
    )
    return {unescape(value): int(count) for value, count in pattern.findall(html)}


def chips(html: str) -> dict[str, str]:
    """Active-filter chips: label → URL of the remove link."""
    pattern = re.compile(r'<li class="chip"><span>([^<]*)</span>\s*<a href="([^"]*)"')
    return {unescape(label): unescape(href) for label, href in pattern.findall(html)}


# --- search page ------------------------------------------------------------


def test_landing_page_has_labelled_search_box_and_document_count(client):
    response = client.get("/")
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    assert '<form role="search" action="/" method="get"' in html
    assert '<label for="q">' in html and '<input id="q" name="q" type="search"' in html
    assert "6 papers indexed" in html
    assert '<link rel="stylesheet" href="/static/style.css">' in html


def test_the_document_count_has_thousands_separators():
    class LargeIndex:  # the landing page asks for the count, whether to offer ranking by meaning, and examples
        doc_count = 74728
        has_vectors = False
        has_dates = True

        def search(self, query, **options):
            return SearchResults(query=query, total=0, hits=[], page={"number": 1, "size": 1, "pages": 0})

    html = create_app(index=LargeIndex()).test_client().get("/").get_data(as_text=True)
    assert "74,728 papers indexed" in html
    assert 'id="examples-heading"' not in html and 'id="syntax-heading"' in html  # no paper to draw examples from


def test_a_corrected_search_is_headed_by_what_was_searched(client):
    html = client.get("/?q=SpMV+kernals").get_data(as_text=True)
    heading = re.search(r'<h1 id="results-heading"[^>]*>(.*?)</h1>', html, re.S).group(1)
    assert " ".join(unescape(re.sub(r"<[^>]+>", "", heading)).split()).startswith("1 hit for SpMV kernels (")
    assert "Showing results for <q>SpMV kernels</q>" in html


def test_a_page_without_hits_lists_no_facets_and_a_page_with_hits_links_to_them(client):
    empty = client.get("/?q=zebrafish+quasar&year=2023").get_data(as_text=True)
    assert 'class="facets"' not in empty and "to-filters" not in empty and "No values." not in empty
    assert "No paper matches. Try fewer words or remove a filter." in empty
    assert 'aria-label="Remove filter Year: 2023"' in empty  # the filter can still be removed
    full = client.get("/?q=SpMV").get_data(as_text=True)
    assert '<aside class="facets" id="filters" aria-label="Filters">' in full
    assert '<p class="to-filters"><a href="#filters">Filter by year, author, category, journal or date</a></p>' in full


def test_search_page_lists_every_hit_with_record_links_total_and_time(client):
    html = client.get("/?q=SpMV+GPU").get_data(as_text=True)
    assert "4 hits for <q>SpMV GPU</q>" in html
    assert re.search(r'<span class="took">\(\d+ ms\)</span>', html)
    # each record link carries the search, for the record page's box and back link
    links = set(re.findall(r'<h2 class="title"><a href="/records/([^"]+)">', html))
    assert links == {f"{record_id}?q=SpMV+GPU" for record_id in SPMV_GPU}
    assert '<span class="authors">Ada Lovelace, Alan Turing</span>' in html
    assert '<span class="year">2023</span>' in html
    assert '<span class="categories">cs.DC cs.PF</span>' in html
    # the old-style id without a year field gets the year its id names
    assert '<span class="year">1999</span>' in html


def test_record_without_a_year_says_so(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(
        '{"id": "local-1", "title": "SpMV notes without a date"}\n'
        '{"id": "local-2", "title": "SpMV notes of 2020", "year": 2020}\n',
        encoding="utf-8",
    )
    build_index([path], tmp_path / "ix")
    html = create_app(index_dir=tmp_path / "ix").test_client().get("/?q=SpMV").get_data(as_text=True)
    assert '<span class="year">year unknown</span>' in html
    assert re.search(r'<li class="unknown"><span class="value">unknown</span> <span class="count">1</span>', html)


def test_highlight_marks_matched_words_and_escapes_record_text(client):
    html = client.get("/?q=SpMV+GPU").get_data(as_text=True)
    assert "&lt;script&gt;alert(&#39;t&#39;)&lt;/script&gt; <mark>SpMV</mark> <mark>GPU</mark> autotuning" in html
    assert "Tiled <mark>SpMV</mark> for <mark>GPUs</mark>" in html
    assert "<script" not in html
    assert "<img" not in html
    assert "<b>bold</b>" not in html and "&lt;b&gt;bold&lt;/b&gt;" in html
    assert "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;" in html


def test_echoed_query_is_escaped_everywhere(client):
    html = client.get("/", query_string={"q": '"><script>alert(9)</script> GPU'}).get_data(as_text=True)
    assert "<script>alert(9)" not in html
    assert 'value="&#34;&gt;&lt;script&gt;alert(9)&lt;/script&gt; GPU"' in html


def test_marked_ignores_overlapping_backwards_and_out_of_range_spans():
    assert str(marked("a<b c", [(0, 1), (0, 3), (4, 3), (4, 99), (4, 5)])) == "<mark>a</mark>&lt;b <mark>c</mark>"
    assert str(marked("x", None)) == "x"


def test_year_facet_counts_all_hits_and_links_toggle_the_filter(client):
    html = client.get("/?q=SpMV+GPU&limit=1").get_data(as_text=True)
    # counts over all four hits, not only the one shown
    assert facet_counts(html, "year") == {"1999": 1, "2023": 1, "2024": 2}
    assert facet_links(html, "year")["2024"] == "/?q=SpMV+GPU&year=2024&limit=1"
    assert facet_counts(html, "author") == {
        "Grace Hopper": 2,
        "Ada Lovelace": 1,
        "Alan Turing": 1,
        "Edward Witten": 1,
        HOSTILE_AUTHOR: 1,
    }
    assert facet_counts(html, "category") == {"cs.DC": 2, "cs.MS": 1, "cs.PF": 1, "hep-th": 1}
    # the histogram: one bar per known year, each a link to the same toggle
    assert re.findall(r"<title>(\d{4}): (\d+)</title>", html) == [("1999", "1"), ("2023", "1"), ("2024", "2")]

    filtered = client.get("/?q=SpMV+GPU&year=2024").get_data(as_text=True)
    assert "2 hits for <q>SpMV GPU</q>" in filtered
    assert set(re.findall(r'<h2 class="title"><a href="/records/([^"]+)">', filtered)) == {
        "2401.00002?q=SpMV+GPU&amp;year=2024",
        "2402.00003?q=SpMV+GPU&amp;year=2024",
    }
    assert chips(filtered) == {"Year: 2024": "/?q=SpMV+GPU"}
    # the selected value's link removes it again; another year is added (OR)
    assert facet_links(filtered, "year")["2024"] == "/?q=SpMV+GPU"
    assert 'aria-current="true"' in filtered


def test_repeated_filter_values_combine_with_or_and_chips_remove_one(client):
    html = client.get("/?q=SpMV&author=Ada+Lovelace&author=Edward+Witten").get_data(as_text=True)
    assert set(re.findall(r'<h2 class="title"><a href="/records/([^"?]+)', html)) == {"2301.00001", "hep-th/9901001"}
    assert chips(html) == {
        "Author: Ada Lovelace": "/?q=SpMV&author=Edward+Witten",
        "Author: Edward Witten": "/?q=SpMV&author=Ada+Lovelace",
    }


def test_browse_by_filter_without_query(client):
    data = client.get("/api/search?year=2025&sort=title").get_json()
    assert [hit["id"] for hit in data["hits"]] == ["2501.00004", "2502.00006"]


# The six records newest first: year descending (hep-th/9901001 takes 1999 from its id), then id descending.
NEWEST = ["2502.00006", "2501.00004", "2402.00003", "2401.00002", "2301.00001", "hep-th/9901001"]


def heading(html: str) -> str:
    """The results heading as read: tags dropped, spaces collapsed."""
    found = re.search(r'<h1 id="results-heading"[^>]*>(.*?)</h1>', html, re.S).group(1)
    return " ".join(unescape(re.sub(r"<[^>]+>", "", found)).split())


def test_the_start_page_and_every_footer_link_to_the_latest_papers(client):
    start = client.get("/").get_data(as_text=True)
    assert '<p class="latest"><a href="/?sort=newest">Latest papers</a>: every paper, newest first.</p>' in start
    hits = client.get("/?q=SpMV").get_data(as_text=True)
    assert '<a href="/?sort=newest" class="latest">Latest papers</a>' in hits


def test_the_latest_papers_page_lists_every_paper_newest_first_with_facets(client):
    html = client.get("/?sort=newest").get_data(as_text=True)
    assert "<title>Latest papers · searchengine</title>" in html
    assert re.fullmatch(r"6 papers, newest first \(\d+ ms\)", heading(html))
    # each record link carries the listing, so its page links back to it
    assert re.findall(r'<h2 class="title"><a href="/records/([^"?]+)\?sort=newest">', html) == NEWEST
    assert facet_counts(html, "year") == {"1999": 1, "2023": 1, "2024": 2, "2025": 2}
    assert facet_counts(html, "category") == {
        "cs.DC": 2,
        "cs.PF": 1,
        "cs.MS": 1,
        "cs.LG": 1,
        "cs.CL": 1,
        "cs.SE": 1,
        "hep-th": 1,
    }
    assert facet_counts(html, "author")["Ada Lovelace"] == 2 and facet_counts(html, "author")["Grace Hopper"] == 2
    # a facet value narrows the listing, keeping its order; its chip leads back to the whole listing
    assert facet_links(html, "year")["2024"] == "/?year=2024&sort=newest"
    assert chips(html) == {}
    narrowed = client.get("/?year=2024&sort=newest").get_data(as_text=True)
    assert chips(narrowed) == {"Year: 2024": "/?sort=newest"}
    assert '<option value="newest" selected>newest</option>' in html
    assert '<link rel="alternate" type="application/atom+xml" title="This search as a feed" href="/feed.atom">' in html
    assert '<a href="/api/export?sort=newest&amp;format=csv" data-format="csv" download>' in html
    assert '<a href="/api/search?sort=newest">These results as JSON</a>' in html


def test_the_latest_papers_are_paged(client):
    second = client.get("/?sort=newest&limit=2&page=2").get_data(as_text=True)
    assert re.findall(r'<h2 class="title"><a href="/records/([^"?]+)', second) == NEWEST[2:4]
    assert '<ol class="hits" start="3">' in second
    assert '<a href="/?sort=newest&amp;limit=2&amp;page=3" rel="next">Next</a>' in second
    assert '<a href="/?sort=newest&amp;limit=2" rel="prev">Previous</a>' in second


@pytest.mark.parametrize(
    ("url", "title", "heading_text", "ids"),
    [
        ("/?sort=oldest", "All papers", "6 papers, oldest first", NEWEST[::-1]),
        # Graph, Language, <script> (from its first letter), Sparse, SpMV, Tiled
        (
            "/?q=&sort=title",
            "All papers",
            "6 papers, by title",
            ["2501.00004", "2502.00006", "2402.00003", "2301.00001", "hep-th/9901001", "2401.00002"],
        ),
    ],
)
def test_the_other_listing_sorts_list_every_paper_too(client, url, title, heading_text, ids):
    html = client.get(url).get_data(as_text=True)
    assert f"<title>{title} · searchengine</title>" in html
    assert heading(html).startswith(heading_text + " (")
    assert re.findall(r'<h2 class="title"><a href="/records/([^"?]+)', html) == ids


@pytest.mark.parametrize("url", ["/", "/?q=", "/?sort=relevance", "/?q=+&sort=relevance"])
def test_without_query_filter_or_listing_sort_the_start_page_is_shown(client, url):
    html = client.get(url).get_data(as_text=True)
    assert "6 papers indexed" in html and 'id="results-heading"' not in html


def test_a_record_opened_from_the_latest_papers_links_back_to_them(client):
    page = client.get("/records/2501.00004?sort=newest").get_data(as_text=True)
    assert '<a href="/?sort=newest" rel="up">← Back to results</a>' in page


def test_the_api_lists_the_latest_papers_with_facets(client):
    data = client.get("/api/search?sort=newest&limit=3").get_json()
    assert data["query"] == "" and data["total"] == 6
    assert [hit["id"] for hit in data["hits"]] == NEWEST[:3]
    assert [hit["score"] for hit in data["hits"]] == [0.0, 0.0, 0.0]
    assert data["page"] == {"number": 1, "size": 3, "pages": 2}
    assert data["facets"]["year"] == [
        {"value": 2025, "count": 2, "selected": False},
        {"value": 2024, "count": 2, "selected": False},
        {"value": 2023, "count": 1, "selected": False},
        {"value": 1999, "count": 1, "selected": False},
    ]
    assert client.get("/api/search?sort=oldest&limit=3&page=2").get_json()["hits"][0]["id"] == NEWEST[2]
    export = client.get("/api/export?sort=newest&format=jsonl")
    assert export.status_code == 200 and export.headers["X-Total-Hits"] == "6"
    assert [json.loads(line)["id"] for line in export.get_data(as_text=True).splitlines()] == NEWEST


def test_year_range_fields_redirect_to_the_canonical_url(client):
    response = client.get("/?q=SpMV+GPU&year_from=2023&year_to=2024&sort=newest")
    assert response.status_code == 303
    assert response.headers["Location"] == "/?q=SpMV+GPU&year=2023-2024&sort=newest"
    html = client.get(response.headers["Location"]).get_data(as_text=True)
    assert "3 hits" in html
    assert chips(html) == {"Year: 2023-2024": "/?q=SpMV+GPU&sort=newest"}
    # the range fields show the active range; submitting them replaces it
    assert re.search(r'id="year_from" [^>]*value="2023"', html) and re.search(r'id="year_to" [^>]*value="2024"', html)
    form = html[html.index('class="year-range"') :]
    assert '<input type="hidden" name="year"' not in form[: form.index("</form>")]


def test_pagination_nav_marks_current_page_and_sort_is_selected(client):
    html = client.get("/?q=SpMV+GPU&limit=1&page=2&sort=newest").get_data(as_text=True)
    nav = html[html.index('<nav class="pages"') : html.index("</nav>")]
    assert 'aria-label="Result pages"' in nav
    assert re.findall(r'<a href="([^"]*)" aria-current="page">(\d+)</a>', nav) == [
        ("/?q=SpMV+GPU&amp;sort=newest&amp;limit=1&amp;page=2", "2")
    ]
    assert '<a href="/?q=SpMV+GPU&amp;sort=newest&amp;limit=1&amp;page=3" rel="next">Next</a>' in nav
    assert '<a href="/?q=SpMV+GPU&amp;sort=newest&amp;limit=1" rel="prev">Previous</a>' in nav
    assert '<option value="newest" selected>newest</option>' in html
    assert '<ol class="hits" start="2">' in html


def test_suggestion_and_relaxed_notices_are_shown_when_results_say_so(web_index_dir):
    class Stub:
        doc_count = 6
        has_vectors = False
        has_dates = True

        def run(self, request):
            query = request.query
            results = SearchResults(
                query=query,
                total=0,
                hits=[],
                facets={},
                suggestion="spmv <gpu>",
                relaxed=True,
                page={"number": 1, "size": 10, "pages": 0},
            )
            results.notes = ["the query was cut to its first 12 characters"]  # when the API reports repairs
            results.timed_out = True
            return results

    html = create_app(index=Stub()).test_client().get("/?q=spmb+gpu&year=2024").get_data(as_text=True)
    assert 'Did you mean\n        <a href="/?q=spmv+%3Cgpu%3E&amp;year=2024"><q>spmv &lt;gpu&gt;</q></a>?' in html
    assert "No paper has every word of the query" in html
    assert '<p class="notice note">The query was cut to its first 12 characters.</p>' in html
    assert "The search ran out of time" in html


def test_a_corrected_query_links_to_the_query_as_typed_and_names_unmatched_words(web_index_dir):
    seen = []

    class Stub:
        doc_count = 6
        has_vectors = False
        has_dates = True

        def run(self, request):
            query = request.query
            seen.append((query, request.exact))
            if request.exact:
                return SearchResults(
                    query=query,
                    total=2,
                    hits=[],
                    suggestion="spmv gpu",
                    relaxed=True,
                    unmatched=["spmb", "<x>"],
                    page={"number": 1, "size": 10, "pages": 1},
                )
            return SearchResults(
                query=query,
                total=3,
                hits=[],
                suggestion="spmv gpu",
                corrected="spmv gpu",
                page={"number": 1, "size": 10, "pages": 1},
            )

    client = create_app(index=Stub()).test_client()
    html = client.get("/?q=spmb+gpu&year=2024&page=1").get_data(as_text=True)
    assert (
        '<p class="notice corrected">Showing results for <q>spmv gpu</q>.\n'
        '        Search instead for <a href="/?q=spmb+gpu&amp;year=2024&amp;exact=1"><q>spmb gpu</q></a>.</p>' in html
    )
    assert "Did you mean" not in html
    literal = client.get("/?q=spmb+gpu&year=2024&exact=1").get_data(as_text=True)
    assert "Did you mean" in literal and "Showing results for" not in literal
    assert (
        '<p class="notice relaxed">No paper has every word of the query; these match some of them. '
        "<q>spmb</q>, <q>&lt;x&gt;</q> matched no paper.</p>"
    ) in literal
    assert seen == [("spmb gpu", False), ("spmb gpu", True)]
    assert client.get("/api/search?q=spmb+gpu&exact=true").get_json()["unmatched"] == ["spmb", "<x>"]
    refused = client.get("/api/search?q=spmb+gpu&exact=yes")
    assert refused.status_code == 400
    assert refused.get_json() == {"error": "exact must be 1, 0, true or false, not 'yes'"}


# --- record page ------------------------------------------------------------


def test_record_page_shows_fields_links_similar_papers_and_exports(client):
    html = client.get("/records/2301.00001").get_data(as_text=True)
    assert "<h1>Sparse matrix-vector multiplication (SpMV) on the GPU</h1>" in html
    assert "We tune SpMV kernels for GPU memory hierarchies and report speedups over CSR." in html
    assert '<a href="/?author=Ada+Lovelace">Ada Lovelace</a>' in html
    assert '<a href="/?year=2023">2023</a>' in html
    assert '<a href="/?category=cs.DC">cs.DC</a> (primary)' in html
    assert '<a href="https://arxiv.org/abs/2301.00001" rel="noopener noreferrer">arXiv:2301.00001</a>' in html
    assert '<a href="/records/2301.00001/bibtex">BibTeX</a>' in html
    similar = html[html.index('id="similar-heading"') :]
    assert '<a href="/records/2401.00002">Tiled SpMV for GPUs</a>' in similar
    assert '/records/2301.00001"' not in similar
    # each similar paper once, in the order of the API's answer
    listed = re.findall(r'<li><a href="/records/([^"?]+)', similar)
    assert listed == [hit["id"] for hit in client.get("/api/records/2301.00001/similar?limit=5").get_json()["hits"]]


def test_record_page_escapes_hostile_fields_and_never_links_javascript_urls(client):
    html = client.get("/records/2402.00003").get_data(as_text=True)
    assert "<script" not in html and "<img" not in html
    assert "javascript:" not in html
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; &#34;quotes&#34;" in html


def test_old_style_arxiv_ids_with_a_slash_have_record_pages(client):
    html = client.get("/records/hep-th/9901001").get_data(as_text=True)
    assert '<a href="https://arxiv.org/abs/hep-th/9901001"' in html
    assert (
        client.get("/api/records/hep-th/9901001").get_json()["title"] == "SpMV in lattice field theory on a GPU cluster"
    )


def test_results_page_links_exports_of_the_whole_set_and_they_work(client):
    html = client.get("/?q=SpMV+GPU&sort=oldest&limit=2&page=2&category=cs").get_data(as_text=True)
    links = dict(re.findall(r'<a href="([^"]*)" data-format="([a-z]+)" download>', html))
    expected = {
        f"/api/export?q=SpMV+GPU&category=cs&sort=oldest&format={name}": name
        for name in ("bibtex", "csv", "jsonl", "ris")
    }
    assert {unescape(url): name for url, name in links.items()} == expected
    assert re.search(r"Export all\s+3 hits:", html)
    for url, name in expected.items():
        response = client.get(url)
        assert response.status_code == 200, url
        assert (
            response.headers["Content-Disposition"]
            == {
                "bibtex": 'attachment; filename="search-results.bib"',
                "csv": 'attachment; filename="search-results.csv"',
                "jsonl": 'attachment; filename="search-results.jsonl"',
                "ris": 'attachment; filename="search-results.ris"',
            }[name]
        )
        assert (response.headers["X-Total-Hits"], response.headers["X-Exported-Hits"]) == ("3", "3")


@pytest.mark.parametrize(
    ("name", "content_type", "count"),
    [
        ("bibtex", "application/x-bibtex; charset=utf-8", lambda body: body.count("@misc{")),
        ("csv", "text/csv; charset=utf-8", lambda body: len(body.splitlines()) - 1),
        ("jsonl", "application/jsonl; charset=utf-8", lambda body: len([json.loads(x) for x in body.splitlines()])),
        ("ris", "application/x-research-info-systems; charset=utf-8", lambda body: body.count("\r\nER  - \r\n")),
    ],
)
def test_api_export_holds_every_hit_in_the_search_order(client, name, content_type, count):
    response = client.get(f"/api/export?q=SpMV+GPU&sort=newest&format={name}")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == content_type
    body = response.get_data(as_text=True)
    assert count(body) == 4
    if name == "jsonl":
        searched = client.get("/api/search?q=SpMV+GPU&sort=newest").get_json()["hits"]
        assert [json.loads(x)["id"] for x in body.splitlines()] == [h["id"] for h in searched]


def test_api_export_is_cut_at_the_cap_and_says_so(client, monkeypatch):
    from searchengine import limits

    monkeypatch.setattr(limits, "EXPORT_LIMIT", 2)
    response = client.get("/api/export?q=SpMV+GPU&format=csv&limit=1&page=3")  # page and limit play no part
    assert response.status_code == 200
    assert (response.headers["X-Total-Hits"], response.headers["X-Exported-Hits"]) == ("4", "2")
    assert len(response.get_data(as_text=True).splitlines()) == 3


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("/api/export?q=gpu&format=xml", "format must be one of bibtex, csv, jsonl, ris; not 'xml'"),
        ("/api/export?q=gpu", "format must be one of bibtex, csv, jsonl, ris; it is missing"),
        (
            "/api/export?q=gpu&format=ris&format=csv",
            "format is given 2 times; it takes one value "
            "(only year, author, first_author, category and journal repeat)",
        ),
        ("/api/export?format=ris", "the query is empty"),
    ],
)
def test_api_export_refuses_a_bad_request_with_a_json_400(client, url, message):
    response = client.get(url)
    assert response.status_code == 400
    assert response.get_json()["error"].startswith(message)


def test_record_ris_export(client):
    response = client.get("/records/hep-th/9901001/ris")
    assert response.status_code == 200 and response.mimetype == "text/plain"
    assert response.headers["Content-Disposition"].endswith('.ris"')
    assert response.get_data(as_text=True).startswith("TY  - UNPB\r\nID  - hep-th/9901001\r\n")
    html = client.get("/records/2301.00001").get_data(as_text=True)
    assert '<a href="/records/2301.00001/ris">RIS</a>' in html


def test_bibtex_export(client):
    response = client.get("/records/2301.00001/bibtex")
    assert response.status_code == 200
    assert response.mimetype == "text/plain"
    body = response.get_data(as_text=True)
    assert body.startswith("@misc{lovelace2023sparse,")
    assert "eprint = {2301.00001}" in body


# --- JSON API ---------------------------------------------------------------


def test_api_search_is_the_cli_json(client, web_index_dir):
    api = client.get("/api/search?q=SpMV+GPU&limit=2&page=2").get_json()
    cli = CliRunner().invoke(
        main,
        [
            "search",
            "SpMV GPU",
            "--limit",
            "2",
            "--page",
            "2",
            "--facets",
            "year,author,category,journal,date",
            "--facet-size",
            "12",
            "--index-dir",
            str(web_index_dir),
            "--json",
        ],
    )
    assert cli.exit_code == 0, cli.output
    expected = json.loads(cli.output)
    for data in (api, expected):
        data.pop("took_ms")
    assert api == expected
    assert api["total"] == 4
    assert api["page"] == {"number": 2, "size": 2, "pages": 2}


def test_api_search_has_facets_over_all_hits(client):
    data = client.get("/api/search?q=SpMV+GPU&limit=1").get_json()
    years = {(v["value"], v["count"], v["selected"]) for v in data["facets"]["year"]}
    assert years == {(2024, 2, False), (2023, 1, False), (1999, 1, False)}


def test_api_record_and_similar(client):
    record = client.get("/api/records/2401.00002").get_json()
    assert record == {
        "id": "2401.00002",
        "title": "Tiled SpMV for GPUs",
        "abstract": "A tiled storage format makes SpMV on GPUs faster for irregular matrices.",
        "authors": ["Grace Hopper"],
        "year": 2024,
        "categories": ["cs.DC"],
        "submitted": None,
        "updated": None,
        "versions": [],
        # an arXiv id's abstract page, PDF and DataCite DOI are derived
        "url": "https://arxiv.org/abs/2401.00002",
        "pdf_url": "https://arxiv.org/pdf/2401.00002",
        "doi": "",
        "arxiv_doi": "10.48550/arXiv.2401.00002",
        "journal_ref": "",
        "comments": "",
        "license": "",
    }
    similar = client.get("/api/records/2401.00002/similar?limit=2").get_json()
    assert len(similar["hits"]) == 2
    assert "2401.00002" not in [hit["id"] for hit in similar["hits"]]


def test_no_answer_discloses_where_the_indexed_files_are(client):
    # show --json names the file a record came from; the web never does
    for url in (
        "/api/records/2401.00002",
        "/records/2401.00002",
        "/records/2401.00002/bibtex",
        "/api/search?q=SpMV",
        "/?q=SpMV",
        "/api/records/2401.00002/similar",
    ):
        body = client.get(url).get_data(as_text=True)
        assert "web_records.jsonl" not in body and str(DATA) not in body, url


def test_the_query_echoed_is_the_query_searched(client):
    data = client.get("/api/search?q=%00SpMV%0b%1fGPU%7f").get_json()
    assert (data["query"], data["total"]) == ("SpMV GPU", 4)
    html = client.get("/?q=%00SpMV%0b%1fGPU").get_data(as_text=True)
    assert 'value="SpMV GPU"' in html and "4 hits for <q>SpMV GPU</q>" in html and "\x00" not in html


@pytest.mark.parametrize(
    ("name", "value"),
    [("q", "gpu"), ("sort", "newest"), ("page", "1"), ("limit", "5"), ("year_from", "2020"), ("year_to", "2025")],
)
def test_a_single_valued_parameter_given_twice_is_a_400_naming_it(client, name, value):
    for path in ("/api/search", "/"):
        response = client.get(f"{path}?q=gpu&{name}={value}" + ("" if name == "q" else f"&{name}={value}"))
        assert response.status_code == 400, path
        repeat = "only year, author, first_author, category and journal repeat"
        message = f"{name} is given 2 times; it takes one value ({repeat})"
        if path == "/api/search":
            assert response.get_json() == {"error": message}
        else:
            assert message in response.get_data(as_text=True)
    similar = client.get("/api/records/2401.00002/similar?limit=1&limit=2")
    assert similar.status_code == 400 and similar.get_json()["error"].startswith("limit is given 2 times")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "/api/search?q=SpMV&offset=15&limit=1",
            "unknown parameter 'offset' for /api/search (it takes author, category, exact, first_author, journal, "
            "limit, mode, more, page, past, q, semantic_weight, since, sort, until, year, year_from, year_to); "
            "pages are chosen with page and limit",
        ),
        ("/api/search?q=SpMV&yaer=2024&lmit=2", "unknown parameters 'lmit', 'yaer' for /api/search"),
        ("/api/export?q=SpMV&format=csv&fromat=ris", "unknown parameter 'fromat' for /api/export"),
        (
            "/api/records/2401.00002/similar?limit=2&q=gpu",
            "unknown parameter 'q' for /api/records/2401.00002/similar (it takes limit)",
        ),
        ("/api/records/2401.00002?full=1", "unknown parameter 'full' for /api/records/2401.00002 (it takes none)"),
    ],
)
def test_api_refuses_parameters_it_does_not_take(client, url, message):
    response = client.get(url)
    assert response.status_code == 400 and response.get_json()["error"].startswith(message)


def test_api_takes_the_parameters_its_openapi_document_lists(client):
    from searchengine.web.openapi import openapi_document, query_parameters

    for path, operations in openapi_document()["paths"].items():
        listed = {p["name"] for p in operations["get"].get("parameters", ()) if p["in"] == "query"}
        assert query_parameters(path) - listed <= {"page", "limit"}
    # an export ignores the page of the search it was made from
    assert client.get("/api/export?q=SpMV&format=csv&page=2&limit=1").status_code == 200
    # the web page keeps working with parameters it does not read (links from elsewhere)
    assert client.get("/?q=SpMV&utm_source=mail").status_code == 200


def test_page_counts_stop_where_paging_stops(client, web_index_dir, monkeypatch):
    from searchengine import limits

    assert [
        limits.page_count(total, limit) for total, limit in [(0, 10), (2472, 100), (2472, 30), (1000, 100), (95, 10)]
    ] == [0, 10, 33, 10, 10]
    monkeypatch.setattr(limits, "MAX_DEPTH", 3)
    data = client.get("/api/search?q=SpMV&limit=1").get_json()
    assert (data["total"], data["page"]) == (4, {"number": 1, "size": 1, "pages": 3})
    assert client.get("/api/search?q=SpMV&limit=1&page=4").status_code == 400
    cli = CliRunner().invoke(main, ["search", "SpMV", "--limit", "1", "--index-dir", str(web_index_dir)])
    assert cli.exit_code == 0, cli.output
    assert cli.output.endswith("\nPage 1 of 3 (paging reaches the first 3 of 4 hits; filters narrow the rest)\n")


def test_api_looks_up_several_records_at_once(client):
    data = client.get("/api/records?id=2301.00001&id=nope&id=2301.00001v2&id=hep-th/9901001").get_json()
    assert [r["id"] for r in data["records"]] == ["2301.00001", "hep-th/9901001"]
    assert data["missing"] == ["nope"]
    assert all("source" not in r for r in data["records"])
    assert data["records"][0] == client.get("/api/records/2301.00001").get_json()
    for url, message in [
        ("/api/records", "give one or more ids or DOIs as id=... (repeat id for several)"),
        ("/api/records?id=2301.00001&id=", "id number 2 is empty"),
        (
            "/api/records?" + "&".join(f"id=x{i}" for i in range(101)),
            "101 ids given; at most 100 are looked up in one request",
        ),
    ]:
        response = client.get(url)
        assert (response.status_code, response.get_json()) == (400, {"error": message})


def test_filters_still_repeat_and_empty_values_count_as_not_given(client):
    data = client.get("/api/search?q=SpMV&author=Ada+Lovelace&author=Edward+Witten&limit=&page=&sort=").get_json()
    assert {hit["id"] for hit in data["hits"]} == {"2301.00001", "hep-th/9901001"}
    assert data["page"] == {"number": 1, "size": 10, "pages": 1}


def test_whole_numbers_may_be_written_as_json_schema_integers(client):
    # the OpenAPI document says "integer"; JSON Schema counts 2.0 as one
    data = client.get("/api/search?q=SpMV&limit=2.0&page=2.00").get_json()
    assert data["page"] == {"number": 2, "size": 2, "pages": 2}
    assert client.get("/api/search?q=SpMV&year_from=2024.0").get_json()["total"] == 2
    for bad in ("limit=2.5", "limit=1e1", "year_from=2024.5", "page=two", "limit=+4", "limit=%2B4", "page=2."):
        assert client.get(f"/api/search?q=SpMV&{bad}").status_code == 400, bad


def test_lengths_and_numbers_of_values_are_counted_as_given(client):
    same = "&".join(["author=Ada+Lovelace"] * 21)
    assert client.get(f"/api/search?q=SpMV&{same}").get_json() == {
        "error": "at most 20 author values are allowed, not 21"
    }
    padded = "Ada" + " " * 200 + "Lovelace"
    assert client.get("/api/search", query_string={"q": "SpMV", "author": padded}).get_json() == {
        "error": "author value is 211 characters long; at most 200 are allowed"
    }


def test_record_links_work_for_ids_with_dot_empty_and_leading_segments(tmp_path):
    links = {
        "a/../b": "/records/a%2F..%2Fb",
        "c/./d": "/records/c%2F.%2Fd",
        "e//f": "/records/e%2F%2Ff",
        "/g": "/records/%2Fg",
        "h/": "/records/h%2F",
        "x y?#%\\z": "/records/x%20y%3F%23%25%5Cz",
        "hep-th/9901001": "/records/hep-th/9901001",
    }
    path = tmp_path / "odd.jsonl"
    path.write_text(
        "".join(json.dumps({"id": i, "title": f"Odd identifier {i}"}) + "\n" for i in links), encoding="utf-8"
    )
    build_index([path], tmp_path / "ix")
    client = create_app(index_dir=tmp_path / "ix").test_client()
    html = client.get("/?q=odd+identifier&limit=20").get_data(as_text=True)
    shown = {unescape(h) for h in re.findall(r'<h2 class="title"><a href="([^"]*)">', html)}
    assert shown == {link + "?q=odd+identifier&limit=20" for link in links.values()}
    for record_id, link in links.items():
        page = client.get(link)
        assert page.status_code == 200, link
        assert client.get("/api" + link).get_json()["id"] == record_id
        assert f'<a href="{link}/bibtex">BibTeX</a>' in unescape(page.get_data(as_text=True))
        assert "title = {Odd identifier" in client.get(link + "/bibtex").get_data(as_text=True)


def test_doubled_slashes_are_unknown_paths_not_redirects(client):
    for url in ("/static//etc/passwd", "/api//search?q=gpu", "/static/%2fetc%2fpasswd"):
        assert client.get(url).status_code == 404, url


def test_openapi_document_describes_every_api_route(client):
    document = client.get("/api/openapi.json").get_json()
    assert document["openapi"] == "3.1.0"
    assert set(document["paths"]) == {
        "/api/search",
        "/api/export",
        "/api/records",
        "/api/records/{id}",
        "/api/records/{id}/similar",
        "/api/similar",
        "/api/openapi.json",
    }
    names = [p["name"] for p in document["paths"]["/api/search"]["get"]["parameters"]]
    assert names == [
        "q",
        "year",
        "year_from",
        "year_to",
        "author",
        "first_author",
        "category",
        "journal",
        "since",
        "until",
        "past",
        "sort",
        "page",
        "limit",
        "more",
        "exact",
        "mode",
        "semantic_weight",
    ]
    export = document["paths"]["/api/export"]["get"]
    assert [p["name"] for p in export["parameters"]] == [
        "q",
        "year",
        "year_from",
        "year_to",
        "author",
        "first_author",
        "category",
        "journal",
        "since",
        "until",
        "past",
        "sort",
        "exact",
        "mode",
        "semantic_weight",
        "format",
    ]
    assert export["parameters"][-1]["schema"]["enum"] == ["bibtex", "csv", "jsonl", "ris"]
    assert sorted(export["responses"]["200"]["content"]) == [
        "application/jsonl",
        "application/x-bibtex",
        "application/x-research-info-systems",
        "text/csv",
    ]


@pytest.mark.parametrize(
    ("url", "status", "message"),
    [
        (
            "/api/search",
            400,
            "the query is empty: give query text or a filter, or sort by newest, oldest or title to list every paper",
        ),
        ("/api/search?sort=relevance", 400, "the query is empty: give query text or a filter"),
        ("/api/search?q=gpu&limit=0", 400, "limit must be between 1 and 100, not 0"),
        ("/api/search?q=gpu&limit=101", 400, "limit must be between 1 and 100, not 101"),
        ("/api/search?q=gpu&limit=ten", 400, "limit must be a whole number, not 'ten'"),
        ("/api/search?q=gpu&page=0", 400, "page must be 1 or more, not 0"),
        ("/api/search?q=gpu&page=-3", 400, "page must be 1 or more, not -3"),
        ("/api/search?q=gpu&page=11&limit=100", 400, "page 11 with limit 100 reaches past hit 1000"),
        ("/api/search?q=gpu&sort=random", 400, "sort must be one of relevance, newest, oldest, title, not 'random'"),
        ("/api/search?q=gpu&year_from=20x4", 400, "year_from must be a four-digit year, not '20x4'"),
        ("/api/search?q=gpu&year=2025-2023", 400, "2025-2023"),
        ("/api/search?q=" + "a" * 2001, 400, "at most 2000 are allowed"),
        (
            "/api/search?q=gpu" + "".join(f"&author=n{i}" for i in range(21)),
            400,
            "at most 20 author values are allowed, not 21",
        ),
        ("/api/records/0000.00000", 404, "no record with id '0000.00000'"),
        ("/api/records/0000.00000/similar", 404, "no record with id '0000.00000'"),
        ("/api/records/2401.00002/similar?limit=0", 400, "limit must be between 1 and 100, not 0"),
        ("/api/nothing-here", 404, "no such page"),
    ],
)
def test_api_errors_are_json_with_400_or_404(client, url, status, message):
    response = client.get(url)
    assert response.status_code == status
    assert response.mimetype == "application/json"
    assert message in response.get_json()["error"]


def test_api_wrong_method_is_a_json_405(client):
    response = client.post("/api/search?q=gpu")
    assert response.status_code == 405
    assert response.get_json() == {"error": "method not allowed (only GET is served)"}
    assert response.headers["Allow"] == "GET, HEAD"


def test_page_errors_are_html_with_the_message(client):
    response = client.get("/?q=gpu&limit=500")
    assert response.status_code == 400
    assert "limit must be between 1 and 100, not 500" in response.get_data(as_text=True)
    assert client.get("/records/nope").status_code == 404


HOSTILE_QUERIES = [
    "title:(",
    '"unclosed phrase',
    "AND OR NOT",
    "*",
    "?",
    "gpu~",
    "gpu^",
    "year:>=",
    "(((",
    ")))",
    "\x00gpu",
    "gpu\u202e",
    "💥 GPU",
    "%00",
    "\\",
    "title:",
    ":",
    "a:b:c",
    "[a TO",
    "{",
    "NOT",
    "-gpu",
    'author:"',
    "<>&'\"",
    "gpu" * 600,
]


@pytest.mark.parametrize("query", HOSTILE_QUERIES)
def test_no_query_text_causes_a_server_error(client, query):
    for path in ("/api/search", "/"):
        response = client.get(path, query_string={"q": query})
        assert response.status_code in (200, 400), (path, query, response.status_code)
        if path == "/api/search" and response.status_code == 400:
            assert response.get_json()["error"]


def test_security_headers_on_pages_api_errors_and_static_files(client):
    for url in ("/", "/?q=gpu", "/api/search?q=gpu", "/api/records/none", "/static/style.css", "/nowhere"):
        headers = client.get(url).headers
        assert "default-src 'none'" in headers["Content-Security-Policy"], url
        assert "frame-ancestors 'none'" in headers["Content-Security-Policy"], url
        assert "script-src" not in headers["Content-Security-Policy"], url
        assert headers["X-Content-Type-Options"] == "nosniff", url
        assert headers["X-Frame-Options"] == "DENY", url
        assert headers["Referrer-Policy"] == "no-referrer", url


def test_unexpected_errors_are_logged_and_answered_without_a_trace(web_index_dir, caplog):
    class Broken:
        doc_count = 1
        has_vectors = False
        has_dates = True

        def run(self, request):
            raise ZeroDivisionError("secret detail")

    response = create_app(index=Broken()).test_client().get("/api/search?q=gpu")
    assert response.status_code == 500
    assert response.get_json() == {"error": "internal error (logged on the server)"}
    assert "ZeroDivisionError: secret detail" in caplog.text


# --- freshness and threads --------------------------------------------------


def test_a_rebuilt_index_is_served_without_restart(tmp_path):
    first = tmp_path / "first.jsonl"
    first.write_text(RECORDS.read_text(encoding="utf-8"), encoding="utf-8")
    second = tmp_path / "second.jsonl"
    second.write_text(
        json.dumps({"id": "2611.00001", "title": "Lattice SpMV revisited", "year": 2026}) + "\n", encoding="utf-8"
    )
    index_dir = tmp_path / "index"
    build_index([first], index_dir)
    client = create_app(index_dir=index_dir).test_client()
    assert client.get("/api/search?q=lattice").get_json()["total"] == 1
    assert client.get("/api/search?q=lattice").get_json()["hits"][0]["id"] == "hep-th/9901001"

    errors: list[str] = []
    first_ids: set[str] = set()
    stop = threading.Event()

    def hammer() -> None:
        while not stop.is_set():
            response = client.get("/api/search?q=lattice")
            if response.status_code != 200:
                errors.append(response.get_data(as_text=True))
            else:
                first_ids.add(response.get_json()["hits"][0]["id"])

    threads = [threading.Thread(target=hammer) for _ in range(4)]
    for thread in threads:
        thread.start()
    try:
        build_index([second], index_dir)  # replaces the index while searches run
        build_index([first, second], index_dir)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert errors == []
    assert first_ids <= {"hep-th/9901001", "2611.00001"}
    data = client.get("/api/search?q=lattice&sort=newest").get_json()
    assert [hit["id"] for hit in data["hits"]] == ["2611.00001", "hep-th/9901001"]


def test_a_replaced_searcher_stays_open_for_the_call_using_it(tmp_path):
    index_dir = tmp_path / "index"
    build_index([RECORDS], index_dir)
    one = tmp_path / "one.jsonl"
    one.write_text(RECORDS.read_text(encoding="utf-8").splitlines()[1] + "\n", encoding="utf-8")
    index = open_index(index_dir)
    seen: list[int] = []
    other = threading.Thread(target=lambda: seen.append(index.search("SpMV GPU").total))

    def rebuild_midway(searcher):
        build_index([one], index_dir)  # a new generation with one SpMV GPU paper
        other.start()  # another thread's search waits for this call ...
        assert index.doc_count == 6  # ... which keeps its generation and searcher
        whoosh_searcher = searcher.searcher
        seen.append(whoosh_searcher.search(parse("SpMV GPU", whoosh_searcher.schema).query).scored_length())
        return whoosh_searcher

    held = index.engine.call(rebuild_midway)
    other.join()
    assert seen == [4, 1]
    assert held.is_closed  # replaced, and closed once its call had ended
    index.close()


def test_calls_on_a_shared_index_take_turns(tmp_path):
    # a Whoosh searcher is not safe for concurrent use: calls must never overlap
    index_dir = tmp_path / "index"
    build_index([RECORDS], index_dir)
    index = open_index(index_dir)
    running: list[int] = []
    overlaps: list[int] = []
    lock = threading.Lock()

    def work(searcher):
        with lock:
            running.append(1)
            overlaps.append(len(running))
        time.sleep(0.01)
        with lock:
            running.pop()

    threads = [threading.Thread(target=index.engine.call, args=(work,)) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert overlaps == [1] * 6
    index.close()


def test_serve_help_lists_the_options():
    result = CliRunner().invoke(main, ["serve", "--help"])
    assert result.exit_code == 0
    for option in ("--host", "--port", "--index-dir", "--debug"):
        assert option in result.output


def test_serve_reports_a_missing_corpus_in_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["serve", "--index-dir", str(tmp_path / "none")])
    assert result.exit_code == 1
    assert result.output.strip().splitlines()[-1].startswith("Error: ")


@pytest.mark.parametrize("workers", ["1", "2"])
def test_serve_on_a_port_in_use_is_a_one_line_error(web_index_dir, workers):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(
            main, ["serve", "--port", str(port), "--workers", workers, "--index-dir", str(web_index_dir)]
        )
    assert result.exit_code == 1
    assert result.output == "Error: Address already in use\n"


def test_a_missing_index_is_a_503_not_a_crash(tmp_path):
    index_dir = tmp_path / "index"
    build_index([RECORDS], index_dir)
    client = create_app(index_dir=index_dir).test_client()
    (index_dir / "CURRENT").unlink()
    response = client.get("/api/search?q=gpu")
    assert response.status_code == 503
    assert response.get_json() == {"error": "the index is not available right now"}


def test_concurrent_searches_on_one_shared_index_agree_with_serial_ones(corpus_index_dir):
    index = open_index(corpus_index_dir)
    queries = ["GPU", "sparse matrix", "SpMV GPU", "memory", "graph", "training", "cache", "parallel"]
    expected = {q: index.search(q, limit=5, facets="year,author,category").to_dict() for q in queries}
    for data in expected.values():
        data.pop("took_ms")
    mismatches: list[str] = []

    def worker(offset: int) -> None:
        for i in range(16):
            query = queries[(offset + i) % len(queries)]
            data = index.search(query, limit=5, facets="year,author,category").to_dict()
            data.pop("took_ms")
            if data != expected[query]:
                mismatches.append(query)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    index.close()
    assert mismatches == []


def test_the_web_package_never_imports_whoosh():
    package = Path(__file__).resolve().parent.parent / "searchengine" / "web"
    for source in package.glob("*.py"):
        assert not re.search(r"^\s*(from|import)\s+whoosh", source.read_text(encoding="utf-8"), re.M), source


def test_facet_toggles_add_remove_or_narrow_and_go_back_to_page_one():
    from werkzeug.datastructures import MultiDict

    from searchengine.web.params import SearchParams

    params = SearchParams.from_args(
        MultiDict(
            [("q", " SpMV  GPU "), ("year", "2020-2024"), ("author", "Qian, D."), ("page", "3"), ("sort", "newest")]
        )
    )
    assert params.url() == "/?q=SpMV+GPU&year=2020-2024&author=Qian%2C+D.&sort=newest&page=3"
    # a new value is added (OR); a value selected through a wider filter narrows to it
    assert params.toggled("category", "cs.DC", False).url() == (
        "/?q=SpMV+GPU&year=2020-2024&author=Qian%2C+D.&category=cs.DC&sort=newest"
    )
    assert params.toggled("year", 2022, True).url() == "/?q=SpMV+GPU&year=2022&author=Qian%2C+D.&sort=newest"
    # a value given literally is removed, whatever its case
    assert params.toggled("author", "qian, d.", True).url() == "/?q=SpMV+GPU&year=2020-2024&sort=newest"
    assert [(facet, value) for facet, value, _ in params.chips()] == [("year", "2020-2024"), ("author", "Qian, D.")]


def test_undecodable_query_strings_and_bare_api_path_answer_in_json(client):
    bad = client.get("/api/search?q=%ff%fe")
    assert (bad.status_code, bad.get_json()) == (400, {"error": "the query string is not valid UTF-8"})
    assert client.get("/?q=%ff").status_code == 400
    assert client.get("/api/search?q=caf%C3%A9").status_code == 200
    bare = client.get("/api")
    assert (bare.status_code, bare.get_json()) == (404, {"error": "no such page"})
    negative = client.get("/api/search?q=gpu&limit=-1")
    assert negative.get_json() == {"error": "limit must be between 1 and 100, not -1"}


def test_serve_with_several_processes_answers_searches_and_stops(web_index_dir):
    import signal
    import subprocess
    import sys
    import time
    import urllib.request

    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "searchengine",
            "serve",
            "--port",
            "0",
            "--workers",
            "2",
            "--index-dir",
            str(web_index_dir),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        loading = process.stderr.readline()
        assert re.fullmatch(
            r"Loading \S+ into 2 server processes; port \d+ accepts connections once one is ready\n", loading
        ), loading
        line = process.stderr.readline()
        match = re.search(r"on (http://127\.0\.0\.1:\d+)/ with 2 processes, ready in \d+\.\d s", line)
        assert match, line
        # Announced only once a server listens: the first request is answered.
        body = json.loads(urllib.request.urlopen(match.group(1) + "/api/search?q=SpMV+GPU", timeout=30).read())
        assert body["total"] == 4
        # The master holds no index file: its workers would inherit it, and a
        # rebuild could never release that generation's disk space.
        index_files = [
            os.readlink(fd)
            for fd in Path(f"/proc/{process.pid}/fd").iterdir()
            if os.readlink(fd).startswith(str(web_index_dir))
        ]
        assert index_files == []
        # Clients that never finish their request hold no thread: 300 of them
        # (more than the 2 x 4 threads) and a search still gets its answer.
        import socket

        # Shared out once both processes listen (the first ready takes all before).
        # (On a busy machine the first search may have waited for a thread, and
        # waitress says so on a line of its own first.)
        line = process.stderr.readline()
        while line.startswith("Task queue depth is "):
            line = process.stderr.readline()
        assert re.fullmatch(r"All 2 server processes ready in \d+\.\d s\n", line), line
        host, port = match.group(1).removeprefix("http://").split(":")
        stalled = [socket.create_connection((host, int(port))) for _ in range(300)]
        for sock in stalled:
            sock.sendall(b"GET /api/search?q=gpu HTTP/1.1\r\nHost: x\r\n")  # no blank line: unfinished
        answer = json.loads(urllib.request.urlopen(match.group(1) + "/api/search?q=SpMV+GPU", timeout=10).read())
        assert answer["total"] == 4
        # The connections are shared out evenly between the processes.
        children = [int(p) for p in Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()]

        def sockets(pid: int) -> int:
            def link(fd: Path) -> str:
                try:
                    return os.readlink(fd)
                except FileNotFoundError:  # closed while listed
                    return ""

            return sum(link(fd).startswith("socket:") for fd in Path(f"/proc/{pid}/fd").iterdir())

        deadline = time.monotonic() + 10
        while sum(map(sockets, children)) < 300 and time.monotonic() < deadline:
            time.sleep(0.1)
        held = sorted(map(sockets, children))
        assert sum(held) >= 300 and held[1] - held[0] <= 10, held
        for sock in stalled:
            sock.close()
        # A server process that dies is replaced.
        assert len(children) == 2
        os.kill(children[0], signal.SIGKILL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            now = [int(p) for p in Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()]
            if len(now) == 2 and children[0] not in now:
                break
            time.sleep(0.2)
        assert len(now) == 2 and children[0] not in now
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0


def test_a_refused_query_is_a_400_and_exclusions_alone_are_a_list(client):
    for query in ("interpretability~5", '"sparse matrix"~3'):
        response = client.get("/api/search", query_string={"q": query})
        assert response.status_code == 400
        assert response.get_json()["error"].startswith(f"'{query}': ")
        assert client.get("/", query_string={"q": query}).status_code == 400
    # Of the six records, one has no "gpu"; two have no "spmv", newest first.
    assert [hit["id"] for hit in client.get("/api/search?q=NOT+gpu").get_json()["hits"]] == ["2501.00004"]
    data = client.get("/api/search", query_string={"q": "-spmv"}).get_json()
    assert [hit["id"] for hit in data["hits"]] == ["2502.00006", "2501.00004"]


def test_a_long_author_list_is_cut_on_the_results_page(tmp_path):
    authors = [f"Author Number{n:04d}" for n in range(1, 3006)]
    record = {
        "id": "big-1",
        "title": "A detector paper",
        "abstract": "Muon detector calibration.",
        "authors": authors,
        "year": 2024,
    }
    (tmp_path / "big.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    build_index([tmp_path / "big.jsonl"], tmp_path / "ix")
    client = create_app(index_dir=tmp_path / "ix").test_client()
    html = client.get("/?q=detector").get_data(as_text=True)
    assert f'<span class="authors">{", ".join(authors[:10])} … and 2,995 more</span>' in html
    assert len(html.encode()) < 40_000  # the 3,005 names alone take 70 kB
    assert client.get("/api/search?q=detector").get_json()["hits"][0]["authors"] == authors


def test_a_facet_value_no_filter_accepts_is_shown_without_a_link(tmp_path):
    record = {
        "id": "odd-1",
        "title": "Odd values",
        "abstract": "Detector calibration.",
        "authors": ["Depei Qian", "x" * 250],
        "categories": ["cs.DC", "not a code"],
        "year": 2024,
    }
    (tmp_path / "odd.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    build_index([tmp_path / "odd.jsonl"], tmp_path / "ix")
    client = create_app(index_dir=tmp_path / "ix").test_client()
    html = client.get("/?q=detector").get_data(as_text=True)
    assert facet_links(html, "author") == {"Depei Qian": "/?q=detector&author=Depei+Qian"}
    assert facet_links(html, "category") == {"cs.DC": "/?q=detector&category=cs.DC"}
    assert f'<li><span class="value">{"x" * 250}</span> <span class="count">1</span></li>' in html  # too long
    assert '<li><span class="value">not a code</span> <span class="count">1</span></li>' in html
    for url in ("/?q=detector&author=Depei+Qian", "/?q=detector&category=cs.DC"):
        assert client.get(url).status_code == 200


def test_and_n_more_lists_a_facet_in_full_and_fewer_lists_it_in_short(tmp_path):
    records = [
        {
            "id": f"r{n:02d}",
            "title": "Detector study",
            "abstract": "Detector calibration.",
            "authors": [f"Author Name{n:02d}"],
            "year": 2000 + n,
        }
        for n in range(20)
    ]
    (tmp_path / "many.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    build_index([tmp_path / "many.jsonl"], tmp_path / "ix")
    client = create_app(index_dir=tmp_path / "ix").test_client()
    html = client.get("/?q=detector").get_data(as_text=True)
    assert len(facet_links(html, "author")) == 12 and len(facet_links(html, "year")) == 12
    assert '<li class="more"><a href="/?q=detector&amp;more=author">and 8 more</a></li>' in html
    full = client.get("/?q=detector&more=author").get_data(as_text=True)
    assert set(facet_links(full, "author")) == {f"Author Name{n:02d}" for n in range(20)}
    assert len(facet_links(full, "year")) == 12  # the other facets stay short
    assert '<li class="more"><a href="/?q=detector">fewer</a></li>' in full
    assert '<li class="more"><a href="/?q=detector&amp;more=year">and 8 more</a></li>' in full
    # choosing a value keeps the list open
    assert facet_links(full, "author")["Author Name15"] == "/?q=detector&author=Author+Name15&more=author"
    refused = client.get("/api/search?q=detector&more=title")
    assert refused.status_code == 400
    assert refused.get_json() == {"error": "more must be one of year, author, category, journal, not 'title'"}


LINKED_RECORDS = [
    {
        "id": "0705.1234",
        "title": "Magnons in layered antiferromagnets",
        "year": 2007,
        "categories": ["cond-mat"],
        "abstract": "Spin waves in layered antiferromagnets measured by neutron scattering.",
        "doi": "10.1103/PhysRevB.76.125117",
        "journal_ref": "Phys. Rev. B 76, 125117 (2007)",
        "comments": "12 pages, 4 figures",
        "license": "http://creativecommons.org/licenses/by/4.0/",
    },
    {
        "id": "report-7",
        "title": "A technical report on magnons",
        "year": 2008,
        "doi": "10.5281/zenodo.12345",
        "abstract": "Spin waves in layered antiferromagnets, simulated.",
        "url": "https://example.org/report-7",
        "pdf": "https://example.org/report-7.pdf",
    },
    {"id": "0902.0001", "title": "Magnons without a DOI", "year": 2009, "comments": "<b>draft</b>"},
]


@pytest.fixture(scope="module")
def linked_client(tmp_path_factory):
    folder = tmp_path_factory.mktemp("linked")
    (folder / "linked.jsonl").write_text("".join(json.dumps(r) + "\n" for r in LINKED_RECORDS), encoding="utf-8")
    build_index([folder / "linked.jsonl"], folder / "ix")
    return create_app(index_dir=folder / "ix").test_client()


def test_result_items_link_pdf_abstract_page_and_doi(linked_client):
    html = linked_client.get("/?q=magnons&sort=oldest").get_data(as_text=True)
    links = re.findall(r'<span class="links">(.*?)</span>', html)
    assert links == [
        ' <a href="https://arxiv.org/pdf/0705.1234" class="pdf" rel="noopener noreferrer nofollow">[PDF]</a>'
        ' <a href="https://arxiv.org/abs/0705.1234" class="abs" rel="noopener noreferrer nofollow">[abs]</a>'
        ' <a href="https://doi.org/10.1103/PhysRevB.76.125117" class="doi" rel="noopener noreferrer nofollow">'
        "[DOI]</a>",
        ' <a href="https://example.org/report-7.pdf" class="pdf" rel="noopener noreferrer nofollow">[PDF]</a>'
        ' <a href="https://example.org/report-7" class="abs" rel="noopener noreferrer nofollow">[abs]</a>'
        ' <a href="https://doi.org/10.5281/zenodo.12345" class="doi" rel="noopener noreferrer nofollow">[DOI]</a>',
        ' <a href="https://arxiv.org/pdf/0902.0001" class="pdf" rel="noopener noreferrer nofollow">[PDF]</a>'
        ' <a href="https://arxiv.org/abs/0902.0001" class="abs" rel="noopener noreferrer nofollow">[abs]</a>',
    ]


def test_record_page_shows_links_doi_journal_ref_comments_and_license(linked_client):
    html = linked_client.get("/records/0705.1234").get_data(as_text=True)
    assert re.search(
        r'<p class="links">\s*<a href="https://arxiv.org/pdf/0705.1234" class="pdf"[^>]*>PDF</a>\s*'
        r'<a href="https://arxiv.org/abs/0705.1234" class="abs"[^>]*>arXiv abstract page</a>\s*'
        r'<a href="https://doi.org/10.1103/PhysRevB.76.125117" class="doi"[^>]*>'
        r"DOI 10.1103/PhysRevB.76.125117</a>",
        html,
    )
    fields = dict(re.findall(r"<dt>([^<]+)</dt>\s*<dd[^>]*>(.*?)</dd>", html, re.S))
    assert fields["DOI"] == (
        '<a href="https://doi.org/10.1103/PhysRevB.76.125117" rel="noopener noreferrer nofollow">'
        "10.1103/PhysRevB.76.125117</a>"
    )
    assert fields["arXiv DOI"] == (
        '<a href="https://doi.org/10.48550/arXiv.0705.1234" '
        'rel="noopener noreferrer nofollow">10.48550/arXiv.0705.1234</a>'
    )
    assert fields["Journal"] == "Phys. Rev. B 76, 125117 (2007)"
    assert fields["Comments"] == "12 pages, 4 figures"
    assert fields["License"] == (
        '<a href="http://creativecommons.org/licenses/by/4.0/" '
        'rel="noopener noreferrer nofollow license">http://creativecommons.org/licenses/by/4.0/</a>'
    )
    # opened without a search: no back link, an empty box
    assert "Back to results" not in html and 'name="q" type="search" value=""' in html
    other = dict(
        re.findall(
            r"<dt>([^<]+)</dt>\s*<dd[^>]*>(.*?)</dd>",
            linked_client.get("/records/0902.0001").get_data(as_text=True),
            re.S,
        )
    )
    assert "DOI" not in other and "Journal" not in other and "License" not in other
    assert other["Comments"] == "&lt;b&gt;draft&lt;/b&gt;"
    report = linked_client.get("/records/report-7").get_data(as_text=True)
    assert "arXiv DOI" not in report and ">Abstract page</a>" in report


def test_record_page_keeps_the_search_and_links_back_to_the_same_results_page(linked_client):
    results = linked_client.get("/?q=magnons&year=2007-2009&sort=oldest&limit=1&page=2").get_data(as_text=True)
    [link] = re.findall(r'<h2 class="title"><a href="([^"]+)">', results)
    assert unescape(link) == "/records/report-7?q=magnons&year=2007-2009&sort=oldest&limit=1&page=2"
    page = linked_client.get(unescape(link)).get_data(as_text=True)
    [back] = re.findall(r'<nav class="back" aria-label="Search"><a href="([^"]+)" rel="up">← Back to results</a>', page)
    assert unescape(back) == "/?q=magnons&year=2007-2009&sort=oldest&limit=1&page=2"
    assert 'name="q" type="search" value="magnons"' in page
    assert '<input type="hidden" name="year" value="2007-2009">' in page
    assert '<option value="oldest" selected>' in page
    # the similar papers keep it too
    assert "/records/0705.1234?q=magnons&amp;year=2007-2009&amp;sort=oldest&amp;limit=1&amp;page=2" in page
    # a state that does not read is dropped, the record still shown
    broken = linked_client.get("/records/report-7?q=magnons&page=zero")
    assert broken.status_code == 200 and "Back to results" not in broken.get_data(as_text=True)


def test_a_doi_opens_its_record_in_the_api_and_the_page(linked_client):
    assert linked_client.get("/api/records/10.1103/PhysRevB.76.125117").get_json()["id"] == "0705.1234"
    assert (
        linked_client.get("/api/search?q=https://doi.org/10.5281/ZENODO.12345").get_json()["hits"][0]["id"]
        == "report-7"
    )
    refused = linked_client.get("/api/search?q=doi:12345")
    assert refused.status_code == 400 and refused.get_json()["error"].startswith("'doi:12345' is not a DOI")


def test_openapi_describes_the_links_of_records_and_hits(linked_client):
    schemas = linked_client.get("/api/openapi.json").get_json()["components"]["schemas"]
    record = linked_client.get("/api/records/0705.1234").get_json()
    hit = linked_client.get("/api/search?q=10.1103/PhysRevB.76.125117").get_json()["hits"][0]
    assert set(schemas["Record"]["properties"]) == set(record)
    assert set(schemas["Hit"]["properties"]) == set(hit)
    links = ["url", "pdf_url", "doi", "arxiv_doi", "journal_ref", "comments", "license"]
    assert (
        [hit[key] for key in links]
        == [record[key] for key in links]
        == [
            "https://arxiv.org/abs/0705.1234",
            "https://arxiv.org/pdf/0705.1234",
            "10.1103/PhysRevB.76.125117",
            "10.48550/arXiv.0705.1234",
            "Phys. Rev. B 76, 125117 (2007)",
            "12 pages, 4 figures",
            "http://creativecommons.org/licenses/by/4.0/",
        ]
    )


def test_a_category_no_paper_has_is_named_on_the_page_and_in_json(client):
    html = client.get("/?q=gpu&category=cs.XX").get_data(as_text=True)
    assert '<p class="notice note">No paper has category cs.XX.</p>' in html
    data = client.get("/api/search?q=gpu&category=cs.XX").get_json()
    assert (data["total"], data["notes"]) == (0, ["no paper has category cs.XX"])
    assert client.get("/api/search?q=zebrafish&category=cs.DC").get_json()["notes"] == []


def test_connection_shares_make_a_process_with_more_connections_accept_later(monkeypatch):
    from types import SimpleNamespace

    from searchengine.web import serve
    from searchengine.web.serve import ConnectionShares

    waits = []
    monkeypatch.setattr(serve.time, "sleep", waits.append)
    shares = ConnectionShares(3)
    accepted = []

    def server(name: str):
        found = SimpleNamespace(active_channels={}, readable=lambda: True)
        found.handle_accept = lambda: accepted.append(name) or found.active_channels.update({len(accepted): name})
        return found

    servers = [server("a"), server("b"), server("c")]
    for slot, found in enumerate(servers[:2]):  # the third is still loading
        shares.balance(found, slot)
        assert found.readable()  # waitress's loop asks before each poll: the count is noted
    servers[0].handle_accept()
    assert (accepted, waits, list(shares.counts)) == (["a"], [], [1, 0, ConnectionShares.UNREADY])
    servers[0].handle_accept()  # more than b: it waits first, then accepts all the same
    assert (accepted, waits) == (["a", "a"], [ConnectionShares.ACCEPT_DELAY])
    servers[1].handle_accept()
    assert waits == [ConnectionShares.ACCEPT_DELAY] and list(shares.counts)[:2] == [2, 1]
    shares.balance(servers[2], 2)
    assert servers[2].readable() and list(shares.counts) == [2, 1, 0]
    shares.release(2)  # died: out of the count until its replacement serves
    servers[0].active_channels.clear()  # a's clients left
    assert servers[0].readable() and list(shares.counts) == [0, 1, ConnectionShares.UNREADY]


def test_the_start_page_helps_with_the_syntax_and_offers_examples_that_find_papers(web_index_dir):
    from markupsafe import escape

    from searchengine.web.pages import examples

    index = open_index(web_index_dir)
    offered = examples(index)
    assert [e["label"] for e in offered][:2] == ["a word, in titles, abstracts or authors", "a phrase, word for word"]
    for example in offered:  # each example finds papers of this index
        assert index.search(example["q"], limit=1).total > 0, example
    html = create_app(index_dir=web_index_dir).test_client().get("/").get_data(as_text=True)
    for example in offered:
        assert f"<code>{escape(example['q'])}</code>" in html
    for syntax in ('<code>"graph neural"</code>', "<code>-word</code>", "<code>word~</code>", "<code>cat:cs.DC</code>"):
        assert syntax in html, syntax
    assert "<code>date:2025-03..</code>" in html and "<code>title:</code>" in html
