"""Inbound signature schemes. The eight first schemes are a small class each; every other
provider is an entry in `hookline.verifiers.providers` (decision 0037), a Standard Webhooks
sender is an alias of `standard` or `svix`."""

from __future__ import annotations

from typing import Any

from hookline.verifiers.base import (
    HandshakeAnswer,
    Headers,
    RequestContext,
    SourceConfig,
    VerifiedRequest,
    Verifier,
)
from hookline.verifiers.generic import HmacVerifier
from hookline.verifiers.github import GitHubVerifier
from hookline.verifiers.handshakes import DESCRIPTIONS, answer_handshake
from hookline.verifiers.providers import ALIASES, ENTRIES, entry_verifiers
from hookline.verifiers.razorpay import RazorpayVerifier
from hookline.verifiers.shopify import ShopifyVerifier
from hookline.verifiers.slack import SlackVerifier
from hookline.verifiers.standard import StandardWebhooksVerifier, SvixVerifier
from hookline.verifiers.stripe import StripeVerifier

SCHEMES: dict[str, type[Verifier]] = {
    cls.scheme: cls
    for cls in (
        StandardWebhooksVerifier,
        SvixVerifier,
        StripeVerifier,
        GitHubVerifier,
        ShopifyVerifier,
        SlackVerifier,
        RazorpayVerifier,
        HmacVerifier,
    )
}
SCHEMES.update(entry_verifiers())
SCHEMES.update({alias: SCHEMES[target] for alias, (target, _, _) in ALIASES.items()})

_FIRST = {
    "standard": ("Standard Webhooks", "a whsec_ secret", None),
    "svix": ("Svix", "a whsec_ secret", None),
    "stripe": ("Stripe", "the endpoint's whsec_ signing secret", None),
    "github": ("GitHub", "the webhook's secret", None),
    "shopify": ("Shopify", "the app's client secret", None),
    "slack": ("Slack", "the app's signing secret", "slack_url_verification"),
    "razorpay": ("Razorpay", "the webhook's secret", None),
    "hmac": ("Any HMAC sender", "the shared secret, and options", None),
}


def verifier_for(scheme: str, config: SourceConfig) -> Verifier:
    """The verifier of a scheme name (`stripe`, `github`, …) for one source's config."""
    try:
        cls = SCHEMES[scheme]
    except KeyError:
        raise ValueError(
            f"unknown scheme {scheme!r}; known: {', '.join(sorted(SCHEMES))}"
        ) from None
    return cls(config)


def describe_schemes() -> list[dict[str, Any]]:
    """Every scheme with what a source of it needs, for `hookline sources schemes`."""
    rows = [
        {"scheme": name, "title": title, "needs": needs, "handshake": DESCRIPTIONS.get(hs or "")}
        for name, (title, needs, hs) in _FIRST.items()
    ]
    rows += [
        {
            "scheme": e.scheme,
            "title": e.title,
            "needs": e.material,
            "handshake": DESCRIPTIONS.get(e.handshake or ""),
        }
        for e in ENTRIES
    ]
    rows += [
        {"scheme": alias, "title": title, "needs": f"as {target}", "handshake": None}
        for alias, (target, title, _) in ALIASES.items()
    ]
    return sorted(rows, key=lambda r: str(r["scheme"]))


__all__ = [
    "SCHEMES",
    "HandshakeAnswer",
    "Headers",
    "RequestContext",
    "SourceConfig",
    "VerifiedRequest",
    "Verifier",
    "answer_handshake",
    "describe_schemes",
    "verifier_for",
]
