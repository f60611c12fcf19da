"""What the management API refuses before any route sees the request: a body that says it is
not JSON (415), and input no route could store or answer (400, naming where): a NUL byte or
a lone surrogate in the path, a query parameter, a header or a JSON string; a control
character in a header value; a JSON number of absurd size; nesting deeper than MAX_DEPTH.

Without this, such input reached Postgres (which refuses NUL in text and cannot encode a
lone surrogate), Python's int parser (4,300 digits at most) or its recursion limit, and the
request ended in a 500 (a 502 through API Gateway). A refusal names the field and never
shows its value (it may be a secret), in the answer and in the log line alike.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Iterator, Mapping
from http import HTTPStatus
from typing import Any

from hookline.management.payloads import MAX_RENDERED_DEPTH
from hookline.observability import logger
from hookline.problems import PROBLEM

MAX_DEPTH = MAX_RENDERED_DEPTH  # what the API takes in, it can answer as JSON again
MAX_INTEGER_DIGITS = 1_000  # far below Python's 4,300, far above any real identifier
PAYLOAD_FIELDS = frozenset({"payload"})  # stored as bytes, not text: a NUL in it is data
_SEGMENT = 64  # the longest path segment (a key) a refusal repeats
_TOO_DEEP = f"nested deeper than {MAX_DEPTH} levels (limit body_max_depth)"
_SUSPECT = re.compile(r"\\u(0000|[dD][89a-fA-F][0-9a-fA-F]{2})")
_HIGH = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}")
_LOW = re.compile(r"\\u[dD][c-fC-F][0-9a-fA-F]{2}")
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_INNERMOST = re.compile(r"(?:\[\]|\{\})+")


class _Huge:
    """A JSON number found too large while parsing, kept in its place so that the walk
    reports it with its path."""

    def __init__(self, why: str) -> None:
        self.why = why


def refusal(event: Mapping[str, Any]) -> dict[str, Any] | None:
    """The proxy answer refusing this request, or None to let the routes answer it."""
    media = _content_type(event)
    if event.get("body") and media and media != "application/json" and not media.endswith("+json"):
        return _answer(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "send the body as application/json")
    found = list(_request_problems(event))
    if not found:
        found = list(_body_problems(event))
    if not found:
        return None
    logger.info(
        "request refused",
        extra={"status": 400, "fields": [f["field"] for f in found]},  # names, never values
    )
    detail = "; ".join(f"{f['field']}: {f['message']}" for f in found[:10])
    return _answer(HTTPStatus.BAD_REQUEST, detail, found[:10])


def _content_type(event: Mapping[str, Any]) -> str:
    for name, value in (event.get("headers") or {}).items():
        if str(name).lower() == "content-type":
            return str(value).split(";")[0].strip().lower()
    return ""


def _request_problems(event: Mapping[str, Any]) -> Iterator[dict[str, str]]:
    """The path, query and headers: text no route can store."""
    why = _text_problem(str(event.get("path") or ""))
    if why:
        yield {"field": "path", "in": "path", "message": why}
    for name, value in _pairs(event, "pathParameters", None):
        why = _text_problem(value)
        if why:
            yield {"field": _named(name), "in": "path", "message": why}
    for name, value in _pairs(event, "queryStringParameters", "multiValueQueryStringParameters"):
        why = _text_problem(name, what="its name") or _text_problem(value)
        if why:
            yield {"field": _named(name), "in": "query", "message": why}
    for name, value in _pairs(event, "headers", "multiValueHeaders"):
        why = _header_problem(name, value)
        if why:
            yield {"field": _named(name), "in": "header", "message": why}


def _pairs(event: Mapping[str, Any], single: str, multi: str | None) -> Iterator[tuple[str, str]]:
    seen: set[tuple[str, str]] = set()
    for name, value in (event.get(single) or {}).items():
        seen.add((str(name), str(value)))
    if multi:
        for name, values in (event.get(multi) or {}).items():
            for value in values or ():
                seen.add((str(name), str(value)))
    yield from sorted(seen)


def _text_problem(text: str, what: str = "", *, nul_is_data: bool = False) -> str | None:
    where = f" in {what}" if what else ""
    if "\x00" in text and not nul_is_data:
        return f"contains a NUL byte{where}"
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return f"is not valid Unicode (a lone surrogate){where}"
    return None


def _header_problem(name: str, value: str) -> str | None:
    if not name or any(ord(c) <= 32 or ord(c) >= 127 or c in '"(),/:;<=>?@[\\]{}' for c in name):
        return "is not a valid header name"
    if any((ord(c) < 32 and c != "\t") or ord(c) == 127 for c in value):
        return "its value contains a control character (CR, LF, NUL, ...)"
    return _text_problem(value, what="its value")


def _named(name: str) -> str:
    """A name as a refusal repeats it: only if it is itself plain text, and not too long."""
    if _text_problem(name) or any(ord(c) < 32 or ord(c) == 127 for c in name):
        return "(a name that is not plain text)"
    return name[:_SEGMENT]


def _body_problems(event: Mapping[str, Any]) -> Iterator[dict[str, str]]:
    """A JSON body's strings, numbers and depth. A body that is not JSON at all is left to
    the routes (their 400 says so)."""
    raw = event.get("body")
    if not raw:
        return
    try:
        data = base64.b64decode(raw) if event.get("isBase64Encoded") else str(raw).encode()
        text = data.decode("utf-8")
    except (binascii.Error, ValueError):
        return  # the routes refuse it: not UTF-8 JSON
    huge: list[_Huge] = []
    try:
        parsed = json.loads(
            text,
            parse_int=lambda t: _integer(t, huge),
            parse_float=lambda t: _float(t, huge),
            parse_constant=lambda t: _noted(_Huge(f"{t} is not a JSON number"), huge),
        )
    except RecursionError:
        yield {"field": "body", "in": "body", "message": _TOO_DEEP}
        return
    except ValueError:
        return
    # Walking every value is slow (Python): C-speed scans of the text tell first whether
    # there is anything to find.
    if huge or _bad_escape(text) or _deeper_than(text, MAX_DEPTH):
        yield from _walk(parsed)


def _bad_escape(text: str) -> bool:
    """Whether the JSON text has a \u0000 or a lone surrogate escape: the only ways a NUL or
    a lone surrogate gets into a parsed string (raw control characters are not JSON, and
    UTF-8 cannot encode a surrogate)."""
    for match in _SUSPECT.finditer(text):
        start = match.start()
        if not _escape_starts_at(text, start):
            continue  # an escaped backslash, then the text "u...."
        unit = int(match.group(1), 16)
        if unit == 0:
            return True
        if 0xD800 <= unit <= 0xDBFF:
            if not _LOW.match(text, match.end()):
                return True
        elif not (_HIGH.match(text, start - 6) and _escape_starts_at(text, start - 6)):
            return True
    return False


def _escape_starts_at(text: str, at: int) -> bool:
    """Whether the backslash at `at` starts an escape (an even number of backslashes before)."""
    if at < 0:
        return False
    before = at
    while before > 0 and text[before - 1] == "\\":
        before -= 1
    return (at - before) % 2 == 0


def _deeper_than(text: str, limit: int) -> bool:
    """Whether arrays and objects nest deeper than `limit` (brackets inside strings aside):
    each round removes the innermost pairs, so brackets left after `limit` rounds are
    deeper. A few rounds for the usual document."""
    if text.count("[") + text.count("{") <= limit:
        return False
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    for _ in range(limit):
        brackets, removed = _INNERMOST.subn("", brackets)
        if not brackets or not removed:
            return False
    return bool(brackets)


def _noted(value: _Huge, huge: list[_Huge]) -> _Huge:
    huge.append(value)
    return value


def _integer(text: str, huge: list[_Huge]) -> Any:
    if len(text.lstrip("-")) > MAX_INTEGER_DIGITS:
        why = f"a number of more than {MAX_INTEGER_DIGITS} digits (limit max_integer_digits)"
        return _noted(_Huge(why), huge)
    return int(text)


def _float(text: str, huge: list[_Huge]) -> Any:
    value = float(text)
    if math.isfinite(value):
        return value
    return _noted(_Huge("a number too large for JSON readers"), huge)


def _walk(root: Any) -> Iterator[dict[str, str]]:
    """Every bad string, key or number, and nesting past MAX_DEPTH, with its path."""
    stack: list[tuple[Any, tuple[str, ...], int]] = [(root, (), 0)]
    while stack:
        value, path, depth = stack.pop()
        field = ".".join(path) or "body"
        in_payload = bool(path) and path[0] in PAYLOAD_FIELDS
        if isinstance(value, _Huge):
            yield {"field": field, "in": "body", "message": value.why}
        elif isinstance(value, str):
            why = _text_problem(value, nul_is_data=in_payload)
            if why:
                yield {"field": field, "in": "body", "message": why}
        elif isinstance(value, dict | list):
            if depth >= MAX_DEPTH:
                top = path[0] if path else "body"
                yield {
                    "field": top,
                    "in": "body",
                    "message": _TOO_DEEP,
                }
                return
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                segment = str(key)
                if isinstance(key, str):
                    segment = _named(key)
                    why = _text_problem(key, what="a key", nul_is_data=in_payload)
                    if why:
                        yield {"field": field, "in": "body", "message": why}
                stack.append((item, (*path, segment), depth + 1))


def _answer(
    status: HTTPStatus, detail: str, found: list[dict[str, str]] | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": "about:blank",
        "title": status.phrase,
        "status": int(status),
        "detail": detail,
    }
    if found is not None:
        body["errors"] = found
    return {
        "statusCode": int(status),
        "headers": {"Content-Type": PROBLEM},
        "body": json.dumps(body),
        "isBase64Encoded": False,
    }
