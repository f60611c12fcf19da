"""The warning before an endpoint's client certificate expires: an `endpoint.certificate_expiring`
operational event, once per certificate, 14 days ahead (decision 0067).

The reconciler calls this on every run; the look is one indexed statement over the endpoints
with a certificate not yet announced, so a run with nothing due costs one index probe, and an
endpoint is announced once however often the reconciler runs (a new certificate is announced
again). The event is written the way `hookline.ingest.publish` writes one, on the same
connection as the mark, so a crash leaves neither; the reconciler's fan-out, later in the same
run, sends it.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from hookline.db import Database
from hookline.observability import logger
from hookline.repositories import endpoint_auth as repo
from hookline.repositories.ledger import NewEvent, store_event

EVENT_TYPE = "endpoint.certificate_expiring"
WARN_BEFORE = timedelta(days=14)
BATCH = 100


def announce_expiring_certificates(
    db: Database, now: datetime, *, warn_before: timedelta = WARN_BEFORE
) -> int:
    """Publish `endpoint.certificate_expiring` for each client certificate expiring within
    `warn_before` that was not announced yet; returns how many. Never raises: a failure is
    logged and left for the next run (nothing was marked)."""
    announced = 0
    try:
        while True:
            with db.connection() as conn, conn.transaction():
                due = repo.claim_expiring_certificates(conn, before=now + warn_before, limit=BATCH)
                for endpoint in due:
                    not_after: datetime = endpoint["tls_not_after"]
                    payload = {
                        "endpoint_id": endpoint["id"],
                        "url": endpoint["url"],
                        "certificate_subject": endpoint["subject"],
                        "certificate_expires_at": not_after.isoformat(),
                        "days_left": max(0, (not_after - now).days),
                    }
                    store_event(
                        conn,
                        NewEvent(
                            tenant_id=endpoint["tenant_id"],
                            origin="publish",
                            type=EVENT_TYPE,
                            dedupe_key=f"idem:{EVENT_TYPE}:{endpoint['id']}:{not_after.isoformat()}",
                            payload=json.dumps(payload, separators=(",", ":")).encode(),
                        ),
                    )
            announced += len(due)
            if len(due) < BATCH:
                return announced
    except Exception as err:
        logger.warning("certificate expiry check failed", extra={"error": type(err).__name__})
        return announced
