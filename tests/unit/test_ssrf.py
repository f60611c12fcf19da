"""The save-time SSRF check: only public https endpoints are accepted."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import httpcore
import pytest

from hookline.errors import BadRequest, UnsafeURL
from hookline.ssrf import (
    GuardedNetworkBackend,
    check_url,
    is_forbidden_address,
    parse_ipv4_literal,
)

pytestmark = pytest.mark.unit

PUBLIC_V4 = "93.184.215.14"
PUBLIC_V6 = "2606:2800:21f:cb07:6820:80da:af6b:8b2c"


def dns(answers: Mapping[str, Sequence[str]]) -> Callable[[str, int], Sequence[str]]:
    """A resolver that answers from a table and fails like getaddrinfo otherwise."""

    def resolve(host: str, port: int) -> Sequence[str]:
        if host not in answers:
            raise OSError(-2, "Name or service not known")
        return answers[host]

    return resolve


def no_dns(host: str, port: int) -> Sequence[str]:
    raise AssertionError(f"an IP literal must not be resolved (asked for {host})")


def check(url: str, *, answers: Mapping[str, Sequence[str]] | None = None, **flags: bool) -> object:
    return check_url(
        url,
        allow_private=flags.get("allow_private", False),
        allow_http=flags.get("allow_http", False),
        resolve=dns(answers or {}),
    )


# --- addresses ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "address",
    [
        # loopback
        "127.0.0.1",
        "127.255.255.254",
        "::1",
        # RFC 1918
        "10.0.0.1",
        "172.16.0.1",
        "172.31.255.255",
        "192.168.1.1",
        # carrier-grade NAT
        "100.64.0.1",
        "100.127.255.255",
        # link-local and the metadata services
        "169.254.0.1",
        "169.254.169.254",
        "fe80::1",
        "fd00:ec2::254",
        # multicast, reserved, broadcast, unspecified
        "224.0.0.1",
        "239.255.255.250",
        "ff02::1",
        "240.0.0.1",
        "255.255.255.255",
        "0.0.0.0",
        "0.1.2.3",
        "::",
        # unique local IPv6, deprecated site-local
        "fc00::1",
        "fd12:3456:789a::1",
        "fec0::1",
        # documentation and benchmarking ranges
        "192.0.2.1",
        "198.51.100.1",
        "203.0.113.1",
        "198.18.0.1",
        "2001:db8::1",
        "3fff::1",
        # IPv4-mapped, IPv4-compatible, 6to4, NAT64 forms of forbidden IPv4 addresses
        "::ffff:127.0.0.1",
        "::ffff:169.254.169.254",
        "::ffff:10.0.0.1",
        "::127.0.0.1",
        "::a9fe:a9fe",  # ::169.254.169.254
        "2002:7f00:1::",  # 6to4 of 127.0.0.1
        "2002:a9fe:a9fe::1",  # 6to4 of 169.254.169.254
        "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
        "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
        "64:ff9b:1::a00:1",  # local-use NAT64
        # Teredo and other IETF protocol assignments
        "2001::1",
        "2001:0:4136:e378:8000:63bf:3fff:fdd2",
        # not an address at all
        "not-an-ip",
        "",
    ],
)
def test_non_global_addresses_are_forbidden(address: str) -> None:
    assert is_forbidden_address(address)


@pytest.mark.parametrize(
    "address",
    [
        PUBLIC_V4,
        "8.8.8.8",
        "1.1.1.1",
        PUBLIC_V6,
        "2a00:1450:4001:81c::200e",
        "::ffff:8.8.8.8",  # mapped public address
        "64:ff9b::808:808",  # NAT64 of 8.8.8.8: how an IPv6-only VPC reaches IPv4
    ],
)
def test_public_addresses_are_allowed(address: str) -> None:
    assert not is_forbidden_address(address)


# --- URLs -----------------------------------------------------------------------------


def test_a_public_https_endpoint_is_accepted() -> None:
    # Given a host that resolves to public addresses only
    answers = {"hooks.example.com": [PUBLIC_V4, PUBLIC_V6]}
    # When the endpoint is saved
    target = check_url(
        "https://hooks.example.com:8443/in?x=1",
        allow_private=False,
        allow_http=False,
        resolve=dns(answers),
    )
    # Then it is accepted with its host, port and the addresses checked
    assert target.host == "hooks.example.com"
    assert target.port == 8443
    assert target.scheme == "https"
    assert target.addresses == (PUBLIC_V4, PUBLIC_V6)


def test_the_default_port_is_filled_in() -> None:
    target = check_url(
        "https://h.example/",
        allow_private=False,
        allow_http=False,
        resolve=dns({"h.example": [PUBLIC_V4]}),
    )
    assert target.port == 443


def test_plain_http_is_refused_unless_allowed() -> None:
    answers = {"hooks.example.com": [PUBLIC_V4]}
    with pytest.raises(UnsafeURL, match="https"):
        check("http://hooks.example.com/", answers=answers)
    target = check_url(
        "http://hooks.example.com/", allow_private=False, allow_http=True, resolve=dns(answers)
    )
    assert target.port == 80


@pytest.mark.parametrize(
    "url", ["ftp://hooks.example.com/", "file:///etc/passwd", "gopher://x/", "hooks.example.com"]
)
def test_other_schemes_are_refused(url: str) -> None:
    with pytest.raises(UnsafeURL):
        check(url, answers={"hooks.example.com": [PUBLIC_V4]}, allow_http=True)


@pytest.mark.parametrize(
    "url",
    [
        "https://user@hooks.example.com/",
        "https://user:pass@hooks.example.com/",
        "https://:@hooks.example.com/",
        "https://hooks.example.com@127.0.0.1/",  # the classic: looks public, goes local
        "https://hooks.example.com\\@hooks.example.com/",
        "https://a@b@hooks.example.com/",
    ],
)
def test_userinfo_is_refused(url: str) -> None:
    with pytest.raises(UnsafeURL, match="user name or password"):
        check(url, answers={"hooks.example.com": [PUBLIC_V4]})


def test_userinfo_is_not_echoed_in_the_error() -> None:
    with pytest.raises(UnsafeURL) as refused:
        check("https://admin:hunter2@hooks.example.com/", answers={})
    assert "hunter2" not in str(refused.value)


@pytest.mark.parametrize(
    "url", ["https:///path", "https://", "https://:443/", "https://exa mple.com/", "https://[::1"]
)
def test_a_url_without_a_valid_host_is_refused(url: str) -> None:
    with pytest.raises(UnsafeURL):
        check(url)


@pytest.mark.parametrize(
    "url",
    [
        "https://hooks.example.com:0/",
        "https://hooks.example.com:65536/",
        "https://hooks.example.com:99999/",
    ],
)
def test_a_port_outside_1_to_65535_is_refused(url: str) -> None:
    with pytest.raises(UnsafeURL):
        check(url, answers={"hooks.example.com": [PUBLIC_V4]})


def test_a_very_long_url_is_refused() -> None:
    with pytest.raises(UnsafeURL, match="longer"):
        check("https://hooks.example.com/" + "a" * 3000)


def test_a_host_that_does_not_resolve_is_refused() -> None:
    with pytest.raises(UnsafeURL, match="does not resolve"):
        check("https://nowhere.example/")
    with pytest.raises(UnsafeURL, match="does not resolve"):
        check("https://empty.example/", answers={"empty.example": []})


@pytest.mark.parametrize(
    "address", ["127.0.0.1", "10.1.2.3", "169.254.169.254", "::1", "fd00:ec2::254", "100.64.1.1"]
)
def test_a_host_resolving_to_a_private_address_is_refused(address: str) -> None:
    # Given a public-looking name that points inside the network
    answers = {"internal.example.com": [address]}
    # Then saving it is refused, without revealing the address it resolved to
    with pytest.raises(UnsafeURL, match="public addresses only") as refused:
        check("https://internal.example.com/", answers=answers)
    assert address not in str(refused.value)


def test_a_host_resolving_to_public_and_private_addresses_is_refused() -> None:
    # Given a host with one public and one private answer (the client may pick either)
    answers = {"mixed.example.com": [PUBLIC_V4, "10.0.0.5"]}
    # Then it is refused
    with pytest.raises(UnsafeURL):
        check("https://mixed.example.com/", answers=answers)


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1/",
        "https://169.254.169.254/latest/meta-data/",
        "https://10.0.0.1:8443/",
        "https://0.0.0.0/",
        "https://[::1]/",
        "https://[::]/",
        "https://[fd00:ec2::254]/",
        "https://[::ffff:127.0.0.1]/",
        "https://[::ffff:a9fe:a9fe]/",
        "https://[64:ff9b::a9fe:a9fe]/",
        "https://[2002:a9fe:a9fe::]/",
        "https://[fe80::1%25eth0]/",
    ],
)
def test_ip_literals_of_forbidden_addresses_are_refused(url: str) -> None:
    with pytest.raises(UnsafeURL):
        check_url(url, allow_private=False, allow_http=False, resolve=no_dns)


def test_a_public_ip_literal_is_accepted_without_dns() -> None:
    target = check_url(
        f"https://{PUBLIC_V4}/", allow_private=False, allow_http=False, resolve=no_dns
    )
    assert target.addresses == (PUBLIC_V4,)
    target = check_url(
        f"https://[{PUBLIC_V6}]/", allow_private=False, allow_http=False, resolve=no_dns
    )
    assert target.addresses == (PUBLIC_V6,)


@pytest.mark.parametrize(
    ("spelling", "meaning"),
    [
        ("2130706433", "127.0.0.1"),  # decimal
        ("0177.0.0.1", "127.0.0.1"),  # octal
        ("0x7f.1", "127.0.0.1"),  # hex, short
        ("0x7f000001", "127.0.0.1"),  # hex, whole
        ("127.1", "127.0.0.1"),  # short
        ("127.0.1", "127.0.0.1"),  # three parts
        ("017700000001", "127.0.0.1"),  # octal, whole
        ("0xa9.0xfe.0xa9.0xfe", "169.254.169.254"),
        ("2852039166", "169.254.169.254"),
        ("0", "0.0.0.0"),
        ("10.1", "10.0.0.1"),
    ],
)
def test_odd_ipv4_spellings_are_read_as_resolvers_read_them(spelling: str, meaning: str) -> None:
    assert str(parse_ipv4_literal(spelling)) == meaning


@pytest.mark.parametrize(
    "spelling",
    [
        "2130706433",
        "0177.0.0.1",
        "0x7f.1",
        "0x7f000001",
        "127.1",
        "127.0.1",
        "017700000001",
        "0xa9.0xfe.0xa9.0xfe",
        "2852039166",
        "0",
        "10.1",
        "127.0.0.1.",
        "127.000.000.001",
        "134744072",
    ],  # the last is 8.8.8.8: odd spellings are refused even when public
)
def test_odd_ipv4_spellings_are_refused(spelling: str) -> None:
    # Whatever the resolver would say, no DNS is asked: the host is an address.
    with pytest.raises(UnsafeURL):
        check_url(f"https://{spelling}/", allow_private=False, allow_http=False, resolve=no_dns)


@pytest.mark.parametrize("host", ["256.1.1.1", "1.2.3.4.5", "08.1.1.1", "foo.0x10", "1..2"])
def test_numeric_hosts_no_resolver_accepts_are_refused(host: str) -> None:
    with pytest.raises(UnsafeURL):
        check_url(f"https://{host}/", allow_private=False, allow_http=False, resolve=no_dns)


def test_names_that_merely_contain_digits_are_host_names() -> None:
    assert parse_ipv4_literal("1password.com") is None
    assert parse_ipv4_literal("api.v2.example") is None
    target = check("https://123.example.com/", answers={"123.example.com": [PUBLIC_V4]})
    assert target is not None


def test_allow_private_lets_loopback_and_private_hosts_through() -> None:
    # Given local development, where endpoints run on this machine
    answers = {"localhost": ["127.0.0.1", "::1"], "db.internal": ["10.0.0.5"]}
    # Then loopback and private endpoints are accepted
    assert (
        check("http://localhost:8080/hook", answers=answers, allow_private=True, allow_http=True)
        is not None
    )
    assert check("https://db.internal/", answers=answers, allow_private=True) is not None
    assert check("https://127.0.0.1/", allow_private=True) is not None
    # But the rest of the rules still hold
    with pytest.raises(UnsafeURL):
        check("http://localhost:8080/", answers=answers, allow_private=True)
    with pytest.raises(UnsafeURL):
        check("https://u@localhost/", answers=answers, allow_private=True)


def test_an_unsafe_url_is_a_bad_request_for_the_caller() -> None:
    # The management API answers 400, not 500, for a refused URL.
    with pytest.raises(BadRequest):
        check("https://127.0.0.1/")


# --- connect time (the network backend, without a network) ----------------------------


def test_the_connect_time_check_refuses_a_rebound_host_before_any_socket() -> None:
    # Given a host that resolved publicly when saved but now answers the metadata address
    answers = {"rebind.example.com": [PUBLIC_V4, "169.254.169.254"]}

    backend = GuardedNetworkBackend(allow_private=False, resolve=dns(answers))
    # When the transport connects
    # Then it refuses before opening a socket to anything
    with pytest.raises(UnsafeURL):
        backend.connect_tcp("rebind.example.com", 443)
    with pytest.raises(UnsafeURL):
        backend.connect_tcp("169.254.169.254", 80)
    with pytest.raises(UnsafeURL):
        backend.connect_unix_socket("/var/run/docker.sock")


class FakeStream(httpcore.NetworkStream):
    """A connected stream that reports `peer` as its server address."""

    def __init__(self, peer: tuple[str, int] | None) -> None:
        self.peer = peer
        self.closed = False

    def close(self) -> None:
        self.closed = True

    def get_extra_info(self, info: str) -> Any:
        return self.peer if info == "server_addr" else None


class FakeNetwork(httpcore.NetworkBackend):
    """Records where it was asked to connect; some addresses refuse, others report a peer."""

    def __init__(self, refusing: set[str], peers: dict[str, tuple[str, int] | None]) -> None:
        self.refusing = refusing
        self.peers = peers
        self.dialled: list[str] = []
        self.streams: list[FakeStream] = []

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        self.dialled.append(host)
        if host in self.refusing:
            raise httpcore.ConnectError("connection refused")
        stream = FakeStream(self.peers.get(host, (host, port)))
        self.streams.append(stream)
        return stream


def test_the_socket_goes_to_a_checked_address_never_to_the_name() -> None:
    # Given a host with two public addresses, the first of which is down
    network = FakeNetwork(refusing={PUBLIC_V4}, peers={})
    backend = GuardedNetworkBackend(
        allow_private=False,
        resolve=dns({"hooks.example.com": [PUBLIC_V4, PUBLIC_V6]}),
        inner=network,
    )
    # When the transport connects
    backend.connect_tcp("hooks.example.com", 443)
    # Then it dialled the checked addresses in order, and never the name itself
    assert network.dialled == [PUBLIC_V4, PUBLIC_V6]


def test_a_connection_that_ends_up_at_a_forbidden_peer_is_closed_and_refused() -> None:
    # Given an inner network that connects somewhere other than where it was told
    network = FakeNetwork(refusing=set(), peers={PUBLIC_V4: ("10.0.0.8", 443)})
    backend = GuardedNetworkBackend(
        allow_private=False, resolve=dns({"hooks.example.com": [PUBLIC_V4]}), inner=network
    )
    # Then the peer check catches it and the stream is closed
    with pytest.raises(UnsafeURL):
        backend.connect_tcp("hooks.example.com", 443)
    assert network.streams[0].closed


def test_an_unknown_peer_address_fails_closed() -> None:
    network = FakeNetwork(refusing=set(), peers={PUBLIC_V4: None})
    backend = GuardedNetworkBackend(allow_private=False, resolve=no_dns, inner=network)
    with pytest.raises(UnsafeURL):
        backend.connect_tcp(PUBLIC_V4, 443)


def test_a_dns_failure_at_send_time_is_a_network_error_to_retry() -> None:
    # A lookup that fails now may succeed later: it is not a verdict on the endpoint.
    backend = GuardedNetworkBackend(
        allow_private=False, resolve=dns({}), inner=FakeNetwork(set(), {})
    )
    with pytest.raises(httpcore.ConnectError):
        backend.connect_tcp("gone.example.com", 443)


def test_when_every_address_refuses_the_last_connect_error_is_raised() -> None:
    network = FakeNetwork(refusing={PUBLIC_V4, PUBLIC_V6}, peers={})
    backend = GuardedNetworkBackend(
        allow_private=False,
        resolve=dns({"down.example.com": [PUBLIC_V4, PUBLIC_V6]}),
        inner=network,
    )
    with pytest.raises(httpcore.ConnectError):
        backend.connect_tcp("down.example.com", 443)
