"""Endpoints as deliver sends to them, kept in the process for a few seconds (decision 0108),
so that a message carrying its event is sent without a statement before it.

What a kept copy allows, and no more (as the receiver's sources, decision 0074):

* an endpoint disabled, deleted, re-pointed, given a cap, a rate limit or an ordering, or a
  secret added, is sent to as it was for at most `ttl` after the change;
* a secret's expiry is exact: each secret is kept with it and left out once it has passed.

Only the messages `hookline.claim_free` sends use these copies; every other message is
claimed and reads the endpoint as it is. The copies hold secrets sealed, as the table does.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from hookline.db import Connection
from hookline.records import frozen
from hookline.sqlfiles import query

MAX_ENDPOINTS = 4096


@frozen
class SendableEndpoint:
    """An endpoint as `read_sendable_endpoints` read it."""

    row: dict[str, Any]  # the claim's endpoint columns, by the claim's names
    max_concurrency: int
    rated: bool
    ordered: bool
    secrets: tuple[tuple[str, datetime | None], ...]  # sealed, newest first, with expiry

    def sealed_secrets(self, now: datetime) -> list[str]:
        """Its secrets still active at `now`, newest first, sealed."""
        return [s for s, expires_at in self.secrets if expires_at is None or expires_at > now]


def read_sendable(conn: Connection, ids: Iterable[str]) -> dict[str, SendableEndpoint]:
    """The endpoints of `ids` that exist, by id, in one statement."""
    found: dict[str, SendableEndpoint] = {}
    for r in conn.execute(query("read_sendable_endpoints"), {"ids": list(ids)}):
        row = {k: r[k] for k in ENDPOINT_COLUMNS}
        found[r["id"]] = SendableEndpoint(
            row, int(r["max_concurrency"]), r["rate_limit_per_second"] is not None,
            bool(r["ordered"]),
            tuple(zip(r["secrets"] or [], r["secrets_expire_at"] or [], strict=True)),
        )  # fmt: skip
    return found


# The columns of a claim's row that come from its endpoint (and its tenant's external id).
ENDPOINT_COLUMNS = (
    "url", "headers", "retry_on_4xx", "enabled", "deleted", "input_transformer", "kind",
    "role_arn", "destination", "auth", "auth_secret", "tls", "tls_key", "public_only",
    "external_id",
)  # fmt: skip


class SendableEndpoints:
    """Endpoints by id, each kept `ttl` seconds from its read. Thread-safe."""

    def __init__(
        self,
        ttl: float,
        *,
        max_endpoints: int = MAX_ENDPOINTS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl = ttl
        self.max_endpoints = max_endpoints
        self.clock = clock
        self._lock = threading.Lock()
        self._kept: dict[str, tuple[float, SendableEndpoint]] = {}

    def get(self, conn: Callable[[], Any], ids: Iterable[str]) -> dict[str, SendableEndpoint]:
        """The endpoints of `ids` that exist: kept copies younger than `ttl`, the others read
        in one statement on a connection from `conn()` (a context manager), and kept."""
        now = self.clock()
        found: dict[str, SendableEndpoint] = {}
        missing: list[str] = []
        with self._lock:
            for endpoint_id in dict.fromkeys(ids):
                kept = self._kept.get(endpoint_id)
                if kept is not None and now - kept[0] < self.ttl:
                    found[endpoint_id] = kept[1]
                else:
                    missing.append(endpoint_id)
        if not missing:
            return found
        with conn() as c:
            read = read_sendable(c, missing)
        with self._lock:
            for endpoint_id in missing:
                self._kept.pop(endpoint_id, None)
            if self.ttl > 0:
                while self._kept and len(self._kept) + len(read) > self.max_endpoints:
                    del self._kept[next(iter(self._kept))]  # the oldest read first
                self._kept.update((k, (now, v)) for k, v in read.items())
        return found | read
