"""`hookline replay` and `hookline replays list|show`: a replay is a management API request
(`POST /v1/replays`, run by this process's background runner) that the command follows to its
end; on real Postgres, moto SQS and a loopback subscriber."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.ingest import publish
from hookline.settings import get_settings
from hookline_dev.cli import main
from tests.support import operator

pytestmark = pytest.mark.integration


@pytest.fixture
def cli(pipeline, capsys, monkeypatch, tmp_path) -> Callable[..., tuple[int, Any, str]]:
    """Run `hookline …`: (exit code, parsed JSON or text output, stderr)."""
    monkeypatch.setenv("HOOKLINE_LOCAL_KEY_FILE", str(tmp_path / "master.key"))
    monkeypatch.delenv("HOOKLINE_REPLAY_FUNCTION", raising=False)

    def run(*argv: str) -> tuple[int, Any, str]:
        capsys.readouterr()
        code = main([*argv, "--poll", "0.05"] if argv[0] == "replay" else list(argv))
        out = capsys.readouterr()
        shown = json.loads(out.out) if "--json" in argv and out.out else out.out
        return code, shown, out.err

    return run


@pytest.fixture
def failed_twice(pipeline, db: Database, sink) -> dict[str, Any]:
    """An endpoint whose two deliveries failed (400), now fixed."""
    sink.behave("/c", statuses=[400])
    tenant = operator.add_tenant(db, HooklineConfig(), name="acme", group="standard")
    endpoint = operator.add_endpoint(db, get_settings(), tenant_id=tenant["id"], url=sink.url("/c"))
    for n in range(2):
        with db.connection() as conn, conn.transaction():
            publish(
                conn,
                tenant_id=tenant["id"],
                type="order.created",
                payload={"n": n},
                settings=get_settings(),
            )
    pipeline.run_until(lambda: pipeline.states() == {"failed": 2})
    sink.behave("/c", statuses=[200])
    return endpoint


def test_a_replay_runs_to_succeeded_with_its_counts(cli, failed_twice, pipeline, db, sink):
    # When the operator replays the endpoint's failed deliveries
    code, replay, _ = cli(
        "replay", "--endpoint", failed_twice["id"], "--since", "1h", "--state", "failed",
        "--requested-by", "ana", "--reason", "endpoint fixed", "--json",
    )  # fmt: skip
    # Then the command returns once the replay has finished, with its counts
    assert code == 0
    assert replay["state"] == "succeeded"
    assert (replay["total"], replay["done"]) == (2, 2)
    assert replay["result"]["enqueued"] == 2 and replay["requested_by"] == "ana"
    with db.connection() as conn:
        audit = conn.execute(
            "SELECT actor FROM audit_log WHERE id = %s", (replay["audit_id"],)
        ).fetchone()
    assert audit["actor"] == "ana"
    # And the deliveries are made
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 2})
    assert len(sink.requests("/c")) == 4
    # And the replay is listed and shown as the API has it
    code, listed, _ = cli("replays", "list", "--json")
    assert [r["id"] for r in listed["items"]] == [replay["id"]]
    code, shown, _ = cli("replays", "show", replay["id"], "--json")
    assert code == 0 and shown == listed["items"][0]
    code, text, _ = cli("replays", "list", "--state", "succeeded")
    assert replay["id"] in text and "STATE" in text


def test_a_dry_run_counts_and_changes_nothing(cli, failed_twice, pipeline):
    code, replay, _ = cli(
        "replays", "create", "--endpoint", failed_twice["id"], "--since", "1h",
        "--reason", "how many?", "--dry-run", "--json", "--poll", "0.05",
    )  # fmt: skip
    assert code == 0 and replay["state"] == "succeeded"
    assert replay["result"]["selected"] == 2 and replay["result"]["enqueued"] == 0
    assert pipeline.states() == {"failed": 2}


def test_no_wait_answers_at_once_and_show_wait_follows_it(cli, failed_twice):
    code, accepted, _ = cli(
        "replay", "--endpoint", failed_twice["id"], "--since", "1h", "--reason", "later",
        "--no-wait", "--json",
    )  # fmt: skip
    assert code == 0 and accepted["state"] in ("accepted", "running", "succeeded")
    # (this process ran it before the command returned: a CLI process is its runner)
    code, shown, _ = cli("replays", "show", accepted["id"], "--wait", "--json")
    assert code == 0 and shown["state"] == "succeeded" and shown["result"]["enqueued"] == 2


def test_a_bad_replay_request_exits_1_with_the_reason(cli, failed_twice):
    code, _, err = cli("replay", "--endpoint", failed_twice["id"], "--reason", "no window")
    assert code == 1 and "since" in err and err.startswith("error: ")
    code, _, err = cli("replay", "--since", "1h")
    assert code == 1 and "reason" in err


def test_the_same_replay_through_a_loopback_http_api(cli, failed_twice, pipeline, monkeypatch):
    from hookline.db import reset_database
    from hookline_dev.local.front import LocalFront

    # Given the API behind a real HTTP server (as `hookline dev` serves it), called with a key
    monkeypatch.setenv("HOOKLINE_LOCAL_MODE", "1")
    monkeypatch.setenv("HOOKLINE_API_KEY", "k")
    reset_database()
    from functions.api.handler import lambda_handler

    front = LocalFront(lambda_handler, port=0)
    front.start()
    try:
        code, replay, _ = cli(
            "replay", "--endpoint", failed_twice["id"], "--since", "1h", "--reason", "over http",
            "--api", front.url, "--key", "k", "--json",
        )  # fmt: skip
    finally:
        front.stop()
    # Then it ran to the end, requested by the key's caller
    assert code == 0 and replay["state"] == "succeeded"
    assert replay["result"]["enqueued"] == 2 and replay["requested_by"] == "local-operator-key"
