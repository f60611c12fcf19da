"""The deliverer reads an endpoint URL without httpx (decision 0112): whatever URL it reads
itself, it must send to the host, port and path httpx would have, with the same Host header;
any other URL goes through httpx, which reads it or refuses it."""

from __future__ import annotations

import random

import httpx
import pytest

from hookline import webhook_client
from hookline.webhook_client import InvalidEndpointURL, request_target

pytestmark = pytest.mark.unit

SAMPLES = (
    "https://example.com",
    "https://example.com/",
    "https://Example.COM/Hooks/In",
    "https://example.com:443/a",
    "http://example.com:80/a",
    "https://example.com:80/a",
    "http://127.0.0.1:8080/hook",
    "https://10.0.0.1/x",
    "https://999.1.1.1/x",
    "https://1.2.3.04/x",
    "https://example.com:08443/x",
    "https://example.com/a/b?x=1&y=%20z#frag",
    "https://example.com?x=1",
    "https://example.com/?",
    "https://example.com/a b",
    "https://example.com/a%zz",
    "https://example.com/a/./b",
    "https://example.com/a/../b",
    "https://example.com/.well-known/hook",
    "https://example.com/a..b/c.",
    "https://example.com/p'q(r)*s!$&+,;=:@~",
    "https://example.com/?q={}|^`",
    "https://user:secret@example.com/",
    "https://[2001:db8::1]:8443/x",
    "https://bücher.example/x",
    "https://xn--bcher-kva.example/x",
    "https://example.com:99999/x",
    "HTTPS://example.com/x",
    "https://example..com/x",
    "https://-example.com/x",
    "https://example.com/x#a b",
)


def by_httpx(url: str) -> tuple[str, bytes, int | None, bytes, bytes] | str:
    """What httpx would send: scheme, host, port, path and Host header; or its refusal."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        return "invalid"
    return parsed.scheme, parsed.raw_host, parsed.port, parsed.raw_path, parsed.netloc


def by_client(url: str) -> tuple[str, bytes, int | None, bytes, bytes] | str:
    """What the webhook client sends, read the same way."""
    request_target.cache_clear()
    try:
        scheme, target, host = request_target(url)
    except InvalidEndpointURL:
        return "invalid"
    return scheme, target.host, target.port, target.target, host


def random_url(rng: random.Random) -> str:
    """A URL built from the parts endpoint URLs are made of, and from characters that need
    encoding, dot segments, odd ports and hosts."""
    alphabet = "abcXYZ019-._~!$&'()*+,;=:@/%?#[] {}|`\"<>^\\é"
    hosts = ("example.com", "EXAMPLE.com", "a-b.c", "127.0.0.1", "1.2.3.256", "a..b", "x")
    ports = ("", ":443", ":80", ":8443", ":0", ":65536", ":007")

    def part(n: int) -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(n)))

    scheme = rng.choice(("https", "http", "Https"))
    return f"{scheme}://{rng.choice(hosts)}{rng.choice(ports)}/{part(12)}"


@pytest.mark.parametrize("url", SAMPLES)
def test_a_url_is_sent_where_httpx_would_send_it(url: str) -> None:
    assert by_client(url) == by_httpx(url)


def test_many_generated_urls_are_sent_where_httpx_would_send_them() -> None:
    rng = random.Random(24)
    urls = {random_url(rng) for _ in range(5000)}
    differ = [url for url in sorted(urls) if by_client(url) != by_httpx(url)]
    assert differ == []


def test_a_saved_url_is_read_without_httpx(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given the URLs endpoints are saved with (as httpx writes them)
    def no_httpx(url: str) -> object:
        raise AssertionError(f"httpx read {url}")

    monkeypatch.setattr(webhook_client, "_target_by_httpx", no_httpx)
    saved = (
        "https://hooks.example.com/in/v1?token=a%2Fb",
        "http://127.0.0.1:8080/hook",
        "https://api.example.com:8443/",
    )
    # When the deliverer reads them, then httpx is never asked
    for url in saved:
        request_target.cache_clear()
        assert request_target(url)[0] in ("https", "http")
