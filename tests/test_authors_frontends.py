"""The author options of the CLI and the web page/API over tests/fixtures/authors.jsonl.

The records and the names they give are listed in
tests/contract/test_authors_contract.py; ``aNN`` is of year ``2000 + NN``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from searchengine import build_index
from searchengine.cli import main
from searchengine.web import create_app

FIXTURE = Path(__file__).parent / "fixtures" / "authors.jsonl"


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("authors-index")
    build_index([FIXTURE], folder)
    return folder


@pytest.fixture(scope="module")
def client(index_dir):
    return create_app(index_dir=index_dir).test_client()


def cli(index_dir, *args):
    return CliRunner().invoke(main, ["search", *args, "--index-dir", str(index_dir)])


def test_cli_first_author(index_dir):
    result = cli(index_dir, "--first-author", "Okafor", "--sort", "oldest", "--json")
    assert result.exit_code == 0, result.output
    assert [h["id"] for h in json.loads(result.stdout)["hits"]] == ["a01", "a02", "a04"]
    table = cli(index_dir, "--first-author", "Tomas Okafor", "--sort", "oldest")
    assert table.stdout.startswith("2 hits with first author Tomas Okafor (")


def test_cli_first_author_ors_with_author(index_dir):
    result = cli(index_dir, "--first-author", "Zeng", "--author", "Teresa Okafor", "--sort", "oldest", "--json")
    assert [h["id"] for h in json.loads(result.stdout)["hits"]] == ["a02", "a03", "a04", "a12"]


def test_cli_author_facet_pins_the_chosen_author(index_dir):
    result = cli(index_dir, "--author", "Okafor, Tomas", "--facets", "author", "--json")
    facet = json.loads(result.stdout)["facets"]["author"]
    assert [(v["value"], v["count"], v["selected"]) for v in facet] == [
        ("T. Okafor", 2, True),
        ("Tomas Okafor", 2, True),
        ("Lena Brandt", 2, False),
        ("J. van der Holt Brink", 1, False),
        ("Jörg Müller", 1, False),
    ]


def test_cli_query_text_forms(index_dir):
    for query, expected in (("^Qian", ["a11"]), ("au:Qian_D", ["a11", "a12"]), ('author:"^Qian, D"', ["a11"])):
        result = cli(index_dir, query, "--sort", "oldest", "--json")
        assert [h["id"] for h in json.loads(result.stdout)["hits"]] == expected, query


def test_cli_bad_first_author_is_a_usage_error(index_dir):
    result = cli(index_dir, "--first-author", ".,")
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert "Invalid value for '--first-author': author filter '^.,' holds no name" in result.stderr


def test_api_first_author(client):
    response = client.get("/api/search?first_author=Okafor&sort=oldest")
    assert response.status_code == 200
    assert [h["id"] for h in response.get_json()["hits"]] == ["a01", "a02", "a04"]
    both = client.get("/api/search?first_author=Zeng&author=Teresa+Okafor&sort=oldest").get_json()
    assert [h["id"] for h in both["hits"]] == ["a02", "a03", "a04", "a12"]
    marked = client.get("/api/search?author=%5EOkafor&sort=oldest").get_json()
    assert [h["id"] for h in marked["hits"]] == ["a01", "a02", "a04"]


def test_api_author_facet_pins_the_chosen_author(client):
    data = client.get("/api/search?author=muller").get_json()
    assert [h["id"] for h in data["hits"]] == ["a09", "a02"]
    assert [(v["value"], v["count"], v["selected"]) for v in data["facets"]["author"]] == [
        ("Anna Muller", 1, True),
        ("Jörg Müller", 1, True),
        ("T. Okafor", 1, False),
    ]


def test_api_bad_first_author_is_a_400(client):
    response = client.get("/api/search?first_author=.,")
    assert response.status_code == 400
    assert response.get_json() == {"error": "author filter '^.,' holds no name"}


def test_page_keeps_the_first_author_filter(client):
    html = client.get("/?first_author=Okafor&sort=oldest").get_data(as_text=True)
    assert re.findall(r"Author forms study (\d+)", html) == ["1", "2", "4"]
