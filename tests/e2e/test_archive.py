"""The ledger archive on the dev stack: `hookline dev` creates its archive bucket on the
emulator and names it in the settings it exports, so retention archives before it removes
rows, and a restore — from the CLI or through the front's /v1/restores — reads it back and the
stack delivers the events again with the webhook-ids they had (docs/decisions/0051)."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta

import boto3
import httpx
import pytest

from hookline.archive import decode_lines
from tests.e2e.conftest import Stack, wait_until
from tests.support.sinks import Sink

pytestmark = pytest.mark.e2e


def test_retention_archives_to_the_stacks_bucket_and_a_restore_delivers_again(
    stack: Stack, sink: Sink
) -> None:
    # Given a tenant kept one day (the others keep the default), whose events were delivered
    tenant = stack.tenant(name="archived")
    stack.endpoint(tenant, sink.url("/archived"))
    stack.cli("tenants", "retention", tenant, "--days", "1")
    ids = []
    for n in range(3):
        answer = httpx.post(
            stack.url + "/v1/events",
            json={"tenant_id": tenant, "type": "order.created", "payload": {"n": n}},
            headers={"Idempotency-Key": str(uuid.uuid4()), **stack.auth},
        )
        assert answer.status_code == 200, answer.text
        ids.append(answer.json()["id"])
    wait_until(lambda: len(sink.requests("/archived")) == 3, what="the first deliveries")
    first = {r.headers["webhook-id"] for r in sink.requests("/archived")}
    # When retention runs as if it were three days later
    now = datetime.now(UTC)
    report = stack.cli("retention", "--once", "--as-of", (now + timedelta(days=3)).isoformat())
    # Then the tenant's events are in the stack's archive bucket, and gone from the ledger
    bucket = stack.state.env()["HOOKLINE_ARCHIVE_BUCKET"]
    assert f"ledger archive bucket {bucket}" in stack.dev.log.read_text()  # named in the banner
    s3 = boto3.client(
        "s3", endpoint_url=stack.state.aws_endpoint_url, region_name=stack.state.aws_region,
        aws_access_key_id="testing", aws_secret_access_key="testing",
    )  # fmt: skip
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix=f"ledger/tenant={tenant}/")
            .get("Contents", [])]  # fmt: skip
    assert keys, json.dumps(report)
    archived = [r["id"] for k in keys for r in decode_lines(s3.get_object(Bucket=bucket, Key=k)
                                                             ["Body"].read())]  # fmt: skip
    assert sorted(archived) == sorted(ids)
    assert stack.query("SELECT id FROM events WHERE tenant_id = %s", tenant) == []
    # When the CLI restores the window
    window = [(now - timedelta(hours=1)).isoformat(), (now + timedelta(hours=1)).isoformat()]
    restored = stack.cli("archive", "restore", "--tenant", tenant, "--since", window[0],
                         "--until", window[1], "--reason", "e2e")  # fmt: skip
    # Then the stack delivers every event again, with the webhook-id it had
    assert (restored["restored"], restored["skipped"]) == (3, 0)
    wait_until(lambda: len(sink.requests("/archived")) == 6, what="the restored deliveries")
    again = [r.headers["webhook-id"] for r in sink.requests("/archived")[3:]]
    assert set(again) == first
    # And a restore through the front's API finds them back already: skipped, counted
    made = httpx.post(
        stack.url + "/v1/restores",
        json={"tenant_id": tenant, "since": window[0], "until": window[1], "reason": "e2e api"},
        headers=stack.auth,
    )
    assert made.status_code == 202, made.text

    def finished() -> dict | None:
        got = httpx.get(stack.url + made.headers["Location"], headers=stack.auth).json()
        return got if got["state"] in ("succeeded", "failed") else None

    done = wait_until(finished, what="the API's restore")
    assert done["state"] == "succeeded", done
    assert (done["result"]["restored"], done["result"]["skipped"]) == (0, 3)
