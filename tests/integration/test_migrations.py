"""Migrations give the schema the code expects, and are safe to run twice or at once."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest
from psycopg import sql

from hookline.migrate import available_migrations, current_version, migrate
from hookline.sqlfiles import queries
from tests.support import operator

pytestmark = pytest.mark.integration

EXPECTED_TABLES = {
    "tenants", "sources", "endpoints", "endpoint_secrets", "events", "outbox",
    "deliveries", "attempts", "audit_log", "schema_migrations",
}  # fmt: skip


@pytest.fixture
def empty_db(pg_admin_url):
    name = "hookline_empty_migrate"
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    yield psycopg.conninfo.make_conninfo(pg_admin_url, dbname=name)
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


def test_concurrent_migrators_apply_each_migration_once(empty_db):
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: migrate(empty_db), range(4)))
    versions = [m.version for m in available_migrations()]
    assert sorted(v for r in results for v in r) == versions
    assert current_version(empty_db) == versions[-1]
    assert migrate(empty_db) == []


def test_the_schema_has_every_domain_table(database_url):
    with psycopg.connect(database_url) as conn:
        tables = {
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
            )
        }
    assert tables >= EXPECTED_TABLES


def test_every_named_query_is_valid_sql_against_the_migrated_schema(database_url):
    # PREPARE parses and plans each statement: a column or table the schema lacks fails here.
    with psycopg.connect(database_url, autocommit=True) as conn:
        for name, statement in queries().items():
            placeholders = statement.replace("%%", "%")
            import re

            # psycopg's placeholders: %(name)s, or %(name)b / %(name)t for a binary or text
            # parameter
            params = sorted(set(re.findall(r"%\((\w+)\)[sbt]", placeholders)))
            numbered = placeholders
            for i, p in enumerate(params, start=1):
                numbered = re.sub(rf"%\({p}\)[sbt]", f"${i}", numbered)
            conn.execute(f"PREPARE q_{name} AS {numbered}".encode())
            conn.execute(f"DEALLOCATE q_{name}".encode())


def test_the_ledger_refuses_updates(database_url, db, tenant):
    import hookline

    with psycopg.connect(database_url) as conn, conn.transaction():
        hookline.publish(conn, tenant_id=tenant["id"], type="a", payload={})
    with psycopg.connect(database_url) as conn, pytest.raises(psycopg.errors.RestrictViolation):
        conn.execute("UPDATE events SET type = 'b'")


def _fan_out_round_inline() -> str:
    """hookline_fan_out_round's body (migration 0022) as one statement of before 0011: its
    parameters as placeholders, a random delivery id and the old (event, endpoint) constraint,
    no content filters (0014)."""
    from pathlib import Path

    text = (
        Path(__file__).resolve().parents[2]
        / "layers/core/hookline/migrations/0022_hot_path_functions.sql"
    ).read_text()
    body = text.split("RETURN QUERY", 1)[1].split(";\nEND $$;", 1)[0]
    for name in ("limit", "deadline", "lease", "due_limit"):
        body = body.replace(f"p_{name}", f"%({name})s")
    return (
        body.replace("hookline_delivery_id(e.id, p.id)", "hookline_id('dlv')")
        .replace(
            "ON CONFLICT (id) DO NOTHING",
            "ON CONFLICT ON CONSTRAINT deliveries_event_endpoint DO NOTHING",
        )
        .replace("AND p.content_filter IS NOT NULL", "AND false")
    )


def _not_yet(*_args: object, **_kwargs: object) -> None:
    raise RuntimeError("the batch statements' functions come with migration 0022")


def _statements_before_partitioning() -> dict[str, str]:
    """The named queries as they were before migration 0011 (from git history): the pipeline
    that filled a database of that version."""
    import subprocess
    from pathlib import Path

    from hookline.sqlfiles import parse_queries

    root = Path(__file__).resolve().parents[2]
    sql_dir = "layers/core/hookline/sql"
    try:
        added = subprocess.run(
            ["git", "log", "--diff-filter=A", "--format=%H", "--",
             "layers/core/hookline/migrations/0011_partitioned_ledger.sql"],
            cwd=root, capture_output=True, text=True, check=True,
        ).stdout.split()[-1]  # fmt: skip
        names = subprocess.run(
            ["git", "ls-tree", "--name-only", f"{added}^", f"{sql_dir}/"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        found: dict[str, str] = {}
        for name in names:
            if name.endswith(".sql"):
                text = subprocess.run(
                    ["git", "show", f"{added}^:{name}"],
                    cwd=root,
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
                found.update(parse_queries(text))
    except (OSError, IndexError, subprocess.CalledProcessError):
        pytest.skip("needs the git history of the statements before migration 0011")
    return found


def _schema(conninfo: str) -> set[tuple]:
    """Tables (and partitioned tables), columns, indexes and constraints: the shape of a schema."""
    with psycopg.connect(conninfo) as conn:
        columns = conn.execute(
            "SELECT table_name, column_name, data_type, is_nullable, collation_name"
            " FROM information_schema.columns WHERE table_schema = 'public'"
            " AND table_name NOT LIKE '%%\\_d2_______'"
        ).fetchall()
        indexes = conn.execute(
            "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'"
            " AND tablename NOT LIKE '%%\\_d2_______'"
        ).fetchall()
        constraints = conn.execute(
            "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint"
            " WHERE connamespace = 'public'::regnamespace"
            " AND conrelid::regclass::text NOT LIKE '%%\\_d2_______'"
        ).fetchall()
    return (
        {("c", *c) for c in columns}
        | {("i", *i) for i in indexes}
        | {("k", *k) for k in constraints}
    )


def test_a_database_full_of_pipeline_data_converts_to_partitions_without_losing_a_row(
    pg_admin_url, empty_db, make_pipeline, sink, monkeypatch
):
    # Given a database at the version before partitioning, filled through the real pipeline
    import hookline
    from hookline.config import HooklineConfig
    from hookline.db import Database
    from hookline.settings import get_settings

    before = [m for m in available_migrations() if m.version < 11]
    monkeypatch.setattr("hookline.migrate.available_migrations", lambda: before)
    migrate(empty_db)
    monkeypatch.undo()
    db = Database(empty_db, max_size=8, timeout=5)
    from hookline.db import reset_database
    from tests.support.pipeline import Pipeline

    old_statements = _statements_before_partitioning()
    # The hot path's functions (migration 0022) came after partitioning: the fan-out round runs
    # as its inline body, and each deliver batch falls back to the per-message claim and record
    old_statements["fan_out_and_claim"] = _fan_out_round_inline()
    # Statements added since, in the form they would have had before partitioning: a random
    # delivery id, and the (event, endpoint) constraint the migration replaced
    for name, text in queries().items():
        old_statements.setdefault(
            name,
            text.replace("hookline_delivery_id(e.id, p.id)", "hookline_id('dlv')")
            .replace(
                "ON CONFLICT (id) DO NOTHING",
                "ON CONFLICT ON CONSTRAINT deliveries_event_endpoint DO NOTHING",
            )
            .replace("AND p.content_filter IS NOT NULL", "AND false"),  # no filters before 0014
        )
    made = make_pipeline()  # the environment of the pipeline, pointed at this database
    monkeypatch.setenv("DATABASE_URL", empty_db)
    reset_database()
    try:
        monkeypatch.setattr("hookline.sqlfiles.queries", lambda: old_statements)
        # Content filters came after partitioning (0014): that pass has nothing to do here
        monkeypatch.setattr("hookline.fanout.repo.fan_out_batch", lambda conn, **_: (0, 0))
        monkeypatch.setattr("hookline.delivery_batch.claim_batch_to_send", _not_yet)
        monkeypatch.setattr("hookline.delivery_batch.record_batch_delivered", _not_yet)
        t = operator.add_tenant(db, HooklineConfig(), name="old", group="standard")["id"]
        operator.add_endpoint(db, get_settings(), tenant_id=t, url=sink.url("/a"))
        operator.add_endpoint(db, get_settings(), tenant_id=t, url=sink.url("/b"))
        with db.connection() as conn, conn.transaction():
            ids = [hookline.publish(conn, tenant_id=t, type="x", payload={"n": i},
                                    idempotency_key=f"k{i}").id for i in range(20)]  # fmt: skip
        pipeline = Pipeline(db, made.sqs, made.config)
        for _ in range(10):
            pipeline.fanout()
        pipeline.run_until(lambda: pipeline.states().get("delivered") == 40)
        with db.connection() as conn:
            counts = {
                table: conn.execute(f"SELECT count(*) AS n FROM {table}").fetchone()["n"]
                for table in ("events", "outbox", "deliveries", "attempts")
            }
            snapshot = conn.execute(
                "SELECT d.id, d.state, d.event_id, e.payload FROM deliveries d"
                " JOIN events e ON e.id = d.event_id ORDER BY d.id"
            ).fetchall()
        assert counts == {"events": 20, "outbox": 20, "deliveries": 40, "attempts": 40}
        monkeypatch.setattr("hookline.sqlfiles.queries", queries)
        # When the partitioning migration runs
        assert migrate(empty_db) == [m.version for m in available_migrations() if m.version >= 11]
        # Then every row is still there, with the same ids (the webhook-ids) and states
        with db.connection() as conn:
            after = {
                table: conn.execute(f"SELECT count(*) AS n FROM {table}").fetchone()["n"]
                for table in ("events", "outbox", "deliveries", "attempts")
            }
            assert after == counts
            assert (
                conn.execute(
                    "SELECT d.id, d.state, d.event_id, e.payload FROM deliveries d"
                    " JOIN events e ON e.id = d.event_id ORDER BY d.id"
                ).fetchall()
                == snapshot
            )
            # the events are in their day partition; the old-format delivery ids in the default
            assert conn.execute("SELECT count(*) AS n FROM events_default").fetchone()["n"] == 0
            parts = conn.execute(
                "SELECT count(*) AS n FROM pg_inherits WHERE inhparent = 'events'::regclass"
            ).fetchone()["n"]
            assert parts >= 9  # today, a week ahead, and the default
        # And a duplicate of an old event is still answered with its original id
        with db.connection() as conn, conn.transaction():
            again = hookline.publish(conn, tenant_id=t, type="x", payload={}, idempotency_key="k3")
        assert again.duplicate and again.id == ids[3]
    finally:
        db.close()
    # And the converted schema is the schema a fresh database gets
    fresh = psycopg.conninfo.make_conninfo(pg_admin_url, dbname="hookline_fresh_schema")
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS hookline_fresh_schema WITH (FORCE)")
        conn.execute("CREATE DATABASE hookline_fresh_schema")
    try:
        migrate(fresh)
        assert _schema(empty_db) == _schema(fresh)
    finally:
        with psycopg.connect(pg_admin_url, autocommit=True) as conn:
            conn.execute("DROP DATABASE hookline_fresh_schema WITH (FORCE)")


# SQL functions the planner cannot inline, each called off the hot path. Any other runs as a
# function call that is planned again in every transaction: declared IMMUTABLE over a STABLE
# body (`convert_to`, `now()`), it cost a receipt ~70 µs of server CPU (decision 0113).
NOT_INLINED = {
    "hookline_delivery_columns": "a migration's helper that builds day partitions",
    "hookline_delivery_markers": "returns a record; only triggers whose WHEN skips the hot path",
    "hookline_lease_floor": "reads reconcile_positions, once a reconcile statement",
    "hookline_shown_state": "reads the in-flight table, per delivery an API list shows",
    "hookline_type_matches": "a sub-select over the patterns; reconcile, replay, quarantine",
}


def test_the_schemas_sql_functions_are_inlined_into_their_callers(database_url):
    # Given every SQL-language function of the schema, called on columns (constants would be
    # folded into the plan whether or not the function is inlined)
    types = {"text": "t", "timestamp with time zone": "ts", "interval": "i", "bigint": "b",
             "integer": "n", "boolean": "bo", "text[]": "ta", "deliveries": "d"}  # fmt: skip
    called = {}
    with psycopg.connect(database_url, autocommit=True) as conn, conn.transaction():
        conn.execute(
            "CREATE TEMP TABLE a (t text, ts timestamptz, i interval, b bigint, n int,"
            " bo boolean, ta text[]) ON COMMIT DROP"
        )
        functions = conn.execute(
            "SELECT p.proname, p.proretset, p.proargtypes::regtype[]::text[]"
            " FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang"
            " WHERE l.lanname = 'sql' AND p.proname LIKE 'hookline%'"
        ).fetchall()
        assert len(functions) >= 15
        for name, returns_set, arg_types in functions:
            args = ", ".join("d" if t == "deliveries" else f"a.{types[t]}" for t in arg_types)
            source = "a, deliveries d" if "deliveries" in arg_types else "a"
            statement = (
                f"SELECT * FROM {source}, LATERAL {name}({args}) f"
                if returns_set
                else f"SELECT {name}({args}) FROM {source}"
            )
            plan = "\n".join(r[0] for r in conn.execute(f"EXPLAIN VERBOSE {statement}".encode()))
            called[name] = f"{name}(" in plan
    # Then only those named above are called as functions; the rest are inlined
    assert {name for name, is_called in called.items() if is_called} == set(NOT_INLINED)
