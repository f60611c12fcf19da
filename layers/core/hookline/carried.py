"""The event a delivery message carries when it is sent at receipt (decision 0108): what
deliver's claim would read from the ledger for a first attempt, so that deliver can send it
without a claim statement where no claim is needed (`hookline.claim_free`).

Only the receiver's sends at receipt carry it, and only for payloads of at most
`MAX_CARRIED_PAYLOAD` bytes (ten messages of a send batch stay under SQS's 256 KiB). The times
are the sender's clock read before the statement that stored the event: the ledger's own are
a little later, so the lease and the deadline carried are never later than the stored ones.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta
from functools import cached_property
from typing import Any

from hookline.records import frozen

MAX_CARRIED_PAYLOAD = 16 * 1024  # bytes; base64 makes ~21.9 KB of a message of it


@frozen
class CarriedEvent:
    """An event as its deliveries' first messages carry it."""

    event_id: str
    tenant_id: str
    source_id: str | None
    type: str
    content_type: str
    payload: bytes
    created_at: datetime  # no later than its deliveries' created_at
    deadline_at: datetime  # no later than their deadline
    lease_until: datetime  # no later than the end of their queued lease

    @classmethod
    def at_receipt(
        cls,
        event_id: str,
        tenant_id: str,
        source_id: str | None,
        type: str,
        content_type: str,
        payload: bytes,
        *,
        began: datetime,
        deadline: timedelta,
        lease: timedelta,
    ) -> CarriedEvent | None:
        """What an event stored at `began` (read before its statement) carries; None when its
        payload is too large to carry."""
        if len(payload) > MAX_CARRIED_PAYLOAD:
            return None
        return cls(
            event_id, tenant_id, source_id, type, content_type, payload, began,
            began + deadline, began + lease,
        )  # fmt: skip

    @cached_property
    def encoded(self) -> str:
        """The event's part of a message body, encoded once for all of its deliveries."""
        return json.dumps(
            {
                "id": self.event_id,
                "tenant": self.tenant_id,
                "source": self.source_id,
                "type": self.type,
                "content_type": self.content_type,
                "payload": base64.b64encode(self.payload).decode("ascii"),
                "created_ms": _ms(self.created_at),
                "deadline_ms": _ms(self.deadline_at),
                "lease_ms": _ms(self.lease_until),
            }
        )

    @classmethod
    def from_doc(cls, doc: Any) -> CarriedEvent | None:
        """The event a message body's `event` member carries; None when it carries none or
        what it carries is not well formed (the message is then claimed)."""
        if not isinstance(doc, dict):
            return None
        try:
            source = doc["source"]
            texts = (doc["id"], doc["tenant"], doc["type"], doc["content_type"], doc["payload"])
            times = (doc["created_ms"], doc["deadline_ms"], doc["lease_ms"])
            if not all(isinstance(t, str) for t in texts) or not all(
                isinstance(t, int) for t in times
            ):
                return None
            if source is not None and not isinstance(source, str):
                return None
            payload = base64.b64decode(doc["payload"], validate=True)
        except (KeyError, ValueError, TypeError):
            return None
        return cls(
            doc["id"], doc["tenant"], source, doc["type"], doc["content_type"], payload,
            _at(times[0]), _at(times[1]), _at(times[2]),
        )  # fmt: skip


def _ms(at: datetime) -> int:
    return int(at.timestamp() * 1000)


def _at(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)
