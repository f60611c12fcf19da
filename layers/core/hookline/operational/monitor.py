"""The operational monitor (decision 0068): a step of every reconcile run that turns what the
pipeline already wrote — attempts and dead deliveries — into operational events and messages.

Per run:

1. endpoints enabled again become healthy (quietly);
2. each endpoint with attempts in its window is judged: a healthy one whose failures since
   its last success reach `failing_after_attempts`, or whose error rate over the window
   reaches `failing_error_rate` (with at least `failing_min_attempts` attempts), is failing;
   a failing one whose last attempt succeeded has recovered;
3. endpoints disabled lately are announced to the operator (the deliverer already published
   the tenant's `endpoint.disabled`);
4. deliveries that died since the last scan get `delivery.dead`.

A state change is recorded on the endpoint's locked `endpoint_health` row in the transaction
that publishes its event, so it is announced once however many monitors run. The events go
through `hookline.ingest.publish` to the tenant (and a copy to the operator tenant), so they
are signed, retried and logged like any other event. Attempts and dead deliveries of
operational events themselves are never judged or announced (no loops): they are counted.
E-mail and chat messages follow the commit, one per endpoint per quiet period.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from hookline.db import Connection, Database
from hookline.ingest import publish
from hookline.observability import logger
from hookline.operational import catalogue as types
from hookline.operational.notify import Notice, Notifier, Sent, Targets
from hookline.operational_options import OperationalOptions
from hookline.records import frozen
from hookline.repositories import operational as repo
from hookline.settings import Settings

DEAD_SCAN = "delivery_dead"
MAX_DEAD_PAGES = 20


def utcnow() -> datetime:
    """Now, timezone-aware."""
    return datetime.now(UTC)


@dataclass
class MonitorResult:
    """What one run announced; `errors` name what could not be announced (retried next run)."""

    failing: int = 0
    recovered: int = 0
    disabled: int = 0
    dead: int = 0
    reenabled: int = 0
    operational_not_announced: int = 0  # dead deliveries of operational events (no loops)
    sent: Sent = field(default_factory=Sent)
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The run as the reconcile report's finding."""
        return {
            "endpoint_failing": self.failing,
            "endpoint_recovered": self.recovered,
            "endpoint_disabled": self.disabled,
            "delivery_dead": self.dead,
            "reenabled": self.reenabled,
            "operational_not_announced": self.operational_not_announced,
            "emails_sent": self.sent.emails,
            "chat_messages_sent": self.sent.chats,
            "notification_failures": self.sent.failures,
            "errors": self.errors,
        }


@frozen
class Change:
    """One endpoint's state change to announce."""

    endpoint_id: str
    tenant_id: str
    was: str
    becomes: str
    event_type: str
    payload: dict[str, Any]
    notice: Notice


class OperationalMonitor:
    """Judges endpoints and dead deliveries; one per process, built by the runtime."""

    def __init__(
        self,
        db: Database,
        settings: Settings,
        notifier: Notifier,
        *,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        """`settings` go to publish (and carry the thresholds and the operator)."""
        self.db = db
        self.settings = settings
        self.options: OperationalOptions = settings.operational
        self.notifier = notifier
        self.clock = clock

    def run(self, now: datetime | None = None) -> dict[str, Any]:
        """One pass; never raises for one endpoint's or delivery's trouble (recorded)."""
        now = now or self.clock()
        result = MonitorResult()
        with self.db.connection() as conn:
            result.reenabled = repo.reset_reenabled_endpoints(conn, now=now)
            stats = repo.endpoint_attempt_stats(
                conn,
                now=now,
                window=timedelta(seconds=self.options.failing_window_seconds),
                max_window=timedelta(days=1),
                after_attempts=self.options.failing_after_attempts,
                error_rate=self.options.failing_error_rate,
                operational_types=types.NAMES,
            )
            disabled = repo.disabled_endpoints_to_announce(
                conn, now=now, limit=self.options.batch_size
            )
        for row in stats:
            change = self.judge(row, now)
            if change is not None:
                self._apply(change, now, result)
        for row in disabled:
            self._apply(self._disabled(row, now), now, result)
        self._announce_dead(now, result)
        return result.as_dict()

    def judge(self, row: dict[str, Any], now: datetime) -> Change | None:
        """The state change one endpoint's statistics call for, if any."""
        if not row["enabled"]:
            return None
        attempts, failures, streak = row["attempts"], row["failures"], row["streak"]
        window = int(row["failing_window_seconds"])
        if row["state"] == "healthy":
            rate = failures / attempts if attempts else 0.0
            if streak >= row["failing_after_attempts"]:
                reason = f"{streak} consecutive failed attempts"
            elif (
                attempts >= self.options.failing_min_attempts and rate >= row["failing_error_rate"]
            ):
                reason = (
                    f"error rate {rate:.0%} over {window // 60} min "
                    f"({failures} of {attempts} attempts failed)"
                )
            else:
                return None
            last = {
                "at": _iso(row["last_failure_at"]),
                "status": row["last_failure_status"],
                "error": row["last_failure_error"] or _http_error(row["last_failure_status"]),
                "excerpt": row["last_failure_excerpt"],
            }
            payload = {
                **_endpoint(row), "state": "failing", "since": now.isoformat(),
                "reason": reason, "consecutive_failures": streak, "attempts_in_window": attempts,
                "failures_in_window": failures, "window_seconds": window, "last_error": last,
            }  # fmt: skip
            notice = Notice(
                f"Hookline: endpoint {row['url']} is failing",
                f"Endpoint {row['endpoint_id']} ({row['description'] or row['url']}) of tenant "
                f"{row['tenant_id']} is failing since {now.isoformat(timespec='seconds')}: "
                f"{reason}. Last error: {last['error']} at {last['at']}.",
            )
            return Change(row["endpoint_id"], row["tenant_id"], "healthy", "failing",
                          types.ENDPOINT_FAILING, payload, notice)  # fmt: skip
        if row["state"] == "failing" and row["last_ok"]:
            payload = {
                **_endpoint(row), "state": "healthy", "recovered_at": now.isoformat(),
                "failing_since": _iso(row["changed_at"]),
                "last_success_at": _iso(row["last_success_at"]),
            }  # fmt: skip
            notice = Notice(
                f"Hookline: endpoint {row['url']} recovered",
                f"Endpoint {row['endpoint_id']} ({row['description'] or row['url']}) of tenant "
                f"{row['tenant_id']} answered 2xx again at {_iso(row['last_success_at'])}; it "
                f"was failing since {_iso(row['changed_at'])}.",
            )
            return Change(row["endpoint_id"], row["tenant_id"], "failing", "healthy",
                          types.ENDPOINT_RECOVERED, payload, notice)  # fmt: skip
        return None

    def _disabled(self, row: dict[str, Any], now: datetime) -> Change:
        reason = row["disabled_reason"] or "disabled"
        how = types.how_to_reenable(row["endpoint_id"])
        payload = {
            **_endpoint(row), "reason": reason, "disabled_at": _iso(row["disabled_at"]),
            "how_to_reenable": how,
        }  # fmt: skip
        notice = Notice(
            f"Hookline: endpoint {row['url']} was disabled",
            f"Endpoint {row['endpoint_id']} ({row['description'] or row['url']}) of tenant "
            f"{row['tenant_id']} was disabled at {_iso(row['disabled_at'])}: {reason}. "
            f"Nothing is sent to it until it is enabled again: {how}.",
        )
        # was="*": from whatever state it was in. The tenant's own endpoint.disabled was
        # published by the deliverer as it disabled the endpoint; this is the operator's copy.
        return Change(row["endpoint_id"], row["tenant_id"], "*", "disabled",
                      types.ENDPOINT_DISABLED, payload, notice)  # fmt: skip

    def _apply(self, change: Change, now: datetime, result: MonitorResult) -> None:
        targets: Targets | None = None
        try:
            with self.db.connection() as conn, conn.transaction():
                health = repo.lock_endpoint_health(conn, change.endpoint_id, change.tenant_id, now)
                if change.was != "*" and health["state"] != change.was:
                    return  # another monitor announced it meanwhile
                if change.was == "*" and health["state"] == change.becomes:
                    return
                repo.set_state(conn, change.endpoint_id, change.becomes, now)
                key = f"{change.event_type}:{change.endpoint_id}:{now.isoformat()}"
                if change.event_type != types.ENDPOINT_DISABLED:
                    self._publish(conn, change.tenant_id, change.event_type, change.payload, key)
                self._publish_to_operator(conn, change.tenant_id, change.event_type,
                                          change.payload, key)  # fmt: skip
                if self._quiet_period_allows(health, change.becomes, now):
                    repo.set_notified(conn, change.endpoint_id, change.becomes, now)
                    targets = self._targets(conn, change.tenant_id)
        except Exception as err:  # one endpoint's trouble never stops the others
            result.errors.append(f"{change.event_type} {change.endpoint_id}: {type(err).__name__}")
            logger.exception(
                "operational event not published",
                extra={"endpoint": change.endpoint_id, "type": change.event_type},
            )
            return
        if change.becomes == "failing":
            result.failing += 1
        elif change.becomes == "healthy":
            result.recovered += 1
        else:
            result.disabled += 1
        if targets is not None:
            self.notifier.send(change.notice, targets, result.sent)

    def _quiet_period_allows(self, health: dict[str, Any], becomes: str, now: datetime) -> bool:
        """One message per endpoint per quiet period: a recovery is told only if its failure
        was; a failure only if nothing was told lately or what was told was a recovery long
        enough ago. A disablement is always told (once: the state changes once)."""
        told, told_at = health["notified_state"], health["notified_at"]
        if becomes == "disabled":
            return True
        if becomes == "healthy":
            return told in ("failing", "disabled")
        quiet = timedelta(seconds=self.options.quiet_seconds)
        return told_at is None or told_at <= now - quiet

    def _targets(self, conn: Connection, tenant_id: str) -> Targets:
        emails = set(self.options.operator_emails)
        chats = [self.options.operator_chat_url] if self.options.operator_chat_url else []
        tenant = repo.tenant_notifications(conn, tenant_id)
        if tenant is not None:
            emails.update(tenant["emails"])
            if tenant["chat_url"] and tenant["chat_url"] not in chats:
                chats.append(tenant["chat_url"])
        return Targets(tuple(sorted(emails)), tuple(chats))

    def _publish(
        self, conn: Connection, tenant_id: str, type: str, payload: dict[str, Any], key: str
    ) -> bool:
        accepted = publish(
            conn, tenant_id=tenant_id, type=type, payload=payload, settings=self.settings,
            idempotency_key=key,
        )  # fmt: skip
        return not accepted.duplicate

    def _publish_to_operator(
        self, conn: Connection, tenant_id: str, type: str, payload: dict[str, Any], key: str
    ) -> None:
        operator = self.options.operator_tenant_id
        if operator and operator != tenant_id:
            self._publish(conn, operator, type, payload, key)

    def _announce_dead(self, now: datetime, result: MonitorResult) -> None:
        overlap = timedelta(seconds=self.options.dead_overlap_seconds)
        with self.db.connection() as conn:
            stored = repo.position(conn, DEAD_SCAN)
        since = (stored or now - timedelta(hours=1)) - overlap
        for _ in range(MAX_DEAD_PAGES):
            with self.db.connection() as conn:
                rows = repo.dead_deliveries_since(
                    conn, since=since, limit=self.options.batch_size,
                    operational_types=types.NAMES,
                )  # fmt: skip
                for row in rows:
                    self._announce_one_dead(conn, row, result)
                if rows:
                    since = rows[-1]["dead_at"]
                    repo.set_position(conn, DEAD_SCAN, since)
            if len(rows) < self.options.batch_size:
                return

    def _announce_one_dead(
        self, conn: Connection, row: dict[str, Any], result: MonitorResult
    ) -> None:
        if row["operational"]:
            # An operational event's own delivery died: logged and counted, never announced.
            result.operational_not_announced += 1
            logger.info(
                "operational event delivery dead; not announced (no loops)",
                extra={"delivery": row["delivery_id"], "type": row["event_type"]},
            )
            return
        payload = {
            **_endpoint(row), "delivery_id": row["delivery_id"], "event_id": row["event_id"],
            "event_type": row["event_type"], "attempts": row["attempt_count"],
            "last_status": row["last_status"], "last_error": row["last_error"],
            "dead_at": _iso(row["dead_at"]),
        }  # fmt: skip
        key = f"{types.DELIVERY_DEAD}:{row['delivery_id']}"
        try:
            with conn.transaction():
                if self._publish(conn, row["tenant_id"], types.DELIVERY_DEAD, payload, key):
                    result.dead += 1
                self._publish_to_operator(conn, row["tenant_id"], types.DELIVERY_DEAD, payload, key)
        except Exception as err:
            result.errors.append(f"delivery.dead {row['delivery_id']}: {type(err).__name__}")
            logger.exception("delivery.dead not published", extra={"delivery": row["delivery_id"]})


def _endpoint(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "endpoint_id": row["endpoint_id"],
        "tenant_id": row["tenant_id"],
        "url": row["url"],
        "description": row["description"] or "",
    }


def _iso(at: datetime | None) -> str | None:
    return None if at is None else at.isoformat()


def _http_error(status: int | None) -> str | None:
    return None if status is None else f"HTTP {status}"
