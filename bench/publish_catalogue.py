"""What the event-type catalogue costs a publish (docs/decisions/0015).

One connection, each publish in its own committed transaction, as `POST /v1/events` does:

* ``ledger only``        — `store_event` alone: what publish wrote before the catalogue;
* ``not catalogued``     — `publish` of a type the tenant has not catalogued (the lookup
  finds nothing: the cost every tenant pays);
* ``catalogued, schema`` — `publish` of a type with a schema (lookup + cached validator);
* ``schema w/ patterns`` — the same with `pattern`, `patternProperties` and
  `additionalProperties: false` (the regular-expression engine's cost, decision 0023);
* ``lookup alone``       — the catalogue query by itself, no insert.

Run: `.venv/bin/python bench/publish_catalogue.py [N]` (DATABASE_URL, or a local durable
Postgres is started).
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable

from common import bench_database, quiet_environment

quiet_environment()

SCHEMA = {
    "type": "object",
    "properties": {
        "amount": {"type": "integer", "minimum": 0},
        "currency": {"type": "string", "enum": ["EUR", "USD"]},
    },
    "required": ["amount", "currency"],
}
PATTERN_SCHEMA = {
    "type": "object",
    "properties": {
        "amount": {"type": "integer", "minimum": 0},
        "currency": {"type": "string", "pattern": "^[A-Z]{3}$"},
        "customer": {"type": "string", "pattern": "^cus_[A-Za-z0-9]+$"},
        "lines": {"type": "array"},
    },
    "patternProperties": {"^x-": {"type": "string"}},
    "additionalProperties": False,
    "required": ["amount", "currency"],
}
PAYLOAD = {"amount": 1200, "currency": "EUR", "customer": "cus_123", "lines": [{"sku": "a"}]}


def timed(n: int, call: Callable[[], object]) -> list[float]:
    """Per-call wall times in microseconds."""
    out = []
    for _ in range(n):
        start = time.perf_counter()
        call()
        out.append((time.perf_counter() - start) * 1e6)
    return out


def main() -> None:
    import psycopg
    from psycopg.rows import dict_row

    from hookline.ids import new_id
    from hookline.ingest import encode_payload, publish
    from hookline.repositories import event_types as repo
    from hookline.repositories.ledger import NewEvent, store_event
    from hookline.settings import get_settings

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    with (
        bench_database("catalogue") as (url, where),
        psycopg.connect(url, row_factory=dict_row, autocommit=True) as conn,
    ):
        conn.execute("INSERT INTO tenants (id, name) VALUES ('ten_b', 'bench')")
        conn.execute(
            "INSERT INTO event_types (id, tenant_id, name, schema) "
            "VALUES ('ety_b', 'ten_b', 'invoice.paid', %s)",
            (psycopg.types.json.Jsonb(SCHEMA),),
        )
        conn.execute(
            "INSERT INTO event_types (id, tenant_id, name, schema) "
            "VALUES ('ety_p', 'ten_b', 'invoice.sent', %s)",
            (psycopg.types.json.Jsonb(PATTERN_SCHEMA),),
        )
        body = encode_payload(PAYLOAD)
        settings = get_settings()

        def ledger_only() -> None:
            with conn.transaction():
                store_event(
                    conn,
                    NewEvent(
                        tenant_id="ten_b",
                        origin="publish",
                        type="order.created",
                        dedupe_key=f"auto:{new_id('pub')}",
                        payload=body,
                    ),
                )

        def uncatalogued() -> None:
            with conn.transaction():
                publish(
                    conn,
                    tenant_id="ten_b",
                    type="order.created",
                    payload=PAYLOAD,
                    settings=settings,
                )

        def with_schema() -> None:
            with conn.transaction():
                publish(
                    conn, tenant_id="ten_b", type="invoice.paid", payload=PAYLOAD, settings=settings
                )

        def with_patterns() -> None:
            with conn.transaction():
                publish(
                    conn, tenant_id="ten_b", type="invoice.sent", payload=PAYLOAD, settings=settings
                )

        def lookup() -> None:
            repo.schema_version(conn, "ten_b", "order.created")

        contenders = [
            ("ledger only", ledger_only),
            ("not catalogued", uncatalogued),
            ("catalogued, schema", with_schema),
            ("schema w/ patterns", with_patterns),
            ("lookup alone", lookup),
        ]
        for _, call in contenders:  # warm up: prepared statements, validator cache
            timed(50, call)
        print(f"Postgres: {where}; {n} calls each, one connection, commit per publish")
        print(f"{'contender':<20} {'median µs':>10} {'p95 µs':>10} {'per s':>8}")
        # Interleaved in rounds, so that load from elsewhere on the machine hits every
        # contender alike.
        times: dict[str, list[float]] = {label: [] for label, _ in contenders}
        for _ in range(max(1, n // 100)):
            for label, call in contenders:
                times[label] += timed(100, call)
        for label, _ in contenders:
            median = statistics.median(times[label])
            p95 = statistics.quantiles(times[label], n=20)[-1]
            print(f"{label:<20} {median:>10.0f} {p95:>10.0f} {1e6 / median:>8.0f}")


if __name__ == "__main__":
    main()
