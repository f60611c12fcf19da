"""Paging of the management API's lists: an opaque cursor (the last row's key) and one row
read beyond the page, to know whether there is a next one; and the time window lists filter by."""

from __future__ import annotations

import base64
import binascii
import json
from datetime import UTC
from typing import Any

from hookline.errors import BadRequest
from hookline.repositories.api import Page

MAX_PAGE = 200


# -- paging -----------------------------------------------------------------------------------


def encode_cursor(last: str | int) -> str:
    """An opaque cursor for the page after the row `last`."""
    return base64.urlsafe_b64encode(json.dumps({"after": last}).encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> str | int | None:
    """The row a cursor points after; BadRequest for a cursor this API did not make."""
    if not cursor:
        return None
    try:
        doc = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        after = doc["after"]
    except (binascii.Error, ValueError, TypeError, KeyError, UnicodeDecodeError) as err:
        raise BadRequest("cursor is not valid: pass next_cursor from the previous page") from err
    if not isinstance(after, str | int) or isinstance(after, bool):
        raise BadRequest("cursor is not valid: pass next_cursor from the previous page")
    return after


def page_of(cursor: str | None, limit: int) -> Page:
    """The page a list request asks for (one row more is read, to know if there is a next)."""
    after = decode_cursor(cursor)
    if after is not None and not isinstance(after, str):
        raise BadRequest("cursor is not valid: pass next_cursor from the previous page")
    return Page(after=after, limit=min(max(limit, 1), MAX_PAGE) + 1)


def paged(rows: list[dict[str, Any]], limit: int, key: str = "id") -> dict[str, Any]:
    """`items` and `next_cursor` from rows read with one extra."""
    limit = min(max(limit, 1), MAX_PAGE)
    items = rows[:limit]
    more = len(rows) > limit
    return {"items": items, "next_cursor": encode_cursor(items[-1][key]) if more else None}


def check_window(filters: dict[str, Any]) -> None:
    """A list's `since`/`until` filters read as UTC when naive; BadRequest unless until is
    after since."""
    since, until = filters.get("since"), filters.get("until")
    for name in ("since", "until"):
        value = filters.get(name)
        if value is not None and value.tzinfo is None:
            filters[name] = value.replace(tzinfo=UTC)
    since, until = filters.get("since"), filters.get("until")
    if since is not None and until is not None and until <= since:
        raise BadRequest("until must be after since")
