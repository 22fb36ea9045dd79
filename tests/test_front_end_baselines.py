"""The front ends' declared surface against stored copies: every command's ``--help``
(``tests/data/help.txt``) and the OpenAPI document (``tests/data/openapi.json``).

Both are made from the declarations (:mod:`searchengine.parameters` and the
commands' options), so a change to a parameter shows here. When the change is
meant, remake the files: ``for c in "" check eval index remove search serve
show similar stats; do echo "== $c"; COLUMNS=100 searchengine $c --help; done
> tests/data/help.txt`` and ``json.dumps(openapi_document(), indent=1,
sort_keys=True)`` into ``tests/data/openapi.json``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

from searchengine.cli import main

DATA = Path(__file__).parent / "data"


def _stored_help() -> dict[str, str]:
    """The stored ``--help`` of each command ("" for the group), by command."""
    text = (DATA / "help.txt").read_text(encoding="utf-8")
    parts = re.split(r"^== ?(.*)\n", text, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


STORED_HELP = _stored_help()


@pytest.mark.parametrize("command", sorted(STORED_HELP))
def test_help_is_as_stored(command):
    # A process of its own, as the baseline was made: click wraps help to the terminal's width.
    args = [command, "--help"] if command else ["--help"]
    result = subprocess.run(
        [sys.executable, "-m", "searchengine", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "100"},
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == STORED_HELP[command]


def test_every_command_has_stored_help():
    assert set(STORED_HELP) == {"", *main.list_commands(click.Context(main))}


def test_each_command_module_registers_what_the_group_lists():
    import importlib

    from searchengine.cli import COMMAND_MODULES

    for module in set(COMMAND_MODULES.values()):
        importlib.import_module(f"searchengine.cli.{module}")
    assert sorted(main.commands) == sorted(COMMAND_MODULES)
    registered = {name: command.callback.__module__.rpartition(".")[2] for name, command in main.commands.items()}
    assert registered == COMMAND_MODULES


def test_openapi_document_is_as_stored():
    from searchengine.web.openapi import openapi_document

    stored = (DATA / "openapi.json").read_text(encoding="utf-8").rstrip("\n")
    assert json.dumps(openapi_document(), indent=1, sort_keys=True) == stored


def test_the_declared_parameters_are_what_the_front_ends_take():
    from searchengine.parameters import PARAMETERS, cli_parameters, web_parameters
    from searchengine.request import SearchRequest
    from searchengine.web.openapi import query_parameters

    search = main.get_command(click.Context(main), "search")
    assert search is not None
    options = {param.name for param in search.params}
    assert {p.cli.dest or p.name for p in cli_parameters()} <= options
    assert query_parameters("/api/search") == {p.web.name for p in web_parameters("search")}
    assert all(p.web and p.name is None for p in PARAMETERS if p.into)  # folded into another on the web
    with pytest.raises(TypeError, match="'offset'"):
        SearchRequest.make("graph", offset=10)
    with pytest.raises(TypeError, match="'page'"):
        SearchRequest.make_export("graph", page=2)
