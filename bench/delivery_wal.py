"""What a delivery's life costs Postgres under each shape of the delivery row: WAL bytes and
server CPU per delivery, the bare relay's row beside them in the same run.

Issue 24 sets Hookline's WAL per delivered event at most 2x the bare relay's; the pipeline
bench measures ~6x with ten endpoints, nearly all of it the delivery row and its indexes.
This bench isolates that part and measures the shapes the row could take, so a redesign is
chosen from figures. Each model lives through the same `--rows` deliveries (ten endpoints of
one tenant, ten deliveries per event), in statements of `--batch` rows, each autocommitted as
the Lambdas commit them:

* **create** — the delivery written as fan-out at receipt writes it (`queued`, leased);
* **claim** — deliver takes it (`delivering`, a new lease), where the model writes anything;
* **record** — the first attempt succeeded: `delivered`, and the attempt's row where the model
  keeps one.

Models:

* **bare relay** — the pipeline bench's `bare_deliveries` (bigserial key, event id, endpoint
  number, state): inserted, then marked delivered; no claim, no attempt row.
* **today** — a plain copy of `deliveries` (`LIKE … INCLUDING ALL`: its columns and all eight
  indexes, without partitions, foreign keys or triggers) and of `attempts`.
* **today, no endpoint index** / **today, no secondary full index** — the same without
  `(endpoint_id, created_at)`, and without it and `(tenant_id, id)` (the event index is gone
  since migration 0038, decision 0087).
* **today, no attempt row** — the first success kept on the delivery row alone.
* **narrow state** — the delivery row written once (ids, tenant, endpoint, deadline, ordering,
  with the three secondary indexes); its state, lease, counts and the partial indexes in a
  narrow table of their own, inserted beside it and updated by claim and record.
* **in-flight table** — the delivery row as today, but the claim writes a narrow in-flight row
  (id, endpoint, lease) instead of updating the delivery; the record deletes it and updates
  the delivery once.
* **floor** — not a design, a bound: the row written once with a primary key and the event's
  index, nothing written at the claim, the record an update of no indexed column (so a HOT
  update, the page kept 30 % free for it), no attempt row. What any design keeping a richer
  row than the bare relay's can hope for.

Before each model's pass its tables are made afresh and a checkpoint taken; the models take
turns, `--rounds` times; each cell is the median. `x bare` is the model's total WAL over the
bare relay's. Server CPU (the backend's, from /proc, 10 ms ticks) is printed when the server is
local. The event row (and its payload) is left out of every model: it is the same for all.

    .venv/bin/python bench/delivery_wal.py [--rows 20000] [--batch 10] [--rounds 2]

Postgres is `DATABASE_URL` if set (a fresh database), else a durable local server in a temp
dir. A benchmark, not a test: it prints a table and never fails on a figure.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from common import (
    backend_cpu_seconds,
    bench_database,
    machine_facts,
    print_table,
    quiet_environment,
    server_facts,
)

STEPS = ("create", "claim", "record")
ENDPOINTS = 10

ATTEMPT = (
    "INSERT INTO sim_attempts (delivery_id, duration_ms, status_code, response_excerpt, "
    "response_headers) SELECT id, 12, 200, '{\"ok\": true}', "
    '\'{"content-type": "application/json"}\' FROM sim_deliveries '
    "WHERE id BETWEEN %(lo)s AND %(hi)s"
)
TODAY_DDL = (
    "CREATE TABLE sim_deliveries (LIKE deliveries INCLUDING ALL)",
    "CREATE TABLE sim_attempts (LIKE attempts INCLUDING ALL)",
)
TODAY_CREATE = (
    "INSERT INTO sim_deliveries (id, event_id, endpoint_id, tenant_id, tenant_group, state, "
    "deadline_at, lease_expires_at) "
    "SELECT sim_id('dlv_', g), sim_id('evt_', g / 10), 'ep_' || (g %% 10), 'tn_bench', 'standard', "
    "'queued', now() + interval '3 days', now() + interval '5 minutes' "
    "FROM generate_series(%(first)s::bigint, %(last)s::bigint) g"
)
TODAY_CLAIM = (
    "UPDATE sim_deliveries SET state = 'delivering', lease_expires_at = now() + interval "
    "'5 minutes', updated_at = now() WHERE id BETWEEN %(lo)s AND %(hi)s"
)
TODAY_RECORD = (
    "UPDATE sim_deliveries SET state = 'delivered', attempt_count = attempt_count + 1, "
    "lease_expires_at = NULL, last_status = 200, finished_at = now(), updated_at = now() "
    "WHERE id BETWEEN %(lo)s AND %(hi)s"
)


@dataclass
class Model:
    """A shape of the delivery row: its tables, and each step's statements (none: nothing
    written at that step)."""

    name: str
    ddl: Sequence[str]
    steps: dict[str, Sequence[str]]
    wal: dict[str, list[float]] = field(default_factory=dict)
    cpu: dict[str, list[float]] = field(default_factory=dict)


def models() -> list[Model]:
    today = {"create": [TODAY_CREATE], "claim": [TODAY_CLAIM], "record": [TODAY_RECORD, ATTEMPT]}
    narrow_state = (
        'CREATE TABLE sim_states (id text COLLATE "C" PRIMARY KEY, endpoint_id text NOT NULL, '
        "state text NOT NULL, attempt_count integer NOT NULL DEFAULT 0, next_attempt_at "
        "timestamptz NOT NULL DEFAULT now(), lease_expires_at timestamptz, last_status integer, "
        "last_error text, updated_at timestamptz NOT NULL DEFAULT now(), finished_at "
        "timestamptz, enqueue_seq integer NOT NULL DEFAULT 0)"
    )
    return [
        Model(
            "bare relay",
            [
                "CREATE TABLE sim_bare (id bigserial PRIMARY KEY, event_id text NOT NULL, "
                "endpoint integer NOT NULL, state text NOT NULL DEFAULT 'pending', "
                "updated_at timestamptz NOT NULL DEFAULT now())"
            ],
            {
                "create": [
                    "INSERT INTO sim_bare (event_id, endpoint) SELECT sim_id('evt_', g / 10), "
                    "g %% 10 FROM generate_series(%(first)s::bigint, %(last)s::bigint) g"
                ],
                "record": [
                    "UPDATE sim_bare SET state = 'delivered', updated_at = now() "
                    "WHERE id BETWEEN %(first)s AND %(last)s"
                ],
            },
        ),
        Model("today", TODAY_DDL, today),
        Model(
            "today, no endpoint index",
            [*TODAY_DDL, "DROP INDEX sim_deliveries_endpoint_id_created_at_idx"],
            today,
        ),
        Model(
            "today, no secondary full index",
            [
                *TODAY_DDL,
                "DROP INDEX sim_deliveries_endpoint_id_created_at_idx",
                "DROP INDEX sim_deliveries_tenant_id_id_idx",
            ],
            today,
        ),
        Model("today, no attempt row", TODAY_DDL, {**today, "record": [TODAY_RECORD]}),
        Model(
            "narrow state",
            [
                'CREATE TABLE sim_deliveries (id text COLLATE "C" PRIMARY KEY, event_id text '
                'COLLATE "C" NOT NULL, endpoint_id text NOT NULL, tenant_id text NOT NULL, '
                "tenant_group text NOT NULL, deadline_at timestamptz NOT NULL, created_at "
                "timestamptz NOT NULL DEFAULT now(), ordering_key text, ordering_position bigint)",
                "CREATE INDEX ON sim_deliveries (event_id, endpoint_id)",
                "CREATE INDEX ON sim_deliveries (tenant_id, id)",
                "CREATE INDEX ON sim_deliveries (endpoint_id, created_at)",
                "CREATE TABLE sim_attempts (LIKE attempts INCLUDING ALL)",
                narrow_state,
                "CREATE INDEX ON sim_states (endpoint_id, lease_expires_at) "
                "WHERE state = 'delivering'",
                "CREATE INDEX ON sim_states (next_attempt_at) WHERE state = 'pending'",
                "CREATE INDEX ON sim_states (lease_expires_at) "
                "WHERE state IN ('queued', 'delivering')",
                "CREATE INDEX ON sim_states (state, updated_at) WHERE state IN ('failed', 'dead')",
            ],
            {
                "create": [
                    "INSERT INTO sim_deliveries (id, event_id, endpoint_id, tenant_id, "
                    "tenant_group, deadline_at) SELECT sim_id('dlv_', g), sim_id('evt_', g / 10), "
                    "'ep_' || (g %% 10), 'tn_bench', 'standard', now() + interval '3 days' "
                    "FROM generate_series(%(first)s::bigint, %(last)s::bigint) g",
                    "INSERT INTO sim_states (id, endpoint_id, state, lease_expires_at) "
                    "SELECT sim_id('dlv_', g), 'ep_' || (g %% 10), 'queued', now() + interval "
                    "'5 minutes' FROM generate_series(%(first)s::bigint, %(last)s::bigint) g",
                ],
                "claim": [TODAY_CLAIM.replace("sim_deliveries", "sim_states")],
                "record": [TODAY_RECORD.replace("sim_deliveries", "sim_states"), ATTEMPT],
            },
        ),
        Model(
            "in-flight table",
            [
                *TODAY_DDL,
                'CREATE TABLE sim_flight (id text COLLATE "C" PRIMARY KEY, '
                "endpoint_id text NOT NULL, lease_expires_at timestamptz NOT NULL)",
                "CREATE INDEX ON sim_flight (endpoint_id)",
            ],
            {
                "create": [TODAY_CREATE],
                "claim": [
                    "INSERT INTO sim_flight SELECT id, endpoint_id, now() + interval "
                    "'5 minutes' FROM sim_deliveries WHERE id BETWEEN %(lo)s AND %(hi)s"
                ],
                "record": [
                    "DELETE FROM sim_flight WHERE id BETWEEN %(lo)s AND %(hi)s",
                    TODAY_RECORD,
                    ATTEMPT,
                ],
            },
        ),
        *candidates(),
        Model(
            "floor: written once, recorded in place",
            [
                'CREATE TABLE sim_deliveries (id text COLLATE "C" PRIMARY KEY, event_id text '
                'COLLATE "C" NOT NULL, endpoint_id text NOT NULL, tenant_id text NOT NULL, '
                "tenant_group text NOT NULL, state text NOT NULL, attempt_count integer NOT NULL "
                "DEFAULT 0, deadline_at timestamptz NOT NULL, lease_expires_at timestamptz, "
                "last_status integer, created_at timestamptz NOT NULL DEFAULT now(), updated_at "
                "timestamptz NOT NULL DEFAULT now(), finished_at timestamptz) "
                "WITH (fillfactor = 70)",
                "CREATE INDEX ON sim_deliveries (event_id, endpoint_id)",
            ],
            {"create": [TODAY_CREATE], "record": [TODAY_RECORD]},
        ),
    ]


CANDIDATE_DELIVERIES = (
    'CREATE TABLE sim_deliveries (id text COLLATE "C" PRIMARY KEY, event_id text COLLATE "C" '
    "NOT NULL, endpoint_id text NOT NULL, tenant_id text NOT NULL, tenant_group text NOT NULL, "
    "state text NOT NULL, attempt_count integer NOT NULL DEFAULT 0, next_attempt_at timestamptz "
    "NOT NULL DEFAULT now(), lease_expires_at timestamptz, deadline_at timestamptz NOT NULL, "
    "last_status integer, last_error text, created_at timestamptz NOT NULL DEFAULT now(), "
    "updated_at timestamptz NOT NULL DEFAULT now(), finished_at timestamptz, enqueue_seq "
    "integer NOT NULL DEFAULT 0, ordering_key text, ordering_position bigint, first_duration_ms "
    "integer, first_excerpt text, first_headers jsonb) WITH (fillfactor = 70)"
)
CANDIDATE_RECORD = (
    "UPDATE sim_deliveries SET state = 'delivered', attempt_count = attempt_count + 1, "
    "lease_expires_at = NULL, last_status = 200, finished_at = now(), updated_at = now(), "
    "first_duration_ms = 12, first_excerpt = '{\"ok\": true}', "
    'first_headers = \'{"content-type": "application/json"}\' '
    "WHERE id BETWEEN %(lo)s AND %(hi)s"
)


def candidates() -> list[Model]:
    """The stages of decision 0085. Stage 1 (expand-only, a 1.x change): the claim's lease and
    slot in an UNLOGGED in-flight table (no WAL; emptied by a crash or fail-over) instead of an
    update of the delivery. Stage 2 (a 2.0 change): the delivery row written once with only
    immutable columns indexed, so the record is a HOT update that keeps the first attempt on
    the row; what reconcile sweeps either a narrow durable set of open deliveries (inserted at
    create, deleted when finished) or, with nothing written for it, a watermark reconcile
    moves over the ids once they are older than a lease."""
    flight = [
        'CREATE UNLOGGED TABLE sim_flight (id text COLLATE "C" PRIMARY KEY, '
        "endpoint_id text NOT NULL, lease_expires_at timestamptz NOT NULL)",
        "CREATE INDEX ON sim_flight (endpoint_id)",
    ]
    claim = [
        "INSERT INTO sim_flight SELECT id, endpoint_id, now() + interval '5 minutes' "
        "FROM sim_deliveries WHERE id BETWEEN %(lo)s AND %(hi)s"
    ]
    land = "DELETE FROM sim_flight WHERE id BETWEEN %(lo)s AND %(hi)s"
    shape = [
        CANDIDATE_DELIVERIES,
        "CREATE INDEX ON sim_deliveries (endpoint_id, created_at)",
        *flight,
    ]
    tenant_index = "CREATE INDEX ON sim_deliveries (tenant_id, id)"
    open_set = [
        'CREATE TABLE sim_states (id text COLLATE "C" PRIMARY KEY, due_at timestamptz NOT NULL)',
        "CREATE INDEX ON sim_states (due_at)",
    ]
    opened = (
        "INSERT INTO sim_states SELECT sim_id('dlv_', g), now() + interval '5 minutes' "
        "FROM generate_series(%(first)s::bigint, %(last)s::bigint) g"
    )
    closed = "DELETE FROM sim_states WHERE id BETWEEN %(lo)s AND %(hi)s"
    watermark = {"create": [TODAY_CREATE], "claim": claim, "record": [land, CANDIDATE_RECORD]}
    with_open_set = {
        "create": [TODAY_CREATE, opened],
        "claim": claim,
        "record": [land, closed, CANDIDATE_RECORD],
    }
    return [
        Model(
            "stage 1: claim in an unlogged in-flight table",
            [*TODAY_DDL, *flight],
            {"create": [TODAY_CREATE], "claim": claim, "record": [land, TODAY_RECORD, ATTEMPT]},
        ),
        Model("stage 2: HOT record, open set", [*shape, tenant_index, *open_set], with_open_set),
        Model(
            "stage 2, open set, logged in-flight table",
            [t.replace("UNLOGGED ", "") for t in [*shape, tenant_index, *open_set]],
            with_open_set,
        ),
        Model("stage 2: HOT record, watermark", [*shape, tenant_index], watermark),
        Model("stage 2, watermark, no tenant index", shape, watermark),
    ]


SIM_ID = (
    "CREATE FUNCTION sim_id(prefix text, n bigint) RETURNS text IMMUTABLE LANGUAGE sql "
    "AS $$ SELECT prefix || lpad(n::text, 28, '0') $$"
)
DROP = "DROP TABLE IF EXISTS sim_bare, sim_deliveries, sim_attempts, sim_states, sim_flight"


def wal_position(conn: Any) -> int:
    row = conn.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint").fetchone()
    return int(row[0])


def one_pass(conn: Any, model: Model, rows: int, batch: int) -> None:
    """Make the model's tables afresh, checkpoint, then live every delivery through the steps,
    step by step, `batch` rows per autocommitted statement."""
    conn.execute(DROP)
    for statement in model.ddl:
        conn.execute(statement)
    conn.execute("CHECKPOINT")
    for step in STEPS:
        statements = model.steps.get(step, ())
        wal0, cpu0 = wal_position(conn), backend_cpu_seconds(conn)
        for first in range(1, rows + 1, batch):
            last = min(first + batch - 1, rows)
            params = {"first": first, "last": last,
                      "lo": f"dlv_{first:028d}", "hi": f"dlv_{last:028d}"}  # fmt: skip
            for statement in statements:
                conn.execute(statement, params)
        wal1, cpu1 = wal_position(conn), backend_cpu_seconds(conn)
        model.wal.setdefault(step, []).append((wal1 - wal0) / rows)
        if cpu0 is not None and cpu1 is not None:
            model.cpu.setdefault(step, []).append((cpu1 - cpu0) * 1e6 / rows)


def report(all_models: list[Model]) -> None:
    def total(model: Model, meter: str) -> float | None:
        values = getattr(model, meter)
        if not values:
            return None
        return sum(statistics.median(values[s]) for s in STEPS if s in values)

    bare_wal = total(all_models[0], "wal") or 1.0
    bare_cpu = total(all_models[0], "cpu")
    table = []
    for model in all_models:
        wal = total(model, "wal") or 0.0
        cpu = total(model, "cpu")
        cells = [f"{statistics.median(model.wal[s]):,.0f}" for s in STEPS]
        table.append([
            model.name, *cells, f"{wal:,.0f}", f"{wal / bare_wal:.2f}",
            "-" if cpu is None else f"{cpu:,.0f}",
            "-" if cpu is None or not bare_cpu else f"{cpu / bare_cpu:.2f}",
        ])  # fmt: skip
    print_table(
        ["model", "create WAL B", "claim WAL B", "record WAL B", "WAL B/delivery", "x bare",
         "server CPU µs/delivery", "x bare CPU"],
        table,
    )  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20000, help="deliveries per pass")
    parser.add_argument("--batch", type=int, default=10, help="rows per statement")
    parser.add_argument("--rounds", type=int, default=2, help="passes per model")
    args = parser.parse_args(argv)
    quiet_environment()
    import psycopg

    with bench_database("delivery_wal") as (url, where):
        print(f"Postgres: {where}; {server_facts(url)}", file=sys.stderr)
        print(f"machine: {machine_facts()}", file=sys.stderr)
        all_models = models()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(SIM_ID)
            for _ in range(args.rounds):
                for model in all_models:
                    one_pass(conn, model, args.rows, args.batch)
            conn.execute(DROP)
        print(f"{args.rows} deliveries to {ENDPOINTS} endpoints per pass, {args.batch} rows per "
              f"statement, median of {args.rounds} passes per model")  # fmt: skip
        report(all_models)
    return 0


if __name__ == "__main__":
    sys.exit(main())
