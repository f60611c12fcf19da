"""The generated clients (clients/python, clients/typescript) driving a running `hookline dev`
as a new team would: a tenant, a source and an endpoint, events published and delivered,
deliveries paged through, a replay started, and a refusal read as a problem."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hookline_client.api.deliveries import list_deliveries
from hookline_client.api.endpoints import create_endpoint, get_endpoint
from hookline_client.api.events import publish_event
from hookline_client.api.replays import create_replay, get_replay
from hookline_client.api.sources import create_source
from hookline_client.api.tenants import create_tenant
from hookline_client.auth import bearer_client
from hookline_client.models import (
    EndpointCreate,
    EventPublish,
    Problem,
    ReplayCreate,
    SourceCreate,
    TenantCreate,
)

from tests.e2e.conftest import Stack, wait_until
from tests.support.sinks import Sink

pytestmark = pytest.mark.e2e

TS = Path(__file__).resolve().parents[2] / "clients" / "typescript"
SOURCE_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


def test_the_python_client_drives_a_dev_stack(stack: Stack, sink: Sink) -> None:
    # Given the Python client with the stack's key (what `hookline dev --print-env` exports)
    client = bearer_client(stack.url, stack.state.env()["HOOKLINE_API_KEY"])
    # When it sets up a tenant, a source and an endpoint on a loopback subscriber
    tenant = create_tenant.sync(client=client, body=TenantCreate(name="client-python"))
    assert tenant is not None and not isinstance(tenant, Problem)
    source = create_source.sync(
        client=client,
        body=SourceCreate(tenant_id=tenant.id, scheme="standard", secret=SOURCE_SECRET),
    )
    assert source is not None and not isinstance(source, Problem)
    endpoint = create_endpoint.sync(
        client=client, body=EndpointCreate(tenant_id=tenant.id, url=sink.url("/python"))
    )
    assert endpoint is not None and not isinstance(endpoint, Problem)
    assert isinstance(endpoint.secret, str) and endpoint.secret.startswith("whsec_")
    # And publishes three events
    for n in range(3):
        published = publish_event.sync(
            client=client,
            body=EventPublish(tenant_id=tenant.id, type_="order.created", payload={"n": n}),
        )
        assert published is not None and not isinstance(published, Problem)
    wait_until(lambda: len(sink.requests("/python")) == 3, what="three deliveries")

    # Then the deliveries come back two to a page, every one delivered
    seen, cursor = [], None
    while True:
        page = list_deliveries.sync(client=client, endpoint_id=endpoint.id, limit=2, cursor=cursor)
        assert page is not None and not isinstance(page, Problem)
        seen += page.items
        cursor = page.next_cursor if isinstance(page.next_cursor, str) else None
        if cursor is None:
            break
    assert len(seen) == 3
    wait_until(
        lambda: all(d["state"] == "delivered" for d in stack.deliveries(endpoint_id=endpoint.id)),
        what="deliveries recorded as delivered",
    )

    # And a replay of the endpoint's window delivers them again
    replay = create_replay.sync(
        client=client,
        body=ReplayCreate(
            endpoint_id=endpoint.id, since="1h", states=["delivered"], reason="client e2e"
        ),
    )
    assert replay is not None and not isinstance(replay, Problem)

    def replay_done() -> bool:
        now = get_replay.sync(client=client, replay_id=replay.id)
        return now is not None and not isinstance(now, Problem) and now.state == "succeeded"

    wait_until(replay_done, what="the replay to succeed")
    wait_until(lambda: len(sink.requests("/python")) == 6, what="three more deliveries")

    # And a refusal is a problem the caller can read
    missing = get_endpoint.sync_detailed(client=client, endpoint_id="ep_none")
    assert missing.status_code == 404
    assert isinstance(missing.parsed, Problem) and missing.parsed.status == 404
    assert "ep_none" in missing.parsed.detail


def test_the_typescript_client_drives_a_dev_stack(stack: Stack, sink: Sink, tmp_path: Path) -> None:
    # Given the TypeScript client and a script that uses it (compiled with the generated types)
    node = shutil.which("node")
    assert node, "node is required (Node 20: .ci/run installs it)"
    subprocess.run(
        [str(TS / "node_modules" / ".bin" / "tsc"), "-p", str(TS), "--outDir", str(tmp_path)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    # Compiled output imports openapi-fetch: resolve it from the client's node_modules
    (tmp_path / "node_modules").symlink_to(TS / "node_modules")
    (tmp_path / "package.json").write_text('{"type": "module"}')
    # When it runs against the stack, delivering to a loopback subscriber
    result = subprocess.run(
        [node, str(tmp_path / "test" / "e2e.js")],
        env={
            **os.environ,
            "HOOKLINE_URL": stack.url,
            "HOOKLINE_API_KEY": stack.state.env()["HOOKLINE_API_KEY"],
            "SINK_URL": sink.url("/typescript"),
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    # Then every step came back as the API documents it
    assert report["pages"] >= 2 and report["deliveries"] == 3
    assert report["replay"] == "succeeded"
    assert report["problem"] == {"status": 404, "title": "Not Found"}
    wait_until(lambda: len(sink.requests("/typescript")) == 6, what="six deliveries")
