"""Inbound signature schemes. The eight first schemes are a small class each; every other
provider is an entry in `hookline.verifiers.providers` (decision 0037), a Standard Webhooks
sender is an alias of `standard` or `svix`.

A source uses one scheme, so a scheme's module is imported when a source of it is first
verified (decision 0083): the receiver's init loads none of them, and its first request only
its source's. `hookline.verifiers.schemes` is the whole registry, for listing and checking
scheme names."""

from __future__ import annotations

from functools import cache
from importlib import import_module

from hookline.verifiers.base import (
    HandshakeAnswer,
    Headers,
    RequestContext,
    SourceConfig,
    VerifiedRequest,
    Verifier,
)

# The first schemes' module and class; every other name is an entry or an alias.
FIRST_CLASSES: dict[str, tuple[str, str]] = {
    "standard": ("standard", "StandardWebhooksVerifier"),
    "svix": ("standard", "SvixVerifier"),
    "stripe": ("stripe", "StripeVerifier"),
    "github": ("github", "GitHubVerifier"),
    "shopify": ("shopify", "ShopifyVerifier"),
    "slack": ("slack", "SlackVerifier"),
    "razorpay": ("razorpay", "RazorpayVerifier"),
    "hmac": ("generic", "HmacVerifier"),
}


@cache
def scheme_class(scheme: str) -> type[Verifier]:
    """The verifier class of a scheme name (`stripe`, `github`, …), importing only its
    module (the provider entries' table for an entry or an alias)."""
    first = FIRST_CLASSES.get(scheme)
    if first is not None:
        module, name = first
        cls: type[Verifier] = getattr(import_module(f"hookline.verifiers.{module}"), name)
        return cls
    from hookline.verifiers.providers import ALIASES, entry_verifier

    if scheme in ALIASES:
        return scheme_class(ALIASES[scheme][0])
    found = entry_verifier(scheme)
    if found is None:
        from hookline.verifiers.schemes import SCHEMES

        raise ValueError(f"unknown scheme {scheme!r}; known: {', '.join(sorted(SCHEMES))}")
    return found


def verifier_for(scheme: str, config: SourceConfig) -> Verifier:
    """The verifier of a scheme name (`stripe`, `github`, …) for one source's config."""
    return scheme_class(scheme)(config)


def answer_handshake(
    verifier: Verifier, headers: Headers, body: bytes, context: RequestContext
) -> HandshakeAnswer | None:
    """The answer to the request if it is its scheme's handshake, else None."""
    if verifier.handshake_name is None:
        return None
    # Only the schemes with a handshake need the handshakes (and SNS's certificate checks).
    from hookline.verifiers.handshakes import answer_handshake as answer

    return answer(verifier, headers, body, context)


__all__ = [
    "HandshakeAnswer",
    "Headers",
    "RequestContext",
    "SourceConfig",
    "VerifiedRequest",
    "Verifier",
    "answer_handshake",
    "scheme_class",
    "verifier_for",
]
