"""GitHub catch-up: list the hook's recent deliveries and ask GitHub to redeliver the ones
that failed and never reached the ledger. GitHub then sends them to the receiver like any
webhook, so they are verified and deduplicated (by `X-GitHub-Delivery`, the delivery `guid`)
on the usual path.

`GET /repos/{owner}/{repo}/hooks/{hook_id}/deliveries` (or `/orgs/{org}/hooks/…`) answers
newest first, paginated by a `Link: <…>; rel="next"` header; `POST …/deliveries/{id}/attempts`
asks for a redelivery (202). A delivery failed when its `status_code` is not 2xx or its
`status` is not "OK"; a guid with any successful delivery, or already in the ledger, is left
alone. Each guid is asked for at most `max_redeliveries` times, `redelivery_interval_seconds`
apart, so a receiver that keeps failing is not hammered.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

from hookline.catchup.base import (
    CatchupContext,
    CatchupError,
    CatchupResult,
    CatchupSettings,
    http_failure,
)
from hookline.repositories import reconcile as repo
from hookline.repositories.sources import Source

PROVIDER = "github"
DEFAULT_API_BASE = "https://api.github.com"
API_VERSION = "2022-11-28"
DEFAULT_MAX_REDELIVERIES = 3
DEFAULT_REDELIVERY_INTERVAL = timedelta(minutes=30)
MAX_OWED = 1000  # guids carried from run to run, at most


def catch_up(
    ctx: CatchupContext,
    source: Source,
    settings: CatchupSettings,
    position: dict[str, Any],
    result: CatchupResult,
) -> dict[str, Any]:
    """Request redelivery of the failed deliveries since `position`; the new position."""
    base = ctx.base_url(PROVIDER, DEFAULT_API_BASE, settings)
    hook = base + _hook_path(settings)
    token = settings.credential(ctx.read_secret, tenant_id=source.tenant_id)
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/vnd.github+json",
        "X-GitHub-Api-Version": API_VERSION,
    }
    walk = position.get("walk") or _new_walk(ctx, settings, position)
    since = datetime.fromisoformat(walk["since"])
    url: str = walk.get("next") or f"{hook}/deliveries?per_page={settings.page_size}"
    items: list[dict[str, Any]] = []
    done = False
    for _ in range(settings.max_pages):
        response = ctx.http.get(url, headers=headers)
        if response.status_code != 200:
            raise http_failure(PROVIDER, "GET hook deliveries", response)
        page = _page(response.json())
        result.listed += len(page)
        items += [i for i in page if _delivered_at(i) >= since]
        next_url = response.links.get("next", {}).get("url")
        if not page or not next_url or any(_delivered_at(i) < since for i in page):
            done = True
            break
        if not next_url.startswith(base + "/"):
            raise CatchupError("github API pointed the next page at another host")
        url = next_url
    newest = max([datetime.fromisoformat(walk["newest"]), *(_delivered_at(i) for i in items)])
    walk["newest"] = newest.isoformat()
    # Failed guids seen earlier and still owed a retry are carried in the position: the
    # window moves on faster than the redelivery interval.
    owed = {**position.get("retry", {}), **{g: i["id"] for g, i in failed_guids(items).items()}}
    retry = _redeliver(ctx, source, settings, hook, headers, owed, result)
    if done:
        checked = max(newest, datetime.fromisoformat(walk["started"]))
        return {"checked_until": checked.isoformat(), "retry": retry}
    result.truncated = True
    return {**position, "retry": retry, "walk": {**walk, "next": url}}


def _hook_path(settings: CatchupSettings) -> str:
    hook_id = settings.text("hook_id")
    org, owner, repo_name = settings.text("org"), settings.text("owner"), settings.text("repo")
    if not hook_id:
        raise CatchupError("options.catchup.hook_id is required for github")
    if org:
        return f"/orgs/{quote(org, safe='')}/hooks/{quote(hook_id, safe='')}"
    if owner and repo_name:
        return (
            f"/repos/{quote(owner, safe='')}/{quote(repo_name, safe='')}"
            f"/hooks/{quote(hook_id, safe='')}"
        )
    raise CatchupError("options.catchup needs owner and repo, or org, for github")


def _new_walk(
    ctx: CatchupContext, settings: CatchupSettings, position: dict[str, Any]
) -> dict[str, Any]:
    now = ctx.clock()
    if "checked_until" in position:
        since = datetime.fromisoformat(position["checked_until"]) - settings.overlap
    else:
        since = now - settings.lookback
    return {
        "since": since.isoformat(),
        "next": None,
        "newest": since.isoformat(),
        "started": now.isoformat(),
    }


def _page(doc: Any) -> list[dict[str, Any]]:
    if not isinstance(doc, list):
        raise CatchupError("github API answered something other than a list of deliveries")
    for item in doc:
        if not (
            isinstance(item, dict)
            and isinstance(item.get("id"), int)
            and isinstance(item.get("guid"), str)
            and isinstance(item.get("delivered_at"), str)
        ):
            raise CatchupError("github API answered a delivery without id, guid or delivered_at")
    return doc


def _delivered_at(item: dict[str, Any]) -> datetime:
    try:
        at = datetime.fromisoformat(item["delivered_at"])
    except ValueError:
        raise CatchupError("github API answered a malformed delivered_at") from None
    return at if at.tzinfo else at.replace(tzinfo=UTC)


def succeeded(item: dict[str, Any]) -> bool:
    """Did GitHub's delivery get a 2xx answer?"""
    code = item.get("status_code")
    status = str(item.get("status") or "")
    return isinstance(code, int) and 200 <= code < 300 and status.upper() == "OK"


def failed_guids(items: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Guids none of whose deliveries succeeded, each with its newest delivery."""
    newest: dict[str, dict[str, Any]] = {}
    ok: set[str] = set()
    for item in items:
        guid = item["guid"]
        if succeeded(item):
            ok.add(guid)
        if guid not in newest or _delivered_at(item) > _delivered_at(newest[guid]):
            newest[guid] = item
    return {guid: item for guid, item in newest.items() if guid not in ok}


def _redeliver(
    ctx: CatchupContext,
    source: Source,
    settings: CatchupSettings,
    hook: str,
    headers: dict[str, str],
    owed: dict[str, int],
    result: CatchupResult,
) -> dict[str, int]:
    """Ask for the redeliveries that are due; return the guids still owed one later."""
    if not owed:
        return {}
    max_requests = int(settings.number("max_redeliveries", DEFAULT_MAX_REDELIVERIES))
    interval = timedelta(
        seconds=settings.number(
            "redelivery_interval_seconds", DEFAULT_REDELIVERY_INTERVAL.total_seconds()
        )
    )
    with ctx.db.connection() as conn:
        known = repo.known_dedupe_keys(
            conn, tenant_id=source.tenant_id, origin=source.id, keys=list(owed)
        )
        asked = repo.redelivery_requests(conn, source.id, [g for g in owed if g not in known])
    now = ctx.clock()
    still_owed: dict[str, int] = {}
    refused: list[str] = []
    for guid, delivery_id in owed.items():
        if guid in known:
            continue  # it reached the ledger after all
        count, last = asked.get(guid, (0, None))
        if last is not None and now - last < interval:
            still_owed[guid] = delivery_id  # give the last redelivery time to arrive
            continue
        if count >= max_requests:
            result.redeliveries_exhausted += 1  # reported once, then given up
            continue
        response = ctx.http.post(f"{hook}/deliveries/{delivery_id}/attempts", headers=headers)
        if not 200 <= response.status_code < 300:
            refused.append(str(http_failure(PROVIDER, "POST delivery attempts", response)))
            still_owed[guid] = delivery_id
            continue
        with ctx.db.connection() as conn:
            repo.record_redelivery_request(conn, source.id, guid)
        result.redeliveries_requested += 1
        still_owed[guid] = delivery_id  # checked again later: did it reach the ledger?
    if refused:
        raise CatchupError(f"{len(refused)} redelivery requests refused; first: {refused[0]}")
    return dict(sorted(still_owed.items())[:MAX_OWED])
