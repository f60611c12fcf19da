"""No hot-path statement pins an RDS Proxy session (decision 0036).

RDS Proxy multiplexes client connections over a few database connections at transaction
boundaries, and stops doing so for the rest of a session ("pins" it) when it sees session
state change: SET and set_config, named prepared statements (PREPARE/EXECUTE, and the ones a
driver prepares by itself), advisory locks, LISTEN, temporary objects, cursors, DISCARD,
LOAD, sequence functions. This test runs the hot paths as configured behind the proxy —
the receiver's accept, fan-out, and delivery with a success, a retry and a deferral — with
`log_statement = all` on the test's database, and reads every statement from the server log.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import boto3
import psycopg
import pytest
from psycopg import sql

import hookline
from hookline.archive import S3Archive
from hookline.config import HooklineConfig
from hookline.db import Database, StaticCredentials
from hookline.retention import RetentionPolicy, apply_retention
from hookline.settings import get_settings
from tests.integration.conftest import STRIPE_SECRET
from tests.support import operator
from tests.support.lambdas import ApiClient
from tests.support.signers import stripe_event, stripe_headers

pytestmark = pytest.mark.integration

PREFIX = "%m [%p] db=%d "
_ENTRY = re.compile(r"^\d{4}-\d\d-\d\d [\d:.]+ \S+ \[\d+\] db=(\S*) ", re.MULTILINE)
_STATEMENT = re.compile(r"LOG:\s+(statement|execute [^:]+):\s(.*)", re.DOTALL)
# What RDS Proxy's documentation lists as pinning a PostgreSQL session.
PINNING = [
    re.compile(r"^\s*(SET|RESET|PREPARE|EXECUTE|DEALLOCATE|DISCARD|LISTEN|LOAD|DECLARE)\b", re.I),
    re.compile(r"\bset_config\s*\(", re.I),
    re.compile(r"\bCREATE\s+(TEMP|TEMPORARY)\b", re.I),
    re.compile(r"\bpg_(try_)?advisory_lock(_shared)?\s*\(", re.I),
    re.compile(r"\b(nextval|setval|currval|lastval)\s*\(", re.I),
]


def logged_statements(log: Path, start: int, dbname: str) -> list[tuple[str, str]]:
    """(kind, text) of every statement the server logged for `dbname` after `start`."""
    with log.open("rb") as f:
        f.seek(start)
        text = f.read().decode("utf-8", "replace")
    bounds = [(m.start(), m.end(), m.group(1)) for m in _ENTRY.finditer(text)]
    found = []
    for i, (_, body_start, db) in enumerate(bounds):
        end = bounds[i + 1][0] if i + 1 < len(bounds) else len(text)
        match = _STATEMENT.match(text[body_start:end])
        if db == dbname and match:
            found.append((match.group(1), match.group(2).strip()))
    return found


def pinning(kind: str, statement: str) -> bool:
    """Whether RDS Proxy would pin the session for this logged statement."""
    if kind.startswith("execute ") and kind != "execute <unnamed>":
        return True  # a named prepared statement
    return any(p.search(statement) for p in PINNING)


@pytest.fixture
def statement_log(pg_admin_url: str, database_url: str) -> Iterator[Callable[[], list]]:
    """Every statement run on this test's database from now on, read from the server log."""
    dbname = str(psycopg.conninfo.conninfo_to_dict(database_url)["dbname"])
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT rolsuper, current_setting('data_directory') FROM pg_roles"
            " WHERE rolname = current_user"
        ).fetchone()
        log = Path(str(row[1])) / "server.log" if row else Path("/nonexistent")
        if not row or not row[0] or not log.exists():
            pytest.skip("needs the tests' own Postgres server (superuser, its server.log)")
        conn.execute(sql.SQL("ALTER SYSTEM SET log_line_prefix = {}").format(PREFIX))
        conn.execute("SELECT pg_reload_conf()")
        conn.execute(
            sql.SQL("ALTER DATABASE {} SET log_statement = 'all'").format(sql.Identifier(dbname))
        )
    start = log.stat().st_size
    try:
        yield lambda: logged_statements(log, start, dbname)
    finally:
        with psycopg.connect(pg_admin_url, autocommit=True) as conn:
            conn.execute("ALTER SYSTEM RESET log_line_prefix")
            conn.execute("SELECT pg_reload_conf()")


def test_the_hot_paths_behind_the_proxy_send_no_pinning_statement(
    make_pipeline, db, sink, statement_log, monkeypatch
):
    # Given the functions configured as behind RDS Proxy, and their hot paths' objects
    monkeypatch.setenv("HOOKLINE_DATABASE_PROXIED", "true")
    pipeline = make_pipeline()
    settings = get_settings()
    assert settings.database_proxied
    tenant = operator.add_tenant(db, HooklineConfig(), name="t", group="standard")["id"]
    source = operator.add_source(db, tenant_id=tenant, scheme="stripe", secrets=[STRIPE_SECRET])
    operator.add_endpoint(
        db, settings, tenant_id=tenant, url=sink.url("/ok"), event_types=["payment_intent.*"]
    )
    sink.behave("/flaky", statuses=[500, 200])
    operator.add_endpoint(
        db, settings, tenant_id=tenant, url=sink.url("/flaky"), event_types=["payment_intent.*"]
    )
    busy = operator.add_endpoint(
        db, settings, tenant_id=tenant, url=sink.url("/busy"), event_types=["order.*"],
        max_concurrency=1,
    )  # fmt: skip
    pipeline.hold_slot(busy, seconds=2)
    with db.connection() as conn, conn.transaction():
        hookline.publish(conn, tenant_id=tenant, type="order.created", payload={})
    from functions.receiver.handler import lambda_handler as receiver

    api = ApiClient(receiver)
    # When providers post events (more than psycopg's automatic-prepare threshold of 5), and
    # fan-out and delivery run until everything is delivered: one retry, one deferral
    for i in range(8):
        body = stripe_event(f"evt_pin_{i}")
        result = api.post(source["path"], headers=stripe_headers(STRIPE_SECRET, body), body=body)
        assert result.status == 200
    pipeline.run_until(lambda: pipeline.states().get("delivered") == 17, timeout=30)
    # Then every statement they sent is on the log, and none of them pins the session
    statements = statement_log()
    texts = " ".join(text for _, text in statements)
    # (the fan-out round and the batch claim and records are PL/pgSQL functions: migrations
    # 0022 and 0048; the flaky endpoint's 500 goes through the failures' record)
    hot = ("INSERT INTO events", "hookline_fan_out_round", "hookline_claim_batch",
           "hookline_record_batch_delivered", "hookline_record_batch_failed")  # fmt: skip
    for name in hot:
        assert name in texts, name
    pins = [(kind, text[:120]) for kind, text in statements if pinning(kind, text)]
    assert pins == []
    # And the claims still commit without waiting for the disk: the set_config doing it runs
    # inside hookline_claim_batch (or its copy for the day's partition, decision 0084), which
    # the proxy never sees (decision 0081)
    claims = [
        text for _, text in statements if re.search(r"hookline_claim_batch(_d\d{8})?\(", text)
    ]
    assert claims and all(re.search(r"double precision,\s*false\)", c) for c in claims), claims


def test_retention_behind_the_proxy_sends_no_pinning_statement(
    pipeline, db, sink, database_url, moto_endpoint, statement_log, now
):
    # Given a delivered event, and retention on a pool configured as behind RDS Proxy
    tenant = operator.add_tenant(db, HooklineConfig(), name="t", group="standard")["id"]
    operator.add_endpoint(db, get_settings(), tenant_id=tenant, url=sink.url("/ok"))
    with db.connection() as conn, conn.transaction():
        hookline.publish(conn, tenant_id=tenant, type="order.created", payload={})
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    s3 = boto3.client(
        "s3", endpoint_url=moto_endpoint, region_name="us-east-1",
        aws_access_key_id="testing", aws_secret_access_key="testing",
    )  # fmt: skip
    s3.create_bucket(Bucket=(bucket := f"pin-{tenant.lower()[-12:]}"))
    proxied = Database(StaticCredentials(database_url, proxied=True), max_size=2)
    # When it archives and drops the day, its partitions made ahead (more than psycopg's
    # automatic-prepare threshold of 5 statements each)
    try:
        report = apply_retention(
            proxied, S3Archive(s3, bucket), RetentionPolicy(), as_of=now + timedelta(days=91)
        )
    finally:
        proxied.close()
    assert now.date().isoformat() in report.days_dropped, report.errors
    # Then its lock wait, its locks and its selection were sent, and nothing it sent pins the
    # session: the lock wait's set_config runs inside hookline_set_lock_wait (migration 0054),
    # and the selection is streamed, not read through a cursor it DECLAREs (decision 0117)
    statements = statement_log()
    texts = " ".join(text for _, text in statements)
    assert "hookline_set_lock_wait" in texts and "hookline_lock_hot_parents" in texts
    assert "AS delivery_ids" in texts  # the archive selection
    assert [(kind, text[:120]) for kind, text in statements if pinning(kind, text)] == []
