"""Sending: each selected delivery is reset for a new run (new generation, fresh deadline)
and queued, a batch at a time and no faster than asked; a dry run only judges them."""

from __future__ import annotations

from collections.abc import Sequence

from hookline.queues import DeliveryMessage
from hookline.replay.context import Run, chunks
from hookline.repositories import deliveries as delivery_repo
from hookline.repositories import replay as repo


def replay_deliveries(run: Run, ids: Sequence[str]) -> int | None:
    """Replay (or, in a dry run, judge) `ids`; where it stopped, as in `send_paced`."""
    if run.request.dry_run:
        judge(run, ids)
        return None
    return send_paced(run, ids)


def judge(run: Run, ids: Sequence[str]) -> None:
    """Count what a replay of `ids` would send, and why it would skip the others."""
    result = run.result
    result.would_enqueue = would = 0
    for chunk in chunks(ids, 1000):
        with run.db.connection() as conn:
            judged = repo.judge(conn, chunk)
        for delivery_id in chunk:
            reason = judged.get(delivery_id, "not_found")
            if reason is None:
                would += 1
                result.sample([delivery_id])
            else:
                result.skip(reason)
        result.would_enqueue = would
        run.report()


def send_paced(run: Run, ids: Sequence[str]) -> int | None:
    """Reset and send `ids`, a batch at a time, no faster than asked. Each batch is reset just
    before it is sent, so its lease starts when it goes out. Returns the index of the first id
    not reached when `keep_going` stopped it (`stopped_early` is set), else None."""
    result, options = run.result, run.options
    pacer = run.pacer()
    step = pacer.batch(options.batch_size)
    for start in range(0, len(ids), step):
        if not run.keep_going():
            result.stopped_early = True
            return start
        chunk = ids[start : start + step]
        pacer.wait()
        with run.db.connection() as conn:
            resets = repo.reset(conn, chunk, lease=options.queued_lease, deadline=options.deadline)
        found = {r.id for r in resets}
        result.skip("not_found", sum(1 for i in chunk if i not in found))
        messages = []
        held = []  # ordered (decision 0069): they go out through their key's gate
        for r in resets:
            if r.skip is not None:
                result.skip(r.skip)
            elif r.held:
                held.append(r.id)
            else:
                assert r.seq is not None and r.endpoint_id and r.tenant_group
                messages.append(DeliveryMessage(r.id, r.seq, r.endpoint_id, r.tenant_group))
        failed = run.queues.send(messages) if messages else []
        if failed:
            # Back to pending, due now: the next fan-out run sends them.
            with run.db.connection() as conn:
                delivery_repo.return_unsent(conn, [m.delivery_id for m in failed])
            result.skip("send_failed", len(failed))
        failed_ids = {m.delivery_id for m in failed}
        sent = [m.delivery_id for m in messages if m.delivery_id not in failed_ids] + held
        result.enqueued += len(sent)
        result.sample(sent)
        pacer.done(len(messages))
        run.report()
    return None
