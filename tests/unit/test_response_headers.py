"""The response headers kept per attempt (shown on the delivery page) are bounded: at most 32
names, each name and value cut, a Set-Cookie value withheld, nothing Postgres cannot store."""

from __future__ import annotations

import httpx
import pytest

from hookline.webhook_client import MAX_HEADER_VALUE, MAX_RESPONSE_HEADERS, response_headers

pytestmark = pytest.mark.unit


def test_an_answers_headers_are_kept_bounded_and_without_cookies() -> None:
    # Given an answer with a session cookie, a huge header, a NUL and far too many headers
    many = [(f"x-h{i}", "v") for i in range(100)]
    headers = httpx.Headers(
        [("Set-Cookie", "session=abc"), ("X-Big", "a" * 10_000), ("X-Nul", "a\x00b"), *many]
    )
    # When they are kept for the attempt
    kept = response_headers(headers.multi_items())
    # Then the cookie's value is withheld, values are cut and cleaned, and at most 32 are kept
    assert kept["set-cookie"] == "•••"
    assert len(kept["x-big"]) == MAX_HEADER_VALUE and "\x00" not in kept["x-nul"]
    assert len(kept) == MAX_RESPONSE_HEADERS
