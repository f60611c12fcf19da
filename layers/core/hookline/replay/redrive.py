"""DLQ redrive: a tenant group's dead-letter queue moved back to its queue, at the request's
pace and up to its limit, through the queue abstraction (`DeliveryQueues.redrive`)."""

from __future__ import annotations

from hookline.queues import BATCH
from hookline.replay.context import Run


def redrive(run: Run, group: str) -> None:
    """Move `group`'s dead letters back (a dry run only reads SQS's estimate of the depth).
    The DLQ shrinks as it is moved, so a run stopped early just leaves the rest there."""
    request, result, queues = run.request, run.result, run.queues
    if request.dry_run:
        depth = queues.dlq_depth(group)
        result.selected = result.would_enqueue = min(depth, request.limit)
        result.truncated = depth > request.limit
        result.notes.append("a dry run does not receive messages; the count is SQS's estimate")
        return
    pacer = run.pacer()
    empty_receives = 0
    while result.selected < request.limit:
        if not run.keep_going():
            result.stopped_early = True
            return
        letters = queues.receive_dead_letters(
            group,
            min(BATCH, request.limit - result.selected, pacer.batch(BATCH)),
            # A short poll first; one long poll confirms the queue is really empty.
            wait_seconds=1 if empty_receives else 0,
            visibility_seconds=run.options.redrive_visibility_seconds,
        )
        if not letters:
            empty_receives += 1
            if empty_receives >= 2:
                return
            continue
        empty_receives = 0
        result.selected += len(letters)
        pacer.wait()
        sent = queues.redrive(group, letters)
        result.skip("send_failed", len(letters) - len(sent))
        result.enqueued += len(sent)
        result.sample([letter.label() for letter in sent])
        pacer.done(len(sent))
        run.report()
    result.truncated = True
    result.notes.append(f"stopped at the limit ({request.limit}); run again to continue")
