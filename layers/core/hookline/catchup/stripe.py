"""Stripe catch-up: list the account's events since the newest one seen and store each
through the ingest path, deduplicated by the event `id` — what a missed webhook would have
brought arrives anyway, once.

`GET /v1/events?created[gt]=T&limit=100[&starting_after=evt_…]` answers newest first with
`has_more`; the walk pages towards older events until `has_more` is false. A walk longer than
`max_pages` is saved and resumed by the next run, so a large backlog is never skipped. Each
walk re-reads `overlap_seconds` behind the newest `created` already seen, because `created`
has one-second granularity and an event may appear in the list shortly after its timestamp;
the ledger's dedupe makes the overlap free of duplicates.
"""

from __future__ import annotations

import json
from typing import Any

from hookline.catchup.base import (
    CatchupContext,
    CatchupError,
    CatchupResult,
    CatchupSettings,
    http_failure,
)
from hookline.ingest import store_fetched
from hookline.repositories.sources import Source

PROVIDER = "stripe"
DEFAULT_API_BASE = "https://api.stripe.com"
MAX_TYPES = 20  # Stripe accepts at most 20 values in types[]
PROVENANCE = {"hookline-catchup": "stripe-events-api"}


def catch_up(
    ctx: CatchupContext,
    source: Source,
    settings: CatchupSettings,
    position: dict[str, Any],
    result: CatchupResult,
) -> dict[str, Any]:
    """Fetch the events created since `position` and store the new ones; the new position."""
    key = settings.credential(ctx.read_secret, tenant_id=source.tenant_id)
    headers = {"Authorization": f"Bearer {key}"}
    account = settings.text("account")
    if account:
        headers["Stripe-Account"] = account  # a Connect account's events
    types = _types(settings)
    url = ctx.base_url(PROVIDER, DEFAULT_API_BASE, settings) + "/v1/events"
    walk = position.get("walk") or _new_walk(ctx, settings, position)
    for _ in range(settings.max_pages):
        params: list[tuple[str, str | int | float | bool | None]] = [
            ("created[gt]", int(walk["gt"])),
            ("limit", settings.page_size),
        ]
        params += [("types[]", t) for t in types]
        if walk.get("after"):
            params.append(("starting_after", str(walk["after"])))
        response = ctx.http.get(url, params=params, headers=headers)
        if response.status_code != 200:
            raise http_failure(PROVIDER, "GET /v1/events", response)
        doc = response.json()
        page = _page(doc)
        _store(ctx, source, page, result)
        for event in page:
            walk["newest"] = max(int(walk["newest"]), int(event["created"]))
        if not page or not doc.get("has_more"):
            return {"created": max(int(walk["newest"]), int(walk["started"]))}
        walk["after"] = page[-1]["id"]
    result.truncated = True
    return {**position, "walk": walk}


def _new_walk(
    ctx: CatchupContext, settings: CatchupSettings, position: dict[str, Any]
) -> dict[str, Any]:
    now = ctx.clock()
    if "created" in position:
        gt = int(position["created"]) - int(settings.overlap.total_seconds())
        newest = int(position["created"])
    else:
        gt = int((now - settings.lookback).timestamp())
        newest = gt
    # `started`: no event seen means nothing was created before the walk began (less the
    # overlap the next walk re-reads), so the next walk starts from here, not from `gt` again.
    return {"gt": gt, "after": None, "newest": newest, "started": int(now.timestamp())}


def _types(settings: CatchupSettings) -> list[str]:
    raw = settings.options.get("types") or []
    if not isinstance(raw, list) or not all(isinstance(t, str) and t for t in raw):
        raise CatchupError("options.catchup.types must be a list of event types")
    if len(raw) > MAX_TYPES:
        raise CatchupError(f"options.catchup.types takes at most {MAX_TYPES} types")
    return list(raw)


def _page(doc: Any) -> list[dict[str, Any]]:
    data = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(data, list):
        raise CatchupError("stripe API answered a list without data")
    for event in data:
        if not (
            isinstance(event, dict)
            and isinstance(event.get("id"), str)
            and isinstance(event.get("created"), int)
        ):
            raise CatchupError("stripe API answered an event without id or created")
    return data


def _store(
    ctx: CatchupContext, source: Source, page: list[dict[str, Any]], result: CatchupResult
) -> None:
    with ctx.db.connection() as conn:
        for event in page:
            body = json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode()
            accepted = store_fetched(conn, source, body, headers=PROVENANCE)
            result.listed += 1
            if accepted.duplicate:
                result.duplicates += 1
            else:
                result.stored += 1
