"""An archive object is encoded as it goes (decision 0117): one gzip stream of JSON Lines cut
into parts, so retention holds a part of a day's archive in memory, not the day."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterator

from hookline.archive import decode_lines, gzip_parts


def records(n: int, consumed: list[int]) -> Iterator[str]:
    for i in range(n):
        consumed[0] = i + 1
        yield json.dumps({"id": f"evt_{i:06d}", "payload_base64": os.urandom(600).hex()})


def test_the_parts_are_one_gzip_stream_of_every_record_in_order():
    # When 2,000 records (~2.4 MB of hex) are cut into parts of 256 KiB
    parts = list(gzip_parts(records(2_000, [0]), part_bytes=256 * 1024))
    # Then every part but the last has exactly that size, and joined they are one gzip object
    # whose lines are the records, in order
    assert len(parts) > 2
    assert {len(p) for p in parts[:-1]} == {256 * 1024} and 0 < len(parts[-1]) <= 256 * 1024
    lines = list(decode_lines(b"".join(parts)))
    assert [r["id"] for r in lines] == [f"evt_{i:06d}" for i in range(2_000)]


def test_a_part_leaves_before_the_records_are_all_read():
    # Given a source that says how far it has been read
    consumed = [0]
    parts = gzip_parts(records(2_000, consumed), part_bytes=64 * 1024)
    # When the first part comes out, only its share of the records has been read
    first = next(parts)
    assert len(first) == 64 * 1024 and consumed[0] < 200
    # And the rest follows from the rest of them
    rest = b"".join(parts)
    assert consumed[0] == 2_000 and len(list(decode_lines(first + rest))) == 2_000


def test_no_records_is_an_empty_gzip_object_as_before():
    [only] = list(gzip_parts(iter(()), part_bytes=1024))
    assert gzip.decompress(only) == b""
