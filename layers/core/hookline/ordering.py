"""Ordered delivery (docs/decisions/0069-ordered-delivery.md): an endpoint's `ordering`.

`{"key": "$.payload.customer_id"}` orders the endpoint's deliveries per value at that path of
the event document (`hookline.patterns.event_document`: `type`, `tenant_id`, `source_id`,
`payload`); `{"key": null}` is one order for the whole endpoint. Paths are the input
transformers' subset (dot names and `[index]`, `hookline.transformers`), read in time linear
in the path. An event with no value there (or a payload that is not JSON) is ordered with the
other such events, under the empty key.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from hookline.errors import BadRequest
from hookline.transformers import TransformFailed, check_path, lookup_path

MAX_PATH_CHARS = 500
# A key longer than this is stored as its SHA-256, so the index stays small.
MAX_KEY_CHARS = 200
MISSING_KEY = ""


def parse_ordering(value: Any) -> dict[str, Any] | None:
    """The ordering an endpoint is saved with, or None (unordered); a bad value is a
    BadRequest naming `ordering` or `ordering.key`."""
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != {"key"}:
        raise BadRequest(
            'ordering: must be {"key": "$.payload.<field>"} or {"key": null} '
            "(one order across the endpoint)"
        )
    key = value["key"]
    if key is None:
        return {"key": None}
    if not isinstance(key, str) or not key or len(key) > MAX_PATH_CHARS:
        raise BadRequest(
            f"ordering.key: must be a JSON path of at most {MAX_PATH_CHARS} characters, "
            "such as $.payload.customer_id, or null"
        )
    try:
        check_path(key)
    except ValueError as err:
        raise BadRequest(f"ordering.key: {err}") from err
    if key == "$":
        raise BadRequest("ordering.key: '$' is the whole event; name a field such as $.payload.id")
    return {"key": key}


def ordering_key(ordering: dict[str, Any], document: dict[str, Any]) -> str:
    """The key of one event under `ordering` (as saved): the text of the value at the path
    (a string as is, anything else as its JSON), or the empty key when the event has none
    there or it cannot be read. Never raises."""
    path = ordering.get("key")
    if path is None:
        return MISSING_KEY
    try:
        value = lookup_path(document, path)
        text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
        if len(text) > MAX_KEY_CHARS:
            return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    except (TransformFailed, ValueError, TypeError, RecursionError):
        # Never the fan-out batch's failure: an unreadable value orders like a missing one.
        return MISSING_KEY
    return text
