"""A tenant's AWS destination may not name Hookline's own resources, and a restore puts back
only what the archiver wrote (issue 23, finding 4(a); decision 0061). The probe's scenario:
tenant A points an `s3` endpoint at the archive bucket under tenant B's prefix, and an
operator's restore of B would then deliver A's forged event with B's secrets."""

from __future__ import annotations

import base64
import gzip
import json
import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest

import hookline
from hookline.archive import S3Archive, gzip_parts, object_key
from hookline.config import HooklineConfig
from hookline.errors import BadRequest
from hookline.restore import restore_window
from hookline.runtime import reset_runtime
from hookline.settings import get_settings
from tests.support import operator
from tests.support.customer_aws import ACCOUNT, ROLE

pytestmark = pytest.mark.integration

NOW = datetime.now(UTC)
TODAY = NOW.date()


@pytest.fixture
def archive(moto_endpoint: str) -> S3Archive:
    s3 = boto3.client(
        "s3", endpoint_url=moto_endpoint, region_name="us-east-1",
        aws_access_key_id="testing", aws_secret_access_key="testing",
    )  # fmt: skip
    name = f"archive-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=name)
    return S3Archive(s3, name)


def tenant(db, name: str) -> str:
    return str(operator.add_tenant(db, HooklineConfig(), name=name, group="standard")["id"])


def s3_endpoint(db, settings, tenant_id: str, bucket: str, **options: Any) -> dict[str, Any]:
    return operator.add_endpoint(
        db, settings, tenant_id=tenant_id, url=None, kind="s3", target=f"arn:aws:s3:::{bucket}",
        role_arn=ROLE, **options,
    )  # fmt: skip


def test_a_destination_naming_hookline_s_own_resources_is_refused_at_save(db, archive):
    a = tenant(db, "a")
    settings = replace(get_settings(), archive_bucket=archive.bucket)
    # When tenant A points an s3 endpoint at the archive bucket, under B's prefix
    with pytest.raises(BadRequest, match=r"^target: '.+' is Hookline's own archive bucket"):
        s3_endpoint(db, settings, a, archive.bucket, destination={"prefix": "ledger/tenant=b/"})
    # Or offloads large bodies there, or names the dev stack's own queue
    with pytest.raises(BadRequest, match=r"^destination\.offload_bucket: .+ own archive bucket"):
        operator.add_endpoint(
            db, settings, tenant_id=a, url=None, kind="sqs", role_arn=ROLE,
            target=f"arn:aws:sqs:us-east-1:{ACCOUNT}:orders",
            destination={"offload_bucket": archive.bucket},
        )  # fmt: skip
    with pytest.raises(BadRequest, match=r"^target: 'hookline-deliver-standard' is named like"):
        operator.add_endpoint(
            db, settings, tenant_id=a, url=None, kind="sqs", role_arn=ROLE,
            target=f"arn:aws:sqs:us-east-1:{ACCOUNT}:hookline-deliver-standard",
        )  # fmt: skip
    # And on AWS, where the deployment knows its account, nothing in it (targets, roles)
    on_aws = replace(settings, account_id=ACCOUNT)
    with pytest.raises(BadRequest, match=r"^target: .+ is in Hookline's own AWS account"):
        operator.add_endpoint(
            db, on_aws, tenant_id=a, url=None, kind="lambda", role_arn=ROLE,
            target=f"arn:aws:lambda:us-east-1:{ACCOUNT}:function:orders",
        )  # fmt: skip
    # While the customer's own bucket is taken as before
    assert s3_endpoint(db, settings, a, "acme-events")["kind"] == "s3"


def test_an_endpoint_saved_before_the_check_is_refused_at_send(pipeline, db, archive, monkeypatch):
    # Given tenant A's s3 endpoint on the archive bucket, saved before the bucket was named
    a = tenant(db, "a")
    s3_endpoint(db, get_settings(), a, archive.bucket, destination={"prefix": "ledger/"})
    monkeypatch.setenv("HOOKLINE_ARCHIVE_BUCKET", archive.bucket)
    get_settings.cache_clear()
    reset_runtime()
    # When A publishes an event
    with db.connection() as conn, conn.transaction():
        event = hookline.publish(conn, tenant_id=a, type="order.paid", payload={"n": 1}).id
    pipeline.run_until(lambda: pipeline.states() == {"failed": 1})
    # Then the delivery fails saying why, and nothing was written into the archive
    delivery = pipeline.delivery(event_id=event)
    assert "refused: target: " in delivery["last_error"]
    assert "own archive bucket" in delivery["last_error"]
    assert archive.keys("ledger/") == []


def encode_lines(records: list[dict[str, Any]]) -> bytes:
    """Archive records as the archiver stores them: one gzip object of JSON Lines."""
    return b"".join(gzip_parts(json.dumps(r) for r in records))


def forged_line(event_id: str, tenant_id: str, source_id: str | None) -> dict[str, Any]:
    return {
        "id": event_id, "tenant_id": tenant_id, "source_id": source_id, "origin": "publish",
        "type": "order.refunded", "dedupe_key": f"forged:{event_id}",
        "content_type": "application/json", "headers": {},
        "received_at": NOW.isoformat(), "fanned_out_at": None, "deliveries": [],
        "payload_base64": base64.b64encode(b'{"forged": true}').decode(), "payload_size": 16,
    }  # fmt: skip


def test_a_restore_puts_back_only_what_the_archiver_wrote(db, archive):
    # Given tenant B's genuine archived event, and tenant A with a source of its own
    a, b = tenant(db, "a"), tenant(db, "b")
    secret = "whsec_" + "A" * 32
    a_source = operator.add_source(db, tenant_id=a, scheme="standard", secrets=[secret])
    genuine = {
        "id": "evt_genuine", "tenant_id": b, "source_id": None, "origin": "publish", "type": "x",
        "dedupe_key": "k1", "content_type": "application/json", "headers": {},
        "received_at": NOW.isoformat(), "fanned_out_at": None, "deliveries": [],
        "payload_base64": base64.b64encode(b"{}").decode(), "payload_size": 2,
    }  # fmt: skip
    archive.put(object_key(b, TODAY, "day-1"), encode_lines([genuine]))
    # And what A's s3 destination could have written under B's prefix: an object named by
    # webhook-id, a well-named object whose record is A's, and one whose source is A's
    prefix = f"ledger/tenant={b}/date={TODAY.isoformat()}/"
    named_by_webhook_id = json.dumps(forged_line("evt_f1", b, None)).encode()
    archive.put(f"{prefix}dlv_forged", gzip.compress(named_by_webhook_id))
    archive.put(object_key(b, TODAY, "day-2"), encode_lines([forged_line("evt_f2", a, None)]))
    archive.put(
        object_key(b, TODAY, "day-3"), encode_lines([forged_line("evt_f3", b, a_source["id"])])
    )
    archive.put(object_key(b, TODAY, "day-4"), b"not gzip at all")
    # When an operator restores B's window
    result = restore_window(
        db, archive, tenant_id=b, since=NOW - timedelta(hours=1), until=NOW + timedelta(hours=1),
        reason="customer lost data", actor="test", hold_days=1,
    )  # fmt: skip
    # Then only B's genuine event is back; the forged ones are refused and reported
    with db.connection() as conn:
        ids = [r["id"] for r in conn.execute("SELECT id FROM events ORDER BY id").fetchall()]
    assert ids == ["evt_genuine"]
    assert (result["restored"], result["refused"]) == (1, 4)
    reasons = {r["key"].rsplit("/", 1)[1]: r["reason"] for r in result["refused_records"]}
    assert reasons == {
        "dlv_forged": "not named as the archiver names",
        "day-2.jsonl.gz": "names another tenant than its key",
        "day-3.jsonl.gz": "its source is not the tenant's",
        "day-4.jsonl.gz": "not archive records (BadGzipFile)",
    }
    # And the audit entry says so
    with db.connection() as conn:
        [audit] = conn.execute(
            "SELECT params FROM audit_log WHERE action = 'archive.restore'"
        ).fetchall()
    assert audit["params"]["refused"] == 4
