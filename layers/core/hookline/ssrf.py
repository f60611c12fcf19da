"""The SSRF guard: endpoint URLs may only reach public addresses.

Two checks, both needed:

* `check_url` runs when an endpoint is saved. It refuses anything but https
  (http only where allowed for local development), userinfo, odd ports,
  non-canonical IPv4 spellings, and any host that resolves to a non-global
  address (`is_forbidden_address`).
* `GuardedNetworkBackend` runs at connect time, because DNS can answer
  differently an hour later (DNS rebinding). It resolves the host itself,
  refuses if any answer is forbidden, and opens the socket to one of the
  addresses it just checked, so there is no second lookup to race. TLS still
  runs against the URL's host name (SNI and certificate verification), only
  the TCP peer is pinned. See docs/decisions/0003-ssrf-guard.md.

Two clients connect through it, and neither follows a redirect (a 3xx is a failed
attempt, `hookline.retry`): the deliverer's `hookline.webhook_client.WebhookClient`, on
httpcore alone (decision 0112), and `hookline.guarded_http.guarded_client`, an httpx
client for everything else that fetches a URL a tenant or operator gave (OAuth2 tokens,
chat notifications, provider APIs, SNS certificates).
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import httpcore

from hookline.errors import UnsafeURL
from hookline.records import frozen

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# host, port -> IP address strings. Injectable so tests can play DNS.
Resolver = Callable[[str, int], Sequence[str]]

MAX_URL_LENGTH = 2048

# Ranges refused on top of `not ip.is_global`. Python's own table changes
# between versions (3.11 still calls 224.0.0.0/4 and 2002::/16 global), so the
# ranges a webhook must never reach are written out here.
_FORBIDDEN_V4 = tuple(
    ipaddress.IPv4Network(net)
    for net in (
        "0.0.0.0/8",  # "this network", includes the unspecified 0.0.0.0
        "10.0.0.0/8",  # RFC 1918
        "100.64.0.0/10",  # carrier-grade NAT
        "127.0.0.0/8",  # loopback
        "169.254.0.0/16",  # link-local, includes the metadata service 169.254.169.254
        "172.16.0.0/12",  # RFC 1918
        "192.0.0.0/24",  # IETF protocol assignments
        "192.0.2.0/24",  # TEST-NET-1 (documentation)
        "192.88.99.0/24",  # 6to4 relay anycast (deprecated)
        "192.168.0.0/16",  # RFC 1918
        "198.18.0.0/15",  # benchmarking
        "198.51.100.0/24",  # TEST-NET-2 (documentation)
        "203.0.113.0/24",  # TEST-NET-3 (documentation)
        "224.0.0.0/4",  # multicast
        "240.0.0.0/4",  # reserved, includes broadcast 255.255.255.255
    )
)
_FORBIDDEN_V6 = tuple(
    ipaddress.IPv6Network(net)
    for net in (
        "::/96",  # unspecified, loopback and the deprecated IPv4-compatible form
        "64:ff9b:1::/48",  # local-use NAT64
        "100::/64",  # discard-only
        "2001::/23",  # IETF protocol assignments, includes Teredo 2001::/32
        "2001:db8::/32",  # documentation
        "2002::/16",  # 6to4 (deprecated; tunnels to an embedded IPv4 address)
        "3fff::/20",  # documentation
        "fc00::/7",  # unique local, includes the EC2 metadata fd00:ec2::254
        "fe80::/10",  # link-local
        "fec0::/10",  # site-local (deprecated)
        "ff00::/8",  # multicast
    )
)
# Well-known NAT64 prefix. An IPv6-only VPC with DNS64 reaches a public IPv4
# endpoint through it, so it is allowed when the embedded IPv4 address is.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")

# A host whose last label is a number is read as IPv4 by resolvers
# (inet_aton: 1 to 4 parts, each decimal, 0-octal or 0x-hex). No real top-level
# domain is numeric, so such a host is an IPv4 literal, whatever its spelling.
_NUMERIC_LABEL = re.compile(r"^(?:0x[0-9a-f]*|[0-9]+)$", re.IGNORECASE)
_CANONICAL_IPV4 = re.compile(
    r"^(?:(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}"
    r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])$"
)
_HOST_NAME = re.compile(r"^[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?$")


@frozen
class ParsedTarget:
    """An endpoint URL that passed the save-time check."""

    url: str
    scheme: str
    host: str  # ASCII (IDNA) host, without IPv6 brackets
    port: int  # the effective port, default filled in
    addresses: tuple[str, ...]  # what the host resolved to when checked


def system_resolver(host: str, port: int) -> list[str]:
    """Resolve `host` with `socket.getaddrinfo` and return the distinct addresses, in order."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses: list[str] = []
    for _family, _type, _proto, _canonname, sockaddr in infos:
        address = str(sockaddr[0])
        if address not in addresses:
            addresses.append(address)
    return addresses


def is_forbidden_address(ip: str | IPAddress) -> bool:
    """Whether a webhook must never be sent to `ip` (anything not a public unicast address).

    IPv6 forms that carry an IPv4 address (mapped, compatible, 6to4, NAT64) are
    judged by the address they carry. A string that is not an IP address is
    forbidden: the caller asked about something it could not have connected to.
    """
    if isinstance(ip, str):
        try:
            ip = ipaddress.ip_address(ip)
        except ValueError:
            return True
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return is_forbidden_address(ip.ipv4_mapped)
        if ip in _NAT64:
            return is_forbidden_address(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
        if any(ip in net for net in _FORBIDDEN_V6):
            return True
    elif any(ip in net for net in _FORBIDDEN_V4):
        return True
    return (
        not ip.is_global
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_unspecified
        or ip.is_private
    )


def parse_ipv4_literal(host: str) -> ipaddress.IPv4Address | None:
    """Read `host` as resolvers do when it is an IPv4 literal in any spelling, else None.

    Accepts what `inet_aton` accepts: `2130706433`, `0177.0.0.1`, `0x7f.1`,
    `127.1`. Raises ValueError for a numeric host no resolver would accept.
    """
    labels = host.rstrip(".").split(".") if host else []
    if not labels or not _NUMERIC_LABEL.match(labels[-1]):
        return None
    if len(labels) > 4:
        raise ValueError("too many parts for an IPv4 address")
    numbers = [_inet_aton_part(label) for label in labels]
    # The last part fills every byte the earlier parts left over (a.b -> a.0.0.b).
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 1 << (8 * (5 - len(numbers))):
        raise ValueError("IPv4 part out of range")
    value = last
    for i, n in enumerate(head):
        value |= n << (8 * (3 - i))
    return ipaddress.IPv4Address(value)


def _inet_aton_part(label: str) -> int:
    lowered = label.lower()
    if lowered.startswith("0x"):
        return int(lowered[2:] or "0", 16)
    if len(label) > 1 and label.startswith("0"):
        return int(label, 8)  # ValueError for 08, 09: resolvers refuse those too
    if not label.isdigit():
        raise ValueError("not a number")
    return int(label)


def check_url(
    url: str,
    *,
    allow_private: bool,
    allow_http: bool,
    resolve: Resolver = system_resolver,
) -> ParsedTarget:
    """Check an endpoint URL when it is saved; return it parsed, or raise `UnsafeURL`.

    The URL is parsed with httpx, the client that will send to it, so the host
    checked is the host connected to. With `allow_private` the address checks
    are skipped (local development and tests); everything else still applies.
    """
    import httpx  # when an endpoint is saved: the deliverer never loads httpx (decision 0112)

    if len(url) > MAX_URL_LENGTH:
        raise UnsafeURL(f"endpoint URL is longer than {MAX_URL_LENGTH} characters")
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        # httpx's message can quote parts of the URL (a password); say less.
        raise UnsafeURL("endpoint URL is malformed") from None
    if parsed.scheme not in ("https", "http"):
        raise UnsafeURL("endpoint URL must use https")
    if parsed.scheme == "http" and not allow_http:
        raise UnsafeURL("endpoint URL must use https")
    if parsed.userinfo:
        raise UnsafeURL("endpoint URL must not contain a user name or password")
    host = parsed.raw_host.decode("ascii").lower()
    if not host:
        raise UnsafeURL("endpoint URL has no host")
    port = parsed.port if parsed.port is not None else (443 if parsed.scheme == "https" else 80)
    if not 1 <= port <= 65535:
        raise UnsafeURL("endpoint URL port must be between 1 and 65535")

    literal = _ip_literal(host)
    if literal is not None:
        addresses: tuple[str, ...] = (str(literal),)
    else:
        if not _HOST_NAME.match(host):
            raise UnsafeURL("endpoint URL host is not a valid host name")
        try:
            addresses = tuple(resolve(host, port))
        except (OSError, UnicodeError):
            raise UnsafeURL("endpoint URL host does not resolve") from None
        if not addresses:
            raise UnsafeURL("endpoint URL host does not resolve")
    # Any forbidden answer refuses the host: the client may pick any of them.
    if not allow_private and any(is_forbidden_address(a) for a in addresses):
        raise UnsafeURL("endpoint URL must resolve to public addresses only")
    return ParsedTarget(
        url=str(parsed), scheme=parsed.scheme, host=host, port=port, addresses=addresses
    )


def _ip_literal(host: str) -> IPAddress | None:
    """The address an IP-literal host denotes, None for a host name.

    Non-canonical IPv4 spellings are refused outright, public or not: no
    legitimate endpoint needs one, and each parser reads them differently.
    """
    if ":" in host:
        try:
            return ipaddress.IPv6Address(host.replace("%25", "%"))
        except ValueError:
            raise UnsafeURL("endpoint URL host is not a valid IPv6 address") from None
    try:
        address = parse_ipv4_literal(host)
    except ValueError:
        raise UnsafeURL("endpoint URL host is not a valid IPv4 address") from None
    if address is None:
        return None
    if not _CANONICAL_IPV4.match(host):
        raise UnsafeURL("endpoint URL host must spell an IPv4 address as four decimal numbers")
    return address


class GuardedNetworkBackend(httpcore.NetworkBackend):
    """An httpcore network backend that connects only to addresses it has checked.

    It resolves the host once, refuses the connection if any answer is
    forbidden, and connects to the checked address itself, so DNS cannot
    answer one address to the check and another to the socket. The stream it
    returns goes on to TLS with the original host name as server_hostname
    (httpcore passes the URL's host), so certificates are verified against the
    name, not the IP.
    """

    def __init__(
        self,
        *,
        allow_private: bool,
        resolve: Resolver = system_resolver,
        inner: httpcore.NetworkBackend | None = None,
    ) -> None:
        """Guard `inner` (the default synchronous backend unless given)."""
        self._allow_private = allow_private
        self._resolve = resolve
        self._inner = inner if inner is not None else httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        """Resolve, check, and connect to the first checked address that answers.

        Each address gets the whole connect timeout, as with `socket.create_connection`.
        """
        addresses = self._addresses(host, port)
        if not self._allow_private and any(is_forbidden_address(a) for a in addresses):
            raise UnsafeURL("endpoint host resolved to a non-public address at connect time")
        options = list(socket_options) if socket_options is not None else None
        error: Exception | None = None
        for address in addresses:
            try:
                stream = self._inner.connect_tcp(
                    address,
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                error = exc
                continue
            self._check_peer(stream)
            return stream
        raise error if error is not None else httpcore.ConnectError("no address to connect to")

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        """Refuse: a webhook never goes to a local socket."""
        raise UnsafeURL("endpoint URLs cannot target a unix socket")

    def sleep(self, seconds: float) -> None:
        """Sleep between httpcore's connect retries."""
        self._inner.sleep(seconds)

    def _addresses(self, host: str, port: int) -> list[str]:
        try:
            return [str(ipaddress.ip_address(host))]
        except ValueError:
            pass
        try:
            addresses = list(self._resolve(host, port))
        except (OSError, UnicodeError) as exc:
            # A failed lookup is a network error (retried), not a verdict on the URL.
            raise httpcore.ConnectError(f"cannot resolve endpoint host: {exc}") from exc
        if not addresses:
            raise httpcore.ConnectError("endpoint host resolved to no address")
        return addresses

    def _check_peer(self, stream: httpcore.NetworkStream) -> None:
        # Belt and braces: the socket is connected to an address we chose, but a
        # custom inner backend could have done otherwise. Fail closed if unknown.
        if self._allow_private:
            return
        peer = stream.get_extra_info("server_addr")
        if not isinstance(peer, tuple) or not peer or is_forbidden_address(str(peer[0])):
            stream.close()
            raise UnsafeURL("endpoint connection reached a non-public address")
