"""Input transformers: EventBridge's InputPathsMap + InputTemplate (docs/decisions/0045).

`{"InputPathsMap": {"amount": "$.payload.amount"}, "InputTemplate": "{\"total\": <amount>}"}`
reshapes what an endpoint receives. Paths are read over the same document a content filter
sees (`hookline.patterns.event_document`): `{"type", "tenant_id", "source_id", "payload"}`.
The template is rendered as EventBridge renders it:

* **a JSON template** (it starts with `{` or `[`): a placeholder outside a string becomes
  the value's JSON (`"eu"`, `42`, `{"a": 1}`); inside a string, the value's text (a string
  as is, anything else as its JSON) escaped for that string. The result must be JSON.
* **a string template** (the whole template is one JSON string, `"<who> paid <amount>"`):
  as inside a string; the result is that JSON string, quotes included.
* **anything else** is text: a placeholder becomes the value's text, nothing escaped.

`<aws.events.event.json>` is the whole document (as JSON; outside strings only). A path that
is not in the event, or a result that is not the JSON its template promises, makes
`render` raise `TransformFailed` with the reason: the delivery fails with it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from hookline.errors import BadRequest

MAX_TEMPLATE_CHARS = 8192
MAX_PATHS = 100
WHOLE_EVENT = "aws.events.event.json"
_NAME = re.compile(r"^[A-Za-z0-9_\-]+$")
_PLACEHOLDER = re.compile(r"<([A-Za-z0-9_.\-]+)>")
_STEP = re.compile(r"\.([A-Za-z0-9_\-/]+)|\[(\d+)\]")


class TransformFailed(Exception):
    """The template cannot render for this event; `str(err)` says why (safe to show)."""


@dataclass(frozen=True)
class Rendered:
    """A transformed body and the content type it is sent with."""

    body: bytes
    content_type: str


def parse_transformer(value: Any) -> dict[str, Any]:
    """A transformer from the API (an object) or the CLI (its JSON text), validated."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as err:
            raise BadRequest(f"transform: not JSON ({err})") from err
    return validate_transformer(value)


def validate_transformer(value: Any) -> dict[str, Any]:
    """Return `value` if it is a transformer we can render, else raise `BadRequest` naming
    the part that is wrong."""
    if not isinstance(value, dict) or set(value) - {"InputPathsMap", "InputTemplate"}:
        raise BadRequest("transform: must be an object with InputPathsMap and InputTemplate")
    paths = value.get("InputPathsMap", {})
    template = value.get("InputTemplate")
    if not isinstance(paths, dict) or len(paths) > MAX_PATHS:
        raise BadRequest(f"transform.InputPathsMap: an object of at most {MAX_PATHS} paths")
    for name, path in paths.items():
        where = f"transform.InputPathsMap.{name}"
        if not _NAME.match(name) or name.lower().startswith("aws"):
            raise BadRequest(
                f"{where}: names are letters, digits, '_' and '-', and may not start with 'aws'"
            )
        if not isinstance(path, str):
            raise BadRequest(f"{where}: the path must be a string such as $.payload.amount")
        try:
            _steps(path)
        except ValueError as err:
            raise BadRequest(f"{where}: {err}") from err
    if not isinstance(template, str) or not 0 < len(template) <= MAX_TEMPLATE_CHARS:
        raise BadRequest(f"transform.InputTemplate: a string of 1 to {MAX_TEMPLATE_CHARS} chars")
    for piece in _pieces(template):
        if isinstance(piece, _Slot):
            if piece.name != WHOLE_EVENT and piece.name not in paths:
                raise BadRequest(
                    f"transform.InputTemplate: <{piece.name}> is not defined in InputPathsMap"
                )
            if piece.name == WHOLE_EVENT and piece.in_string:
                raise BadRequest(
                    f"transform.InputTemplate: <{WHOLE_EVENT}> may only stand as a JSON value"
                )
            if piece.is_key:
                raise BadRequest(f"transform.InputTemplate: <{piece.name}> cannot be an object key")
    if _mode(template) != "text":
        sample: dict[str, Any] = {name: "x" for name in paths} | {WHOLE_EVENT: {}}
        try:
            _render(template, sample)
        except TransformFailed as err:
            raise BadRequest(f"transform.InputTemplate: {err}") from err
    return value


def render(transformer: dict[str, Any], document: dict[str, Any]) -> Rendered:
    """The body `transformer` makes of an event (its `event_document`); raises
    `TransformFailed` when it cannot."""
    values: dict[str, Any] = {WHOLE_EVENT: document}
    for name, path in transformer.get("InputPathsMap", {}).items():
        found, value = _lookup(document, _steps(path))
        if not found:
            raise TransformFailed(f"{path} (<{name}>) is not in the event")
        values[name] = value
    template = transformer["InputTemplate"]
    text = _render(template, values)
    content_type = "text/plain; charset=utf-8" if _mode(template) == "text" else "application/json"
    return Rendered(text.encode("utf-8"), content_type)


def lookup_path(document: dict[str, Any], path: str) -> Any:
    """The value at a JSON path (`$.payload.id`) of an event document; raises
    TransformFailed when the event has none there."""
    try:
        steps = _steps(path)
    except ValueError as err:
        raise TransformFailed(str(err)) from err
    found, value = _lookup(document, steps)
    if not found:
        raise TransformFailed(f"{path} is not in the event")
    return value


def check_path(path: str) -> None:
    """Raise ValueError saying why `path` is not a JSON path we can read."""
    _steps(path)


# -- paths ------------------------------------------------------------------------------------


def _steps(path: str) -> list[str | int]:
    if not path.startswith("$"):
        raise ValueError(f"{path!r} is not a JSON path: it must start with '$'")
    steps: list[str | int] = []
    at = 1
    while at < len(path):
        match = _STEP.match(path, at)
        if match is None:
            raise ValueError(
                f"{path!r}: only dot names (letters, digits, '_', '-', '/') and [index] are "
                f"supported, at {path[at:]!r}"
            )
        steps.append(match[1] if match[1] is not None else int(match[2]))
        at = match.end()
    return steps


def _lookup(document: Any, steps: list[str | int]) -> tuple[bool, Any]:
    value = document
    for step in steps:
        if isinstance(step, int):
            if not isinstance(value, list) or step >= len(value):
                return False, None
        elif not isinstance(value, dict) or step not in value:
            return False, None
        value = value[step]
    return True, value


# -- templates --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Slot:
    name: str
    in_string: bool
    is_key: bool


def _mode(template: str) -> str:
    stripped = template.strip()
    if stripped[:1] in ("{", "["):
        return "json"
    if len(stripped) >= 2 and stripped[0] == '"' and stripped[-1] == '"':
        return "string"
    return "text"


def _pieces(template: str) -> list[str | _Slot]:
    """The template as literal text and placeholders, each knowing whether it stands inside
    a JSON string (for text templates: never) and whether it is used as an object key."""
    track = _mode(template) != "text"
    pieces: list[str | _Slot] = []
    in_string = False
    at = 0
    literal_from = 0
    while at < len(template):
        char = template[at]
        if track and in_string and char == "\\":
            at += 2
            continue
        if track and char == '"':
            in_string = not in_string
        elif char == "<":
            match = _PLACEHOLDER.match(template, at)
            if match:
                pieces.append(template[literal_from:at])
                rest = template[match.end() :].lstrip()
                is_key = track and not in_string and rest.startswith(":")
                pieces.append(_Slot(match[1], track and in_string, is_key))
                at = literal_from = match.end()
                continue
        at += 1
    pieces.append(template[literal_from:])
    return pieces


def _text_of(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _render(template: str, values: dict[str, Any]) -> str:
    mode = _mode(template)
    out: list[str] = []
    for piece in _pieces(template):
        if isinstance(piece, str):
            out.append(piece)
        elif piece.in_string:
            out.append(json.dumps(_text_of(values[piece.name]), ensure_ascii=False)[1:-1])
        elif mode == "text":
            out.append(_text_of(values[piece.name]))
        else:
            out.append(json.dumps(values[piece.name], ensure_ascii=False))
    text = "".join(out)
    if mode != "text":
        try:
            json.loads(text)
        except ValueError as err:
            raise TransformFailed(f"the rendered template is not valid JSON ({err})") from err
    return text
