"""The documentation's figures checked against the code, so that none goes stale silently.

The settings page shows :data:`searchengine.settings.SETTINGS` as rendered, and
the table lists every environment variable read anywhere; layout numbers,
extras, limits and defaults named in the pages equal the code's; README.md
stays short.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

from searchengine import limits, settings

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
README_MAX_LINES = 250
# Set by a test for its own child processes only, never by a person.
INTERNAL = {"LINGER", "PARALLEL_MIN", "PYTHONPATH", "PYTHONIOENCODING", "QUERY_STRING"}


def page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def numbers(text: str, pattern: str) -> list[int]:
    """Every number the pattern's group captures (thousands separators dropped)."""
    found = [int(match.replace(",", "")) for match in re.findall(pattern, text)]
    assert found, f"no match for {pattern!r}"
    return found


# -- settings ------------------------------------------------------------------------------------


def test_settings_page_shows_the_table_of_the_code():
    text = page("settings.md")
    match = re.search(r"<!-- settings-table[^>]*-->\n(.*?)<!-- /settings-table -->", text, re.S)
    assert match, "docs/settings.md lacks the settings-table markers"
    assert match.group(1) == settings.render(), "regenerate the table: python -m searchengine.settings"


def _sources(*folders: str, suffixes=(".py",)) -> dict[Path, str]:
    """The text of the files under ``folders`` (this file left out: it names variables as examples)."""
    return {
        path: path.read_text(encoding="utf-8")
        for folder in folders
        for path in (REPO / folder).rglob("*")
        if path.suffix in suffixes
        and path.is_file()
        and "__pycache__" not in path.parts
        and path != Path(__file__).resolve()
    }


def test_every_variable_read_is_in_the_table():
    read: dict[str, Path] = {}
    for path, text in _sources("searchengine", "web", "tests", "benchmarks").items():
        # os.environ.get("X"), os.getenv("X"), os.environ["X"], and settings' own _read("X")
        for name in re.findall(
            r"""(?:environ\.get|getenv|_read)\(\s*["']([A-Z][A-Z0-9_]*)["']"""
            r"""|environ\[["']([A-Z][A-Z0-9_]*)["']\]""",
            text,
        ):
            read.setdefault(next(filter(None, name)), path)
    for path, text in {
        **_sources("searchengine", "web", "tests", "benchmarks"),
        **_sources("scripts", ".ci", suffixes=(".sh", "")),
        REPO / "mkdocs.yml": (REPO / "mkdocs.yml").read_text(encoding="utf-8"),
    }.items():
        for name in re.findall(r"\bSEARCHENGINE_[A-Z0-9_]+", text):
            read.setdefault(name, path)
    unlisted = {
        name: str(path.relative_to(REPO))
        for name, path in read.items()
        if name not in settings.BY_VARIABLE and name not in INTERNAL
    }
    assert not unlisted, f"add these to searchengine/settings.py SETTINGS: {unlisted}"
    stale = set(settings.BY_VARIABLE) - set(read)
    assert not stale, f"listed in SETTINGS but read nowhere: {sorted(stale)}"


def test_the_package_reads_the_environment_only_through_settings():
    for path, text in _sources("searchengine", "web").items():
        if path.name == "settings.py":
            continue
        assert not re.search(r"environ\.get\(|environ\[|getenv\(", text), f"{path}: read it through settings"


def test_settings_defaults_are_the_codes():
    from searchengine.cli.common import index_dir_option
    from searchengine.cli.searching import search
    from searchengine.engines.opensearch import client, mapping
    from searchengine.search import DEFAULT_INDEX_DIR

    default = {setting.variable: setting.default for setting in settings.SETTINGS}
    assert default["SEARCHENGINE_INDEX"] == DEFAULT_INDEX_DIR

    @index_dir_option
    def probe(index_dir):  # the shared option, on a throwaway command
        return index_dir

    options = {
        param.envvar: param.default
        for param in [*search.params, *probe.__click_params__]
        if getattr(param, "envvar", None)
    }
    assert options == {
        "SEARCHENGINE_INDEX": DEFAULT_INDEX_DIR,
        "SEARCHENGINE_BASE_URL": default["SEARCHENGINE_BASE_URL"],
    }
    assert float(default["SEARCHENGINE_CLUSTER_TIMEOUT"]) == client.DEFAULT_TIMEOUT
    assert int(default["SEARCHENGINE_OPENSEARCH_SHARDS"]) == mapping.DEFAULT_SHARDS
    site_url = re.search(r"^site_url: !ENV \[(\w+), \"(.*)\"\]$", (REPO / "mkdocs.yml").read_text(), re.M)
    assert site_url and site_url.groups() == ("SEARCHENGINE_DOCS_URL", default["SEARCHENGINE_DOCS_URL"])
    assert default["SEARCHENGINE_OPENSEARCH_REPLICAS"].startswith(f"up to {mapping.DEFAULT_REPLICAS},")


def test_literal_defaults_in_tests_are_the_tables():
    """``os.environ.get("NAME", 600)`` in a test: the table says 600."""
    for path, text in _sources("tests").items():
        for name, value in re.findall(r"""environ\.get\(["']([A-Z_]+)["'],\s*["']?([0-9.]+)["']?\)""", text):
            if name in settings.BY_VARIABLE:
                assert settings.BY_VARIABLE[name].default == value, f"{path.name}: {name} defaults to {value}"


def test_settings_accessors_read_as_before(monkeypatch):
    for name in (
        "SEARCHENGINE_INDEX",
        "SEARCHENGINE_DEBUG",
        "SEARCHENGINE_CLUSTER_SNIFF",
        "SEARCHENGINE_CLUSTER_TIMEOUT",
        "SEARCHENGINE_ALLOW_NETWORK_FS",
        "SEARCHENGINE_VECTOR_CACHE",
        "XDG_CACHE_HOME",
    ):
        monkeypatch.delenv(name, raising=False)
    assert (settings.index_location(), settings.debug(), settings.cluster_sniff()) == (None, False, True)
    assert settings.cluster_timeout(30.0) == 30.0 and not settings.allow_network_fs()
    assert settings.cache_home() == Path.home() / ".cache" and settings.vector_cache() is None
    monkeypatch.setenv("SEARCHENGINE_INDEX", "")
    monkeypatch.setenv("SEARCHENGINE_CLUSTER_SNIFF", " Off ")
    monkeypatch.setenv("SEARCHENGINE_ALLOW_NETWORK_FS", "yes")
    monkeypatch.setenv("SEARCHENGINE_CLUSTER_TIMEOUT", "")
    assert (settings.index_location(), settings.cluster_sniff(), settings.allow_network_fs()) == (None, False, False)
    with pytest.raises(ValueError):
        settings.cluster_timeout(30.0)
    with pytest.raises(KeyError):
        settings.text("SEARCHENGINE_NOT_A_SETTING")


# -- figures -----------------------------------------------------------------------------------


def test_layout_numbers_are_the_codes():
    from searchengine.engines.opensearch import mapping
    from searchengine.engines.whoosh import store

    assert set(numbers(page("opensearch.md"), r"now mapping layout (\d+)")) == {mapping.LAYOUT}
    assert set(numbers(page("production-cluster.md"), r"now layout (\d+)")) == {mapping.LAYOUT}
    assert set(numbers(page("indexing.md"), r"(?:now|reads) layout (\d+)")) == {store.LAYOUT}
    # No page but the changelog names a layout newer than the code's.
    for path in DOCS.glob("*.md"):
        for number in re.findall(r"\blayout (\d+)", path.read_text(encoding="utf-8")):
            assert int(number) <= max(mapping.LAYOUT, store.LAYOUT), f"{path.name}: layout {number}"


def test_extras_listed_are_pyprojects():
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    listed = re.findall(r"^\| `pip install '\.\[(\w+)\]'` \|(.*)\|$", page("getting-started.md"), re.M)
    assert sorted(name for name, _ in listed) == sorted(extras)
    test_row = dict(listed)["test"]
    included = set(re.findall(r"`(\w+)`", test_row.split("includes", 1)[1]))
    assert included == {
        re.fullmatch(r"searchengine\[(\w+)\]", need).group(1)
        for need in extras["test"]
        if need.startswith("searchengine[")
    }


def test_limits_named_in_the_docs_are_the_codes():
    from searchengine.engines.opensearch import client, mapping
    from searchengine.web.params import MAX_QUERY_CHARS

    api, facets, exports = page("api.md"), page("facets.md"), page("exports.md")
    assert numbers(api, r"at most (\d+) hits per page") == [limits.MAX_LIMIT]
    assert numbers(facets, r"capped at (\d+) hits per page") == [limits.MAX_LIMIT]
    assert numbers(api, r"no deeper than\s+hit ([\d,]+)") == [limits.MAX_DEPTH]
    assert numbers(facets, r"is the ([\d,]+)th") == [limits.MAX_DEPTH]
    assert numbers(api, r"several records at once \(at most (\d+)") == [limits.MAX_API_LOOKUP]
    assert numbers(api, r"Queries\s+are at most ([\d,]+) characters") == [MAX_QUERY_CHARS]
    assert numbers(exports, r"up to \*\*([\d,]+) hits\*\*") == [limits.EXPORT_LIMIT]
    assert numbers(exports, r"an export holds at most ([\d,]+)") == [limits.EXPORT_LIMIT]
    assert numbers(api, r"every hit, up to ([\d,]+)") == [limits.EXPORT_LIMIT]
    assert (
        numbers(
            page("opensearch.md") + page("production-cluster.md"),
            r"OPENSEARCH_SHARDS`\s+\((?:primary shards, )?default (\d+)",
        )
        == [mapping.DEFAULT_SHARDS] * 2
    )
    assert numbers(page("opensearch.md"), r"seconds per request, default (\d+)") == [int(client.DEFAULT_TIMEOUT)]


def test_index_size_of_the_speed_table_is_the_one_quoted_beside_it():
    text = page("performance.md")
    table = set(re.findall(r"^\| index size on disk \| ([\d.]+) MB \|", text, re.M))
    assert len(table) == 1
    (current,) = table
    assert f"({current} MB in all)" in text and f"{current} MB now" in text
    # Figures of earlier runs are named with their run, never as "the run above".
    assert "in the run above (" not in text


def test_readme_is_short():
    lines = (REPO / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; move detail into docs/"
