"""Deliveries sent without a claim statement (decision 0108).

Deliver's claim does four things for a first attempt: it takes one of the endpoint's slots,
holds a lease, checks the generation, and reads what to send. For a message that meets every
condition below none of them needs a statement, so deliver sends it and its record (one
statement a batch) is the only one it pays:

* **the cap cannot be reached.** At most `Deliverer.in_flight_ceiling` deliveries are in
  flight at once over every tenant group (each group's concurrency cap times its batch
  size: Lambda runs no more of a group's batches at once, and a batch sends no more than it
  holds). An endpoint whose cap is at least that is never over it, slot or not;
* **nothing else is judged per send**: no rate limit and no ordering;
* **the message carries its event** (`hookline.carried`, sent at receipt) and SQS hands it
  out for the first time, so no copy of it has been claimed or sent, and it is a first
  attempt;
* **its lease outlasts the attempt**: the delivery's queued lease (the reconciler's only
  reason to send it again) and its deadline end no sooner than a claim's lease from now;
* **the endpoint is read as kept** (`SendableEndpoints`, at most a few seconds old): one
  disabled or deleted is not sent to, its delivery failed as after a claim
  (`Deliverer.handle`).

The record's compare-and-set (`queued`, this generation, and no other claim holding it)
finishes the delivery, as after a claim. What the claim would have prevented and a send
without one does not: a message made stale by a send at receipt that half failed (its
deliveries put back to pending and sent again) is sent once more, and an endpoint changed in
the last seconds is sent to as it was. Both are duplicates or late changes, never a loss.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hookline.observability import logger
from hookline.queues import DeliveryMessage
from hookline.repositories.deliveries import Claim, claim_from_row

if TYPE_CHECKING:
    from hookline.delivery import Deliverer


def claims_without_statement(
    deliverer: Deliverer, bodies: Sequence[str], first_receives: Sequence[bool]
) -> dict[int, Claim | None]:
    """The messages of a batch that are sent without a claim, by index: each one's claim,
    made from what it carries and its endpoint as kept; None for a second copy of one in
    the same batch (skipped). The others are claimed as before."""
    carried: dict[int, DeliveryMessage] = {}
    for index, (body, first) in enumerate(zip(bodies, first_receives, strict=True)):
        message = DeliveryMessage.carrying(body) if first else None
        if message is not None:
            carried[index] = message
    if not carried:
        return {}
    try:
        endpoints = deliverer.endpoints.get(
            deliverer.db.connection, (m.endpoint_id for m in carried.values())
        )
    except Exception:  # as a failed batch claim: each message is claimed instead
        logger.warning("reading the batch's endpoints failed; claiming instead", exc_info=True)
        return {}
    now = deliverer.clock()
    until = now + deliverer.options.claim_lease
    ceiling = deliverer.in_flight_ceiling
    claims: dict[int, Claim | None] = {}
    taken: set[tuple[str, int]] = set()
    for index, message in carried.items():
        endpoint, event = endpoints.get(message.endpoint_id), message.carried
        assert event is not None  # `carrying` returns only messages that carry one
        if (
            endpoint is None
            or endpoint.rated
            or endpoint.ordered
            or endpoint.max_concurrency < ceiling
            or event.lease_until < until
            or event.deadline_at < until
        ):
            continue
        key = (message.delivery_id, message.seq)
        if key in taken:
            claims[index] = None
            continue
        taken.add(key)
        claims[index] = claim_from_row(
            {
                **endpoint.row,
                "id": message.delivery_id,
                "enqueue_seq": message.seq,
                "attempt_count": 0,
                "created_at": event.created_at,
                "deadline_at": event.deadline_at,
                "tenant_id": event.tenant_id,
                "tenant_group": message.tenant_group,
                "event_id": event.event_id,
                "event_type": event.type,
                "payload": event.payload,
                "content_type": event.content_type,
                "endpoint_id": message.endpoint_id,
                "claimed_until": event.lease_until,
                "source_id": event.source_id,
                "secrets": endpoint.sealed_secrets(now),
                "wait_seconds": 0.0,
            }
        )
    return claims
