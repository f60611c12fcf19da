"""Idempotent creates (docs/decisions/0028): the first answer to a request with an
Idempotency-Key is kept, per caller scope, for a time to live (`idempotency_ttl_seconds`,
24 h by default), and a retry of the same request within it gets that answer back instead of
a second object. The same key with a different request is a conflict; a key older than the
time to live is free again.

A secret is shown once: the kept answer never holds it. A replayed answer says so, with
`"secret": null` and `secret_note`, and the secret is only to be had again by rotating it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from hookline.db import Database
from hookline.errors import BadRequest, Conflict
from hookline.records import frozen
from hookline.repositories import api as repo
from hookline.secretbox import reveal, seal

MAX_KEY_LENGTH = 255
PURGE_BATCH = 100  # expired answers removed by each new create
SHOWN_ONCE = (
    "the secret was shown once, in the first answer to this Idempotency-Key; "
    "rotate it (POST .../rotate-secret) to get a new one"
)


@frozen
class Answer:
    """What a create answers: its status and body, and whether it is a kept earlier answer."""

    status: int
    body: dict[str, Any]
    replayed: bool = False


def answer_once(
    db: Database,
    scope: str,
    key: str,
    fingerprint: str,
    make: Callable[[], dict[str, Any]],
    *,
    status: int,
    ttl: timedelta,
) -> Answer:
    """`make`'s answer the first time `key` is used in `scope` (within `ttl`), the kept answer
    (without its secret) when the same request (`fingerprint`) comes again, Conflict for a
    different request or one still being served. A `make` that raises keeps nothing."""
    if not 0 < len(key) <= MAX_KEY_LENGTH:
        raise BadRequest(f"Idempotency-Key must be 1 to {MAX_KEY_LENGTH} characters")
    with db.connection() as conn:
        if not repo.reserve_idempotency_key(conn, scope, key, fingerprint, ttl):
            known = repo.get_idempotency_key(conn, scope, key)
            if known is None or known["request_hash"] != fingerprint:
                raise Conflict("this Idempotency-Key was used for a different request")
            if known["status"] is None:
                raise Conflict("a request with this Idempotency-Key is still in progress")
            body = json.loads(reveal(conn, known["response"]["sealed"]))
            return Answer(int(known["status"]), withhold_secret(body), replayed=True)
        repo.purge_idempotency_keys(conn, ttl, PURGE_BATCH)
    try:
        body = make()
    except BaseException:
        with db.connection() as conn:
            repo.release_idempotency_key(conn, scope, key)
        raise
    with db.connection() as conn:
        # Sealed at rest all the same: an answer may hold an endpoint's custom header values.
        kept = {"sealed": seal(conn, json.dumps(withhold_secret(body)))}
        repo.complete_idempotency_key(conn, scope, key, status, kept)
    return Answer(status, body)


def withhold_secret(body: dict[str, Any]) -> dict[str, Any]:
    """An answer as it may be shown again: a secret it carried replaced by null and a note
    (answers kept before this rule held their secret: it is withheld when read, too)."""
    if body.get("secret") is None:
        return body
    return {**body, "secret": None, "secret_note": SHOWN_ONCE}
