"""The chaos run, CI size: 1,000 events through separately killable role processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.chaos_harness import KILLABLE, ChaosOptions, ChaosRun

pytestmark = pytest.mark.e2e


def test_killing_every_component_and_postgres_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    # Given the stack as one process per role, 50 endpoints that fail, time out, throttle,
    # disappear (410) or are slow behind a cap, and providers retrying until answered 2xx
    # (offered below what the stack delivers here, so a queue message waits less than the
    # short queued lease and every re-enqueue the reconciler makes is a real repair)
    options = ChaosOptions(
        workdir=tmp_path, events=1000, rate=25, kill_every=(1.0, 2.5), drain_timeout=240,
        queued_lease_seconds=20, seed=8,
    )  # fmt: skip
    # When every role is SIGKILLed and restarted at random moments, Postgres crash-restarts
    # once and queue messages are deleted unprocessed
    outcome = ChaosRun(options).run()
    # Then every accepted event is in the ledger, every delivery finished (delivered, or
    # failed/dead with a reason), none was created twice, each was sent under one webhook-id,
    # the cap held, a final reconcile found nothing to repair, and no secret or signature
    # (the source's, any endpoint's, any MAC sent or received) is in any process's log
    assert outcome.violations == [], outcome.table()
    counts = outcome.counts
    assert counts["accepted"] == 1000 and counts["lost"] == 0
    # ... and the faults really happened, so the run proved something
    assert all(counts[f"kills {role}"] >= 1 for role in KILLABLE), outcome.table()
    assert counts["pg_restarts"] == 1
    assert counts["deleted"] >= 5
    assert counts["served 5xx"] > 0 and counts["served timeout"] > 0
    assert counts["served 429"] > 0 and counts["served 410"] >= 1
    assert counts["state delivered"] > 0 and counts["attempts"] > counts["deliveries"]
    assert counts["secret_leaks"] == 0
    assert counts["log_files_scanned"] >= len(KILLABLE) and counts["secrets_looked_for"] > 2000
