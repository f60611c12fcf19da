"""docs/providers.md, generated from the registry so the page cannot drift from the code:

    PYTHONPATH=layers/core .venv/bin/python -m hookline.verifiers.catalogue > docs/providers.md

(tests/unit/test_provider_catalogue.py fails when the committed page differs)."""

from __future__ import annotations

from hookline.verifiers.entry import Entry
from hookline.verifiers.handshakes import DESCRIPTIONS
from hookline.verifiers.providers import ALIASES, ENTRIES

FIRST = (
    ("standard", "Standard Webhooks", "`webhook-signature` (`v1,` base64)",
     "HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, key = decoded `whsec_`",
     "yes", "—", "`webhook-id`", "payload `type`"),
    ("svix", "Svix", "`svix-signature`", "as standard, `svix-*` headers", "yes", "—",
     "`svix-id`", "payload `type`"),
    ("stripe", "Stripe", "`Stripe-Signature` (`t=…,v1=…`)", "HMAC-SHA256 hex of `{t}.{body}`",
     "yes", "—", "payload `id`", "payload `type`"),
    ("github", "GitHub", "`X-Hub-Signature-256` (`sha256=`)", "HMAC-SHA256 hex of `{body}`", "no",
     "—", "`X-GitHub-Delivery`", "`X-GitHub-Event` + `.action`"),
    ("shopify", "Shopify", "`X-Shopify-Hmac-Sha256`", "HMAC-SHA256 base64 of `{body}`", "no", "—",
     "`X-Shopify-Webhook-Id`", "`X-Shopify-Topic`"),
    ("slack", "Slack", "`X-Slack-Signature` (`v0=`)", "HMAC-SHA256 hex of `v0:{ts}:{body}`",
     "yes", DESCRIPTIONS["slack_url_verification"], "payload `event_id`",
     "`event.type`, else `type`"),
    ("razorpay", "Razorpay", "`X-Razorpay-Signature`", "HMAC-SHA256 hex of `{body}`", "no", "—",
     "`X-Razorpay-Event-Id`", "payload `event`"),
    ("hmac", "Any HMAC sender", "configured", "configured template", "if configured", "—",
     "configured header", "configured header or field"),
)  # fmt: skip


def _row(entry: Entry) -> str:
    header = f"`{entry.header}`" if entry.header else "—"
    if entry.signature_key:
        stamp = f"{entry.timestamp_key}=…," if entry.timestamp_key else ""
        header += f" (`{stamp}{entry.signature_key}=…`)"
    elif entry.prefix:
        header += f" (`{entry.prefix}`)"
    if entry.timestamp_header:
        header += f", `{entry.timestamp_header}`"
    tolerance = "yes" if entry.signs_time else "no"
    dedupe = (
        f"`{entry.id_header}`"
        if entry.id_header
        else (f"payload `{entry.id_field}`" if entry.id_field else "body sha256")
    )
    kinds = [f"`{entry.type_header}`"] if entry.type_header else []
    kinds += [f"payload `{f}`" for f in entry.type_fields]
    if entry.type_keys:
        kinds.append("first of " + ", ".join(f"`{k}`" for k in entry.type_keys[:3]) + ", …")
    kind = ", else ".join(kinds) or "the scheme name"
    if entry.action_field:
        kind += f" + `.{entry.action_field}`"
    handshake = DESCRIPTIONS.get(entry.handshake or "", "—")
    cells = (
        f"`{entry.scheme}`",
        f"[{entry.title}]({entry.docs})",
        header,
        entry.describe_signed().replace("|", "\\|"),
        tolerance,
        handshake,
        dedupe,
        kind,
        entry.material,
    )
    return "| " + " | ".join(cells) + " |"


def render() -> str:
    """The catalogue page."""
    lines = [
        "# Providers",
        "",
        "Generated from the registry (`hookline.verifiers`); do not edit by hand — run",
        "`PYTHONPATH=layers/core .venv/bin/python -m hookline.verifiers.catalogue > "
        "docs/providers.md`. Decisions 0037 (the registry) and 0038 (handshakes).",
        "",
        "Every scheme checks, in order: content type (415), signature and timestamp tolerance",
        "(401), payload (400). *Tolerance* says whether the signature covers a timestamp, checked",
        "against the source's `tolerance_seconds` (default 300) both ways. A handshake is",
        "answered, counted (`Handshakes` metric, the source's `activity`) and never stored.",
        "`hookline sources schemes` lists the same with what each source needs.",
        "",
        "| scheme | provider | headers | signed | tolerance | handshake | dedupe key | event type"
        " | material (`--secret`) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for scheme, title, header, signed, tolerance, handshake, dedupe, kind in FIRST:
        lines.append(
            f"| `{scheme}` | {title} | {header} | {signed} | {tolerance} | {handshake} "
            f"| {dedupe} | {kind} | shared secret |"
        )
    lines += [_row(e) for e in sorted(ENTRIES, key=lambda e: e.scheme)]
    lines += ["", "## Aliases (Standard Webhooks senders)", ""]
    lines += [
        f"* `{alias}` — [{title}]({docs}): verified as `{target}`."
        for alias, (target, title, docs) in sorted(ALIASES.items())
    ]
    lines += [
        "",
        "## Not signing the body",
        "",
        "Token (`gitlab`, `okta`, `telegram`), basic-auth (`postmark`) and clientState",
        "(`microsoft_graph`) providers authenticate the sender, not the bytes; `mailgun` signs",
        "a timestamp and token carried in the body. Their bodies are trusted as TLS delivered",
        "them — the providers offer nothing stronger.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(render(), end="")
