"""What a delivery message sent at receipt carries (decision 0108): the event, read back as
it was sent; anything not well formed is read as a message that carries nothing, so deliver
claims it; a secret kept with an endpoint stops signing at its expiry, not the copy's."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from hookline.carried import MAX_CARRIED_PAYLOAD, CarriedEvent
from hookline.queues import DeliveryMessage
from hookline.repositories.sendable_endpoints import SendableEndpoint

BEGAN = datetime(2026, 12, 6, 12, 0, 0, 123456, tzinfo=UTC)


def carried(payload: bytes = b'{"id":"evt_1"}') -> CarriedEvent | None:
    return CarriedEvent.at_receipt(
        "evt_01", "ten_1", "src_1", "order.paid", "application/json", payload,
        began=BEGAN, deadline=timedelta(hours=72), lease=timedelta(minutes=15),
    )  # fmt: skip


def test_a_message_reads_back_the_event_it_carries():
    event = carried(b"\x00binary \xff payload")
    assert event is not None
    body = DeliveryMessage("dlv_1", 3, "end_1", "standard", carried=event).body()
    message = DeliveryMessage.carrying(body)
    assert message is not None and message.carried is not None
    assert (message.delivery_id, message.seq, message.endpoint_id, message.tenant_group) == (
        "dlv_1", 3, "end_1", "standard",
    )  # fmt: skip
    back = message.carried
    assert back.payload == b"\x00binary \xff payload" and back.type == "order.paid"
    assert (back.event_id, back.tenant_id, back.source_id) == ("evt_01", "ten_1", "src_1")
    # the times, to the millisecond and never later than the sender's
    assert timedelta(0) <= event.lease_until - back.lease_until < timedelta(milliseconds=1)
    assert timedelta(0) <= event.deadline_at - back.deadline_at < timedelta(milliseconds=1)
    # and the message still parses as any other
    assert DeliveryMessage.parse(body) == ("dlv_1", 3)


def test_a_payload_over_the_limit_is_not_carried():
    assert carried(b"x" * MAX_CARRIED_PAYLOAD) is not None
    assert carried(b"x" * (MAX_CARRIED_PAYLOAD + 1)) is None


@pytest.mark.parametrize(
    "spoil",
    [
        lambda d: d.pop("event"),
        lambda d: d.pop("endpoint_id"),
        lambda d: d["event"].update(payload="not base64!"),
        lambda d: d["event"].update(lease_ms="soon"),
        lambda d: d["event"].update(source=7),
        lambda d: d.update(seq="1"),
        lambda d: d.update(event=[1]),
    ],
    ids=["no event", "no endpoint", "payload", "lease", "source", "seq", "event type"],
)
def test_a_message_not_well_formed_carries_nothing(spoil):
    doc = json.loads(DeliveryMessage("dlv_1", 1, "end_1", "standard", carried=carried()).body())
    spoil(doc)
    assert DeliveryMessage.carrying(json.dumps(doc)) is None
    assert DeliveryMessage.carrying("not json") is None


def test_a_kept_secret_stops_signing_at_its_expiry():
    endpoint = SendableEndpoint(
        {}, 1000, False, False,
        (("new", None), ("old", BEGAN + timedelta(seconds=1))),
    )  # fmt: skip
    assert endpoint.sealed_secrets(BEGAN) == ["new", "old"]
    assert endpoint.sealed_secrets(BEGAN + timedelta(seconds=1)) == ["new"]
