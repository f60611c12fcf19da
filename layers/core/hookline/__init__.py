"""Hookline's core library: the `hookline` package shared by every function."""

from __future__ import annotations

from typing import Any

# The one place the version is written (docs/decisions/0064): the wheel's metadata, the API's
# `info.version`, `hookline --version` and the generated clients all read it from here. The
# Lambda layer has no dist-info, so importlib.metadata could not find it there.
__version__ = "1.0.0"
# What every delivery says it is (hookline.delivery sends it, the delivery pages show it).
USER_AGENT = f"Hookline-Webhooks/{__version__}"


def publish(
    conn: Any, *, tenant_id: str, type: str, payload: Any, idempotency_key: str | None = None
) -> Any:
    """Write an event and its outbox row inside the caller's open psycopg transaction.

    See `hookline.ingest.publish`; imported lazily so `import hookline` stays cheap. This and
    `nudge_fanout` are the library's edge for a producer's own code: they read the settings
    from the environment, the services behind them receive them.
    """
    from hookline.ingest import publish as _publish
    from hookline.settings import get_settings

    return _publish(
        conn,
        tenant_id=tenant_id,
        type=type,
        payload=payload,
        settings=get_settings(),
        idempotency_key=idempotency_key,
    )


def nudge_fanout() -> None:
    """Wake the fan-out now, after a transaction that called `publish` committed: on AWS an
    asynchronous invoke of the fan-out function (`HOOKLINE_FANOUT_FUNCTION`; the caller needs
    `lambda:InvokeFunction` on it), locally a NOTIFY to the dev stack. Best effort: without
    it the fan-out schedule picks the event up within its interval."""
    from hookline.nudge import nudge_fanout as _nudge_fanout
    from hookline.settings import get_settings

    _nudge_fanout(get_settings())


__all__ = ["nudge_fanout", "publish"]
