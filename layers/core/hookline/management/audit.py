"""The audit trail of the management API's changes: each filed under the caller's principal."""

from __future__ import annotations

from typing import Any

from hookline.management.access import Caller
from hookline.repositories import audit as audit_repo


def audit(
    conn: Any,
    caller: Caller,
    action: str,
    object_type: str,
    object_id: str,
    params: dict[str, Any],
) -> None:
    """One audit entry of a change, filed under the caller's principal."""
    audit_repo.write_audit(
        conn,
        actor=caller.principal,
        action=action,
        object_type=object_type,
        object_id=object_id,
        params=params,
    )
