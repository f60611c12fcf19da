"""What a source last saw: handshakes and rejections (which store no event), and when it last
accepted one (decision 0038)."""

from __future__ import annotations

from typing import Any

from hookline.db import Connection
from hookline.secretbox import seal
from hookline.sqlfiles import query


def record_handshake(conn: Connection, source_id: str, kind: str) -> None:
    """Count a handshake the source answered."""
    conn.execute(query("record_handshake"), {"source_id": source_id, "kind": kind})


def record_rejection(conn: Connection, source_id: str, reason: str) -> None:
    """Count a request the source refused, by reason (`Unauthorized`, `BadRequest`, …)."""
    conn.execute(query("record_rejection"), {"source_id": source_id, "reason": reason})


def source_activity(conn: Connection, tenant_id: str, source_id: str) -> dict[str, Any]:
    """When the source last accepted an event, handshook and rejected (by reason)."""
    row = conn.execute(
        query("source_activity"), {"tenant_id": tenant_id, "source_id": source_id}
    ).fetchone()
    assert row is not None
    return dict(row)


def adopt_handshake_secret(conn: Connection, source_id: str, secret: str) -> bool:
    """Make a handshake's secret (Asana's X-Hook-Secret) the source's, sealed; False when the
    source already took one (it keeps it)."""
    params = {"source_id": source_id, "secret": seal(conn, secret)}
    return conn.execute(query("adopt_handshake_secret"), params).fetchone() is not None
