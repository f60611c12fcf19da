"""The connect-time SSRF check, category by category (issue 8's list).

tests/integration/test_ssrf_connect.py shows the mechanism at connect time with loopback
(rebinding DNS, localhost, redirects, proxies, TLS); tests/unit/test_ssrf.py refuses every
category at save time. Here every category goes through the client that sends webhooks
(`guarded_client`, private targets not allowed): a host that resolved to a public address
when it was saved and now answers an address of the category, the same address written as
the URL's host, and the odd IPv4 spellings resolved by the system resolver. Each must be
refused by the guard (`UnsafeURL`), not fail as a network error after a connect attempt;
where the address is this machine, a listening subscriber proves nothing reached it.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Callable, Iterator, Sequence

import httpx
import pytest

from hookline.errors import UnsafeURL
from hookline.guarded_http import guarded_client
from hookline.ssrf import check_url

pytestmark = pytest.mark.integration

PUBLIC = "93.184.215.14"

CATEGORIES = {
    "loopback v4": "127.0.0.1",
    "loopback v6": "::1",
    "RFC 1918 10/8": "10.0.0.1",
    "RFC 1918 172.16/12": "172.16.0.1",
    "RFC 1918 192.168/16": "192.168.1.1",
    "CGNAT": "100.64.0.1",
    "link-local v4": "169.254.0.1",
    "link-local v6": "fe80::1",
    "metadata v4": "169.254.169.254",
    "metadata v6 (EC2)": "fd00:ec2::254",
    "IPv4-mapped loopback": "::ffff:127.0.0.1",
    "IPv4-mapped metadata": "::ffff:169.254.169.254",
    "unspecified v4": "0.0.0.0",
    "unspecified v6": "::",
}


@pytest.fixture(scope="module")
def listener() -> Iterator[tuple[int, list[str]]]:
    """A subscriber on 127.0.0.1: its port and the paths it was asked for."""
    seen: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            seen.append(self.path)
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1], seen
    finally:
        server.shutdown()
        server.server_close()


def flipping_dns(host: str, then: str) -> Callable[[str, int], Sequence[str]]:
    """DNS for `host` answering a public address once (the save), then `then`."""
    answers = [PUBLIC]

    def resolve(name: str, port: int) -> Sequence[str]:
        if name != host:
            raise OSError(-2, "Name or service not known")
        return [answers.pop()] if answers else [then]

    return resolve


def url_host(address: str) -> str:
    return f"[{address}]" if ":" in address else address


@pytest.mark.parametrize("address", CATEGORIES.values(), ids=CATEGORIES.keys())
def test_a_host_that_flips_to_a_forbidden_address_is_refused_at_connect(
    address: str, listener: tuple[int, list[str]]
) -> None:
    port, seen = listener
    # Given an endpoint saved while its host answered a public address
    resolve = flipping_dns("flip.test", then=address)
    url = f"http://flip.test:{port}/flip-{address}"
    assert check_url(url, allow_private=False, allow_http=True, resolve=resolve).addresses == (
        PUBLIC,
    )
    # When a webhook is sent and the host now answers an address of the category
    # Then the guard refuses it (not a connect error after trying)
    with (
        guarded_client(allow_private=False, allow_http=True, resolve=resolve, timeout=2) as client,
        pytest.raises(UnsafeURL),
    ):
        client.post(url, content=b"{}")
    # And nothing on this machine received it
    assert f"/flip-{address}" not in seen


@pytest.mark.parametrize("address", CATEGORIES.values(), ids=CATEGORIES.keys())
def test_a_forbidden_address_as_the_url_host_is_refused_at_connect(
    address: str, listener: tuple[int, list[str]]
) -> None:
    port, seen = listener

    def no_dns(host: str, port: int) -> Sequence[str]:
        raise AssertionError(f"an address must not be resolved (asked for {host})")

    # Given an endpoint URL whose host is the address itself (say, from an old row)
    url = f"http://{url_host(address)}:{port}/literal"
    # When a webhook is sent, then the guard refuses it without resolving anything
    with (
        guarded_client(allow_private=False, allow_http=True, resolve=no_dns, timeout=2) as client,
        pytest.raises(UnsafeURL),
    ):
        client.post(url, content=b"{}")
    assert "/literal" not in seen


@pytest.mark.parametrize(
    ("host", "refusal"),
    [
        ("2130706433", UnsafeURL),
        ("0x7f.1", UnsafeURL),
        ("0x7f000001", UnsafeURL),
        ("127.1", UnsafeURL),
        ("017700000001", UnsafeURL),
        # four dotted parts: httpx itself refuses a leading zero before any transport
        ("0177.0.0.1", httpx.InvalidURL),
    ],
)
def test_odd_spellings_of_loopback_are_refused_at_connect(
    host: str, refusal: type[Exception], listener: tuple[int, list[str]]
) -> None:
    port, seen = listener
    # Given a URL spelling 127.0.0.1 in decimal, octal, hex or short form, which the
    # system resolver reads as 127.0.0.1, and a subscriber listening there
    # When a webhook is sent through the real resolver
    with (
        guarded_client(allow_private=False, allow_http=True, timeout=2) as client,
        pytest.raises(refusal),
    ):
        client.post(f"http://{host}:{port}/odd-{host}", content=b"{}")
    # Then it is refused and the subscriber saw nothing
    assert f"/odd-{host}" not in seen


def test_a_userinfo_trick_is_refused_at_connect(listener: tuple[int, list[str]]) -> None:
    port, seen = listener
    # Given a URL that reads as a public host but whose host is loopback
    url = f"http://hooks.example.com@127.0.0.1:{port}/userinfo"
    # When a webhook is sent, then the guard refuses it
    with (
        guarded_client(allow_private=False, allow_http=True, timeout=2) as client,
        pytest.raises(UnsafeURL),
    ):
        client.post(url, content=b"{}")
    assert "/userinfo" not in seen
