"""Prefixed, time-ordered identifiers (ULIDs): sortable by creation, good B-tree locality.

A ULID is 48 bits of Unix milliseconds then 80 random bits, written as 26 characters of
Crockford's base32 (github.com/ulid/spec). Encoded here rather than by python-ulid, whose
import (uuid, platform, its own classes) cost every handler's cold start ~4 ms for this one
function (docs/decisions/0073).
"""

from __future__ import annotations

import base64
import os
import time

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
# base64's base32 (RFC 4648) written in Crockford's alphabet: the same 5-bit groups, one
# C call instead of 26 Python steps per id (every event and delivery gets one).
_TO_CROCKFORD = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", CROCKFORD.encode())


def new_id(prefix: str) -> str:
    """A new id such as `evt_01JD…`."""
    return f"{prefix}_{ulid(time.time_ns() // 1_000_000, os.urandom(10))}"


def ulid(milliseconds: int, randomness: bytes) -> str:
    """The 26-character ULID of a Unix time in milliseconds and 10 random bytes."""
    value = (milliseconds & (1 << 48) - 1) << 80 | int.from_bytes(randomness, "big")
    # 20 bytes are 32 characters; the last 26 hold the 128 bits behind two zero bits.
    return base64.b32encode(value.to_bytes(20, "big"))[6:].translate(_TO_CROCKFORD).decode()
