"""Inbound signature schemes, one small class each. Adding a provider is adding one file
and one line in `SCHEMES`."""

from __future__ import annotations

from hookline.verifiers.base import (
    Headers,
    SourceConfig,
    VerifiedRequest,
    Verifier,
)
from hookline.verifiers.generic import HmacVerifier
from hookline.verifiers.github import GitHubVerifier
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


def verifier_for(scheme: str, config: SourceConfig) -> Verifier:
    """The verifier of a scheme name (`stripe`, `github`, …) for one source's config."""
    try:
        cls = SCHEMES[scheme]
    except KeyError:
        raise ValueError(
            f"unknown scheme {scheme!r}; known: {', '.join(sorted(SCHEMES))}"
        ) from None
    return cls(config)


__all__ = [
    "SCHEMES",
    "Headers",
    "SourceConfig",
    "VerifiedRequest",
    "Verifier",
    "verifier_for",
]
