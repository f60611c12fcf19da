"""Hookline's core library: the `hookline` package shared by every function."""

from __future__ import annotations

from typing import Any


def publish(
    conn: Any, *, tenant_id: str, type: str, payload: Any, idempotency_key: str | None = None
) -> Any:
    """Write an event and its outbox row inside the caller's open psycopg transaction.

    See `hookline.ingest.publish`; imported lazily so `import hookline` stays cheap.
    """
    from hookline.ingest import publish as _publish

    return _publish(
        conn, tenant_id=tenant_id, type=type, payload=payload, idempotency_key=idempotency_key
    )


__all__ = ["publish"]
