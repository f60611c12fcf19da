"""Real servers for the endpoint-auth tests: an OAuth2 token server (client credentials grant)
that counts its requests, a test CA made with `cryptography`, and HTTPS sinks (the recording
`Sink`, wrapped in TLS) that require a client certificate from that CA."""

from __future__ import annotations

import base64
import datetime as dt
import ipaddress
import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from tests.support.sinks import Sink

CLIENT_ID = "hookline-client"
CLIENT_SECRET = "s3cret/with:odd&chars"  # a test credential


@dataclass
class TokenServer:
    """A client-credentials token endpoint on loopback. Answers `tok-1`, `tok-2`, ... to a
    client authenticating with HTTP Basic; `mode` "garbage" answers HTML, "fail" HTTP 500."""

    expires_in: int = 3600
    mode: str = "ok"
    requests: list[dict[str, str]] = field(default_factory=list)
    issued: int = 0

    def __post_init__(self) -> None:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                basic = self.headers.get("Authorization", "").removeprefix("Basic ")
                user, _, password = base64.b64decode(basic).decode().partition(":")
                server.requests.append(form)
                if server.mode == "fail":
                    self._answer(500, b'{"error":"server_error"}')
                elif server.mode == "garbage":
                    self._answer(200, b"<html>sign in</html>", "text/html")
                elif (unquote(user), unquote(password)) != (CLIENT_ID, CLIENT_SECRET) or form.get(
                    "grant_type"
                ) != "client_credentials":
                    self._answer(401, b'{"error":"invalid_client"}')
                else:
                    server.issued += 1
                    token = {"access_token": f"tok-{server.issued}", "token_type": "Bearer",
                             "expires_in": server.expires_in}  # fmt: skip
                    self._answer(200, json.dumps(token).encode())

            def _answer(self, status: int, body: bytes, kind: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/oauth/token"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextmanager
def token_server(**kwargs: object) -> Iterator[TokenServer]:
    server = TokenServer(**kwargs)  # type: ignore[arg-type]
    try:
        yield server
    finally:
        server.stop()


def _pem(key: ec.EllipticCurvePrivateKey) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


@dataclass
class Issued:
    """A certificate and its key, PEM."""

    certificate: str
    key: str
    not_after: dt.datetime


class TestCA:
    """A certificate authority for one test: issues server and client certificates."""

    __test__ = False

    def __init__(self, name: str = "Hookline Test CA") -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        now = dt.datetime.now(dt.UTC)
        self.certificate = (
            x509.CertificateBuilder()
            .subject_name(self.name)
            .issuer_name(self.name)
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=365))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(False, False, False, False, False, True, True, False, False),
                critical=True,
            )
            .add_extension(
                x509.SubjectKeyIdentifier.from_public_key(self.key.public_key()), critical=False
            )
            .sign(self.key, hashes.SHA256())
        )
        self.pem = self.certificate.public_bytes(serialization.Encoding.PEM).decode()

    def issue(self, common_name: str, *, server: bool, days: int = 90) -> Issued:
        key = ec.generate_private_key(ec.SECP256R1())
        now = dt.datetime.now(dt.UTC)
        not_after = (now + dt.timedelta(days=days)).replace(microsecond=0)
        usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
            .issuer_name(self.name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(not_after)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()),
                critical=False,
            )
        )
        if server:
            builder = builder.add_extension(
                x509.SubjectAlternativeName(
                    [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
                ),
                critical=False,
            )
        certificate = builder.sign(self.key, hashes.SHA256())
        pem = certificate.public_bytes(serialization.Encoding.PEM).decode()
        return Issued(pem, _pem(key), not_after)


def serve_mtls(sink: Sink, ca: TestCA, directory: Path) -> Sink:
    """Wrap a (not yet started) sink in TLS with a server certificate from `ca`, requiring a
    client certificate from `ca`. Its URLs become https."""
    issued = ca.issue("127.0.0.1", server=True)
    cert, key = directory / "server.pem", directory / "server.key"
    cert.write_text(issued.certificate)
    key.write_text(issued.key)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    context.load_verify_locations(cadata=ca.pem)
    context.verify_mode = ssl.CERT_REQUIRED
    sink.server.socket = context.wrap_socket(sink.server.socket, server_side=True)
    sink.url = lambda path: f"https://127.0.0.1:{sink.port}{path}"  # type: ignore[method-assign]
    return sink.start()
