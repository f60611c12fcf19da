"""The deliver-calls bench (`bench/deliver_calls.py`) measures what it says: each route's claim
and record run as deliver runs them and must succeed, a variant's edits are applied to the
built template and a shape is in place before the first batch (an edit that matches nothing,
a claim that grants no slot, a receiver that made no delivery stop the run instead of
printing figures of something else)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bench.common import REPO
from tests.support import benches

pytestmark = pytest.mark.integration


def run_bench(admin_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return benches.run_bench("deliver_calls.py", admin_url, "--events", "12", *args)


def test_each_route_is_measured_per_call_and_per_delivery(pg_admin_url: str) -> None:
    # every variant kept in bench/variants: each still applies to the template as built
    variants = sorted(str(p.relative_to(REPO)) for p in (REPO / "bench/variants").glob("*.sql"))
    assert variants
    done = run_bench(
        pg_admin_url, "--widths", "2", "--batches", "1,4",
        *[arg for v in variants for arg in ("--variant", v)],
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [line.split() for line in done.stdout.splitlines()]
    measured = {(r[1], r[2]) for r in rows if len(r) == 7 and r[0] == "2"}
    assert measured == {
        (size, route)
        for size in ("1", "4")
        for route in ("bare", "floor", "built", *(Path(v).stem for v in variants))
    }
    assert "fixed us/batch" in done.stdout


def test_a_variant_that_matches_nothing_stops_the_run(pg_admin_url: str, tmp_path: Path) -> None:
    variant = tmp_path / "typo.sql"
    variant.write_text("-- replace:\nFOR KEY SHARE OF y\n-- with:\nFOR SHARE OF y\n-- end\n")
    done = run_bench(pg_admin_url, "--widths", "1", "--batches", "2", "--variant", str(variant))
    assert done.returncode != 0
    assert "0 matches for 'FOR KEY SHARE OF y" in done.stderr


def test_a_variant_whose_claim_grants_no_slot_stops_the_run(
    pg_admin_url: str, tmp_path: Path
) -> None:
    variant = tmp_path / "no_slot.sql"
    variant.write_text(
        "-- replace:\n                ELSE 0::double precision END AS wait_seconds\n"
        "-- with:\n                ELSE 1::double precision END AS wait_seconds\n-- end\n"
    )
    done = run_bench(pg_admin_url, "--widths", "1", "--batches", "2", "--variant", str(variant))
    assert done.returncode != 0
    assert "no_slot: 0 of 2 claimed with a slot" in done.stderr


def test_a_shape_is_in_place_before_the_first_batch(pg_admin_url: str, tmp_path: Path) -> None:
    shape = tmp_path / "disabled.sql"
    shape.write_text("UPDATE endpoints SET enabled = false;\n")  # the receiver fans out to none
    done = run_bench(pg_admin_url, "--widths", "1", "--batches", "2", "--shape", str(shape))
    assert done.returncode != 0
    assert "built: 0 deliveries made for 12 events" in done.stderr
