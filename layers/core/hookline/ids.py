"""Prefixed, time-ordered identifiers (ULIDs): sortable by creation, good B-tree locality.

A ULID is 48 bits of Unix milliseconds then 80 random bits, written as 26 characters of
Crockford's base32 (github.com/ulid/spec). Encoded here rather than by python-ulid, whose
import (uuid, platform, its own classes) cost every handler's cold start ~4 ms for this one
function (docs/decisions/0073).

Ids made in one process are monotonic (the specification's monotonic mode): within one
millisecond, or if the clock steps back, the next id is the last one plus 1, so ids sort in
the order they were made and a list "newest first" shows that order.
"""

from __future__ import annotations

import os
import threading
import time
from datetime import UTC, date, datetime

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
# Every 10-bit group as its two characters: 13 steps per id instead of 26 (every event and
# delivery gets one).
_PAIRS = [first + second for first in CROCKFORD for second in CROCKFORD]
_TIME_MASK = (1 << 48) - 1
_lock = threading.Lock()
_last = 0  # the 128-bit value of the last id this process made


def new_id(prefix: str) -> str:
    """A new id such as `evt_01JD…`, after every id this process made before it."""
    global _last
    fresh = (time.time_ns() // 1_000_000 & _TIME_MASK) << 80 | int.from_bytes(os.urandom(10))
    with _lock:
        # Same millisecond (or the clock stepped back): one more than the last id.
        value = _last + 1 if fresh >> 80 <= _last >> 80 else fresh
        _last = value
    return f"{prefix}_{_encode(value)}"


def ulid(milliseconds: int, randomness: bytes) -> str:
    """The 26-character ULID of a Unix time in milliseconds and 10 random bytes."""
    return _encode((milliseconds & _TIME_MASK) << 80 | int.from_bytes(randomness, "big"))


def ulid_time(at: datetime) -> str:
    """The first 10 characters of a ULID made at `at`: its time, by which ids sort."""
    return ulid(int(at.timestamp() * 1000), bytes(10))[:10]


def _encode(value: int) -> str:
    # 26 characters are 130 bits: the first pair's top two bits are zero.
    return "".join([_PAIRS[(value >> shift) & 1023] for shift in range(120, -1, -10)])


def ulid_day(identifier: str) -> date | None:
    """The UTC day an id's ULID time falls on (`dlv_01JD…` -> its day), or None when the id
    does not hold ten characters of Crockford base32 after its prefix."""
    encoded = identifier.partition("_")[2][:10]
    if len(encoded) != 10 or encoded.strip(CROCKFORD):
        return None
    milliseconds = 0
    for char in encoded:
        milliseconds = milliseconds * 32 + CROCKFORD.index(char)
    return datetime.fromtimestamp(milliseconds / 1000, tz=UTC).date()
