"""Every setting read from the environment, in one table, with typed accessors.

:data:`SETTINGS` lists each environment variable the product, its scripts and
its tests read: the name, the type of its value, the default, what it means and
which command or part reads it. The modules that read one call the accessor
below instead of ``os.environ``; the documentation's table
(``docs/settings.md``) is :func:`render` of :data:`SETTINGS`, and a test keeps
the two equal (``python -m searchengine.settings`` prints it).

Only the standard library is imported here: the command line imports this
module on every start.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

#: Who reads a setting: the package itself, ``scripts/dev-cluster.sh``, the site's build, or the tests.
PRODUCT, SCRIPT, DOCS, TEST = "product", "script", "docs", "test"


@dataclass(frozen=True)
class Setting:
    """One environment variable.

    Attributes:
        variable: its name in the environment (``SEARCHENGINE_INDEX``).
        kind: the type of its value, in words (``text``, ``path``, ``seconds``, ...).
        default: the value used when it is unset, in words (``""``: none).
        meaning: what it changes, one sentence.
        used_by: the commands or modules that read it.
        scope: :data:`PRODUCT`, :data:`SCRIPT`, :data:`DOCS` or :data:`TEST`.
    """

    variable: str
    kind: str
    default: str
    meaning: str
    used_by: str
    scope: str = PRODUCT


# One setting a few lines: the table is read as a table.
# fmt: off
SETTINGS: tuple[Setting, ...] = (
    # The package (searchengine/).
    Setting("SEARCHENGINE_INDEX", "index location", "index",
            "The index folder or OpenSearch index URL used when none is given; an empty value counts as unset.",
            "every command's --index option, open_index(), the web app (create_app)"),
    Setting("SEARCHENGINE_BASE_URL", "URL", "http://127.0.0.1:8000",
            "Address of the web page that an Atom feed's links point to.",
            "searchengine search --format atom (--base-url)"),
    Setting("SEARCHENGINE_DEBUG", "flag (any non-empty value)", "",
            "Show the traceback of an internal error instead of its one-line summary.",
            "the command line (searchengine.cli.run)"),
    Setting("SEARCHENGINE_VECTOR_CACHE", "path", "$XDG_CACHE_HOME/searchengine/vectors",
            "Folder where evaluation keeps record vectors between runs.",
            "searchengine eval (searchengine.evaluation.vector_cache)"),
    Setting("XDG_CACHE_HOME", "path", "~/.cache",
            "Base of the default vector cache folder.",
            "searchengine eval (searchengine.evaluation.vector_cache)"),
    Setting("SEARCHENGINE_ALLOW_NETWORK_FS", "flag (1: on)", "off",
            "Write an index on a network file system (NFS, SMB, ...) instead of refusing to.",
            "searchengine index, update, remove (embedded engine: engines/whoosh/store.py)"),
    Setting("SEARCHENGINE_CLUSTER_TIMEOUT", "seconds", "30",
            "Time limit of one request to an OpenSearch cluster; a value that is not a positive number counts "
            "as unset.",
            "OpenSearch engine (engines/opensearch/client.py)"),
    Setting("SEARCHENGINE_CLUSTER_CA_CERTS", "path", "",
            "CA certificates file to verify an https cluster's certificate with (default: the system's).",
            "OpenSearch engine (engines/opensearch/client.py)"),
    Setting("SEARCHENGINE_CLUSTER_SNIFF", "flag (0, false, no, off: off)", "on",
            "Add the cluster's other nodes, as they publish their addresses, to the client's pool.",
            "OpenSearch engine (engines/opensearch/client.py)"),
    Setting("SEARCHENGINE_OPENSEARCH_SHARDS", "whole number, at least 1", "3",
            "Primary shards of a new OpenSearch index.",
            "searchengine index on a cluster (engines/opensearch/mapping.py)"),
    Setting("SEARCHENGINE_OPENSEARCH_REPLICAS", "whole number, at least 0", "up to 1, as the nodes allow",
            "Replicas of each shard of a new OpenSearch index (never more than the data nodes less one).",
            "searchengine index on a cluster (engines/opensearch/mapping.py)"),
    # searchengine serve's abuse limits (options win over these; docs/reliability.md#security).
    Setting("SEARCHENGINE_RATE_LIMIT", "limits (60/minute; several: 10/second;600/hour; off)", "60/minute",
            "Cost units one client may spend (a cheap request costs 1, an expensive one --expensive-cost).",
            "searchengine serve --rate-limit (web/guard.py)"),
    Setting("SEARCHENGINE_EXPENSIVE_COST", "whole number, at least 1", "10",
            "Cost units of an expensive request (export, long feed, similar, pasted abstract, wildcards, ~2).",
            "searchengine serve --expensive-cost"),
    Setting("SEARCHENGINE_EXPENSIVE_SLOTS", "whole number, at least 1", "1",
            "Expensive requests each server process runs at once.", "searchengine serve --expensive-slots"),
    Setting("SEARCHENGINE_EXPENSIVE_WAIT", "seconds", "1",
            "How long an expensive request waits for a slot before a 503 with Retry-After.",
            "searchengine serve --expensive-wait"),
    Setting("SEARCHENGINE_REFUSAL_DELAY", "seconds", "0.5",
            "How long a 429 is held back before it is sent (one at a time per server process).",
            "searchengine serve --refusal-delay"),
    Setting("SEARCHENGINE_TIME_BUDGET", "seconds", "2",
            "Time one search of the server may run before it answers with the hits found so far.",
            "searchengine serve --time-budget"),
    Setting("SEARCHENGINE_MAX_EXPORT", "whole number, 1 to 1000", "1000", "Hits in one /api/export.",
            "searchengine serve --max-export"),
    Setting("SEARCHENGINE_MAX_FEED", "whole number, 1 to 100", "100", "Entries in one /feed.atom.",
            "searchengine serve --max-feed"),
    Setting("SEARCHENGINE_TRUSTED_PROXY", "addresses or networks (spaces or commas between)", "",
            "Reverse proxies whose X-Forwarded-For, -Proto, -Host and -Prefix headers are believed.",
            "searchengine serve --trusted-proxy"),
    Setting("SEARCHENGINE_PROXY_COUNT", "whole number, at least 1", "1",
            "Trusted proxies chained in front of the server.", "searchengine serve --proxy-count"),
    # The development cluster's script.
    Setting("SEARCHENGINE_OPENSEARCH_HOME", "path", "~/.cache/searchengine/opensearch-2.19.x",
            "Where OpenSearch is downloaded and assembled.", "scripts/dev-cluster.sh", SCRIPT),
    Setting("SEARCHENGINE_CLUSTER_DIR", "path", "~/.cache/searchengine/dev-cluster",
            "The cluster's configuration, data and logs.", "scripts/dev-cluster.sh, tests/engines", SCRIPT),
    Setting("SEARCHENGINE_CLUSTER_PORT", "port", "9200", "First node's HTTP port (node i: PORT+i).",
            "scripts/dev-cluster.sh", SCRIPT),
    Setting("SEARCHENGINE_CLUSTER_TRANSPORT_PORT", "port", "PORT+100", "First node's transport port.",
            "scripts/dev-cluster.sh", SCRIPT),
    Setting("SEARCHENGINE_CLUSTER_NAME", "text", "searchengine-dev", "The cluster.name of the nodes.",
            "scripts/dev-cluster.sh", SCRIPT),
    Setting("SEARCHENGINE_OPENSEARCH_HEAP", "JVM size", "512m", "Heap per node (-Xms = -Xmx).",
            "scripts/dev-cluster.sh", SCRIPT),
    Setting("SEARCHENGINE_OPENSEARCH_JAVA_OPTS", "JVM options", "", "Extra JVM options per node.",
            "scripts/dev-cluster.sh", SCRIPT),
    Setting("SEARCHENGINE_OPENSEARCH_VERSION", "versions", "2.19.6 2.19.5 ... 2.19.0",
            "The OpenSearch 2.19.N to use, or a list to try in order.", "scripts/dev-cluster.sh", SCRIPT),
    Setting("SEARCHENGINE_OPENSEARCH_KNN", "flag (0: off)", "1",
            "Install the k-NN plugin (vector fields, lucene engine only).", "scripts/dev-cluster.sh", SCRIPT),
    Setting("SEARCHENGINE_JAVA_HOME", "path", "the first JDK 11-21 found", "The JDK that runs the nodes.",
            "scripts/dev-cluster.sh", SCRIPT),
    Setting("SEARCHENGINE_CLUSTER_WAIT", "seconds", "180", "How long to wait for a green cluster.",
            "scripts/dev-cluster.sh", SCRIPT),
    Setting("SEARCHENGINE_CLUSTER_NODE_SETTINGS", "text", "",
            "Extra opensearch.yml lines for every node, separated by ';'.", "scripts/dev-cluster.sh", SCRIPT),
    Setting("SEARCHENGINE_CLUSTER_STOP_TIMEOUT", "seconds", "30", "Seconds before TERM becomes KILL at a stop.",
            "scripts/dev-cluster.sh", SCRIPT),
    Setting("SEARCHENGINE_MAVEN_REPO", "path", "~/.m2/repository", "Maven local repository for the downloads.",
            "scripts/dev-cluster.sh", SCRIPT),
    # The documentation site's build.
    Setting("SEARCHENGINE_DOCS_URL", "URL", "http://localhost/searchengine/docs/",
            "The address the site is served at (mkdocs site_url): its path makes the 404 page's links absolute.",
            "mkdocs build (mkdocs.yml)", DOCS),
    # The tests (read in tests/, not by the package).
    Setting("CI", "flag (any non-empty value; some checks: true)", "",
            "Fail instead of skipping tests whose browser, cluster or shared data is missing.", "tests", TEST),
    Setting("SEARCHENGINE_TEST_CLUSTER", "URL", "",
            "The OpenSearch cluster the cluster and contract tests run on (unset: they skip).",
            "tests/engines, tests/contract", TEST),
    Setting("SEARCHENGINE_SCREENSHOTS", "path (in the repository)", "a temporary folder",
            "Where the browser tests write the documentation's screenshots.", "tests/test_browser.py", TEST),
    Setting("DRILL_RECORDS", "whole number (0: the whole sample)", "per drill",
            "Records of the sample the drills index.", "tests/drills", TEST),
    Setting("DRILL_QUERY_PROFILE", "text", "drills", "Hypothesis profile of the query fuzzing drill.",
            "tests/drills/test_query_fuzzing.py", TEST),
    Setting("DRILL_QUERY_EXAMPLES", "whole number", "0",
            "Queries the query fuzzing drill tries (0: as many as its Hypothesis profile says).",
            "tests/drills/test_query_fuzzing.py", TEST),
    Setting("DRILL_API_EXAMPLES", "whole number", "100", "Requests the web security drill tries.",
            "tests/drills/test_web_security.py", TEST),
    Setting("DRILL_HUGE_MB", "megabytes", "3", "Size of the huge inputs of the input fuzzing drill.",
            "tests/drills/test_input_fuzzing.py", TEST),
    Setting("CRASH_RECORDS", "whole number", "600", "Records of each crash drill's build.",
            "tests/drills/test_crash_drills.py", TEST),
    Setting("CLUSTER_DRILL_PORT", "port", "9230", "First HTTP port of the cluster drills' own cluster.",
            "tests/drills/test_cluster_drills.py", TEST),
    Setting("CLUSTER_DRILL_RECORDS", "whole number", "2000", "Records indexed before the cluster drills.",
            "tests/drills/test_cluster_drills.py", TEST),
    Setting("CLUSTER_DRILL_UPDATE_RECORDS", "whole number", "10000", "Records of the cluster drills' update.",
            "tests/drills/test_cluster_drills.py", TEST),
    Setting("CLUSTER_DRILL_SECONDS", "seconds", "30", "Length of the cluster drills' load.",
            "tests/drills/test_cluster_drills.py", TEST),
    Setting("CLUSTER_DRILL_START_TIMEOUT", "seconds", "600", "How long the drills wait for their cluster.",
            "tests/drills/test_cluster_drills.py", TEST),
    Setting("REBUILD_DRILL_OLD", "whole number", "2000", "Records of the index the cluster rebuild drill replaces.",
            "tests/drills/test_cluster_rebuild_drill.py", TEST),
    Setting("REBUILD_DRILL_NEW", "whole number", "3000", "Records the cluster rebuild drill rebuilds from.",
            "tests/drills/test_cluster_rebuild_drill.py", TEST),
    Setting("WEB_LOAD_SECONDS", "seconds", "60", "Length of the web-under-reindex drill's load.",
            "tests/drills/test_web_under_reindex.py", TEST),
    Setting("WEB_LOAD_CLIENTS", "whole number", "50", "Clients of the web-under-reindex drill.",
            "tests/drills/test_web_under_reindex.py", TEST),
    Setting("WEB_LOAD_RECORDS", "whole number", "1000", "Records of the web-under-reindex drill's first set.",
            "tests/drills/test_web_under_reindex.py", TEST),
)
# fmt: on

BY_VARIABLE: dict[str, Setting] = {setting.variable: setting for setting in SETTINGS}


def _read(variable: str) -> str | None:
    """The environment's value of a setting of :data:`SETTINGS` (``None``: unset).

    Raises:
        KeyError: ``variable`` is not in the table (every setting read must be listed).
    """
    return os.environ.get(BY_VARIABLE[variable].variable)


def text(variable: str) -> str:
    """A setting's value with surrounding white space removed (``""`` when unset)."""
    return (_read(variable) or "").strip()


def index_location() -> str | None:
    """``$SEARCHENGINE_INDEX``, or ``None`` when unset or empty (the caller's default applies)."""
    return _read("SEARCHENGINE_INDEX") or None


def debug() -> bool:
    """Whether ``$SEARCHENGINE_DEBUG`` is set to anything non-empty."""
    return bool(_read("SEARCHENGINE_DEBUG"))


def vector_cache() -> str | None:
    """``$SEARCHENGINE_VECTOR_CACHE``, or ``None`` when unset or empty."""
    return _read("SEARCHENGINE_VECTOR_CACHE") or None


def cache_home() -> Path:
    """``$XDG_CACHE_HOME``, else ``~/.cache`` (also when empty)."""
    return Path(_read("XDG_CACHE_HOME") or Path.home() / ".cache")


def allow_network_fs() -> bool:
    """Whether ``$SEARCHENGINE_ALLOW_NETWORK_FS`` is exactly ``1``."""
    return _read("SEARCHENGINE_ALLOW_NETWORK_FS") == "1"


def cluster_timeout(default: float) -> float:
    """``$SEARCHENGINE_CLUSTER_TIMEOUT`` in seconds, ``default`` when unset (not checked for sign).

    Raises:
        ValueError: the value is not a number.
    """
    raw = _read("SEARCHENGINE_CLUSTER_TIMEOUT")
    return float(default if raw is None else raw)


def cluster_ca_certs() -> str | None:
    """``$SEARCHENGINE_CLUSTER_CA_CERTS`` (a file), or ``None`` when unset or empty."""
    return _read("SEARCHENGINE_CLUSTER_CA_CERTS") or None


def cluster_sniff() -> bool:
    """``$SEARCHENGINE_CLUSTER_SNIFF``: on unless ``0``, ``false``, ``no`` or ``off`` (any case)."""
    return (_read("SEARCHENGINE_CLUSTER_SNIFF") or "1").strip().lower() not in ("0", "false", "no", "off")


SCOPES = {PRODUCT: "the package", SCRIPT: "scripts/dev-cluster.sh", DOCS: "the docs build", TEST: "test setting"}


def _cell(value: str) -> str:
    return value.replace("|", "\\|")


def render() -> str:
    """:data:`SETTINGS` as a Markdown table (the text between the markers of ``docs/settings.md``)."""
    lines = ["| variable | type | default | meaning | used by | scope |", "|---|---|---|---|---|---|"]
    for setting in SETTINGS:
        default = setting.default or "(none)"
        lines.append(
            f"| `{setting.variable}` | {_cell(setting.kind)} | {_cell(default)} | {_cell(setting.meaning)} "
            f"| {_cell(setting.used_by)} | {SCOPES[setting.scope]} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render(), end="")
