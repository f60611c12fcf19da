"""The pipeline bench's floor relay (`bench/pipeline.py --floor`) is what it says it is: the
bare relay that stores only what it verified and claims each batch before it sends. Its
figures are the ones a restated issue 24 target would be read against (decision 0086), so a
floor that skipped its claim, or took any signature, would flatter Hookline."""

from __future__ import annotations

import json
import time
from typing import Any

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from bench.common import REPO
from tests.support import benches
from tests.support.signers import stripe_event, stripe_headers

pytestmark = pytest.mark.integration


@pytest.fixture()
def workers(monkeypatch: pytest.MonkeyPatch) -> Any:
    """bench/pipeline_workers, imported as the bench imports it (its siblings on the path)."""
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    import pipeline_workers

    return pipeline_workers


def test_the_floor_receiver_stores_only_what_the_stripe_secret_signed(workers: Any) -> None:
    body = stripe_event("evt_floor", size=300)

    def header(secret: str = workers.STRIPE_SECRET, **kwargs: Any) -> str:
        return stripe_headers(secret, body, **kwargs)["Stripe-Signature"]

    assert workers.stripe_signed(header(), body)
    assert not workers.stripe_signed(header(), body + b" ")  # a body changed on the way
    assert not workers.stripe_signed(header("whsec_someone_else"), body)
    assert not workers.stripe_signed(header(timestamp=int(time.time()) - 301), body)  # replayed
    assert not workers.stripe_signed("v1=" + header().split("v1=")[1], body)  # no timestamp
    assert not workers.stripe_signed("garbage", body)


def test_an_offered_rate_spaces_a_receivers_requests_and_never_makes_up_for_lost_time(
    workers: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BENCH_RATE", "200")  # `--rate`: one request every 5 ms
    wait = workers.paced("receiver")
    started = time.perf_counter()
    for _ in range(21):
        wait()
    assert time.perf_counter() - started >= 0.098  # twenty intervals after the first
    time.sleep(0.06)  # a receiver that fell behind its schedule by ~12 requests
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)
    for _ in range(10):
        wait()
    assert slept == []  # it runs flat out until it is on time again
    unpaced = [workers.paced("deliver")]  # only receivers are offered a rate
    monkeypatch.setenv("BENCH_RATE", "0")  # the closed loop
    unpaced.append(workers.paced("receiver"))
    for step in unpaced:
        for _ in range(100):
            step()
    assert slept == []
    for _ in range(100):  # the paced receiver, once back on its schedule, waits again
        wait()
        if slept:
            break
    assert len(slept) == 1 and 0 < slept[0] <= 0.005


def test_a_negative_rate_is_refused_before_anything_starts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    import pipeline

    with pytest.raises(SystemExit) as refused:
        pipeline.main(["--rate", "-5"])
    assert refused.value.code == 2
    assert "--rate must be 0 (a closed loop) or more events a second, not -5" in (
        capsys.readouterr().err
    )


def test_every_pipeline_delivers_and_the_floor_pays_a_claim_per_batch(pg_admin_url: str) -> None:
    done = benches.run_bench(
        "pipeline.py", pg_admin_url,
        "--processes", "1", "--endpoints", "2", "--seconds", "0.5", "--floor", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    rows = {row["pipeline"]: row for row in json.loads(done.stdout.splitlines()[-1])}
    assert set(rows) == {"hookline", "bare", "floor"}
    assert all(row["events_per_s"] > 0 for row in rows.values())
    assert "drain gave up" not in done.stderr  # each delivered every event it accepted
    # Both relays mark each batch in one statement; the floor's deliverer also claims it
    # before it sends. Read off the deliverers' own round trips per batch: the database's
    # commit count also holds its other commits (the parent's polls, an autovacuum after the
    # Hookline phase), which in half a second moved the bare relay's by up to ~0.2 an event.
    per_batch = {
        name: rows[name]["stages"]["deliver"]["round_trips"]
        * rows[name]["messages_per_batch"] / 2  # two endpoints: two messages an event
        for name in ("bare", "floor")
    }  # fmt: skip
    assert per_batch["bare"] == pytest.approx(1, abs=0.15), per_batch
    assert per_batch["floor"] >= 1.85, per_batch


@pytest.mark.parametrize(
    ("options", "statements"),
    [
        (["--cap", "100", "--uncounted-claim"], 1),
        (["--cap", "100"], 2),
        ([], 1),
        (["--rate", "100"], 1),
    ],
    ids=["claimed, the probe", "claimed", "cap above the ceiling", "an offered rate"],
)
def test_deliver_pays_one_statement_a_batch_without_a_claim(
    pg_admin_url: str, options: list[str], statements: int
) -> None:
    # `--uncounted-claim` prices a deliver that sends without a claim statement (decision
    # 0107): the claims still run, on a connection no stage counts, so deliver's counted
    # statements are its records alone, one a batch (two, claim and record, for endpoints
    # with a cap below the in-flight ceiling, 180 in the bench's config, that a batch cannot
    # fill). The bench's own endpoints (cap 1,000, above the ceiling) are sent to without a
    # claim as built (decision 0108): one a batch
    done = benches.run_bench(
        "pipeline.py", pg_admin_url,
        "--processes", "1", "--endpoints", "2", "--seconds", "0.5", "--json", *options,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "drain gave up" not in done.stderr  # every event delivered
    hookline = next(
        r for r in json.loads(done.stdout.splitlines()[-1]) if r["pipeline"] == "hookline"
    )
    batches_per_event = hookline["endpoints"] / hookline["messages_per_batch"]
    per_batch = hookline["stages"]["deliver"]["round_trips"] / batches_per_event
    assert statements - 0.2 <= per_batch <= statements + 0.2, hookline
    if "--rate" in options:  # offered 100 a second, it makes no more than it was offered
        assert hookline["events_per_s"] <= 103, hookline


def test_every_what_if_shape_applies_to_the_schema_as_migrated(pg_admin_url: str) -> None:
    # A shape edits the functions as migrated (each edit must match once) or drops what they
    # built: one that no longer applies raises, and the figures priced with it in
    # docs/performance.md could not be made again. All of them, in one run: under them the
    # pipeline still stores and delivers every event it accepts.
    shapes = sorted((REPO / "bench" / "shapes").glob("*.sql"))
    assert len(shapes) >= 5
    done = benches.run_bench(
        "pipeline.py", pg_admin_url, "--processes", "1", "--endpoints", "2", "--seconds", "0.3",
        "--json", "--shape", ",".join(str(path) for path in shapes),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "drain gave up" not in done.stderr
    hookline = next(
        r for r in json.loads(done.stdout.splitlines()[-1]) if r["pipeline"] == "hookline"
    )
    assert hookline["events_per_s"] > 0


def test_server_cpu_counts_what_each_backend_spent_between_two_readings(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a backend that works before the first reading and exits before the second (as an
    # autovacuum worker may mid-phase), one that works throughout, and one that starts after
    # the first reading
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    import pgcost

    def backend(name: str) -> psycopg.Connection[Any]:
        return psycopg.connect(
            make_conninfo(database_url, application_name=f"{name}_{id(monkeypatch)}"),
            autocommit=True,
        )

    def burn(conn: psycopg.Connection[Any]) -> None:
        conn.execute("SELECT count(*) FROM generate_series(1, 3000000)").fetchone()

    uncounted = psycopg.connect(
        make_conninfo(database_url, application_name=pgcost.UNCOUNTED), autocommit=True
    )
    with backend("admin") as admin, backend("gone") as gone, backend("stays") as stays, uncounted:
        burn(gone)
        burn(stays)
        before = pgcost.server_cpu_by_pid(database_url, admin.info.backend_pid)
        burn(uncounted)  # the probe's backend (`--uncounted-claim`)
        gone_pid = gone.info.backend_pid
        gone.close()
        deadline = time.monotonic() + 10
        while admin.execute(
            "SELECT 1 FROM pg_stat_activity WHERE pid = %s", (gone_pid,)
        ).fetchone():
            assert time.monotonic() < deadline, "the closed backend did not exit"
            time.sleep(0.01)
        with backend("new") as new:
            burn(stays)
            burn(new)
            after = pgcost.server_cpu_by_pid(database_url, admin.info.backend_pid)
    assert before is not None and after is not None  # the test's server is on this machine
    spent = {
        role.rsplit("_", 1)[0]: seconds
        for role, seconds in pgcost.cpu_by_role(before, after).items()
        if role.endswith(f"_{id(monkeypatch)}")
    }
    # Then the one that exited counts nothing (not its CPU before the first reading, taken
    # away from the others), and the other two count the work they did in between
    assert set(spent) == {"stays", "new"}
    assert spent["stays"] > 0.02 and spent["new"] > 0.02
    # and the probe's uncounted backend is in no stage
    assert pgcost.UNCOUNTED not in pgcost.cpu_by_role(before, after)


def test_the_bare_relays_mark_stays_a_hot_update_behind_a_backlog(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The bare relay is the least a relay must write: a deliverer working through a backlog
    # (every row of its pages inserted before the first is marked, as in the closed loop with
    # ten endpoints) must not pay a new heap tuple and key entry per mark on full pages.
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    import pipeline
    import pipeline_workers

    with psycopg.connect(database_url) as conn:  # one transaction, rolled back
        conn.execute(pipeline.BARE_DDL)
        ids = [
            row[0]
            for n in range(200)
            for row in conn.execute(
                pipeline_workers.BARE_INSERT, (f"evt_{n}", b"x" * 1024, 10)
            ).fetchall()
        ]
        for start in range(0, len(ids), 10):
            conn.execute(pipeline_workers.BARE_MARK, (ids[start : start + 10],))
        updated, hot = conn.execute(
            "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_xact_user_tables"
            " WHERE relname = 'bare_deliveries'"
        ).fetchone()
        conn.rollback()
    assert updated == len(ids) == 2000
    assert hot == updated
