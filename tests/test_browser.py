"""A real browser against the real server: headless Chromium driven by Selenium.

The server is ``searchengine serve`` on a free loopback port, the browser
Debian's ``chromium`` (see ``tests/live.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from searchengine import build_index

from live import chromium, serving

RECORDS = Path(__file__).parent / "data" / "web_records.jsonl"
SERVER_START_SECONDS = 30
# The documentation shows the search page; its screenshots are made here, into
# the folder SEARCHENGINE_SCREENSHOTS names (CI: docs/images, before it builds
# the site), else into a temporary folder (a test run leaves the checkout alone).
REPO = Path(__file__).resolve().parent.parent
DESKTOP = (1280, 900)
PHONE = (390, 844)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``searchengine serve`` on a free port over the web fixture; yields its base URL."""
    index_dir = tmp_path_factory.mktemp("browser-index")
    build_index([RECORDS], index_dir)
    with serving(index_dir) as (_, base):
        yield base


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with chromium(tmp_path_factory.mktemp("chromium-profile"), SERVER_START_SECONDS) as driver:
        yield driver


def _wait(driver, condition, seconds: float = 20):
    """Wait for a page to reach ``condition`` (a click does not wait for the next page)."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, seconds).until(condition)


def _result_ids(driver) -> set[str]:
    from selenium.webdriver.common.by import By

    links = driver.find_elements(By.CSS_SELECTOR, "ol.hits h2.title a")
    # a record link carries the search in its query string
    return {link.get_attribute("href").split("/records/", 1)[1].split("?", 1)[0] for link in links}


def test_search_click_a_year_facet_and_see_the_chip(server, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC

    browser.get(server + "/")
    box = browser.find_element(By.CSS_SELECTOR, "form[role=search] input#q")
    box.send_keys("SpMV GPU")
    browser.find_element(By.CSS_SELECTOR, "form[role=search] button[type=submit]").click()

    heading = _wait(browser, EC.presence_of_element_located((By.ID, "results-heading"))).text
    assert heading.startswith("4 hits for SpMV GPU") or heading.startswith("4 hits for “SpMV GPU”")
    assert _result_ids(browser) == {"2301.00001", "2401.00002", "2402.00003", "hep-th/9901001"}
    assert browser.current_url == server + "/?q=SpMV+GPU&sort=relevance"
    # the stylesheet came through the real server: the chip colour is the sheet's
    marks = browser.find_elements(By.TAG_NAME, "mark")
    assert marks and marks[0].value_of_css_property("background-color") == "rgba(255, 247, 209, 1)"

    browser.find_element(By.CSS_SELECTOR, 'a[data-facet="year"][data-value="2024"]').click()
    _wait(browser, EC.url_contains("year=2024"))

    assert browser.find_element(By.ID, "results-heading").text.startswith("2 hits")
    assert _result_ids(browser) == {"2401.00002", "2402.00003"}
    chips = [chip.text for chip in browser.find_elements(By.CSS_SELECTOR, ".chips .chip span")]
    assert chips == ["Year: 2024"]
    assert browser.current_url == server + "/?q=SpMV+GPU&year=2024&sort=relevance"
    # no script ran: the hostile record's title is text, not an alert or an element
    assert browser.find_elements(By.CSS_SELECTOR, "ol.hits script, ol.hits img") == []

    shot = tmp_path / "search-spmv-gpu-2024.png"
    assert browser.save_screenshot(str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    browser.find_element(By.CSS_SELECTOR, ".chips .chip a").click()
    _wait(browser, lambda driver: "year=" not in driver.current_url)
    assert browser.find_element(By.ID, "results-heading").text.startswith("4 hits")
    assert browser.find_elements(By.CSS_SELECTOR, ".chips") == []


def test_the_latest_papers_from_the_start_page_link_and_from_an_empty_box_sorted_newest(server, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import Select

    newest = ["2502.00006", "2501.00004", "2402.00003", "2401.00002", "2301.00001", "hep-th/9901001"]

    def listed() -> list[str]:
        links = browser.find_elements(By.CSS_SELECTOR, "ol.hits h2.title a")
        return [link.get_attribute("href").split("/records/", 1)[1].split("?", 1)[0] for link in links]

    browser.get(server + "/")
    browser.find_element(By.CSS_SELECTOR, "section.intro p.latest a").click()
    heading = _wait(browser, EC.presence_of_element_located((By.ID, "results-heading"))).text
    assert heading.startswith("6 papers, newest first (")
    assert browser.current_url == server + "/?sort=newest" and browser.title == "Latest papers · searchengine"
    assert listed() == newest
    assert Select(browser.find_element(By.ID, "sort")).first_selected_option.text == "newest"
    # a facet narrows the listing; its chip leads back to the whole of it
    browser.find_element(By.CSS_SELECTOR, 'a[data-facet="year"][data-value="2024"]').click()
    _wait(browser, EC.url_contains("year=2024"))
    assert browser.find_element(By.ID, "results-heading").text.startswith("2 hits")
    assert listed() == ["2402.00003", "2401.00002"]
    browser.find_element(By.CSS_SELECTOR, ".chips .chip a").click()
    _wait(browser, lambda driver: "year=" not in driver.current_url)
    assert browser.current_url == server + "/?sort=newest" and listed() == newest

    # the search box left empty, sorted by newest, lists them too
    browser.get(server + "/")
    Select(browser.find_element(By.ID, "sort")).select_by_visible_text("newest")
    browser.find_element(By.CSS_SELECTOR, "form[role=search] button[type=submit]").click()
    _wait(browser, EC.presence_of_element_located((By.ID, "results-heading")))
    assert browser.current_url == server + "/?q=&sort=newest" and listed() == newest


def test_on_a_phone_the_hits_come_before_the_filters(server, browser):
    from selenium.webdriver.common.by import By

    browser.set_window_size(390, 844)
    try:
        browser.get(server + "/?q=SpMV+GPU")
        first_hit = browser.find_element(By.CSS_SELECTOR, "ol.hits li.hit").rect["y"]
        filters = browser.find_element(By.CSS_SELECTOR, "aside.facets").rect["y"]
        assert first_hit < filters
        assert first_hit < 400  # within the first screen, under the search box and heading
        # a link above the hits says where the filters are, and goes there
        link = browser.find_element(By.CSS_SELECTOR, ".to-filters a")
        assert link.is_displayed() and link.rect["y"] < first_hit
        link.click()
        assert browser.execute_script("return window.scrollY") > 0
        assert browser.current_url.endswith("#filters")
        # a search without hits shows no empty filter lists
        browser.get(server + "/?q=zebrafish+quasar")
        assert browser.find_elements(By.CSS_SELECTOR, "aside.facets, .to-filters") == []
    finally:
        browser.set_window_size(1280, 1000)
    browser.get(server + "/?q=SpMV+GPU")
    assert (
        browser.find_element(By.CSS_SELECTOR, "aside.facets").rect["x"]
        < browser.find_element(By.CSS_SELECTOR, "ol.hits li.hit").rect["x"]
    )  # wide: filters on the left
    assert not browser.find_element(By.CSS_SELECTOR, ".to-filters a").is_displayed()  # wide: they are in view
    # the years are listed in the order the histogram's bars run, oldest first
    years = [a.get_attribute("data-value") for a in browser.find_elements(By.CSS_SELECTOR, "a[data-facet=year]")]
    bars = [
        t.get_attribute("textContent").split(":")[0]
        for t in browser.find_elements(By.CSS_SELECTOR, ".facet-year svg title")
    ]
    assert years == sorted(years) == bars and len(years) > 1


DATED = [
    {"id": "2503.00001", "title": "Lattice kernels in March", "abstract": "lattice", "date": "2025-03-14"},
    {"id": "2506.00002", "title": "Lattice kernels in June", "abstract": "lattice", "date": "2025-06-30"},
    {"id": "t-yearonly", "title": "Lattice kernels of some year", "abstract": "lattice", "year": 2024},
]


@pytest.fixture(scope="module")
def dated_server(tmp_path_factory):
    """``searchengine serve`` over three dated records; yields its base URL."""
    import json

    folder = tmp_path_factory.mktemp("browser-dated")
    source = folder / "dated.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in DATED), encoding="utf-8")
    build_index([source], folder / "index")
    with serving(folder / "index") as (_, base):
        yield base


def test_the_date_histogram_and_form_sit_in_the_sidebar_and_narrow_the_search(dated_server, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC

    browser.get(dated_server + "/?q=lattice")
    aside = browser.find_element(By.CSS_SELECTOR, "aside.facets").rect
    section = browser.find_element(By.CSS_SELECTOR, "section.facet-date")
    inside = [
        section.find_element(By.CSS_SELECTOR, sel).rect
        for sel in ("svg.date-histogram", "input#since", "input#until", "form.date-range button")
    ]
    for box in inside:  # nothing of the section sticks out of the sidebar
        assert aside["x"] <= box["x"] and box["x"] + box["width"] <= aside["x"] + aside["width"] + 1, box
    bars = section.find_elements(By.CSS_SELECTOR, "svg.date-histogram rect")
    assert [bar.find_element(By.TAG_NAME, "title").get_attribute("textContent") for bar in bars] == [
        "2025-03: 1",
        "2025-04: 0",
        "2025-05: 0",
        "2025-06: 1",
    ]
    assert section.find_element(By.CSS_SELECTOR, "p.date-span").text == "2025-03 – 2025-06, by month; 1 without a date"
    assert [hit.text for hit in browser.find_elements(By.CSS_SELECTOR, "ol.hits .meta .date, ol.hits .meta .year")] == [
        "30 Jun 2025",
        "14 Mar 2025",
        "2024",
    ]  # equal scores: newest year, then id, first

    browser.find_element(By.CSS_SELECTOR, "input#since").send_keys("2025-06")
    browser.find_element(By.CSS_SELECTOR, "form.date-range button").click()
    _wait(browser, EC.url_contains("since=2025-06"))
    assert browser.find_element(By.ID, "results-heading").text.startswith("1 hit")
    assert _result_ids(browser) == {"2506.00002"}
    chips = [chip.text for chip in browser.find_elements(By.CSS_SELECTOR, ".chips .chip span")]
    assert chips == ["Submitted since: 2025-06"]


@pytest.mark.parametrize("width", [1280, 390])
def test_a_record_opened_from_results_keeps_the_search_and_goes_back_to_the_same_page(server, browser, tmp_path, width):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC

    results = server + "/?q=SpMV+GPU&year=2023-2024&sort=oldest&limit=1&page=2"
    browser.set_window_size(width, 900)
    try:
        browser.get(results)
        assert _result_ids(browser) == {"2401.00002"}
        browser.find_element(By.CSS_SELECTOR, "ol.hits h2.title a").click()
        _wait(browser, EC.presence_of_element_located((By.CSS_SELECTOR, "article.record")))
        assert browser.current_url == (
            server + "/records/2401.00002?q=SpMV+GPU&year=2023-2024&sort=oldest&limit=1&page=2"
        )
        assert browser.find_element(By.CSS_SELECTOR, "input#q").get_attribute("value") == "SpMV GPU"
        links = {a.text: a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, ".record .links a")}
        assert links == {
            "PDF": "https://arxiv.org/pdf/2401.00002",
            "arXiv abstract page": "https://arxiv.org/abs/2401.00002",
        }
        back = browser.find_element(By.CSS_SELECTOR, "nav.back a")
        # the back link and the record's links are on screen, and nothing is wider than the window
        assert back.is_displayed() and back.rect["y"] < 300
        assert browser.execute_script("return document.documentElement.scrollWidth") <= width
        shot = tmp_path / f"record-page-{width}px.png"
        assert browser.save_screenshot(str(shot))
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        back.click()
        _wait(browser, EC.presence_of_element_located((By.ID, "results-heading")))
        assert browser.current_url == results
        assert _result_ids(browser) == {"2401.00002"}
        assert browser.find_element(By.CSS_SELECTOR, 'nav.pages a[aria-current="page"]').text == "2"
    finally:
        browser.set_window_size(1280, 1000)


@pytest.fixture(scope="module")
def corpus_server(corpus_index_dir):
    """``searchengine serve`` over the bundled corpus; yields its base URL."""
    with serving(corpus_index_dir) as (_, base):
        yield base


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory) -> Path:
    """Where the screenshots go (see :data:`REPO`'s comment)."""
    import os

    named = os.environ.get("SEARCHENGINE_SCREENSHOTS")
    folder = REPO / named if named else tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _save_screenshot(driver, folder: Path, name: str) -> Path:
    """Save the visible page as ``folder/<name>`` and check it is a PNG of the window's width."""
    import struct

    path = folder / name
    assert driver.save_screenshot(str(path))
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk
    viewport = driver.execute_script("return [window.innerWidth, window.innerHeight]")
    assert (width, height) == tuple(viewport), (width, height, viewport)
    return path


def test_screenshots_of_the_search_page_at_desktop_and_phone_widths(corpus_server, browser, screenshots):
    """The screenshots of the documentation (docs/images), made of the real page over the bundled corpus."""
    from selenium.webdriver.common.by import By

    url = corpus_server + "/?q=GPU&sort=relevance"
    try:
        browser.set_window_size(*DESKTOP)
        browser.get(url)
        heading = browser.find_element(By.ID, "results-heading").text
        total = int(heading.split()[0])
        assert heading.startswith(f"{total} hits for") and "GPU" in heading and total > 10
        hits = browser.find_elements(By.CSS_SELECTOR, "ol.hits li.hit")
        assert len(hits) == 10  # the first page of a longer list
        assert all("GPU" in mark.text.upper() for mark in browser.find_elements(By.CSS_SELECTOR, "ol.hits h2 mark"))
        facets = browser.find_element(By.CSS_SELECTOR, "aside.facets")
        assert [h.text for h in facets.find_elements(By.CSS_SELECTOR, "h3")][:2] == ["Year", "Submitted"]
        # wide: the filters stand left of the hits, side by side with the first one
        assert facets.rect["x"] + facets.rect["width"] <= hits[0].rect["x"]
        assert abs(facets.rect["y"] - hits[0].rect["y"]) < 200
        _save_screenshot(browser, screenshots, "search-desktop.png")

        browser.set_window_size(*PHONE)
        browser.get(url)
        first_hit = browser.find_element(By.CSS_SELECTOR, "ol.hits li.hit")
        facets = browser.find_element(By.CSS_SELECTOR, "aside.facets")
        # narrow: the hits come first, on the first screen, and nothing is wider than the window
        assert first_hit.rect["y"] < facets.rect["y"]
        assert first_hit.rect["y"] < 400 and first_hit.is_displayed()
        width = browser.execute_script("return window.innerWidth")
        assert browser.execute_script("return document.documentElement.scrollWidth") <= width
        _save_screenshot(browser, screenshots, "search-phone.png")
    finally:
        browser.set_window_size(1280, 1000)


@pytest.mark.parametrize("size", [DESKTOP, PHONE])
def test_a_record_lists_each_similar_paper_once_and_a_corrected_search_names_what_it_searched(server, browser, size):
    from selenium.webdriver.common.by import By

    browser.set_window_size(*size)
    try:
        browser.get(server + "/records/2301.00001")
        links = [a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "section.similar li > a")]
        assert links and len(links) == len(set(links))
        assert all(a.is_displayed() for a in browser.find_elements(By.CSS_SELECTOR, "section.similar li > a"))
        browser.get(server + "/?q=SpMV+kernals")
        heading = browser.find_element(By.ID, "results-heading").text
        assert heading.startswith("1 hit for") and "SpMV kernels" in heading and "kernals" not in heading
        assert browser.find_element(By.CSS_SELECTOR, ".notice.corrected").text == (
            "Showing results for SpMV kernels. Search instead for SpMV kernals."
        )
    finally:
        browser.set_window_size(1280, 1000)


def test_the_atom_feed_shows_as_a_readable_list(server, browser):
    browser.get(server + "/feed.atom?q=SpMV")
    style = browser.execute_script(
        "const s = (q) => getComputedStyle(document.querySelector(q));"
        "return [document.styleSheets.length, s('entry > id').display, s('entry > summary').display,"
        " s('entry > title').fontWeight, document.querySelectorAll('entry').length];"
    )
    # The sheet came through the server (the page's security policy allows it):
    # ids hidden, each abstract a block under a bold title.
    assert style == [1, "none", "block", "600", 4]


MATH = [
    {
        "id": "2103.00001",
        "title": r"Sorting in $O(n^2)$ time with $\frac{a}{b}$ ratios",
        "abstract": r"We bound sorting by $\mathcal{O}(n \log n)$ comparisons and $\alpha$-stable laws.",
        "authors": ["Ada Lovelace"],
        "year": 2021,
        "categories": ["cs.DS"],
    },
    {
        "id": "2103.00002",
        "title": "Sorting networks on the GPU",
        "abstract": "Bitonic sorting networks, tuned for GPU memory.",
        "authors": ["Grace Hopper"],
        "year": 2022,
        "categories": ["cs.DC"],
    },
]


@pytest.fixture(scope="module")
def math_server(tmp_path_factory):
    """``searchengine serve`` over two records, one with formulas; yields its base URL."""
    import json

    folder = tmp_path_factory.mktemp("browser-math")
    source = folder / "math.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in MATH), encoding="utf-8")
    from searchengine import semantic

    build_index([source], folder / "index", vectors=semantic.available())  # hybrid "why" panels when it can
    with serving(folder / "index") as (_, base):
        yield base


def test_a_formula_renders_as_mathml(math_server, browser):
    browser.get(math_server + "/?q=sorting")
    drawn = browser.execute_script(
        "const title = document.querySelector('a[href^=\"/records/2103.00001\"]');"
        "const maths = [...title.querySelectorAll('math')];"
        "const frac = title.querySelector('mfrac');"
        "const line = title.getBoundingClientRect().height;"
        "return [maths.length, maths.every(m => m instanceof MathMLElement), frac.getBoundingClientRect().height,"
        " title.querySelector('mi').getBoundingClientRect().height, line, title.textContent,"
        " document.querySelectorAll('p.snippet math').length];"
    )
    count, native, fraction, letter, line, text, in_snippet = drawn
    # Two formulas in the title, drawn by the browser's MathML (a fraction: a over b, taller than a letter).
    assert (count, native, in_snippet) == (2, True, 2)
    assert fraction > letter * 1.5 and line < 80
    assert "$" not in text and "\\frac" not in text


def test_screenshots_of_formulas_and_a_why_panel_at_desktop_and_phone_widths(math_server, browser, screenshots):
    """The documentation's screenshots of a results page with rendered formulas and an open "why" panel."""
    from selenium.webdriver.common.by import By

    try:
        for size, name in ((DESKTOP, "search-math-why-desktop.png"), (PHONE, "search-math-why-phone.png")):
            browser.set_window_size(*size)
            browser.get(math_server + "/?q=sorting+time")
            first = browser.find_element(By.CSS_SELECTOR, "ol.hits li.hit")
            first.find_element(By.CSS_SELECTOR, "details.why summary").click()
            panel = first.find_element(By.CSS_SELECTOR, "details.why")
            assert panel.get_attribute("open") is not None
            shown = panel.find_element(By.CSS_SELECTOR, ".why-fields").text
            assert shown == "title, abstract"
            assert panel.find_element(By.CSS_SELECTOR, ".why-keyword").is_displayed()
            assert len(first.find_elements(By.CSS_SELECTOR, "h2 math")) == 2
            width = browser.execute_script("return window.innerWidth")
            assert browser.execute_script("return document.documentElement.scrollWidth") <= width
            _save_screenshot(browser, screenshots, name)
    finally:
        browser.set_window_size(1280, 1000)
