"""Index locations on a cluster: parsing, validation and redaction (no cluster needed)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from searchengine.engines import is_cluster
from searchengine.engines.opensearch.location import (
    DEFAULT_PORT,
    MAX_NAME_BYTES,
    check_index_name,
    parse_location,
)
from searchengine.errors import InputError


@pytest.mark.parametrize(
    "text, expected",
    [
        ("http://127.0.0.1:9200/papers", True),
        ("HTTPS://node:9200/papers", True),
        ("  http://x/papers", True),
        ("index", False),
        ("/var/lib/index", False),
        ("./http:/x", False),
        ("", False),
    ],
)
def test_is_cluster(text, expected):
    assert is_cluster(text) is expected


def test_a_path_object_is_never_a_cluster():
    assert is_cluster(Path("http://127.0.0.1:9200/papers")) is False
    assert is_cluster(os.fspath(Path("index"))) is False


def test_parse_hosts_scheme_index_and_credentials():
    location = parse_location("https://elastic:s3cr%40t@node1:9200,node2:9201,[::1]:9202/papers")
    assert location.scheme == "https"
    assert location.hosts == (("node1", 9200), ("node2", 9201), ("::1", 9202))
    assert location.index == "papers"
    assert (location.username, location.password) == ("elastic", "s3cr@t")
    assert location.redacted() == "https://node1:9200,node2:9201,[::1]:9202/papers"


def test_defaults_and_trailing_slash():
    location = parse_location("http://localhost/papers/")
    assert location.hosts == (("localhost", DEFAULT_PORT),)
    assert location.index == "papers"
    assert location.username is None and location.password is None


def test_the_password_never_shows():
    location = parse_location("http://user:secret@127.0.0.1:9200/papers")
    for text in (str(location), repr(location), location.redacted(), location.redacted("papers-1")):
        assert "secret" not in text and "user" not in text
    assert (
        location.scrub("GET http://user:secret@127.0.0.1:9200/ failed: secret")
        == "GET http://***@127.0.0.1:9200/ failed: ***"
    )


def test_an_unencoded_slash_or_at_in_the_password():
    location = parse_location("http://user:p/a@ss@127.0.0.1:9200/papers")
    assert location.password == "p/a@ss"
    assert location.hosts == (("127.0.0.1", 9200),)


@pytest.mark.parametrize(
    "text, words",
    [
        ("ftp://user:secret@host/papers", "starts with http:// or https://"),
        ("http://user:secret@host:9200", "names no index"),
        ("http://user:secret@host:9200/", "names no index"),
        ("http://user:secret@host:99999/papers", "out of range"),
        ("http://user:secret@host:port/papers", "is not HOST:PORT"),
        ("http://user:secret@a:9200,,b:9200/papers", "is not HOST:PORT"),
        ("http://user:secret@host:9200/papers?pretty", "no query string"),
        ("http://user:secret@host:9200/a/b", "must not contain '/'"),
        ("http://user:secret@host:9200/Papers", "must be lower case"),
        ("http://user:secret@host:9200/_papers", "must not start with '_'"),
    ],
)
def test_malformed_locations_are_one_clear_line_without_the_password(text, words):
    with pytest.raises(InputError) as caught:
        parse_location(text)
    message = str(caught.value)
    assert words in message
    assert "secret" not in message and "\n" not in message


@pytest.mark.parametrize(
    "name, words",
    [
        ("Papers", "lower case"),
        ("pa pers", "space"),
        ("pa*pers", "'*'"),
        ("a,b", "','"),
        ("a#b", "'#'"),
        ("a:b", "':'"),
        ("a\\b", "'\\\\'"),
        ("a|b", "'|'"),
        ('a"b', "'\"'"),
        ("a<b", "'<'"),
        ("a?b", "'?'"),
        ("-papers", "start with '-'"),
        ("+papers", "start with '+'"),
        (".papers", "start with '.'"),
        ("p" * (MAX_NAME_BYTES + 1), "longer than"),
    ],
)
def test_index_name_rules(name, words):
    with pytest.raises(InputError, match="index name") as caught:
        check_index_name(name)
    assert words in str(caught.value)


@pytest.mark.parametrize("name", ["papers", "arxiv-2026", "a_b.c", "p" * MAX_NAME_BYTES, "papers+1"])
def test_good_index_names(name):
    check_index_name(name)
