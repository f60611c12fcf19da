"""Restore from the archive and erasure, on real Postgres and moto S3: archived, dropped,
restored and delivered again with the same webhook-ids; erased for good, audited, twice safe."""

from __future__ import annotations

import os
import uuid
from datetime import timedelta

import boto3
import pytest

import hookline
from hookline.archive import S3Archive
from hookline.config import HooklineConfig
from hookline.errors import ArchiveUnavailable
from hookline.restore import erase_tenant, restore_window
from hookline.retention import RetentionPolicy, apply_retention
from hookline.settings import get_settings
from hookline_dev.cli import main
from tests.support import operator

pytestmark = pytest.mark.integration


@pytest.fixture
def archive(moto_endpoint):
    s3 = boto3.client(
        "s3", endpoint_url=moto_endpoint, region_name="us-east-1",
        aws_access_key_id="testing", aws_secret_access_key="testing",
    )  # fmt: skip
    name = f"archive-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=name)
    s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    return S3Archive(s3, name)


def delivered_events(pipeline, db, sink, n: int = 3) -> tuple[str, list[str]]:
    t = operator.add_tenant(db, HooklineConfig(), name="acme", group="standard")["id"]
    operator.add_endpoint(db, get_settings(), tenant_id=t, url=sink.url("/in"))
    with db.connection() as conn, conn.transaction():
        ids = [hookline.publish(conn, tenant_id=t, type="a", payload={"n": i}).id for i in range(n)]
    pipeline.run_until(lambda: pipeline.states() == {"delivered": n})
    return t, ids


def rows(db, sql: str, *params: object) -> list[dict]:
    with db.connection() as conn:
        return conn.execute(sql, params).fetchall()


def test_a_restore_delivers_every_archived_event_again_with_the_same_webhook_id(
    pipeline, db, sink, archive, now
):
    # Given delivered events, archived and dropped by retention
    t, ids = delivered_events(pipeline, db, sink)
    first = {r.headers["webhook-id"] for r in sink.requests("/in")}
    report = apply_retention(
        db, archive, RetentionPolicy(ledger_days=1), as_of=now + timedelta(days=2)
    )
    assert report.days_dropped and rows(db, "SELECT id FROM events") == []
    # When the window is restored
    result = restore_window(
        db, archive, tenant_id=t, since=now - timedelta(hours=1), until=now + timedelta(hours=1),
        reason="customer lost data", actor="test", hold_days=7, fan_out=pipeline.fanout,
    )  # fmt: skip
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 3})
    # Then every event is back with its id, delivered again with the webhook-id it had
    assert (result["restored"], result["skipped"]) == (3, 0)
    assert sorted(r["id"] for r in rows(db, "SELECT id FROM events")) == sorted(ids)
    webhook_ids = [r.headers["webhook-id"] for r in sink.requests("/in")]
    assert len(webhook_ids) == 6 and set(webhook_ids) == first
    # And it is audited, and a second restore skips what is already there
    [audit] = rows(db, "SELECT params FROM audit_log WHERE action = 'archive.restore'")
    assert audit["params"]["reason"] == "customer lost data"
    again = restore_window(
        db, archive, tenant_id=t, since=now - timedelta(hours=1), until=now + timedelta(hours=1),
        reason="again", actor="test", hold_days=7,
    )  # fmt: skip
    assert (again["restored"], again["skipped"]) == (0, 3)
    # And the restored window is held: the next retention run leaves it in the ledger
    held = apply_retention(
        db, archive, RetentionPolicy(ledger_days=1), as_of=now + timedelta(days=2)
    )
    assert now.date().isoformat() not in held.days_dropped and held.kept_held == 3
    assert len(rows(db, "SELECT id FROM events")) == 3


def test_a_restore_window_backwards_is_refused(db, archive, now):
    with pytest.raises(hookline.errors.BadRequest, match="--since must be before --until"):
        restore_window(db, archive, tenant_id="t", since=now, until=now - timedelta(days=1),
                       reason="x", actor="test", hold_days=1)  # fmt: skip


def test_erase_removes_the_tenants_data_and_archive_and_keeps_an_audit_entry(
    pipeline, db, sink, archive, now
):
    # Given a tenant with delivered events, some archived already, and another tenant
    t, _ = delivered_events(pipeline, db, sink, n=2)
    apply_retention(db, archive, RetentionPolicy(ledger_days=1), as_of=now + timedelta(days=2))
    other = operator.add_tenant(db, HooklineConfig(), name="other", group="standard")["id"]
    operator.add_endpoint(db, get_settings(), tenant_id=other, url=sink.url("/other"))
    with db.connection() as conn, conn.transaction():
        hookline.publish(conn, tenant_id=t, type="a", payload={"left": 1})
        kept = hookline.publish(conn, tenant_id=other, type="a", payload={}).id
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 2})
    # When the tenant is erased
    result = erase_tenant(db, archive, t, confirm=True, actor="test")
    # Then its events, deliveries, attempts, keys, secrets and archive objects are gone; the
    # other tenant's stay
    assert rows(db, "SELECT id FROM events WHERE tenant_id = %s", t) == []
    assert rows(db, "SELECT tenant_id FROM deliveries") == [{"tenant_id": other}]
    attempts = "SELECT d.tenant_id FROM attempt_log a JOIN deliveries d ON d.id = a.delivery_id"
    assert rows(db, attempts) == [{"tenant_id": other}]
    assert rows(db, "SELECT count(*) AS n FROM attempt_log") == [{"n": 1}]
    assert rows(db, "SELECT tenant_id FROM event_keys") == [{"tenant_id": other}]
    assert [r["endpoint_id"] for r in rows(db, "SELECT endpoint_id FROM endpoint_secrets")] == [
        r["id"] for r in rows(db, "SELECT id FROM endpoints WHERE tenant_id = %s", other)
    ]
    assert archive.keys(f"ledger/tenant={t}/") == []
    assert [r["id"] for r in rows(db, "SELECT id FROM events")] == [kept]
    assert result["events"] == 1 and result["archived_objects"] == 1
    # And the audit entry says what was erased, without the data
    [audit] = rows(db, "SELECT params FROM audit_log WHERE action = 'tenant.erase'")
    assert audit["params"]["events"] == 1 and "payload" not in str(audit["params"])
    # And a second erase finds nothing
    second = erase_tenant(db, archive, t, confirm=True, actor="test")
    assert second["events"] == 0 and second["archived_objects"] == 0


def test_the_cli_refuses_erase_without_confirm_a_zero_retention_and_a_backward_window(
    database_url, monkeypatch, capsys, tmp_path
):
    monkeypatch.setenv("DATABASE_URL", database_url)
    assert main(["tenants", "erase", "ten_x"]) == 1
    assert "--confirm" in capsys.readouterr().err
    assert main(["tenants", "retention", "ten_x", "--days", "0"]) == 1
    assert "at least 1 day" in capsys.readouterr().err
    assert main(["archive", "restore", "--tenant", "t", "--since", "2026-12-02T00:00:00Z",
                 "--until", "2026-12-01T00:00:00Z", "--reason", "x"]) == 1  # fmt: skip
    assert "--since must be before --until" in capsys.readouterr().err
    config = tmp_path / "hookline.json"
    config.write_text('{"ledger_retention_days": 0}')
    monkeypatch.setenv("HOOKLINE_CONFIG", str(config))
    with pytest.raises(ValueError, match="ledger_retention_days must be at least 1 day"):
        main(["retention", "--once", "--dry-run", "--json"])


def test_the_cli_previews_retention_as_of_a_time(database_url, monkeypatch, capsys, db, now):
    import json

    monkeypatch.setenv("DATABASE_URL", database_url)
    t = operator.add_tenant(db, HooklineConfig(), name="acme", group="standard")["id"]
    with db.connection() as conn, conn.transaction():
        hookline.publish(conn, tenant_id=t, type="a", payload={})
    later = (now + timedelta(days=91)).isoformat()
    assert main(["retention", "--once", "--as-of", later, "--dry-run", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["dry_run"] and report["removed"]["events"] == {t: 1}
    assert len(rows(db, "SELECT id FROM events")) == 1


def test_the_api_erasure_is_for_operators_and_needs_erase_true(db, archive):
    from hookline.management.access import Caller
    from hookline.restore import erase_tenant_by_api

    t = operator.add_tenant(db, HooklineConfig(), name="acme", group="standard")["id"]
    with pytest.raises(hookline.errors.Unauthorized):
        erase_tenant_by_api(db, archive, Caller("key:abc", t), t, erase=True)
    with pytest.raises(hookline.errors.BadRequest, match="erase=true"):
        erase_tenant_by_api(db, archive, Caller("arn:op", "*"), t, erase=False)
    assert erase_tenant_by_api(db, archive, Caller("arn:op", "*"), t, erase=True)["events"] == 0
    [audit] = rows(db, "SELECT actor FROM audit_log WHERE action = 'tenant.erase'")
    assert audit["actor"] == "arn:op"


def test_an_archive_object_of_several_parts_is_one_object_in_the_bucket(archive):
    # Given an object's parts as retention makes them: 5 MiB and more but the last
    first, last = os.urandom(5 * 1024 * 1024), b"the last part"
    # When the store puts them
    archive.put_parts("ledger/tenant=t/date=2026-12-07/day-1.jsonl.gz", iter([first, last]))
    # Then the bucket holds one object, their bytes in order, and no upload is left open
    assert archive.get("ledger/tenant=t/date=2026-12-07/day-1.jsonl.gz") == first + last
    assert archive.s3.list_multipart_uploads(Bucket=archive.bucket).get("Uploads", []) == []


def test_parts_whose_source_fails_store_nothing_and_the_failure_passes_through(archive):
    # Given parts whose source fails after the first (as the day's selection would)
    def parts():
        yield os.urandom(5 * 1024 * 1024)
        yield os.urandom(5 * 1024 * 1024)
        raise RuntimeError("the selection failed")

    # When the store puts them, the source's own error comes out (not an archive error)
    with pytest.raises(RuntimeError, match="the selection failed"):
        archive.put_parts("ledger/tenant=t/date=2026-12-07/day-2.jsonl.gz", parts())
    # Then nothing is stored and the upload was aborted
    assert archive.keys("ledger/tenant=t/") == []
    assert archive.s3.list_multipart_uploads(Bucket=archive.bucket).get("Uploads", []) == []


def test_parts_the_bucket_refuses_are_an_archive_error(archive):
    missing = S3Archive(archive.s3, f"no-such-{uuid.uuid4().hex[:8]}")
    for parts in ([b"one part"], [os.urandom(5 * 1024 * 1024), b"two"]):
        with pytest.raises(ArchiveUnavailable, match="archive upload failed"):
            missing.put_parts("ledger/tenant=t/date=2026-12-07/day-3.jsonl.gz", iter(parts))
