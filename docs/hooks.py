"""MkDocs hooks: the JSON API reference, generated from the OpenAPI document the server serves.

``searchengine.web.openapi.openapi_document()`` builds the document that ``/api/openapi.json``
answers with. At build time this hook

* writes it into the site as ``openapi.json`` (the same bytes a running server
  would send, indented), and
* replaces the line ``<!-- openapi-reference -->`` in ``api-reference.md`` with
  tables made from it: every route, parameter, answer and schema.

Nothing is fetched at build time and no script runs in the browser, so the
page builds offline and reads without JavaScript.
"""

from __future__ import annotations

import copy
import html
import json
import sys
from pathlib import Path

from mkdocs.structure.files import File

# The checkout's own modules, not an installed copy of another version.
REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

MARKER = "<!-- openapi-reference -->"


def _defaults_as_click_means_them() -> None:
    """mkdocs-click's option table prints ``option.default`` as it is; from click
    8.3 an option without a default holds click's ``UNSET`` sentinel, which
    would be printed as ``Sentinel.UNSET``. Show such options (and empty
    defaults of text and repeated options) as having none."""
    try:
        from click._utils import UNSET
    except ImportError:  # click before 8.3 uses None
        UNSET = None
    try:
        from mkdocs_click import _docs
    except ImportError:
        return
    original = getattr(_docs, "_format_table_option_row", None)
    if original is None or getattr(original, "patched", False):
        return

    def row(option):
        if option.default is UNSET or option.default in ("", ()):
            option = copy.copy(option)
            option.default = None
        return original(option)

    row.patched = True
    _docs._format_table_option_row = row


_defaults_as_click_means_them()
PAGE = "api-reference.md"
METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


def _document() -> dict:
    from searchengine.web.openapi import openapi_document

    return openapi_document()


def on_files(files, config):
    """Add ``openapi.json`` to the site."""
    text = json.dumps(_document(), indent=2, ensure_ascii=False) + "\n"
    files.append(File.generated(config, "openapi.json", content=text))
    return files


def on_page_markdown(markdown, page, config, files):
    """Put the generated reference where the API reference page asks for it."""
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        raise ValueError(f"{PAGE} lacks the line {MARKER}")
    return markdown.replace(MARKER, render(_document()))


def _cell(text) -> str:
    """Plain text for a table cell: HTML-escaped, one line, pipes escaped."""
    return html.escape(" ".join(str(text).split()), quote=False).replace("|", "\\|")


def _code(value) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return "<code>" + html.escape(text, quote=False).replace("|", "&#124;") + "</code>"


def _type(schema: dict) -> str:
    """A schema in a few words: ``string``, ``array of [Hit](#hit)``, ``integer or null``."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    if "oneOf" in schema or "anyOf" in schema:
        return " or ".join(_type(part) for part in schema.get("oneOf") or schema.get("anyOf"))
    kind = schema.get("type", "any")
    kinds = kind if isinstance(kind, list) else [kind]
    words = []
    for one in kinds:
        if one == "array":
            words.append("array of " + _type(schema.get("items", {})))
        elif one == "object" and schema.get("properties"):
            inner = ", ".join(f"{name}: {_type(sub)}" for name, sub in schema["properties"].items())
            words.append(f"object {{{inner}}}")
        elif one == "object" and isinstance(schema.get("additionalProperties"), dict):
            words.append("object of " + _type(schema["additionalProperties"]))
        else:
            words.append(one + (f" ({schema['format']})" if "format" in schema else ""))
    return " or ".join(words)


def _limits(schema: dict) -> list[str]:
    """The constraints a reader needs: values, ranges, lengths, defaults."""
    notes = []
    if "enum" in schema:
        notes.append("one of " + ", ".join(_code(value) for value in schema["enum"]))
    if "minimum" in schema or "maximum" in schema:
        notes.append(f"{schema.get('minimum', '…')} to {schema.get('maximum', '…')}")
    if "maxLength" in schema:
        notes.append(f"at most {schema['maxLength']:,} characters")
    if "maxItems" in schema and schema.get("type") == "array":
        notes.append(f"at most {schema['maxItems']} values")
    if "default" in schema:
        notes.append("default " + _code(schema["default"]))
    items = schema.get("items")
    if isinstance(items, dict) and schema.get("type") == "array":
        notes.extend(note for note in _limits(items) if not note.startswith("at most") or "characters" in note)
    return notes


def _parameters(parameters: list[dict]) -> list[str]:
    lines = ["| parameter | in | type | description |", "|---|---|---|---|"]
    for parameter in parameters:
        schema = parameter.get("schema", {})
        name = _code(parameter["name"]) + (" (required)" if parameter.get("required") else "")
        limits = _limits(schema)
        description = _cell(parameter.get("description", ""))
        if schema.get("type") == "array":
            description += ("; " if description else "") + "repeat the parameter for several values"
        if limits:
            description += " (" + "; ".join(limits) + ")"
        lines.append(f"| {name} | {parameter['in']} | {_type(schema)} | {description} |")
    return lines


def _responses(responses: dict) -> list[str]:
    lines = ["| status | content | description |", "|---|---|---|"]
    for status, response in responses.items():
        content = response.get("content", {})
        kinds = "<br>".join(f"{_code(media)}: {_type(body.get('schema', {}))}" for media, body in content.items())
        description = _cell(response.get("description", ""))
        headers = response.get("headers", {})
        if headers:
            description += "<br>Headers: " + "; ".join(
                f"{_code(name)} ({_type(header.get('schema', {}))})"
                + (f": {_cell(header['description'])}" if header.get("description") else "")
                for name, header in headers.items()
            )
        lines.append(f"| {status} | {kinds or '—'} | {description} |")
    return lines


def _schema(name: str, schema: dict) -> list[str]:
    lines = [f"### {name}", ""]
    if schema.get("description"):
        lines += [_cell(schema["description"]), ""]
    properties = schema.get("properties")
    if not properties:
        lines += [f"Type: {_type(schema)}.", ""]
        return lines
    required = set(schema.get("required", []))
    lines += ["| field | type | always present | description |", "|---|---|---|---|"]
    for field, sub in properties.items():
        description = _cell(sub.get("description", ""))
        limits = _limits(sub)
        if limits:
            description += (" (" if description else "") + "; ".join(limits) + (")" if description else "")
        lines.append(f"| {_code(field)} | {_type(sub)} | {'yes' if field in required else 'no'} | {description} |")
    lines.append("")
    return lines


def render(document: dict) -> str:
    """The whole reference as Markdown: info, one section per route, the schemas."""
    info = document.get("info", {})
    lines = [
        f"OpenAPI {document.get('openapi', '')}, *{_cell(info.get('title', ''))}* "
        f"version {_cell(info.get('version', ''))}.",
        "",
    ]
    if info.get("description"):
        lines += [_cell(info["description"]), ""]
    lines += ["## Routes", ""]
    for path, operations in document.get("paths", {}).items():
        for method in METHODS:
            operation = operations.get(method)
            if operation is None:
                continue
            lines += [f"### {method.upper()} {path}", ""]
            if operation.get("summary"):
                lines += [f"**{_cell(operation['summary'])}.**", ""]
            if operation.get("description"):
                lines += [_cell(operation["description"]), ""]
            parameters = operation.get("parameters", []) + operations.get("parameters", [])
            if parameters:
                lines += ["Parameters:", ""] + _parameters(parameters) + [""]
            lines += ["Answers:", ""] + _responses(operation.get("responses", {})) + [""]
    schemas = document.get("components", {}).get("schemas", {})
    if schemas:
        lines += ["## Schemas", ""]
        for name, schema in schemas.items():
            lines += _schema(name, schema)
    return "\n".join(lines)
