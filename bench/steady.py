"""The ledger as a deployment has it, for `bench/pipeline.py --steady N`.

A fresh bench database flatters the write path in two ways that a running deployment does
not: its key indexes are small, and no checkpoint comes during a phase. After a checkpoint,
the first change to each page writes the whole page to the WAL (a full-page image,
`full_page_writes`, on by default and on RDS). Pages written in order (a time-ordered id's
index, a table's last page) pay that once per checkpoint for thousands of rows. Pages
written at random (an index keyed by a provider's id, which is a random UUID for GitHub,
Shopify and many more) pay it for nearly every row once the index has many more pages than
rows arrive between two checkpoints: at 1,000 events/s, a checkpoint every 5 minutes (RDS's
default) and 30 days of dedupe keys, an index of ~80-byte entries has ~100 leaf pages for
each event between checkpoints.

`--steady N` makes a phase begin as one does between checkpoints in such a deployment:

* each tenant already has `N` dedupe keys (`event_keys`), and the bare relay's table already
  holds `N` events per fan-out width, both under random provider ids, so both key indexes
  have many more leaf pages than a phase writes rows;
* the senders' event ids are random (`evt_` and 24 hex digits, as long as Stripe's);
* a `CHECKPOINT` right before each phase's intake, so the phase pays what the minutes after
  a checkpoint pay.

What the full-page images cost shows in the WAL column and in `--wal-mix` (by relation; its
"full-page images" total). The prefill is the bench's own, written with `COPY`-speed
statements before the phases; it is not measured.
"""

from __future__ import annotations

import uuid

# rows per statement while filling: one statement a few seconds long, no more
FILL_STEP = 500_000


def random_event_id() -> str:
    """A provider's event id with no order in it: `evt_` and 24 hex digits."""
    return f"evt_{uuid.uuid4().hex[:24]}"


def fill_keys(url: str, sources: dict[int, str], bare_rows: int, per_tenant: int) -> None:
    """`per_tenant` random dedupe keys for each bench tenant (found through its source) and
    `bare_rows` random-keyed events (no payload) in the bare relay's table, then VACUUM
    ANALYZE both, as autovacuum leaves a table that has been filling for days."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for source_id in sources.values():
            (tenant_id,) = conn.execute(
                "SELECT tenant_id FROM sources WHERE id = %s", (source_id,)
            ).fetchone() or (None,)
            for start in range(0, per_tenant, FILL_STEP):
                conn.execute(
                    "INSERT INTO event_keys (tenant_id, origin, dedupe_key, event_id, created_at) "
                    "SELECT %s, %s, 'evt_' || left(md5(random()::text || n), 24), "
                    "'evt_filled' || n, now() - random() * interval '30 days' "
                    "FROM generate_series(%s, %s) AS n ON CONFLICT DO NOTHING",
                    (tenant_id, source_id, start, min(start + FILL_STEP, per_tenant) - 1),
                )
        for start in range(0, bare_rows, FILL_STEP):
            conn.execute(
                "INSERT INTO bare_events (id, tenant_id, type, payload, received_at) "
                "SELECT 'evt_' || left(md5(random()::text || n), 24), 'bench', "
                "'charge.succeeded', ''::bytea, now() - random() * interval '30 days' "
                "FROM generate_series(%s, %s) AS n ON CONFLICT DO NOTHING",
                (start, min(start + FILL_STEP, bare_rows) - 1),
            )
        conn.execute("VACUUM ANALYZE event_keys")
        conn.execute("VACUUM ANALYZE bare_events")
