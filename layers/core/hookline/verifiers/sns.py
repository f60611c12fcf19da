"""AWS SNS HTTPS subscriptions: every message signed with the certificate at its
`SigningCertURL` (SignatureVersion 1: SHA1withRSA, 2: SHA256withRSA over the documented
canonical string), the certificate fetched only from an SNS endpoint of the topic's partition
and region, through the SSRF-guarded client, and cached; `SubscriptionConfirmation` confirmed
by fetching its `SubscribeURL` under the same host rule (decision 0038).

A source's material is the topic ARN it accepts messages from, so another AWS account's topic
cannot post to it with a valid SNS signature of its own.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    import httpx
    from cryptography.hazmat.primitives.asymmetric import rsa

from hookline.errors import (
    BadRequest,
    HandshakeRefused,
    UnsafeURL,
    UpstreamUnavailable,
    VerificationFailed,
)
from hookline.verifiers.base import (
    HandshakeAnswer,
    Headers,
    RequestContext,
    Verifier,
    decode_base64,
    parse_json,
)
from hookline.verifiers.entry import EntryVerifier

TOPIC_ARN = re.compile(
    r"arn:(?P<partition>aws|aws-cn|aws-us-gov):sns:(?P<region>[a-z]{2}(-[a-z]+)+-\d):"
    r"\d{12}:[A-Za-z0-9_.-]{1,256}"
)
DOMAIN = {"aws": "amazonaws.com", "aws-us-gov": "amazonaws.com", "aws-cn": "amazonaws.com.cn"}
SIGNED_KEYS = {
    "Notification": ("Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"),
    "SubscriptionConfirmation": (
        "Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type",
    ),
    "UnsubscribeConfirmation": (
        "Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type",
    ),
}  # fmt: skip
CONFIRMATIONS = ("SubscriptionConfirmation", "UnsubscribeConfirmation")
# SignatureVersion -> the name of its hash in cryptography's `hashes` (which, like x509, is
# imported on the first SNS message only: it costs every receiver's cold start ~0.1 s).
HASHES = {"1": "SHA1", "2": "SHA256"}
MAX_CERTIFICATES = 32
MAX_CERTIFICATE_BYTES = 16_384


class CertificateCache:
    """Signing certificates by URL, process-wide (SNS rotates them rarely)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._keys: OrderedDict[str, rsa.RSAPublicKey] = OrderedDict()

    def key(self, url: str, http: Callable[[], httpx.Client] | None) -> rsa.RSAPublicKey:
        """The RSA public key of the certificate at `url` (fetched once)."""
        with self._lock:
            if url in self._keys:
                self._keys.move_to_end(url)
                return self._keys[url]
        from cryptography import x509
        from cryptography.hazmat.primitives.asymmetric import rsa

        body = _fetch(http, url)
        if len(body) > MAX_CERTIFICATE_BYTES:
            raise VerificationFailed("the signing certificate is too large")
        try:
            key = x509.load_pem_x509_certificate(body).public_key()
        except ValueError:
            raise VerificationFailed("the signing certificate is not a PEM certificate") from None
        if not isinstance(key, rsa.RSAPublicKey):
            raise VerificationFailed("the signing certificate has no RSA key")
        with self._lock:
            self._keys[url] = key
            while len(self._keys) > MAX_CERTIFICATES:
                self._keys.popitem(last=False)
        return key

    def clear(self) -> None:
        """Forget every certificate (tests)."""
        with self._lock:
            self._keys.clear()


CERTIFICATES = CertificateCache()


def _fetch(http: Callable[[], httpx.Client] | None, url: str) -> bytes:
    if http is None:
        raise UpstreamUnavailable("no HTTP client to reach SNS")
    import httpx  # only the SNS path fetches: the receiver's cold start skips httpx

    try:
        response = http().get(url)
    except UnsafeURL:
        raise VerificationFailed("the SNS URL resolved to a non-public address") from None
    except httpx.HTTPError as err:
        raise UpstreamUnavailable(f"SNS did not answer: {type(err).__name__}") from None
    if response.status_code != 200:
        raise UpstreamUnavailable(f"SNS answered {response.status_code}")
    return response.content


def sns_host(partition: str, region: str) -> str:
    """The SNS endpoint of a region: the only host certificates and confirmations come from."""
    return f"sns.{region}.{DOMAIN[partition]}"


def check_sns_url(url: Any, topic: re.Match[str], *, pem: bool) -> str:
    """`url` when it is https on the topic's SNS endpoint (a .pem path for certificates)."""
    if not isinstance(url, str):
        raise VerificationFailed("missing SNS URL")
    parts = urlsplit(url)
    expected = sns_host(topic["partition"], topic["region"])
    if (
        parts.scheme != "https"
        or parts.hostname != expected
        or parts.port not in (None, 443)
        or parts.username is not None
        or (pem and not parts.path.endswith(".pem"))
    ):
        raise VerificationFailed(f"SNS URLs must be https://{expected}/…")
    return url


def canonical(message: dict[str, Any]) -> bytes:
    """The string SNS signs: each present signed key and its value, one per line."""
    keys = SIGNED_KEYS[message["Type"]]
    lines = []
    for key in keys:
        value = message.get(key)
        if key == "Subject" and value is None:
            continue
        if not isinstance(value, str):
            raise VerificationFailed(f"SNS message without {key}")
        lines += [key, value]
    return ("\n".join(lines) + "\n").encode()


class SnsVerifier(EntryVerifier):
    """SNS messages, checked against the certificate SNS names, from the source's topic."""

    def key_from_secret(self, secret: str) -> bytes:
        """The topic ARN; ValueError (fit to show) for anything else."""
        if not TOPIC_ARN.fullmatch(secret.strip()):
            raise ValueError(
                "an sns source takes the topic ARN it accepts, arn:aws:sns:<region>:<account>:"
                "<topic> (SNS signs with its own certificates: there is no shared secret)"
            )
        return secret.strip().encode()

    def check_content_type(self, headers: Headers) -> None:
        """SNS posts JSON as text/plain: any type is accepted, the body must be JSON."""

    def parse_payload(self, headers: Headers, body: bytes) -> Any | None:
        """The message (a JSON object)."""
        return parse_json(body)

    def check_signature(self, headers: Headers, body: bytes) -> None:
        """Topic, certificate URL, then the RSA signature over the canonical string."""
        self.message(body)

    def message(self, body: bytes) -> dict[str, Any]:
        """The verified message: from the source's topic, signed by SNS."""
        try:
            message = parse_json(body)
        except BadRequest:
            raise VerificationFailed("not an SNS message") from None
        if not isinstance(message, dict) or message.get("Type") not in SIGNED_KEYS:
            raise VerificationFailed("not an SNS message")
        arn = message.get("TopicArn")
        topic = TOPIC_ARN.fullmatch(arn) if isinstance(arn, str) else None
        if topic is None or topic[0].encode() not in self.keys:
            raise VerificationFailed("message from another topic")
        version = message.get("SignatureVersion")
        algorithm = HASHES.get(version) if isinstance(version, str) else None
        signature = decode_base64(str(message.get("Signature") or ""))
        if algorithm is None or not signature:
            raise VerificationFailed("missing or unknown SNS SignatureVersion or Signature")
        url = check_sns_url(message.get("SigningCertURL"), topic, pem=True)
        key = CERTIFICATES.key(url, self.context.http)
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        try:
            hashing = getattr(hashes, algorithm)()
            key.verify(signature, canonical(message), padding.PKCS1v15(), hashing)
        except InvalidSignature:
            raise VerificationFailed("signature does not match") from None
        return message


def sns_subscription(
    verifier: Verifier, headers: Headers, body: bytes, context: RequestContext
) -> HandshakeAnswer | None:
    """`SubscriptionConfirmation`: verified, then confirmed by a GET of its SubscribeURL on
    the topic's SNS endpoint; `UnsubscribeConfirmation`: verified and acknowledged."""
    kind = headers.get("x-amz-sns-message-type")
    if context.method != "POST" or kind not in (
        "SubscriptionConfirmation",
        "UnsubscribeConfirmation",
    ):
        return None
    assert isinstance(verifier, SnsVerifier)
    verifier.context = context
    message = verifier.message(body)
    if message["Type"] != kind:
        raise VerificationFailed("message type header and body disagree")
    if kind == "SubscriptionConfirmation":
        topic = TOPIC_ARN.fullmatch(message["TopicArn"])
        assert topic is not None
        try:
            url = check_sns_url(message.get("SubscribeURL"), topic, pem=False)
        except VerificationFailed as err:
            raise HandshakeRefused(str(err)) from None
        _fetch(context.http, url)
    return HandshakeAnswer(kind=kind, body='{"confirmed": true}')
