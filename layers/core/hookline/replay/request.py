"""A replay request: what an operator (console event, CLI, API body) asks to replay, checked
field by field with messages an operator can act on, and recorded as it will run."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from hookline.errors import BadRequest
from hookline.records import frozen
from hookline.repositories.replay import Window

STATES = ("pending", "queued", "delivering", "delivered", "failed", "dead", "held")
WINDOW_DEFAULT_STATES = ("failed", "dead")  # what an operator replays a window for
DEFAULT_LIMIT = 10_000
MAX_LIMIT = 100_000

SELECTOR_FIELDS = (
    "delivery_ids", "event_ids", "endpoint_id", "tenant_id", "event_type", "since", "until",
    "states", "refanout", "redrive_dlq",
)  # fmt: skip
OPTION_FIELDS = ("dry_run", "max_per_second", "limit", "requested_by", "reason")
FIELDS = SELECTOR_FIELDS + OPTION_FIELDS
HOW_TO_SELECT = (
    "say what to replay with one selector: delivery_ids, event_ids, endpoint_id + since, "
    "since (optionally with tenant_id and event_type), or redrive_dlq; "
    "event selectors also take refanout: true"
)
_RELATIVE = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhd])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


def utcnow() -> datetime:
    """Now, timezone-aware."""
    return datetime.now(UTC)


# -- the request ------------------------------------------------------------------------------


@frozen
class ReplayRequest:
    """A validated replay request. `selector` is one of delivery_ids, event_ids, endpoint,
    window, redrive_dlq."""

    selector: str
    requested_by: str
    reason: str
    delivery_ids: tuple[str, ...] = ()
    event_ids: tuple[str, ...] = ()
    endpoint_id: str | None = None
    window: Window | None = None
    states: tuple[str, ...] = ()
    refanout: bool = False
    redrive_group: str | None = None
    dry_run: bool = False
    max_per_second: float | None = None
    limit: int = DEFAULT_LIMIT

    def parameters(self) -> dict[str, Any]:
        """The request as recorded in the audit log (JSON types, defaults filled in)."""
        params: dict[str, Any] = {"selector": self.selector}
        if self.delivery_ids:
            params["delivery_ids"] = list(self.delivery_ids)
        if self.event_ids:
            params["event_ids"] = list(self.event_ids)
        if self.endpoint_id:
            params["endpoint_id"] = self.endpoint_id
        if self.window is not None:
            params["since"] = self.window.since.isoformat()
            params["until"] = self.window.until.isoformat()
            if self.window.tenant_id:
                params["tenant_id"] = self.window.tenant_id
            if self.window.types:
                params["event_type"] = self.window.types[0]
        if self.states:
            params["states"] = list(self.states)
        if self.redrive_group:
            params["redrive_dlq"] = self.redrive_group
        params.update(
            refanout=self.refanout,
            dry_run=self.dry_run,
            max_per_second=self.max_per_second,
            limit=self.limit,
        )
        return params

    def audit_object(self) -> tuple[str, str | None]:
        """(object type, object id) the audit entry is filed under."""
        if self.selector == "redrive_dlq":
            return "dlq", self.redrive_group
        if self.selector == "endpoint":
            return "endpoint", self.endpoint_id
        if self.selector == "window" and self.window is not None and self.window.tenant_id:
            return "tenant", self.window.tenant_id
        if self.selector == "delivery_ids" and len(self.delivery_ids) == 1:
            return "delivery", self.delivery_ids[0]
        if self.selector == "event_ids" and len(self.event_ids) == 1:
            return "event", self.event_ids[0]
        return "deliveries", None


def parse_instant(value: Any, name: str, now: datetime) -> datetime:
    """An ISO 8601 time (UTC when it has no offset) or a duration ago: `90m`, `2h`, `3d`."""
    if not isinstance(value, str) or not value.strip():
        raise BadRequest(f"{name} must be an ISO 8601 time or a duration ago such as 2h")
    text = value.strip()
    relative = _RELATIVE.match(text)
    if relative:
        return now - timedelta(**{_UNITS[relative[2]]: float(relative[1])})
    if text == "now":
        return now
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise BadRequest(
            f"{name} {text!r} is not a time: use ISO 8601 (2024-05-01T12:00:00Z) "
            "or a duration ago (30m, 2h, 7d)"
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def parse_request(doc: Any, *, groups: Sequence[str], now: datetime | None = None) -> ReplayRequest:
    """Validate a replay request (a console test event, or what the CLI built).

    Raises BadRequest with a message an operator can act on: unknown fields, no selector or
    two mixed, a bad window, unknown states or groups, missing requested_by or reason.
    """
    now = now or utcnow()
    if not isinstance(doc, Mapping):
        raise BadRequest("a replay request is a JSON object; " + HOW_TO_SELECT)
    unknown = sorted(set(doc) - set(FIELDS))
    if unknown:
        raise BadRequest(
            f"unknown field(s) {', '.join(unknown)}; known fields: {', '.join(FIELDS)}"
        )
    requested_by = _text(doc.get("requested_by"))
    reason = _text(doc.get("reason"))
    if not requested_by or not reason:
        missing = [n for n, v in (("requested_by", requested_by), ("reason", reason)) if not v]
        raise BadRequest(
            f"refused: {' and '.join(missing)} missing. Every replay names who asks for it "
            "(requested_by) and why (reason); both go to the audit log"
        )
    base = ReplayRequest(
        selector="",
        requested_by=requested_by[:200],
        reason=reason[:2000],
        dry_run=_flag(doc, "dry_run"),
        max_per_second=_rate(doc.get("max_per_second")),
        limit=_limit(doc.get("limit")),
    )
    given = [f for f in SELECTOR_FIELDS if doc.get(f) not in (None, False)]
    refanout = _flag(doc, "refanout")

    if "redrive_dlq" in given:
        _only(given, "redrive_dlq", (), "redrive_dlq moves a whole dead-letter queue")
        group = doc["redrive_dlq"]
        if not isinstance(group, str) or group not in groups:
            raise BadRequest(f"redrive_dlq: unknown tenant group {group!r}; known: "
                             + ", ".join(groups))  # fmt: skip
        return replace(base, selector="redrive_dlq", redrive_group=group)

    if "delivery_ids" in given:
        _only(given, "delivery_ids", (), "delivery_ids names the deliveries themselves")
        ids = _id_list(doc, "delivery_ids", base.limit)
        return replace(base, selector="delivery_ids", delivery_ids=ids)

    states_given = "states" in given
    if refanout and states_given:
        raise BadRequest("refanout creates the deliveries that are missing, so it takes no states")

    if "event_ids" in given:
        _only(given, "event_ids", ("states", "refanout"), "event_ids names the events")
        ids = _id_list(doc, "event_ids", base.limit)
        states = _states(doc) if states_given else STATES
        return replace(
            base, selector="event_ids", event_ids=ids, states=() if refanout else states,
            refanout=refanout,
        )  # fmt: skip

    if "endpoint_id" in given:
        _only(
            given, "endpoint_id", ("since", "until", "states", "refanout"),
            "endpoint_id selects by endpoint and window (the tenant is the endpoint's)",
        )  # fmt: skip
        endpoint_id = doc["endpoint_id"]
        if not isinstance(endpoint_id, str) or not endpoint_id.strip():
            raise BadRequest("endpoint_id must be an endpoint id")
        window = _window(doc, now, "endpoint_id")
        states = _states(doc) if states_given else WINDOW_DEFAULT_STATES
        return replace(
            base, selector="endpoint", endpoint_id=endpoint_id.strip(), window=window,
            states=() if refanout else states, refanout=refanout,
        )  # fmt: skip

    if given and set(given) <= {"since", "until", "tenant_id", "event_type", "states", "refanout"}:
        window = _window(doc, now, "tenant_id/event_type")
        tenant_id = doc.get("tenant_id")
        if tenant_id is not None and (not isinstance(tenant_id, str) or not tenant_id.strip()):
            raise BadRequest("tenant_id must be a tenant id")
        event_type = doc.get("event_type")
        if event_type is not None and (not isinstance(event_type, str) or not event_type):
            raise BadRequest("event_type must be an event type, `*` wildcards allowed")
        window = Window(
            window.since,
            window.until,
            tenant_id.strip() if tenant_id else None,
            (event_type,) if event_type else (),
        )
        states = _states(doc) if states_given else WINDOW_DEFAULT_STATES
        return replace(
            base, selector="window", window=window, states=() if refanout else states,
            refanout=refanout,
        )  # fmt: skip

    raise BadRequest(HOW_TO_SELECT)


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _flag(doc: Mapping[str, Any], name: str) -> bool:
    value = doc.get(name, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise BadRequest(f"{name} must be true or false")
    return value


def _rate(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise BadRequest("max_per_second must be a positive number (deliveries per second)")
    if not math.isfinite(value) or value > 10_000:
        raise BadRequest("max_per_second must be at most 10000; leave it out for no limit")
    return float(value)


def _limit(value: Any) -> int:
    if value is None:
        return DEFAULT_LIMIT
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_LIMIT:
        raise BadRequest(f"limit must be a whole number from 1 to {MAX_LIMIT}")
    return value


def _only(given: Sequence[str], selector: str, allowed: Sequence[str], why: str) -> None:
    extra = [f for f in given if f != selector and f not in allowed]
    if extra:
        raise BadRequest(
            f"choose one selector: {selector} cannot be combined with {', '.join(extra)} ({why})"
        )


def _id_list(doc: Mapping[str, Any], name: str, limit: int) -> tuple[str, ...]:
    value = doc[name]
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise BadRequest(f"{name} must be a non-empty list of ids")
    if not all(isinstance(v, str) and v.strip() for v in value):
        raise BadRequest(f"{name} must be a list of id strings")
    ids = tuple(dict.fromkeys(v.strip() for v in value))
    if len(ids) > limit:
        raise BadRequest(f"{name}: {len(ids)} ids is more than the limit ({limit})")
    return ids


def _states(doc: Mapping[str, Any]) -> tuple[str, ...]:
    value = doc["states"]
    if isinstance(value, str):
        value = [s.strip() for s in value.split(",") if s.strip()]
    if not isinstance(value, list) or not value or not all(isinstance(s, str) for s in value):
        raise BadRequest(f"states must be a non-empty list of: {', '.join(STATES)}")
    unknown = [s for s in value if s not in STATES]
    if unknown:
        raise BadRequest(f"unknown state(s) {', '.join(unknown)}; known: {', '.join(STATES)}")
    return tuple(dict.fromkeys(value))


def _window(doc: Mapping[str, Any], now: datetime, selector: str) -> Window:
    if doc.get("since") is None:
        raise BadRequest(
            f"{selector} needs a window: since (and optionally until), "
            "e.g. since: 2024-05-01T00:00:00Z or since: 6h"
        )
    since = parse_instant(doc["since"], "since", now)
    until = now if doc.get("until") is None else parse_instant(doc["until"], "until", now)
    if since >= until:
        raise BadRequest(
            f"bad window: since ({since.isoformat()}) must be before until ({until.isoformat()})"
        )
    if since > now:
        raise BadRequest(f"bad window: since ({since.isoformat()}) is in the future")
    return Window(since, until)
