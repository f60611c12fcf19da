"""Retention on real Postgres and moto S3: day partitions made ahead, expired days archived and
dropped whole, shorter tenant retention deleted set-based, nothing unfinished removed, an
archive that fails keeps the rows, and dedupe that outlives the archived event."""

from __future__ import annotations

import base64
import re
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta

import boto3
import psycopg
import pytest

import hookline
from hookline.archive import S3Archive, decode_lines
from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.ids import ulid_time
from hookline.retention import RetentionPolicy, apply_retention, ensure_partitions
from hookline.settings import get_settings
from tests.support import operator

pytestmark = pytest.mark.integration

LATER = timedelta(days=91)  # today's partition is past the 90-day default then


class Bucket:
    def __init__(self, client, name):
        self.client, self.name = client, name

    def store(self):
        return S3Archive(self.client, self.name)


@pytest.fixture
def s3(moto_endpoint):
    # Its own bucket (not a moto reset, which would drop the pipeline's queues)
    client = boto3.client(
        "s3", endpoint_url=moto_endpoint, region_name="us-east-1",
        aws_access_key_id="testing", aws_secret_access_key="testing",
    )  # fmt: skip
    name = f"archive-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=name)
    return Bucket(client, name)


def tenant(db: Database, name: str = "acme") -> str:
    return operator.add_tenant(db, HooklineConfig(), name=name, group="standard")["id"]


def publish(db: Database, tenant_id: str, payload: object, key: str | None = None):
    with db.connection() as conn, conn.transaction():
        return hookline.publish(
            conn, tenant_id=tenant_id, type="order.created", payload=payload, idempotency_key=key
        )


def count(db: Database, sql: str, *params: object) -> int:
    with db.connection() as conn:
        row = conn.execute(sql, params).fetchone()
    return int(next(iter(row.values())))


def archived(s3: Bucket) -> list[dict]:
    store = s3.store()
    return [r for k in store.keys("ledger/") for r in decode_lines(store.get(k))]


def test_partitions_are_made_ahead_and_events_land_in_their_day(db, now):
    # When partitions are ensured a week ahead
    ensure_partitions(db, as_of=now, ahead_days=7)
    with db.connection() as conn:
        days = {r["day"] for r in conn.execute("SELECT day FROM hookline_day_partitions")}
        tables = {
            r["t"]
            for r in conn.execute("SELECT DISTINCT table_name AS t FROM hookline_day_partitions")
        }
    # Then every hot table has a partition for each day through a week from now
    assert {(now + timedelta(days=d)).date() for d in range(8)} <= days
    assert tables == {"events", "outbox", "deliveries", "attempts"}
    # And a published event is stored in today's partition, not the default one
    event = publish(db, tenant(db), {"n": 1})
    assert count(db, "SELECT count(*) FROM events_default") == 0
    table = f"events_d{now:%Y%m%d}"
    assert count(db, f"SELECT count(*) FROM {table} WHERE id = %s", event.id) == 1


def test_a_new_days_attempts_begin_unsummarised_and_are_found_by_time(db, now):
    # Given a day's partitions made ahead (three weeks out: no template made them)
    day = (now + timedelta(days=21)).date()
    with db.connection() as conn:
        conn.execute("SELECT hookline_create_day_partitions(%s)", (day,))
        brin = conn.execute(
            "SELECT i.indexrelid::regclass::text AS name FROM pg_index i "
            "JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam "
            "WHERE i.indrelid = %s::regclass AND a.amname = 'brin'",
            (f"attempts_d{day:%Y%m%d}",),
        ).fetchone()["name"]
        # When attempts of that day's deliveries are recorded
        conn.execute(
            "INSERT INTO attempts (delivery_id, attempted_at, duration_ms, status_code) "
            "SELECT %s || lpad(g::text, 16, '0'), now(), 5, 200 FROM generate_series(1, 50) g",
            (f"dlv_{ulid_time(datetime.combine(day, datetime.min.time(), UTC))}",),
        )
        # Then a scan by time through the index still finds every one of them
        conn.execute("SET enable_seqscan = off")
        found = conn.execute(
            "SELECT count(*) AS n FROM attempts WHERE attempted_at >= now() - interval '1 hour'"
        ).fetchone()["n"]
        conn.execute("RESET enable_seqscan")
        # And the index kept no summary of its first block range for inserts to update (the
        # 70 B of WAL each attempt of the day's first megabyte wrote): summarising it now
        # finds one range to summarise
        summarised = conn.execute("SELECT brin_summarize_range(%s, 0) AS n", (brin,)).fetchone()
    assert found == 50
    assert summarised["n"] == 1


def test_two_makers_of_the_same_days_partitions_at_once_both_succeed(database_url, now):
    # Given two processes (each its own pool) ensuring the same fresh days at the same moment
    pools = [Database(database_url, max_size=2) for _ in range(2)]
    start = threading.Barrier(2)
    made: list[int] = []
    failures: list[BaseException] = []

    def run(pool: Database, as_of: datetime) -> None:
        start.wait()
        try:
            made.append(ensure_partitions(pool, as_of=as_of, ahead_days=6))
        except BaseException as err:
            failures.append(err)

    try:
        for week in range(1, 6):
            as_of = now + timedelta(days=30 * week)
            threads = [threading.Thread(target=run, args=(p, as_of)) for p in pools]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            start.reset()
    finally:
        for pool in pools:
            pool.close()
    # Then neither failed (no DuplicateTable), and each partition was made once
    assert failures == []
    assert sum(made) == 5 * 8 * 4  # 5 rounds x 8 days x 4 hot tables


def test_making_partitions_never_deadlocks_a_reader_of_two_hot_tables(database_url, now):
    # Given a reader (as the operational monitor is) that has read `attempts` and will read
    # `deliveries` in the same transaction
    maker_pool, reader_pool = Database(database_url, max_size=1), Database(database_url, max_size=1)
    failures: list[BaseException] = []
    made: list[int] = []

    def make() -> None:
        try:
            made.append(
                ensure_partitions(maker_pool, as_of=now + timedelta(days=400), ahead_days=0)
            )
        except BaseException as err:
            failures.append(err)

    try:
        with reader_pool.connection() as reader, reader.transaction():
            reader.execute("SELECT count(*) FROM attempts").fetchone()
            # When the day partitions are made meanwhile (they wait for `attempts`)
            maker = threading.Thread(target=make)
            maker.start()
            maker.join(1.5)
            # Then the reader's next table is not held by the maker (before, the maker held
            # `deliveries` while waiting for `attempts`: a deadlock, one of them aborted)
            reader.execute("SELECT count(*) FROM deliveries").fetchone()
        maker.join(30)
    finally:
        maker_pool.close()
        reader_pool.close()
    assert failures == []
    assert made == [2 * 4]  # the day before and the day, four hot tables each


def test_an_expired_day_is_archived_then_dropped_with_payload_bytes_exact(
    pipeline, db, sink, s3, now
):
    # Given delivered events of today (one payload with non-ASCII text)
    t = tenant(db)
    operator.add_endpoint(db, get_settings(), tenant_id=t, url=sink.url("/in"))
    ids = [publish(db, t, {"n": i, "text": "grüße ☃"}).id for i in range(3)]
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 3})
    with db.connection() as conn:
        payloads = {
            r["id"]: bytes(r["payload"]) for r in conn.execute("SELECT id, payload FROM events")
        }
    # When retention runs 91 days later
    report = apply_retention(db, s3.store(), RetentionPolicy(), as_of=now + LATER)
    # Then today's partitions were dropped and nothing of the events is left in the database
    assert now.date().isoformat() in report.days_dropped
    for table in ("events", "outbox", "deliveries", "attempts"):
        assert count(db, f"SELECT count(*) FROM {table}") == 0, table
    assert report.removed["events"] == {t: 3} and report.removed["attempts"] == {t: 3}
    # And the archive holds every event, its exact payload bytes and its delivery outcome
    records = {r["id"]: r for r in archived(s3)}
    assert set(records) == set(ids)
    for event_id, record in records.items():
        assert base64.b64decode(record["payload_base64"]) == payloads[event_id]
        [delivery] = record["deliveries"]
        assert delivery["state"] == "delivered" and delivery["attempts"][0]["status_code"] == 200


def test_an_archive_line_is_what_the_archive_table_reads_with_the_ledgers_values(
    pipeline, db, sink, s3, now
):
    # Given a delivered event with a dedupe key, and its rows as the ledger holds them
    from infra.components.archive import COLUMNS  # the Glue table Athena reads

    t = tenant(db)
    operator.add_endpoint(db, get_settings(), tenant_id=t, url=sink.url("/in"))
    publish(db, t, {"text": "grüße ☃", "quote": '"'}, key="order-1")
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    with db.connection() as conn:
        [event] = conn.execute("SELECT * FROM events").fetchall()
        [delivery] = conn.execute("SELECT * FROM deliveries").fetchall()
    # When its day is archived
    apply_retention(db, s3.store(), RetentionPolicy(), as_of=now + LATER)
    [line] = archived(s3)
    # Then the line has the table's columns (and the tenant, the table's partition), the
    # delivery and its attempt the table's fields
    fields = dict(COLUMNS)
    assert set(line) == set(fields) | {"tenant_id"}
    [archived_delivery] = line["deliveries"]
    [attempt] = archived_delivery["attempts"]
    assert set(archived_delivery) | set(attempt) == set(re.findall(r"(\w+):", fields["deliveries"]))
    # And the ledger's values: the payload's exact bytes, the times as they were
    assert {k: line[k] for k in ("id", "tenant_id", "source_id", "origin", "type", "dedupe_key",
                                 "content_type", "headers")} == {
        k: event[k] for k in ("id", "tenant_id", "source_id", "origin", "type", "dedupe_key",
                              "content_type", "headers")
    }  # fmt: skip
    assert base64.b64decode(line["payload_base64"]) == bytes(event["payload"])
    assert line["payload_size"] == len(bytes(event["payload"]))
    assert datetime.fromisoformat(line["received_at"]) == event["received_at"]
    assert datetime.fromisoformat(line["fanned_out_at"]) >= event["received_at"]
    assert {k: archived_delivery[k] for k in ("id", "endpoint_id", "state", "attempt_count",
                                              "last_status", "last_error")} == {
        k: delivery[k] for k in ("id", "endpoint_id", "state", "attempt_count", "last_status",
                                 "last_error")
    }  # fmt: skip
    for k in ("created_at", "finished_at"):
        assert datetime.fromisoformat(archived_delivery[k]) == delivery[k], k
    assert datetime.fromisoformat(attempt["attempted_at"]) == delivery["first_attempted_at"]
    assert (attempt["status_code"], attempt["error_class"]) == (200, None)


def test_a_dry_run_removes_nothing_and_says_what_it_would(pipeline, db, s3, now):
    t = tenant(db)
    publish(db, t, {"n": 1})
    pipeline.fanout()
    report = apply_retention(db, s3.store(), RetentionPolicy(), as_of=now + LATER,
                             dry_run=True)  # fmt: skip
    assert report.removed["events"] == {t: 1}
    assert count(db, "SELECT count(*) FROM events") == 1 and archived(s3) == []


def test_a_pending_delivery_is_never_removed(pipeline, db, sink, s3, now):
    # Given an event whose delivery is still pending (nothing delivered it)
    t = tenant(db)
    operator.add_endpoint(db, get_settings(), tenant_id=t, url=sink.url("/never"))
    publish(db, t, {"n": 1})
    with db.connection() as conn:
        hookline.repositories.deliveries.fan_out_batch(conn, limit=10, deadline=timedelta(days=1))
    # When retention runs long after
    report = apply_retention(db, s3.store(), RetentionPolicy(), as_of=now + LATER)
    # Then its day is kept (an empty day made before a midnight the run crossed may go), the
    # event and its delivery are still there, and it is counted
    assert now.date().isoformat() not in report.days_dropped and report.kept_unfinished == 1
    assert count(db, "SELECT count(*) FROM deliveries WHERE state = 'pending'") == 1
    assert count(db, "SELECT count(*) FROM events") == 1


def test_a_failing_archive_keeps_every_row(pipeline, db, s3, now):
    # Given a fanned-out event, and an archive bucket that does not exist (the upload fails)
    t = tenant(db)
    publish(db, t, {"n": 1})
    pipeline.fanout()
    report = apply_retention(
        db, S3Archive(s3.client, "no-such-bucket"), RetentionPolicy(), as_of=now + LATER
    )
    # Then the event's day was not dropped and the failure is reported
    assert now.date().isoformat() not in report.days_dropped and report.errors
    assert "kept" in report.errors[0]
    assert count(db, "SELECT count(*) FROM events") == 1
    assert count(db, "SELECT count(*) FROM outbox") == 1


def test_a_shorter_tenant_retention_deletes_only_that_tenants_rows(pipeline, db, sink, s3, now):
    # Given two tenants with delivered events; one keeps its ledger 1 day only
    short, normal = tenant(db, "short"), tenant(db, "normal")
    with db.connection() as conn:
        hookline.repositories.retention.set_tenant_retention(conn, short, 1)
    for t in (short, normal):
        operator.add_endpoint(db, get_settings(), tenant_id=t, url=sink.url(f"/{t}"))
        publish(db, t, {"t": t})
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 2})
    # When retention runs two days later
    report = apply_retention(db, s3.store(), RetentionPolicy(), as_of=now + timedelta(days=2))
    # Then the short tenant's event and delivery are gone (archived), the other's stay
    assert now.date().isoformat() not in report.days_dropped
    assert report.removed["events"] == {short: 1} and report.removed["deliveries"] == {short: 1}
    assert count(db, "SELECT count(*) FROM events WHERE tenant_id = %s", short) == 0
    assert count(db, "SELECT count(*) FROM deliveries WHERE tenant_id = %s", normal) == 1
    assert [r["tenant_id"] for r in archived(s3)] == [short]


def test_a_duplicate_gets_the_original_id_after_its_event_was_archived(pipeline, db, s3, now):
    # Given an event published with an Idempotency-Key, then archived and dropped
    t = tenant(db)
    original = publish(db, t, {"n": 1}, key="order-42")
    pipeline.fanout()
    report = apply_retention(
        db,
        s3.store(),
        RetentionPolicy(ledger_days=1, dedupe_days=30),
        as_of=now + timedelta(days=2),
    )
    assert report.days_dropped and count(db, "SELECT count(*) FROM events") == 0
    # When the same key is published again
    again = publish(db, t, {"n": 1}, key="order-42")
    # Then it is a duplicate answered with the original id, and nothing new is stored
    assert again.duplicate and again.id == original.id
    assert count(db, "SELECT count(*) FROM events") == 0
    # And once the dedupe retention has passed too, the key is pruned
    later = apply_retention(db, s3.store(), RetentionPolicy(ledger_days=1, dedupe_days=30),
                            as_of=now + timedelta(days=31))  # fmt: skip
    assert later.event_keys_pruned == 1


def test_retention_of_zero_days_is_refused():
    with pytest.raises(hookline.errors.BadRequest, match="at least 1"):
        RetentionPolicy(ledger_days=0)


def test_reconcile_makes_the_partitions_of_the_week_ahead(pipeline, db, now):
    from hookline.runtime import build_reconciler

    # Given the partitions of a week from now are missing
    ahead = (datetime.now(UTC) + timedelta(days=7)).date()
    with db.connection() as conn:
        conn.execute("SELECT hookline_drop_day_partitions(%s)", (ahead,))
    # When reconcile runs
    report = build_reconciler(get_settings(), db).run(trigger="test")
    # Then they exist again, for every hot table
    assert report.findings["retention"]["partitions_created"] >= 4  # (and yesterday's)
    with db.connection() as conn:
        tables = [r["table_name"] for r in conn.execute(
            "SELECT table_name FROM hookline_day_partitions WHERE day = %s", (ahead,))]  # fmt: skip
    assert sorted(tables) == ["attempts", "deliveries", "events", "outbox"]


def test_a_day_whose_delivery_reopened_is_not_dropped(pipeline, db, sink, now):
    # Given a day whose one delivery is pending again (a replay reopened it after selection)
    from hookline.errors import DeliveryStillOpen
    from hookline.repositories import retention as repo

    t = tenant(db)
    operator.add_endpoint(db, get_settings(), tenant_id=t, url=sink.url("/r"))
    publish(db, t, {"n": 1})
    pipeline.fanout()
    # When the day's partitions are dropped directly
    with db.connection() as conn, pytest.raises(DeliveryStillOpen), conn.transaction():
        repo.drop_day_partitions(conn, now.date())
    # Then the drop refused and nothing is gone
    assert count(db, "SELECT count(*) FROM deliveries") == 1
    assert count(db, "SELECT count(*) FROM events") == 1


def test_events_outside_every_day_partition_are_reported(db, s3, now):
    # Given an event whose day has no partition (made when reconcile was down for weeks)
    t = tenant(db)
    with db.connection() as conn:
        conn.execute(
            "INSERT INTO events (id, tenant_id, origin, type, dedupe_key, payload)"
            " VALUES ('evt_00000000000000000000000000', %s, 'publish', 'a', 'k', '\\x00')",
            (t,),
        )
    # When retention runs
    report = apply_retention(db, s3.store(), RetentionPolicy(), as_of=now)
    # Then it says so, as an error an operator sees, and removes nothing
    assert report.events_outside_days == 1 and "outside every day partition" in report.errors[0]
    assert count(db, "SELECT count(*) FROM events_default") == 1


def delivered_today(pipeline, db, sink, policy: RetentionPolicy, now: datetime) -> str:
    """A tenant with one delivered event of today; the partitions a run at `now + LATER`
    makes are made already, so that run waits for a lock only where it drops a day."""
    t = tenant(db)
    operator.add_endpoint(db, get_settings(), tenant_id=t, url=sink.url("/in"))
    publish(db, t, {"n": 1})
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    ensure_partitions(db, as_of=now + LATER, ahead_days=policy.partitions_ahead_days)
    return t


def test_retention_gives_way_to_the_pipeline_and_leaves_the_day_to_the_next_run(
    pipeline, db, sink, s3, database_url, now
):
    # Given a delivered event of today, and a reader that has read `attempts` and will read
    # `deliveries` in the same open transaction (as the operational monitor does)
    policy = RetentionPolicy(lock_wait_ms=200)
    t = delivered_today(pipeline, db, sink, policy, now)
    reports: list = []
    failures: list[BaseException] = []

    def retain() -> None:
        try:
            reports.append(apply_retention(db, s3.store(), policy, as_of=now + LATER))
        except BaseException as err:
            failures.append(err)

    with psycopg.connect(database_url, autocommit=True) as reader, \
            psycopg.connect(database_url, autocommit=True) as writer:  # fmt: skip
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM attempts").fetchone()
        # When retention runs meanwhile (its day's drop waits for `attempts`)
        runner = threading.Thread(target=retain)
        runner.start()
        waiting = (
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        deadline = time.monotonic() + 10
        while reader.execute(waiting).fetchone()[0] == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        # Then a statement of the pipeline over `deliveries`' partitions neither deadlocks nor
        # waits behind retention longer than its lock wait (it fails after 5 s if it does)
        writer.execute("SET statement_timeout = '5s'")
        writer.execute("UPDATE deliveries SET state = state WHERE tenant_id = %s", (t,))
        # And the reader's next table is free too
        reader.execute("SELECT count(*) FROM deliveries").fetchone()
        runner.join(30)
        reader.execute("COMMIT")
    # And retention, which could not have its locks in any of its tries, kept every row (the
    # day's slice is archived: a copy, decision 0118), said so, and ended the run
    assert failures == [] and not runner.is_alive()
    [report] = reports
    assert report.days_dropped == [] and report.slices_archived == 1
    assert "the pipeline held the day's tables" in report.errors[0], report.errors
    assert "the next run tries again" in report.errors[0]
    assert count(db, "SELECT count(*) FROM events") == 1
    assert count(db, "SELECT count(*) FROM deliveries WHERE state = 'delivered'") == 1
    # When the next run finds the tables free, the day goes
    again = apply_retention(db, s3.store(), policy, as_of=now + LATER)
    assert now.date().isoformat() in again.days_dropped and again.errors == []
    assert count(db, "SELECT count(*) FROM events") == 0 and len(archived(s3)) == 1


def test_a_day_whose_tables_were_busy_a_moment_is_tried_again_in_the_same_run(
    pipeline, db, sink, s3, database_url, now
):
    # Given a delivered event of today, and a reader of `attempts` in an open transaction
    policy = RetentionPolicy(lock_wait_ms=100, tries_per_day=12)  # retried over ~6.6 s
    delivered_today(pipeline, db, sink, policy, now)
    reports: list = []
    with psycopg.connect(database_url) as reader:
        reader.execute("SELECT count(*) FROM attempts").fetchone()

        def retain() -> None:
            reports.append(apply_retention(db, s3.store(), policy, as_of=now + LATER))

        runner = threading.Thread(target=retain)
        runner.start()
        time.sleep(0.3)  # When the reader ends its transaction after retention's first try
    runner.join(30)
    # Then the same run retired the day: archived, dropped, no error
    [report] = reports
    assert now.date().isoformat() in report.days_dropped and report.errors == []
    assert count(db, "SELECT count(*) FROM events") == 0 and len(archived(s3)) == 1


def test_an_archived_delivery_keeps_each_of_its_attempts_in_order(pipeline, db, sink, s3, now):
    # Given an event whose first delivery failed once then succeeded, and one to an endpoint
    # that took it at once
    t = tenant(db)
    sink.behave("/flaky", statuses=[503, 200])
    for path in ("/flaky", "/ok"):
        operator.add_endpoint(db, get_settings(), tenant_id=t, url=sink.url(path))
    publish(db, t, {"n": 1})
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 2}, timeout=30)
    # When its day is archived
    report = apply_retention(db, s3.store(), RetentionPolicy(), as_of=now + LATER)
    assert now.date().isoformat() in report.days_dropped and report.removed["attempts"] == {t: 3}
    # Then each delivery's line holds its own attempts, in the order they were made
    [record] = archived(s3)
    statuses = sorted([a["status_code"] for a in d["attempts"]] for d in record["deliveries"])
    assert statuses == [[200], [503, 200]]


def test_an_archive_that_fails_midway_through_a_day_leaves_its_connection_usable(
    pipeline, db, sink, s3, database_url, now
):
    # Given a day of two tenants' events, and retention on a pool of one connection
    for name in ("first", "second"):
        publish(db, tenant(db, name), {"n": name})
    pipeline.fanout()
    one = Database(database_url, max_size=1)
    runs: list = []

    def run_twice() -> None:
        # When the archive refuses the first tenant's object, with the second's rows unread
        bad = S3Archive(s3.client, "no-such-bucket")
        runs.append(apply_retention(one, bad, RetentionPolicy(), as_of=now + LATER))
        # and the next run has a bucket (a day left mid-stream would hang it: a thread, so the
        # test fails instead)
        runs.append(apply_retention(one, s3.store(), RetentionPolicy(), as_of=now + LATER))

    runner = threading.Thread(target=run_twice, daemon=True)
    runner.start()
    runner.join(60)
    try:
        assert not runner.is_alive(), "retention hung on its own connection"
    finally:
        one.close()
    failed, done = runs
    # Then the first run kept the day and said so
    assert now.date().isoformat() not in failed.days_dropped
    assert "archive upload failed" in failed.errors[0] and "kept" in failed.errors[0]
    # And the same connection archived and dropped the day on the next run
    assert now.date().isoformat() in done.days_dropped and done.errors == []
    assert len(archived(s3)) == 2


def test_a_day_tried_again_counts_what_it_kept_once(pipeline, db, sink, s3, database_url, now):
    # Given a day of two tenants kept one day: one delivered event, and one whose delivery is
    # still pending (it keeps its event, so the day is not dropped whole)
    short, stuck = tenant(db, "short"), tenant(db, "stuck")
    with db.connection() as conn:
        for t in (short, stuck):
            hookline.repositories.retention.set_tenant_retention(conn, t, 1)
    operator.add_endpoint(db, get_settings(), tenant_id=short, url=sink.url("/in"))
    publish(db, short, {"n": 1})
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    operator.add_endpoint(db, get_settings(), tenant_id=stuck, url=sink.url("/never"))
    publish(db, stuck, {"n": 2})
    with db.connection() as conn:
        hookline.repositories.deliveries.fan_out_batch(conn, limit=10, deadline=timedelta(days=1))
    later = now + timedelta(days=2)
    policy = RetentionPolicy(lock_wait_ms=100, tries_per_day=12)
    ensure_partitions(db, as_of=later, ahead_days=policy.partitions_ahead_days)
    reports: list = []
    # When the delivered row is locked by another transaction for the run's first tries
    with psycopg.connect(database_url) as locker:
        locker.execute("SELECT id FROM deliveries WHERE tenant_id = %s FOR UPDATE", (short,))
        runner = threading.Thread(
            target=lambda: reports.append(apply_retention(db, s3.store(), policy, as_of=later))
        )
        runner.start()
        time.sleep(0.4)
    runner.join(30)
    # Then the run removed the delivered event, kept the pending one, and counted it once
    [report] = reports
    assert report.errors == [] and report.removed["events"] == {short: 1}
    assert report.kept_unfinished == 1
    assert count(db, "SELECT count(*) FROM events WHERE tenant_id = %s", stuck) == 1
