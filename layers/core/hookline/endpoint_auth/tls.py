"""Mutual TLS for endpoints: a client certificate (and its key), a private CA for the
endpoint's server certificate, or both (decision 0067).

What the API receives is checked when it is saved (each PEM parses, the key matches the
certificate), so an attempt only fails on what the endpoint's server does. The deliverer
keeps one SSRF-guarded client per endpoint and TLS version in this container: building
an SSL context costs milliseconds and a connection pool is worth reusing.
"""

from __future__ import annotations

import hashlib
import json
import os
import ssl
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from hookline.errors import BadRequest, EndpointAuthFailed
from hookline.records import frozen

if TYPE_CHECKING:  # the PEM checks run when an endpoint is saved, not in the deliverer's init
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes

    from hookline.webhook_client import WebhookClient

MAX_CLIENTS = 256


@frozen
class ParsedTls:
    """An endpoint's TLS material as stored: the public parts, the key (to be sealed) and the
    client certificate's expiry."""

    public: dict[str, Any]
    client_key: str | None
    not_after: datetime | None


def _certificates(pem: str, field: str) -> list[x509.Certificate]:
    from cryptography import x509

    try:
        certificates = x509.load_pem_x509_certificates(pem.encode())
    except ValueError:
        raise BadRequest(f"tls.{field}: not a PEM certificate") from None
    return certificates


def _private_key(pem: str) -> PrivateKeyTypes:
    from cryptography.hazmat.primitives import serialization

    try:
        return serialization.load_pem_private_key(pem.encode(), password=None)
    except (ValueError, TypeError):
        raise BadRequest("tls.client_key: not an unencrypted PEM private key") from None
    except Exception:  # an unsupported key type raises the library's own errors
        raise BadRequest("tls.client_key: not a supported private key") from None


def _public_bytes(key: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return bytes(
        key.public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )


def parse_tls(value: dict[str, Any]) -> ParsedTls:
    """Check an endpoint's `tls` as the API received it. Raises BadRequest naming the field:
    a PEM that does not parse, a key that does not match its certificate, or a certificate
    without its key (or a key without its certificate)."""
    certificate = value.get("client_certificate") or None
    key = value.get("client_key") or None
    ca_bundle = value.get("ca_bundle") or None
    if certificate is None and key is None and ca_bundle is None:
        raise BadRequest("tls: give client_certificate and client_key, ca_bundle, or both")
    if (certificate is None) != (key is None):
        missing = "client_key" if key is None else "client_certificate"
        raise BadRequest(f"tls.{missing}: a client certificate needs its key, and a key its "
                         "certificate")  # fmt: skip
    not_after: datetime | None = None
    subject: str | None = None
    if certificate is not None and key is not None:
        leaf = _certificates(certificate, "client_certificate")[0]
        private = _private_key(key)
        if _public_bytes(private.public_key()) != _public_bytes(leaf.public_key()):
            raise BadRequest("tls.client_key: does not match the client certificate")
        not_after = leaf.not_valid_after_utc
        subject = leaf.subject.rfc4514_string()
    if ca_bundle is not None:
        _certificates(ca_bundle, "ca_bundle")
        try:
            ssl.create_default_context(cadata=ca_bundle)
        except ssl.SSLError:
            raise BadRequest("tls.ca_bundle: not a usable CA bundle") from None
    public = {
        "client_certificate": certificate,
        "ca_bundle": ca_bundle,
        "certificate_subject": subject,
        "certificate_expires_at": None if not_after is None else not_after.isoformat(),
    }
    return ParsedTls(public, key, not_after)


def ssl_context(tls: dict[str, Any], client_key: str | None) -> ssl.SSLContext:
    """The SSL context of an endpoint: its private CA (else the public ones, certifi's) and
    its client certificate. The ssl module loads a certificate chain only from files, so the
    key is written to a private temporary directory for the load and removed right after."""
    from hookline.webhook_client import default_ssl_context

    ca_bundle = tls.get("ca_bundle")
    context = ssl.create_default_context(cadata=ca_bundle) if ca_bundle else default_ssl_context()
    certificate = tls.get("client_certificate")
    if certificate and client_key:
        with tempfile.TemporaryDirectory(prefix="hookline-tls-") as directory:
            cert_path = os.path.join(directory, "cert.pem")
            key_path = os.path.join(directory, "key.pem")
            for path, text in ((cert_path, certificate), (key_path, client_key)):
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "w") as handle:
                    handle.write(text)
            try:
                context.load_cert_chain(cert_path, key_path)
            except ssl.SSLError as err:
                raise EndpointAuthFailed(
                    f"tls: client certificate did not load ({err.reason})"
                ) from None
    return context


class TlsClients:
    """Webhook clients with an endpoint's SSL context, one per endpoint and TLS version (a
    changed certificate, key or CA bundle is a new version), in this container."""

    def __init__(self, build: Callable[[ssl.SSLContext], WebhookClient]) -> None:
        """`build` makes an SSRF-guarded client around an SSL context."""
        self.build = build
        self._clients: OrderedDict[tuple[str, str], WebhookClient] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def version(tls: dict[str, Any], sealed_key: str | None) -> str:
        """Identifies the TLS material: the sealed key changes whenever a key is set."""
        material = json.dumps([tls, sealed_key], sort_keys=True)
        return hashlib.sha256(material.encode()).hexdigest()

    def cached(self, endpoint_id: str, version: str) -> WebhookClient | None:
        """The client already built for this endpoint and version, if any."""
        with self._lock:
            client = self._clients.get((endpoint_id, version))
            if client is not None:
                self._clients.move_to_end((endpoint_id, version))
            return client

    def client(
        self, endpoint_id: str, version: str, tls: dict[str, Any], client_key: str | None
    ) -> WebhookClient:
        """The endpoint's client, built on first use (raises EndpointAuthFailed when its
        material does not load)."""
        cached = self.cached(endpoint_id, version)
        if cached is not None:
            return cached
        client = self.build(ssl_context(tls, client_key))
        with self._lock:
            # Older versions of this endpoint are dropped; clients in use finish their
            # request and are collected after.
            for key in [k for k in self._clients if k[0] == endpoint_id]:
                del self._clients[key]
            self._clients[(endpoint_id, version)] = client
            while len(self._clients) > MAX_CLIENTS:
                self._clients.popitem(last=False)
        return client


def tls_failure(err: BaseException) -> str | None:
    """`tls: <reason>` when a TLS handshake or alert is behind a failed request (e.g.
    `tls: CERTIFICATE_VERIFY_FAILED`, `tls: TLSV13_ALERT_CERTIFICATE_REQUIRED`), else None."""
    seen: set[int] = set()
    current: BaseException | None = err
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ssl.SSLError):
            return f"tls: {current.reason or current.__class__.__name__}"
        current = current.__cause__ or current.__context__
    return None
