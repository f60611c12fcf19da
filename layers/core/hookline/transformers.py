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

Bounded (decision 0060): a template holds at most `MAX_PLACEHOLDERS` placeholders, and the
rendered body is counted while it is built, each value's text made once: past
`max_rendered_bytes` (the caller's limit, such as a destination kind's; by default
`RENDER_MULTIPLE` times the payload, at least `MIN_RENDER_BYTES`) it stops with
`TransformFailed`, so a template cannot turn a 30 KB event into megabytes.
"""

from __future__ import annotations

import json
import re
from typing import Any

from hookline.errors import BadRequest
from hookline.records import frozen

MAX_TEMPLATE_CHARS = 8192
MAX_PATHS = 100
# EventBridge's own limits are the two above; with 8,192 characters, `<a>` fits 2,730
# times. A template names each of its (at most 100) values a few times at most.
MAX_PLACEHOLDERS = 300
RENDER_MULTIPLE = 4
MIN_RENDER_BYTES = 64 * 1024
MAX_RENDER_BYTES = 6 * 1024 * 1024  # the largest destination message (a Lambda request)
WHOLE_EVENT = "aws.events.event.json"
_NAME = re.compile(r"^[A-Za-z0-9_\-]+$")
_PLACEHOLDER = re.compile(r"<([A-Za-z0-9_.\-]+)>")
_STEP = re.compile(r"\.([A-Za-z0-9_\-/]+)|\[(\d+)\]")


class TransformFailed(Exception):
    """The template cannot render for this event; `str(err)` says why (safe to show)."""


@frozen
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
    pieces = _pieces(template)
    placeholders = sum(isinstance(piece, _Slot) for piece in pieces)
    if placeholders > MAX_PLACEHOLDERS:
        raise BadRequest(
            f"transform.InputTemplate: {placeholders} placeholders; at most {MAX_PLACEHOLDERS}"
        )
    for piece in pieces:
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


def render(
    transformer: dict[str, Any], document: dict[str, Any], max_rendered_bytes: int | None = None
) -> Rendered:
    """The body `transformer` makes of an event (its `event_document`); raises
    `TransformFailed` when it cannot, or when the body would pass `max_rendered_bytes`
    (default: `default_render_limit` of the payload)."""
    values: dict[str, Any] = {WHOLE_EVENT: document}
    unreadable = getattr(document, "unreadable", None)
    for name, path in transformer.get("InputPathsMap", {}).items():
        found, value = _lookup(document, _steps(path))
        if not found:
            why = f": {unreadable}" if unreadable and path.startswith("$.payload") else ""
            raise TransformFailed(f"{path} (<{name}>) is not in the event{why}")
        values[name] = value
    template = transformer["InputTemplate"]
    if max_rendered_bytes is None:
        max_rendered_bytes = default_render_limit(getattr(document, "payload_bytes", 0))
    text = _render(template, values, max_rendered_bytes)
    content_type = "text/plain; charset=utf-8" if _mode(template) == "text" else "application/json"
    return Rendered(text.encode("utf-8"), content_type)


def default_render_limit(payload_bytes: int) -> int:
    """How many bytes a transformer may make of a payload of `payload_bytes`."""
    return min(max(RENDER_MULTIPLE * payload_bytes, MIN_RENDER_BYTES), MAX_RENDER_BYTES)


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


@frozen
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


def _value_text(piece: _Slot, values: dict[str, Any], mode: str) -> str:
    if piece.in_string:
        return json.dumps(_text_of(values[piece.name]), ensure_ascii=False)[1:-1]
    if mode == "text":
        return _text_of(values[piece.name])
    return json.dumps(values[piece.name], ensure_ascii=False)


def _text_of(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _render(template: str, values: dict[str, Any], max_bytes: int = MAX_RENDER_BYTES) -> str:
    mode = _mode(template)
    out: list[str] = []
    made: dict[tuple[str, bool], str] = {}  # each value's text, made once
    size = 0
    for piece in _pieces(template):
        if isinstance(piece, str):
            part = piece
        else:
            key = (piece.name, piece.in_string)
            part = made.get(key) or made.setdefault(key, _value_text(piece, values, mode))
        size += len(part.encode("utf-8", "surrogatepass")) if not part.isascii() else len(part)
        if size > max_bytes:
            raise TransformFailed(
                f"the rendered body would exceed {max_bytes} bytes (the limit for this event); "
                "nothing was sent"
            )
        out.append(part)
    text = "".join(out)
    if mode != "text":
        try:
            json.loads(text)
        except ValueError as err:
            raise TransformFailed(f"the rendered template is not valid JSON ({err})") from err
    return text
