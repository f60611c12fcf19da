"""Ids are ULIDs after a prefix: sortable by creation time, as day partitions need (0040)."""

from __future__ import annotations

import random
import threading
import time
from datetime import UTC, date, datetime

import pytest

from hookline.ids import CROCKFORD, new_id, ulid, ulid_day

pytestmark = pytest.mark.unit


def decoded_milliseconds(value: str) -> int:
    """The Unix milliseconds in a ULID's first 10 characters."""
    number = 0
    for char in value[:10]:
        number = number * 32 + CROCKFORD.index(char)
    return number


def test_ids_carry_their_creation_time_and_sort_by_it() -> None:
    # Given the time before and after two ids made a few milliseconds apart
    before = time.time_ns() // 1_000_000
    first = new_id("evt")
    time.sleep(0.003)
    second = new_id("evt")
    after = time.time_ns() // 1_000_000
    # Then each is the prefix and 26 Crockford characters, whose time is when it was made
    for made in (first, second):
        prefix, value = made.split("_")
        assert prefix == "evt" and len(value) == 26 and set(value) <= set(CROCKFORD)
        assert before <= decoded_milliseconds(value) <= after
    # And the later id sorts after the earlier one, as text (how the ledger orders them)
    assert first < second


def test_ids_made_within_one_millisecond_keep_the_order_they_were_made_in() -> None:
    # Given thousands of ids made back to back by four threads (many share a millisecond)
    made: list[list[str]] = [[] for _ in range(4)]

    def make(into: list[str]) -> None:
        into.extend(new_id("ten") for _ in range(5000))

    threads = [threading.Thread(target=make, args=(into,)) for into in made]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Then each thread's ids sort in the order it made them, as a list "newest first" shows,
    # and no two ids of the process are the same
    for ids in made:
        assert ids == sorted(ids) and len(set(ids)) == len(ids)
    every = [identifier for ids in made for identifier in ids]
    assert len(set(every)) == len(every) == 20_000
    # And the ids still carry their millisecond: many of them share one
    assert len({identifier[:14] for identifier in made[0]}) < 5000


def test_ulid_encodes_the_specifications_bounds() -> None:
    # Given the smallest and the largest time and randomness a ULID can hold (ulid/spec)
    # Then they encode as the specification's smallest and largest ULIDs
    assert ulid(0, bytes(10)) == "0" * 26
    assert ulid((1 << 48) - 1, b"\xff" * 10) == "7" + "Z" * 25
    # And the time sits in the first 10 characters, the randomness in the last 16
    assert ulid(1, bytes(10)) == "0" * 9 + "1" + "0" * 16
    assert ulid(0, bytes(9) + b"\x01") == "0" * 25 + "1"


def test_ulid_is_the_per_character_crockford_encoding() -> None:
    # Given times and randomness across the whole range, and the spec's encoding written out:
    # 26 characters of 5 bits each, the first holding the 128-bit value's top 3 bits
    rng = random.Random(24)
    for _ in range(2000):
        milliseconds = rng.getrandbits(rng.choice((1, 24, 41, 48)))
        randomness = rng.randbytes(10)
        value = milliseconds << 80 | int.from_bytes(randomness, "big")
        spelled = "".join(CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))
        # Then the encoder writes exactly that
        assert ulid(milliseconds, randomness) == spelled


def test_an_ids_day_is_the_utc_day_of_its_time() -> None:
    # Given ids made for the last millisecond of one UTC day and the first of the next
    midnight = int(datetime(2026, 12, 3, tzinfo=UTC).timestamp() * 1000)
    before, after = (f"dlv_{ulid(ms, bytes(10))}" for ms in (midnight - 1, midnight))
    # Then each falls on its own day, as the day partitions split them
    assert ulid_day(before) == date(2026, 12, 2)
    assert ulid_day(after) == date(2026, 12, 3)
    assert ulid_day(new_id("dlv")) == datetime.now(UTC).date()
    # And an id without ten Crockford characters after its prefix has no day
    for odd in ("dlv_", "dlv_01jd", "dlv_01JD0000I0", "dlv", ""):
        assert ulid_day(odd) is None, odd
