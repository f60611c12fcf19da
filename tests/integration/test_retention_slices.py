"""A day past retention is archived in slices, across runs when one run has not the time, and
dropped once every slice is archived and still true (decision 0118): real Postgres, moto's S3,
the real pipeline on a loopback sink."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, time, timedelta

import pytest

from hookline.config import HooklineConfig
from hookline.ids import ulid_time
from hookline.management import delivery_service, endpoint_service
from hookline.replay import run_replay
from hookline.repositories import replay as replay_repo
from hookline.repositories import retention as repo
from hookline.restore import erase_tenant
from hookline.retention import (
    RetentionPolicy,
    apply_retention,
    scheduled_retention,
    set_tenant_retention,
)
from hookline.runtime import build_reconciler, delivery_queues, replay_options, reset_runtime
from hookline.settings import get_settings
from tests.integration.test_retention import LATER, archived, count, publish, s3, tenant
from tests.support import operator

pytestmark = pytest.mark.integration

__all__ = ["s3"]  # the fixture, used by name

SMALL = RetentionPolicy(slice_events=2)  # a slice of a few events, so a day has several


def runs_for(db, slices: int):
    """A run's keep_going that says stop once `slices` slices are recorded (whatever else the
    run asks it for, such as an empty day's partitions left from before a midnight)."""

    def keep_going() -> bool:
        return count(db, "SELECT count(*) FROM archive_slices") < slices

    return keep_going


def delivered_day(
    pipeline, db, sink, events: int, *, settled: int | None = None
) -> tuple[str, list[str]]:
    """A tenant with an endpoint and `events` delivered events of today (`settled` delivered
    in all)."""
    t = tenant(db)
    operator.add_endpoint(db, get_settings(), tenant_id=t, url=sink.url("/in"))
    ids = [publish(db, t, {"n": i}).id for i in range(events)]
    pipeline.run_until(lambda: pipeline.states() == {"delivered": settled or events})
    return t, ids


def two_tenants_first_slice_archived(
    pipeline, db, sink, s3, now, *, first: str, events: tuple[int, int]
) -> tuple[str, str, list[str]]:
    """A day of two tenants' delivered events (`first`'s, then another's, `events` of each)
    past retention, its first slice archived: the first tenant, the other and its event ids."""
    first_id = operator.add_tenant(db, HooklineConfig(), name=first, group="standard")["id"]
    operator.add_endpoint(db, get_settings(), tenant_id=first_id, url=sink.url(f"/{first}"))
    for i in range(events[0]):
        publish(db, first_id, {"n": i})
    pipeline.run_until(lambda: pipeline.states() == {"delivered": events[0]})
    other, ids = delivered_day(pipeline, db, sink, events[1], settled=sum(events))
    apply_retention(db, s3.store(), SMALL, as_of=now + LATER, keep_going=runs_for(db, 1))
    return first_id, other, ids


def slices_of_today(db) -> list[repo.ArchivedSlice]:
    with db.connection() as conn:
        return repo.day_slices(conn, datetime.now(UTC).date())


def test_a_day_too_large_for_one_run_is_archived_across_runs_then_dropped(
    pipeline, db, sink, s3, now
):
    # Given a day of 7 delivered events, past retention
    t, ids = delivered_day(pipeline, db, sink, 7)
    # When a run has the time for one slice of the day
    first = apply_retention(db, s3.store(), SMALL, as_of=now + LATER, keep_going=runs_for(db, 1))
    # Then it archived that slice and said the day is in progress, and removed nothing
    assert (first.slices_archived, first.day_in_progress) == (1, now.date().isoformat())
    assert now.date().isoformat() not in first.days_dropped and first.errors == []
    assert count(db, "SELECT count(*) FROM events") == 7
    assert 1 <= len(archived(s3)) < 7
    # When the next run has the time for the rest
    second = apply_retention(db, s3.store(), SMALL, as_of=now + LATER)
    # Then the day is dropped, the report counts the whole day, and the archive holds every
    # event once
    assert now.date().isoformat() in second.days_dropped and second.day_in_progress is None
    assert second.removed["events"] == {t: 7} and second.removed["deliveries"] == {t: 7}
    assert second.removed["attempts"] == {t: 7}
    assert count(db, "SELECT count(*) FROM events") == 0
    assert Counter(r["id"] for r in archived(s3)) == Counter(ids)
    # And the slices, each a range of the day's ids with at least one event, went with it
    assert second.slices_archived >= 2 and slices_of_today(db) == []


def test_an_empty_day_past_retention_is_dropped_without_a_slice_or_the_runs_time(
    pipeline, db, sink, s3, now
):
    # Given an empty day's partitions, past retention, before a day of delivered events (as a
    # deployment's days made ahead, or a day with no traffic)
    empty = now.date() - timedelta(days=3)
    with db.connection() as conn:
        repo.create_day_partitions(conn, empty)
    delivered_day(pipeline, db, sink, 4)
    # When a run has the time for one slice
    report = apply_retention(db, s3.store(), SMALL, as_of=now + LATER, keep_going=runs_for(db, 1))
    # Then the empty day is dropped without a slice, and the run's slice is today's first
    assert empty.isoformat() in report.days_dropped and report.errors == []
    assert (report.slices_archived, report.day_in_progress) == (1, now.date().isoformat())
    assert len(slices_of_today(db)) == 1
    with db.connection() as conn:
        assert empty not in [day for day, _ in repo.list_day_partitions(conn)]


def test_a_slice_whose_rows_changed_after_it_was_archived_is_archived_again(
    pipeline, db, sink, s3, now
):
    # Given a day of 4 delivered events whose first slice a run archived
    t, ids = delivered_day(pipeline, db, sink, 4)
    apply_retention(db, s3.store(), SMALL, as_of=now + LATER, keep_going=runs_for(db, 1))
    [first_slice] = slices_of_today(db)
    in_slice = [i for i in ids if first_slice.lo <= i < first_slice.hi]
    assert in_slice
    # And a delivery of that slice replayed and delivered again since
    settings = get_settings()
    delivery = pipeline.delivery(event_id=in_slice[0])
    delivery_service.resend_delivery(
        db, operator.OPERATOR, delivery["id"],
        lambda doc: run_replay(db, delivery_queues(settings), doc, replay_options(settings)),
    )  # fmt: skip
    attempts = "SELECT count(*) FROM attempt_log WHERE delivery_id = %s"
    pipeline.run_until(
        lambda: count(db, attempts, delivery["id"]) == 2 and pipeline.states() == {"delivered": 4}
    )
    # When the next run archives the rest and drops the day
    report = apply_retention(db, s3.store(), SMALL, as_of=now + LATER)
    assert now.date().isoformat() in report.days_dropped
    # Then the archive holds the replayed delivery with both of its attempts, and every event
    # once
    records = archived(s3)
    assert Counter(r["id"] for r in records) == Counter(ids)
    [line] = [r for r in records if r["id"] == in_slice[0]]
    assert [a["status_code"] for a in line["deliveries"][0]["attempts"]] == [200, 200]
    assert report.removed["attempts"] == {t: 5}


def test_a_slice_given_deliveries_by_a_refanout_after_it_was_archived_is_archived_again(
    pipeline, db, sink, s3, now
):
    # Given a day of 4 delivered events whose first slice a run archived
    t, ids = delivered_day(pipeline, db, sink, 4)
    apply_retention(db, s3.store(), SMALL, as_of=now + LATER, keep_going=runs_for(db, 1))
    assert len(slices_of_today(db)) == 1
    # And an endpoint added since, sent the day's history by a replay that fans it out again
    # (its deliveries' first attempts are on their rows: no row of `attempts` is added)
    settings = get_settings()
    late = operator.add_endpoint(db, settings, tenant_id=t, url=sink.url("/late"))
    doc = {"endpoint_id": late["id"], "since": "1h", "refanout": True,
           "requested_by": "ana@example.com", "reason": "a new endpoint's history"}  # fmt: skip
    result = run_replay(db, delivery_queues(settings), doc, replay_options(settings))
    assert result["created"] == 4
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 8})
    # When the next run archives the rest and drops the day
    report = apply_retention(db, s3.store(), SMALL, as_of=now + LATER)
    # Then the archive holds every event once, each with both of its deliveries
    assert now.date().isoformat() in report.days_dropped
    records = archived(s3)
    assert Counter(r["id"] for r in records) == Counter(ids)
    assert all(
        {d["endpoint_id"] for d in r["deliveries"]} >= {late["id"]} and len(r["deliveries"]) == 2
        for r in records
    )
    assert report.removed["deliveries"] == {t: 8}


def test_deliveries_a_refanout_creates_mark_their_archived_slice_to_be_written_again(
    pipeline, db, sink, s3, now
):
    # Given a day of 4 delivered events whose first slice a run archived, and a new endpoint
    t, ids = delivered_day(pipeline, db, sink, 4)
    apply_retention(db, s3.store(), SMALL, as_of=now + LATER, keep_going=runs_for(db, 1))
    late = operator.add_endpoint(db, get_settings(), tenant_id=t, url=sink.url("/late"))
    # When a refanout creates the new endpoint's deliveries of the day, held (as when the
    # replay that made them stops before it sends them: the fan-out sends them after the hold)
    with db.connection() as conn:
        _, created, _ = replay_repo.create_missing(
            conn, ids, late["id"], deadline=timedelta(hours=1), hold=timedelta(hours=1)
        )
    # Then the archived slice is marked, so the day's drop writes it again
    assert len(created) == 4
    [marked] = slices_of_today(db)
    assert marked.changed


def test_a_slice_whose_delivery_was_resent_and_ended_without_an_attempt_is_archived_again(
    pipeline, db, sink, s3, now
):
    # Given a day of 4 delivered events whose first slice a run archived
    t, ids = delivered_day(pipeline, db, sink, 4)
    apply_retention(db, s3.store(), SMALL, as_of=now + LATER, keep_going=runs_for(db, 1))
    [first_slice] = slices_of_today(db)
    event_id = next(i for i in ids if first_slice.lo <= i < first_slice.hi)
    # And one of its deliveries resent since, its endpoint disabled before the resend went
    # out, so that it ended failed without an attempt (no count the drop compares changed)
    settings = get_settings()
    delivery = pipeline.delivery(event_id=event_id)
    delivery_service.resend_delivery(
        db, operator.OPERATOR, delivery["id"],
        lambda doc: run_replay(db, delivery_queues(settings), doc, replay_options(settings)),
    )  # fmt: skip
    endpoint_service.set_endpoint_enabled(
        db, operator.OPERATOR, delivery["endpoint_id"], enabled=False, reason="test"
    )
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 3, "failed": 1})
    # When the next run archives the rest and drops the day
    report = apply_retention(db, s3.store(), SMALL, as_of=now + LATER)
    # Then the archive holds that delivery as it ended, and every event once
    assert now.date().isoformat() in report.days_dropped
    records = archived(s3)
    assert Counter(r["id"] for r in records) == Counter(ids)
    [line] = [r for r in records if r["id"] == event_id]
    assert line["deliveries"][0]["state"] == "failed"
    assert line["deliveries"][0]["last_error"] == "endpoint disabled"
    assert report.removed["deliveries"] == {t: 4}


def test_a_run_out_of_time_before_a_day_removes_nothing_and_the_next_goes_on(
    pipeline, db, sink, s3, now
):
    # Given a day past retention
    delivered_day(pipeline, db, sink, 3)
    # When a run has no time left for a slice
    report = apply_retention(db, s3.store(), SMALL, as_of=now + LATER, keep_going=runs_for(db, 0))
    # Then it archived nothing and removed nothing
    assert report.slices_archived == 0 and report.days_dropped == [] and archived(s3) == []
    assert count(db, "SELECT count(*) FROM events") == 3


def test_a_day_whose_recorded_slices_leave_a_gap_is_sliced_again_before_it_drops(
    pipeline, db, sink, s3, now
):
    # Given a day past retention whose slices' record says its end is archived, but not its
    # start (as if the day became whole for the drop after its slices were taken)
    t, ids = delivered_day(pipeline, db, sink, 3)
    with db.connection() as conn:
        bounds = repo.day_bounds(conn, now.date())
        noon = "evt_" + ulid_time(datetime.combine(now.date(), time(12), tzinfo=UTC))
        repo.record_slice(conn, bounds.between(noon, bounds.hi), {}, attempt_rows=0)
    # When retention runs
    report = apply_retention(db, s3.store(), SMALL, as_of=now + LATER)
    # Then nothing of the day is removed, and its slices are to be made again
    assert now.date().isoformat() not in report.days_dropped
    assert report.day_in_progress == now.date().isoformat()
    assert count(db, "SELECT count(*) FROM events") == 3 and slices_of_today(db) == []
    # And the next run makes them and drops the day, every event archived once
    again = apply_retention(db, s3.store(), SMALL, as_of=now + LATER)
    assert now.date().isoformat() in again.days_dropped and again.removed["events"] == {t: 3}
    assert Counter(r["id"] for r in archived(s3)) == Counter(ids)


def test_a_tenant_erased_while_its_day_is_archived_leaves_nothing_of_it(
    pipeline, db, sink, s3, now
):
    # Given a day of two tenants' events, its first slice (the erased tenant's first events)
    # archived
    erased, kept, kept_ids = two_tenants_first_slice_archived(
        pipeline, db, sink, s3, now, first="gone", events=(3, 2)
    )
    # When one tenant is erased, then the day's archive goes on
    erase_tenant(db, s3.store(), erased, confirm=True, actor="test")
    assert erased not in str([s.counts for s in slices_of_today(db)])
    report = apply_retention(db, s3.store(), SMALL, as_of=now + LATER)
    # Then the day is dropped with the other tenant's events archived, and nothing of the
    # erased one is in the archive or the report
    assert now.date().isoformat() in report.days_dropped
    assert Counter(r["id"] for r in archived(s3)) == Counter(kept_ids)
    assert report.removed["events"] == {kept: 2}
    assert s3.store().keys(f"ledger/tenant={erased}/") == []


def test_a_slice_archived_without_an_event_it_now_holds_is_archived_again(
    pipeline, db, sink, s3, now
):
    # Given a day whose first slice was archived without one of its events (as when that
    # event's delivery was unfinished while the slice was read: the selection leaves it)
    t, ids = delivered_day(pipeline, db, sink, 4)
    apply_retention(db, s3.store(), SMALL, as_of=now + LATER, keep_going=runs_for(db, 1))
    [first_slice] = slices_of_today(db)
    held = first_slice.counts[t]
    with db.connection() as conn:
        conn.execute(
            "UPDATE archive_slices SET counts = %s::jsonb WHERE lo = %s",
            (f'{{"{t}": [{held[0] - 1}, {held[1] - 1}, {held[2] - 1}]}}', first_slice.lo),
        )
    # When the next run archives the rest and drops the day
    report = apply_retention(db, s3.store(), SMALL, as_of=now + LATER)
    # Then that slice was written again (one object more than the run's new slices), and the
    # report and the archive hold every event once
    assert now.date().isoformat() in report.days_dropped
    assert report.archived_objects == report.slices_archived + 1
    assert report.removed["events"] == {t: 4}
    assert Counter(r["id"] for r in archived(s3)) == Counter(ids)


@pytest.fixture
def reconciler(pipeline, db, s3, monkeypatch):
    """A reconciler as deployed, archiving to the test's bucket."""
    monkeypatch.setenv("HOOKLINE_ARCHIVE_BUCKET", s3.name)
    get_settings.cache_clear()
    reset_runtime()
    yield build_reconciler(get_settings(), db)
    get_settings.cache_clear()
    reset_runtime()


def test_reconcile_goes_on_with_a_day_in_progress_in_runs_that_are_not_the_hours(
    pipeline, db, sink, s3, now, reconciler
):
    # Given a day past retention, and a reconcile run that is not the hour's first
    t, ids = delivered_day(pipeline, db, sink, 4)
    off_hour = (now + LATER).replace(minute=30)
    assert reconciler.retention is not None
    # When it runs before any of the day is archived, it leaves retention to the hour's run
    assert reconciler.retention(off_hour, lambda: True)["retention"] == "next hour"
    assert count(db, "SELECT count(*) FROM events") == 4 and archived(s3) == []
    # When an hour's run archived the day's first slice, then ran out of time
    apply_retention(db, s3.store(), SMALL, as_of=now + LATER, keep_going=runs_for(db, 1))
    # And an earlier day past retention, not in progress (its partitions made since)
    earlier = now.date() - timedelta(days=3)
    with db.connection() as conn:
        repo.create_day_partitions(conn, earlier)
    # Then the next run that is not the hour's goes on with the day in progress and drops it,
    # and leaves the other day to the hour's run
    report = reconciler.retention(off_hour, lambda: True)
    assert report["days_dropped"] == [now.date().isoformat()] and report["errors"] == []
    assert report["removed"]["events"] == {t: 4}
    assert count(db, "SELECT count(*) FROM events") == 0
    assert Counter(r["id"] for r in archived(s3)) == Counter(ids)
    # And with no day in progress, the run after it leaves retention to the hour's again
    assert reconciler.retention(off_hour, lambda: True)["retention"] == "next hour"
    with db.connection() as conn:
        assert earlier in [day for day, _ in repo.list_day_partitions(conn)]


def test_a_day_no_longer_whole_is_no_longer_in_progress(pipeline, db, sink, s3, now):
    # Given a day of two tenants whose first slice was archived
    longer, t, ids = two_tenants_first_slice_archived(
        pipeline, db, sink, s3, now, first="kept", events=(2, 3)
    )
    # When one tenant is given a longer retention, and retention runs again
    set_tenant_retention(db, longer, 365)
    report = apply_retention(db, s3.store(), SMALL, as_of=now + LATER)
    # Then the other tenant's events are archived and removed, the kept ones stay, and the
    # day is no longer one in progress
    assert report.removed["events"] == {t: 3} and report.errors == []
    assert now.date().isoformat() not in report.days_dropped and report.day_in_progress is None
    assert count(db, "SELECT count(*) FROM events") == 2
    assert set(ids) <= {r["id"] for r in archived(s3)}
    assert slices_of_today(db) == []
    with db.connection() as conn:
        assert now.date() not in repo.days_in_progress(conn)


def test_the_share_of_a_day_others_keep_goes_in_slices_across_runs(pipeline, db, sink, s3, now):
    # Given a day of two tenants' events: one's past retention, the other's kept for a year
    gone, gone_ids = delivered_day(pipeline, db, sink, 5)
    kept = operator.add_tenant(db, HooklineConfig(), name="kept", group="standard")["id"]
    operator.add_endpoint(db, get_settings(), tenant_id=kept, url=sink.url("/kept"))
    for i in range(2):
        publish(db, kept, {"n": i})
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 7})
    set_tenant_retention(db, kept, 365)
    # When a run has the time until its first archive object is written
    first = apply_retention(
        db, s3.store(), SMALL, as_of=now + LATER, keep_going=lambda: archived(s3) == []
    )
    # Then it archived and removed a slice of the expired tenant's share, and says the day is
    # in progress
    went = first.removed["events"][gone]
    assert 1 <= went < 5 and first.archived_objects == 1 and first.errors == []
    assert first.day_in_progress == now.date().isoformat()
    assert count(db, "SELECT count(*) FROM events") == 7 - went
    with db.connection() as conn:
        assert now.date() in repo.days_in_progress(conn)
    # When the next reconcile run, five minutes on and not the hour's, has the time
    second = scheduled_retention(
        db, s3.store(), SMALL, as_of=now + LATER + timedelta(minutes=5), keep_going=lambda: True,
        first_of_hour=False,
    )  # fmt: skip
    # Then it went on with the share: the rest of it went, the kept tenant's events stay, the
    # day is not dropped nor in progress, and the archive holds each of the expired tenant's
    # events once
    assert second["removed"]["events"] == {gone: 5 - went} and second["day_in_progress"] is None
    assert now.date().isoformat() not in second["days_dropped"]
    with db.connection() as conn:
        assert now.date() not in repo.days_in_progress(conn)
    assert count(db, "SELECT count(*) FROM events WHERE tenant_id = %s", kept) == 2
    assert count(db, "SELECT count(*) FROM events") == 2
    assert Counter(r["id"] for r in archived(s3)) == Counter(gone_ids)


def test_a_slice_holds_about_its_bound_of_deliveries_however_many_endpoints(
    pipeline, db, sink, s3, now
):
    # Given a day of 4 events, each delivered to three endpoints
    t = tenant(db)
    for name in ("a", "b", "c"):
        operator.add_endpoint(db, get_settings(), tenant_id=t, url=sink.url(f"/{name}"))
    ids = [publish(db, t, {"n": i}).id for i in range(4)]
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 12})
    # When retention runs with slices of many events but at most 4 deliveries
    policy = RetentionPolicy(slice_events=1_000, slice_deliveries=4)
    report = apply_retention(db, s3.store(), policy, as_of=now + LATER)
    # Then the day went in several slices (a slice ends at the millisecond of its 4th delivery
    # past its first millisecond), and every event of it is archived once
    assert now.date().isoformat() in report.days_dropped and report.errors == []
    assert report.slices_archived >= 2
    assert Counter(r["id"] for r in archived(s3)) == Counter(ids)
    assert report.removed["deliveries"] == {t: 12}
