"""What the operational monitor and its notifications are told by the deployment: when an
endpoint counts as failing, who hears about every tenant's endpoints (the operator), and the
quiet period of e-mail and chat messages (docs/decisions/0068)."""

from __future__ import annotations

from collections.abc import Mapping

from hookline.records import frozen


def _emails(value: str) -> tuple[str, ...]:
    return tuple(sorted({v.strip() for v in value.split(",") if v.strip()}))


@frozen
class OperationalOptions:
    """Defaults for every endpoint (each may override the three thresholds) and the
    operator's subscriptions."""

    failing_after_attempts: int = 5  # consecutive failed attempts
    failing_error_rate: float = 0.5  # share of failed attempts over the window ...
    failing_window_seconds: int = 15 * 60
    failing_min_attempts: int = 10  # ... once the window holds at least this many
    quiet_seconds: int = 60 * 60  # one e-mail / chat message per endpoint per quiet period
    dead_overlap_seconds: int = 300  # the dead-delivery scan re-reads this much of the past
    batch_size: int = 500
    # The operator: a tenant whose subscribed endpoints get a copy of every tenant's
    # operational events, and e-mail addresses and a chat webhook told of every state change.
    operator_tenant_id: str | None = None
    operator_emails: tuple[str, ...] = ()
    operator_chat_url: str | None = None
    notify_from: str | None = None  # the SES sender (a verified identity); none: no e-mail

    @classmethod
    def from_env(cls, e: Mapping[str, str]) -> OperationalOptions:
        """HOOKLINE_FAILING_AFTER_ATTEMPTS, HOOKLINE_FAILING_ERROR_RATE (0-1),
        HOOKLINE_FAILING_WINDOW_MINUTES, HOOKLINE_NOTIFY_QUIET_MINUTES,
        HOOKLINE_OPERATOR_TENANT, HOOKLINE_OPERATOR_EMAILS (comma-separated),
        HOOKLINE_OPERATOR_CHAT_URL, HOOKLINE_NOTIFY_FROM."""
        rate = float(e.get("HOOKLINE_FAILING_ERROR_RATE") or 0.5)
        if not 0 < rate <= 1:
            raise ValueError("HOOKLINE_FAILING_ERROR_RATE is a share: more than 0, at most 1")
        return cls(
            failing_after_attempts=max(1, int(e.get("HOOKLINE_FAILING_AFTER_ATTEMPTS") or 5)),
            failing_error_rate=rate,
            failing_window_seconds=60 * int(e.get("HOOKLINE_FAILING_WINDOW_MINUTES") or 15),
            quiet_seconds=60 * int(e.get("HOOKLINE_NOTIFY_QUIET_MINUTES") or 60),
            operator_tenant_id=e.get("HOOKLINE_OPERATOR_TENANT") or None,
            operator_emails=_emails(e.get("HOOKLINE_OPERATOR_EMAILS", "")),
            operator_chat_url=e.get("HOOKLINE_OPERATOR_CHAT_URL") or None,
            notify_from=e.get("HOOKLINE_NOTIFY_FROM") or None,
        )
