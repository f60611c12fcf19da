"""A local HTTPS server playing SNS's regional endpoint, with a test CA: it serves the signing
certificate and answers ConfirmSubscription, counting each; and messages signed the way SNS
documents (the canonical "Key\\nvalue\\n" string, SHA1withRSA or SHA256withRSA, base64)."""

from __future__ import annotations

import base64
import datetime
import ipaddress
import random
import socket
import ssl
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import NameOID

from hookline.guarded_http import guarded_client

REGION = "us-east-1"
HOST = f"sns.{REGION}.amazonaws.com"
TOPIC = f"arn:aws:sns:{REGION}:123456789012:orders"
CERT_PATH = "/SimpleNotificationService-0000000000000000000000.pem"


def _key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _cert(
    subject: str, key: rsa.RSAPrivateKey, issuer: x509.Name | None, issuer_key, *, ca: bool,
    san: str | None = None,
) -> x509.Certificate:  # fmt: skip
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer or name)
        .public_key(key.public_key())
        .serial_number(random.getrandbits(64))
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if san:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(san)]), False)
    return builder.sign(issuer_key or key, hashes.SHA256())


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


@dataclass
class FakeSns:
    """The server's address, what it served, and how to sign as SNS signs."""

    address: str
    signing_key: rsa.RSAPrivateKey
    ca_pem: bytes
    hits: list[str] = field(default_factory=list)

    def client(self) -> httpx.Client:
        """The SSRF-guarded client, resolving SNS's host to this server, trusting the test CA
        (loopback allowed: the server is local; every other check is the production one)."""

        def resolve(host: str, port: int) -> list[str]:
            if host != HOST:
                raise OSError(f"no such host in this test: {host}")
            return [self.address]

        context = ssl.create_default_context(cadata=self.ca_pem.decode())
        return guarded_client(allow_private=True, allow_http=False, resolve=resolve, verify=context)

    def message(self, kind: str = "Notification", version: str = "1", **fields: Any) -> dict:
        """A message of `kind` from TOPIC, signed with SignatureVersion `version`."""
        message: dict[str, Any] = {
            "Type": kind,
            "MessageId": fields.pop("MessageId", "165545c9-2a5c-472c-8df2-7ff2be2b3b1b"),
            "TopicArn": TOPIC,
            "Message": '{"order": 42}',
            "Timestamp": "2026-12-01T12:00:00.000Z",
            "SignatureVersion": version,
            "SigningCertURL": f"https://{HOST}{CERT_PATH}",
        }
        if kind == "Notification":
            message["Subject"] = "order placed"
        else:
            message["Token"] = "2336412f37fb687f5d51e6e2425c464de"
            message["SubscribeURL"] = (
                f"https://{HOST}/?Action=ConfirmSubscription&TopicArn={TOPIC}&Token=2336412f"
            )
        message.update(fields)
        keys = ["Message", "MessageId"]
        keys += ["Subject"] if kind == "Notification" else ["SubscribeURL"]
        keys += ["Timestamp"] + ([] if kind == "Notification" else ["Token"]) + ["TopicArn", "Type"]
        signed = "".join(f"{k}\n{message[k]}\n" for k in keys if k in message).encode()
        # SNS SignatureVersion 1 is SHA1withRSA: the test signs as SNS does.
        algorithm = hashes.SHA1() if version == "1" else hashes.SHA256()  # noqa: S303
        signature = self.signing_key.sign(signed, padding.PKCS1v15(), algorithm)
        message["Signature"] = base64.b64encode(signature).decode()
        return message


@contextmanager
def running_sns() -> Iterator[FakeSns]:
    """An HTTPS server on a random loopback address, port 443 (SNS URLs carry no port)."""
    ca_key, server_key, signing_key = _key(), _key(), _key()
    ca = _cert("Hookline test CA", ca_key, None, None, ca=True)
    server = _cert(HOST, server_key, ca.subject, ca_key, ca=False, san=HOST)
    signing = _cert("sns.amazonaws.com", signing_key, ca.subject, ca_key, ca=False)
    address = str(ipaddress.IPv4Address("127.0.0.0") + random.randrange(2, 2**24 - 2))
    fake = FakeSns(address, signing_key, _pem(ca))

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            fake.hits.append(self.path)
            body = _pem(signing) if self.path == CERT_PATH else b"<ConfirmSubscriptionResponse/>"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    with tempfile.TemporaryDirectory() as tmp:
        chain, keyfile = Path(tmp, "server.pem"), Path(tmp, "server.key")
        chain.write_bytes(_pem(server))
        keyfile.write_bytes(
            server_key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(chain, keyfile)
        httpd = ThreadingHTTPServer((address, 443), Handler)
        httpd.socket = tls.wrap_socket(httpd.socket, server_side=True)
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        try:
            yield fake
        finally:
            httpd.shutdown()
            httpd.server_close()


def can_listen_on_443() -> bool:
    """Port 443 needs root (or CAP_NET_BIND_SERVICE)."""
    try:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 443))
    except OSError as err:
        return err.errno == 98  # in use: listening is allowed, someone else is there
    return True
