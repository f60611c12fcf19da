"""The deliverer reads an endpoint's answer without httpx's response model (decision 0078):
the headers it stores and the Retry-After it honours must read as httpx reads them."""

from __future__ import annotations

import httpcore
import httpx
import pytest

from hookline.webhook_client import WebhookAnswer, response_headers

pytestmark = pytest.mark.unit

ANSWERS = [
    [(b"Content-Type", b"text/plain"), (b"Retry-After", b"120"), (b"X-A", b"1"), (b"x-a", b"2")],
    [(b"X-Name", "caf\u00e9".encode()), (b"Retry-After", b"5")],  # UTF-8
    [(b"X-Name", b"caf\xe9"), (b"X-Other", b"ok")],  # neither ASCII nor UTF-8: ISO-8859-1
]


@pytest.mark.parametrize("raw", ANSWERS)
def test_an_answers_headers_read_as_httpx_reads_them(raw: list[tuple[bytes, bytes]]) -> None:
    # Given an endpoint's answer with these header bytes
    answer = WebhookAnswer(httpcore.Response(503, headers=raw, content=b"busy"))
    model = httpx.Headers(raw)
    # When the deliverer reads it
    kept = response_headers(answer.header_items())
    # Then it stores the headers and honours Retry-After exactly as through httpx's model
    assert kept == response_headers(model.multi_items())
    assert answer.header("retry-after") == model.get("retry-after")
    assert answer.header("x-a") == model.get("x-a")
    assert answer.status_code == 503
    assert b"".join(answer.iter_bytes()) == b"busy"
    answer.close()
