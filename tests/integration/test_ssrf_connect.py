"""The connect-time SSRF check against a real HTTP(S) server on 127.0.0.1.

The save-time check sees what DNS says when the endpoint is saved; these tests
show that what DNS says when the webhook is sent is checked again, that the
socket goes to the address that was checked, and that TLS still verifies the
certificate against the endpoint's host name.
"""

from __future__ import annotations

import datetime
import http.server
import socket
import ssl
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpcore
import httpx
import pytest

from hookline.endpoint_auth.tls import tls_failure
from hookline.errors import UnsafeURL
from hookline.guarded_http import guarded_client
from hookline.ssrf import check_url
from hookline.webhook_client import WebhookClient

pytestmark = pytest.mark.integration

PUBLIC = "93.184.215.14"


@dataclass
class Receiver:
    """A local webhook receiver and what it has received."""

    port: int
    requests: list[tuple[str, str, str]] = field(default_factory=list)  # method, path, Host


def _handler(receiver: Receiver) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            self.rfile.read(length)
            receiver.requests.append(("POST", self.path, self.headers.get("host", "")))
            if self.path == "/redirect":
                self.send_response(302)
                self.send_header("location", "http://127.0.0.1:1/internal")
                self.send_header("content-length", "0")
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, format: str, *args: object) -> None:
            pass  # keep test output clean

    return Handler


class _IPv6Server(http.server.ThreadingHTTPServer):
    address_family = socket.AF_INET6


def _serve(tls: ssl.SSLContext | None, host: str = "127.0.0.1") -> Iterator[Receiver]:
    receiver = Receiver(port=0)
    kind = _IPv6Server if ":" in host else http.server.ThreadingHTTPServer
    server = kind((host, 0), _handler(receiver))
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    receiver.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    yield from _serve(None)


@pytest.fixture
def ipv6_receiver() -> Iterator[Receiver]:
    yield from _serve(None, host="::1")


@dataclass
class Certificate:
    server: ssl.SSLContext
    client: ssl.SSLContext  # trusts only this certificate


@pytest.fixture
def certificate(tmp_path: Path) -> Certificate:
    """A self-signed certificate for the names hooks.test and localhost, and no IP address."""
    pytest.importorskip("cryptography")
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "hooks.test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName("hooks.test"), x509.DNSName("localhost")]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert_file, key_file)
    client = ssl.create_default_context(cafile=str(cert_file))
    return Certificate(server=server, client=client)


@pytest.fixture
def tls_receiver(certificate: Certificate) -> Iterator[Receiver]:
    yield from _serve(certificate.server)


def rebinding_dns(host: str, first: str, then: str) -> Callable[[str, int], Sequence[str]]:
    """DNS for `host` that answers `first` once, then `then` (a short-TTL rebinding attack)."""
    answers = [first]

    def resolve(name: str, port: int) -> Sequence[str]:
        if name != host:
            raise OSError(-2, "Name or service not known")
        return [answers.pop()] if answers else [then]

    return resolve


def test_a_host_rebound_to_loopback_after_saving_is_refused_at_connect_time(
    receiver: Receiver,
) -> None:
    # Given an endpoint whose host resolved to a public address when it was saved
    resolve = rebinding_dns("rebind.test", first=PUBLIC, then="127.0.0.1")
    url = f"http://rebind.test:{receiver.port}/hook"
    target = check_url(url, allow_private=False, allow_http=True, resolve=resolve)
    assert target.addresses == (PUBLIC,)
    # When the webhook is sent and DNS now answers 127.0.0.1
    # Then the connection is refused
    with (
        guarded_client(allow_private=False, allow_http=True, resolve=resolve) as client,
        pytest.raises(UnsafeURL),
    ):
        client.post(url, content=b"{}")
    # And the local service never saw the request
    assert receiver.requests == []


def test_the_same_rebound_host_goes_through_when_private_targets_are_allowed(
    receiver: Receiver,
) -> None:
    # Given local development (private targets allowed) and the same rebinding DNS
    resolve = rebinding_dns("rebind.test", first=PUBLIC, then="127.0.0.1")
    url = f"http://rebind.test:{receiver.port}/hook"
    check_url(url, allow_private=False, allow_http=True, resolve=resolve)
    # When the webhook is sent
    with guarded_client(allow_private=True, allow_http=True, resolve=resolve) as client:
        response = client.post(url, content=b"{}")
    # Then it reaches the server, addressed by name (Host header kept)
    assert response.status_code == 200
    assert receiver.requests == [("POST", "/hook", f"rebind.test:{receiver.port}")]


def test_localhost_through_the_system_resolver_is_refused(receiver: Receiver) -> None:
    # Given the real resolver, where localhost is 127.0.0.1
    with guarded_client(allow_private=False, allow_http=True) as client:
        # When a webhook is sent to localhost or to the loopback literal
        # Then both are refused
        with pytest.raises(UnsafeURL):
            client.post(f"http://localhost:{receiver.port}/hook", content=b"{}")
        with pytest.raises(UnsafeURL):
            client.post(f"http://127.0.0.1:{receiver.port}/hook", content=b"{}")
    assert receiver.requests == []


def test_localhost_goes_through_when_private_targets_are_allowed(receiver: Receiver) -> None:
    with guarded_client(allow_private=True, allow_http=True) as client:
        response = client.post(f"http://localhost:{receiver.port}/hook", content=b"{}")
    assert response.status_code == 200
    assert response.text == "ok"
    assert len(receiver.requests) == 1


def test_plain_http_is_refused_at_send_time_unless_allowed(receiver: Receiver) -> None:
    # Given an http endpoint saved under a development configuration
    # When it is sent where http is not allowed, then it is refused
    with (
        guarded_client(allow_private=True, allow_http=False) as client,
        pytest.raises(UnsafeURL, match="https"),
    ):
        client.post(f"http://localhost:{receiver.port}/hook", content=b"{}")
    assert receiver.requests == []


def test_redirects_are_not_followed(receiver: Receiver) -> None:
    # Given an endpoint that answers 302 to an internal address
    with guarded_client(allow_private=True, allow_http=True) as client:
        response = client.post(f"http://localhost:{receiver.port}/redirect", content=b"{}")
    # Then the 302 is the result; nothing else was requested
    assert response.status_code == 302
    assert [path for _, path, _ in receiver.requests] == ["/redirect"]


def test_proxy_environment_variables_cannot_route_around_the_guard(
    receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given proxy variables in the environment pointing at a local proxy
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{receiver.port}")
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{receiver.port}")
    monkeypatch.setenv("ALL_PROXY", f"http://127.0.0.1:{receiver.port}")
    # When a webhook to a private host is sent
    # Then it is still refused (no proxy transport was mounted)
    with (
        guarded_client(allow_private=False, allow_http=True) as client,
        pytest.raises(UnsafeURL),
    ):
        client.post(f"http://localhost:{receiver.port}/hook", content=b"{}")
    assert receiver.requests == []


def test_https_pins_the_checked_address_but_verifies_the_certificate_by_name(
    tls_receiver: Receiver, certificate: Certificate
) -> None:
    # Given hooks.test, which only our resolver knows, answering 127.0.0.1,
    # and a certificate valid for the name hooks.test but for no IP address
    def resolve(host: str, port: int) -> Sequence[str]:
        assert host == "hooks.test"
        return ["127.0.0.1"]

    url = f"https://hooks.test:{tls_receiver.port}/hook"
    with guarded_client(
        allow_private=True, allow_http=False, resolve=resolve, verify=certificate.client
    ) as client:
        # When the webhook is sent
        response = client.post(url, content=b"{}")
    # Then the socket went to the resolved address and TLS accepted the certificate,
    # which it could only do by checking it against the name (SNI hooks.test)
    assert response.status_code == 200
    assert tls_receiver.requests == [("POST", "/hook", f"hooks.test:{tls_receiver.port}")]


def test_https_still_refuses_a_certificate_that_does_not_name_the_host(
    tls_receiver: Receiver, certificate: Certificate
) -> None:
    # Given a name whose certificate is not the server's (the cert names hooks.test and localhost)
    def resolve(host: str, port: int) -> Sequence[str]:
        return ["127.0.0.1"]

    with guarded_client(
        allow_private=True, allow_http=False, resolve=resolve, verify=certificate.client
    ) as client:
        # When the webhook is sent to another name, or to the bare IP address
        # Then certificate verification fails: pinning the IP did not turn verification off
        with pytest.raises(httpx.ConnectError, match=r"CERTIFICATE_VERIFY_FAILED|match"):
            client.post(f"https://impostor.test:{tls_receiver.port}/hook", content=b"{}")
        with pytest.raises(httpx.ConnectError, match=r"CERTIFICATE_VERIFY_FAILED|match"):
            client.post(f"https://127.0.0.1:{tls_receiver.port}/hook", content=b"{}")
    assert tls_receiver.requests == []


def test_https_to_a_rebound_host_is_refused_before_the_handshake(
    tls_receiver: Receiver, certificate: Certificate
) -> None:
    resolve = rebinding_dns("hooks.test", first=PUBLIC, then="127.0.0.1")
    url = f"https://hooks.test:{tls_receiver.port}/hook"
    check_url(url, allow_private=False, allow_http=False, resolve=resolve)
    with (
        guarded_client(
            allow_private=False, allow_http=False, resolve=resolve, verify=certificate.client
        ) as client,
        pytest.raises(UnsafeURL),
    ):
        client.post(url, content=b"{}")
    assert tls_receiver.requests == []


# The deliverer's own client (decision 0112): the same guard, without httpx.

TIMEOUT = {"connect": 5.0, "read": 5.0, "write": 5.0, "pool": 5.0}


def webhook(client: WebhookClient, url: str) -> tuple[int, bytes]:
    answer = client.post_webhook(url, b"{}", {"content-type": "application/json"}, TIMEOUT)
    try:
        return answer.status_code, b"".join(answer.iter_bytes())
    finally:
        answer.close()


def test_the_deliverers_client_refuses_a_host_rebound_to_loopback(receiver: Receiver) -> None:
    # Given an endpoint whose host resolved to a public address when it was saved
    resolve = rebinding_dns("rebind.test", first=PUBLIC, then="127.0.0.1")
    url = f"http://rebind.test:{receiver.port}/hook"
    check_url(url, allow_private=False, allow_http=True, resolve=resolve)
    # When a webhook is sent and DNS now answers 127.0.0.1, then it is refused
    with WebhookClient(allow_private=False, allow_http=True, resolve=resolve) as client:
        with pytest.raises(UnsafeURL):
            webhook(client, url)
        # and so are localhost and the loopback literal through the real resolver
        client_real = WebhookClient(allow_private=False, allow_http=True)
        with pytest.raises(UnsafeURL):
            webhook(client_real, f"http://localhost:{receiver.port}/hook")
        with pytest.raises(UnsafeURL):
            webhook(client_real, f"http://127.0.0.1:{receiver.port}/hook")
    assert receiver.requests == []


def test_the_deliverers_client_sends_by_name_and_follows_no_redirect(
    receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given private targets allowed (local development), and proxy variables set
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:1")

    def resolve(host: str, port: int) -> Sequence[str]:
        assert host == "hooks.test"
        return ["127.0.0.1"]

    with WebhookClient(allow_private=True, allow_http=True, resolve=resolve) as client:
        # When webhooks are sent by name, one answered with a redirect
        answered = webhook(client, f"http://hooks.test:{receiver.port}/hook")
        redirected = webhook(client, f"http://hooks.test:{receiver.port}/redirect")
    # Then they reached the server directly, with the Host header of the URL,
    # and the 302 is the answer: nothing else was requested
    assert answered == (200, b"ok") and redirected[0] == 302
    assert receiver.requests == [
        ("POST", "/hook", f"hooks.test:{receiver.port}"),
        ("POST", "/redirect", f"hooks.test:{receiver.port}"),
    ]


def test_the_deliverers_client_refuses_plain_http_unless_allowed(receiver: Receiver) -> None:
    with (
        WebhookClient(allow_private=True, allow_http=False) as client,
        pytest.raises(UnsafeURL, match="https"),
    ):
        webhook(client, f"http://localhost:{receiver.port}/hook")
    assert receiver.requests == []


def test_the_deliverers_client_pins_the_address_and_verifies_the_name(
    tls_receiver: Receiver, certificate: Certificate
) -> None:
    # Given hooks.test answering 127.0.0.1, and a certificate naming hooks.test
    def resolve(host: str, port: int) -> Sequence[str]:
        return ["127.0.0.1"]

    with WebhookClient(
        allow_private=True, allow_http=False, resolve=resolve, ssl_context=certificate.client
    ) as client:
        # When a webhook is sent by that name, then TLS accepts it
        assert webhook(client, f"https://hooks.test:{tls_receiver.port}/hook") == (200, b"ok")
        # When it is sent to another name or the bare address, then verification fails,
        # with the handshake's reason behind the error (what an attempt records)
        for host in ("impostor.test", "127.0.0.1"):
            with pytest.raises(httpcore.ConnectError) as failed:
                webhook(client, f"https://{host}:{tls_receiver.port}/hook")
            assert tls_failure(failed.value) == "tls: CERTIFICATE_VERIFY_FAILED"
    assert tls_receiver.requests == [("POST", "/hook", f"hooks.test:{tls_receiver.port}")]


def test_the_deliverers_client_sends_to_a_url_only_httpx_reads(ipv6_receiver: Receiver) -> None:
    # Given an endpoint URL outside the quick reader's form (an IPv6 literal)
    url = f"http://[::1]:{ipv6_receiver.port}/hook"
    # When a webhook is sent to it where private targets are allowed, then it is delivered,
    # with the Host header httpx writes
    with WebhookClient(allow_private=True, allow_http=True) as client:
        assert webhook(client, url) == (200, b"ok")
    assert ipv6_receiver.requests == [("POST", "/hook", f"[::1]:{ipv6_receiver.port}")]
    # and where they are not, the guard refuses the loopback address
    with WebhookClient(allow_private=False, allow_http=True) as client, pytest.raises(UnsafeURL):
        webhook(client, url)
