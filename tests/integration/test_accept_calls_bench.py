"""The accept-calls bench (`bench/accept_calls.py`) measures what it says: the receiver's own
statement beside the bare insert, every variant kept in `bench/variants/accept` still applies
to the function as built, and a variant that claims at receipt really takes a slot for each
delivery (an edit that matches nothing stops the run instead of printing figures of
something else)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bench.common import REPO
from tests.support import benches

pytestmark = pytest.mark.integration


def run_bench(admin_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return benches.run_bench("accept_calls.py", admin_url, "--calls", "6", "--warm", "2", *args)


def test_each_route_is_measured_and_the_claims_variant_claims_every_delivery(
    pg_admin_url: str,
) -> None:
    variants = sorted(
        str(p.relative_to(REPO)) for p in (REPO / "bench/variants/accept").glob("*.sql")
    )
    assert variants
    done = run_bench(
        pg_admin_url, "--widths", "1,3", *[arg for v in variants for arg in ("--variant", v)]
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [line.split() for line in done.stdout.splitlines()]
    claims = {(r[0], r[1]): r[5] for r in rows if len(r) == 6 and r[0] in ("1", "3")}
    assert set(claims) == {
        (width, route)
        for width in ("1", "3")
        for route in ("bare", "built", *(Path(v).stem for v in variants))
    }
    # the built receiver leaves claims to deliver; the what-if takes one per delivery
    assert claims[("3", "built")] == "0.0"
    assert claims[("3", "claims_at_receipt")] == "3.0"
    assert claims[("1", "claims_at_receipt")] == "1.0"


def test_a_variant_that_matches_nothing_stops_the_run(pg_admin_url: str, tmp_path: Path) -> None:
    variant = tmp_path / "typo.sql"
    variant.write_text("-- replace:\nINSERT INTO no_such_table\n-- with:\nSELECT 1\n-- end\n")
    done = run_bench(pg_admin_url, "--widths", "1", "--variant", str(variant))
    assert done.returncode != 0
    assert "0 matches for 'INSERT INTO no_such_table" in done.stderr
