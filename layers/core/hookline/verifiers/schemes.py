"""Every inbound scheme by name (the first eight, the provider entries, the aliases), for
listing and checking scheme names; verifying a request imports only its scheme's module
(`hookline.verifiers.scheme_class`)."""

from __future__ import annotations

from typing import Any

from hookline.verifiers import FIRST_CLASSES, Verifier, scheme_class
from hookline.verifiers.handshakes import DESCRIPTIONS
from hookline.verifiers.providers import ALIASES, ENTRIES

SCHEMES: dict[str, type[Verifier]] = {
    name: scheme_class(name) for name in (*FIRST_CLASSES, *(e.scheme for e in ENTRIES), *ALIASES)
}

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


__all__ = ["SCHEMES", "describe_schemes"]
