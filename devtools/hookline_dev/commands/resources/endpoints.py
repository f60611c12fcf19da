"""`hookline endpoints ...`: subscriber endpoints (create, update, preview, role template,
list, show, enable/disable, rotate, delete, test), each one management API request."""

from __future__ import annotations

import argparse
import json
import os
from typing import TYPE_CHECKING, Any

from hookline.destinations import KINDS
from hookline.errors import BadRequest
from hookline_dev.commands.resources.parsers import ResourceParsers, drop_none

if TYPE_CHECKING:
    from hookline_dev.cli import Runtime

ENDPOINT_COLUMNS = ("id", "tenant_id", "url", "enabled", "event_types", "disabled_reason")


def _split(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [part.strip() for part in text.split(",") if part.strip()]


def _endpoint_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The endpoint fields the flags set (absent flags: absent fields)."""
    from hookline.management.inputs import parse_headers, parse_rate_limit

    return drop_none(
        {
            "url": args.url,
            "description": args.description,
            "event_types": _split(args.events),
            "max_concurrency": args.max_concurrency,
            "rate_limit_per_second": parse_rate_limit(args.rate_limit),
            "headers": parse_headers(args.header) if args.header is not None else None,
            "retry_on_4xx": args.retry_4xx,
            "content_filter": _json_flag("--filter", args.filter),
            "input_transformer": _json_flag("--transform", args.transform),
            "role_arn": args.role_arn,
            "destination": _json_flag("--destination", args.destination),
            "auth": _json_flag("--auth-file", _read(args.auth_file)),
            "tls": _tls(args),
            "ordering": _ordering(args.ordering_key),
        }
    )


def _ordering(key: str | None) -> dict[str, Any] | None:
    # `endpoint`: one order across the endpoint (decision 0069); else a JSON path.
    if key is None:
        return None
    return {"key": None if key == "endpoint" else key}


def _read(path: str | None) -> str | None:
    # Secrets and keys come from files, never the command line (visible to `ps`).
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError as err:
        raise BadRequest(f"cannot read {path}: {err.strerror}") from None


def _tls(args: argparse.Namespace) -> dict[str, str] | None:
    """Mutual TLS from PEM files (decision 0067): --tls-cert with --tls-key, --tls-ca, or all."""
    tls = drop_none(
        {
            "client_certificate": _read(args.tls_cert),
            "client_key": _read(args.tls_key),
            "ca_bundle": _read(args.tls_ca),
        }
    )
    return tls or None


def _json_flag(flag: str, text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError as err:
        raise BadRequest(f"{flag}: not JSON ({err})") from err


def cmd_endpoints_add(args: argparse.Namespace, rt: Runtime) -> Any:
    body = {
        "tenant_id": args.tenant,
        **_endpoint_fields(args),
        **drop_none({"kind": args.kind, "target": args.target, "signing": args.signing}),
    }
    return rt.client(args).request(
        "POST", "/v1/endpoints", data=body, idempotency_key=args.idempotency_key
    )


def cmd_endpoints_update(args: argparse.Namespace, rt: Runtime) -> Any:
    body = _endpoint_fields(args)
    if args.clear_rate_limit:
        body["clear_rate_limit"] = True
    if args.clear_filter:
        body["clear_content_filter"] = True
    if args.clear_transform:
        body["clear_input_transformer"] = True
    for part in ("auth", "tls", "ordering"):
        if getattr(args, f"clear_{part}"):
            body[f"clear_{part}"] = True
    if not body:
        raise BadRequest("nothing to change: give at least one field to update")
    return rt.client(args).request("PATCH", f"/v1/endpoints/{args.id}", data=body)


def cmd_endpoints_preview(args: argparse.Namespace, rt: Runtime) -> Any:
    event = _json_flag("--event", args.event)
    if not isinstance(event, dict) or "type" not in event:
        raise BadRequest('--event: a JSON object {"type": ..., "payload": ...}')
    body = {
        **event,
        **drop_none(
            {
                "content_filter": _json_flag("--filter", args.filter),
                "input_transformer": _json_flag("--transform", args.transform),
            }
        ),
    }
    return rt.client(args).request("POST", f"/v1/endpoints/{args.id}/preview", data=body)


def cmd_endpoints_role_template(args: argparse.Namespace, rt: Runtime) -> Any:
    from hookline.destinations.role_template import role_template

    if not args.hookline_role:
        raise BadRequest("--hookline-role: the ARN of Hookline's deliver role (stack output)")
    tenant = rt.client(args).request("GET", f"/v1/tenants/{args.tenant}")
    return role_template(
        kind=args.kind, target=args.target, external_id=tenant["external_id"],
        hookline_role_arn=args.hookline_role, name=args.name or tenant["id"].lower(),
        prefix=args.prefix, offload_bucket=args.offload_bucket,
    )  # fmt: skip


def cmd_endpoints_list(args: argparse.Namespace, rt: Runtime) -> Any:
    from hookline_dev.cli import listing

    query = {"tenant_id": args.tenant, "enabled": args.enabled}
    return listing(args, rt, "/v1/endpoints", query, ENDPOINT_COLUMNS)


def cmd_endpoints_show(args: argparse.Namespace, rt: Runtime) -> Any:
    return rt.client(args).request("GET", f"/v1/endpoints/{args.id}")


def cmd_endpoints_enable(args: argparse.Namespace, rt: Runtime) -> Any:
    if args.enabled:
        return rt.client(args).request("POST", f"/v1/endpoints/{args.id}/enable")
    body = drop_none({"reason": args.reason})
    return rt.client(args).request("POST", f"/v1/endpoints/{args.id}/disable", data=body)


def cmd_endpoints_delete(args: argparse.Namespace, rt: Runtime) -> Any:
    return rt.client(args).request("DELETE", f"/v1/endpoints/{args.id}")


def cmd_endpoints_rotate(args: argparse.Namespace, rt: Runtime) -> Any:
    return rt.client(args).request("POST", f"/v1/endpoints/{args.id}/rotate-secret")


def cmd_endpoints_test(args: argparse.Namespace, rt: Runtime) -> Any:
    from hookline_dev.cli import json_argument

    body = drop_none({"type": args.type, "payload": json_argument(args.data, "--data")})
    return rt.client(args).request(
        "POST", f"/v1/endpoints/{args.id}/test", data=body, idempotency_key=args.idempotency_key
    )


# -- the command tree -----------------------------------------------------------------------


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add `endpoints`."""
    from hookline_dev.cli import api_options, list_options

    one = [common, api_options()]
    many = [*one, list_options()]
    tree = ResourceParsers(sub, one, many)
    group, creates, by_id = tree.group, tree.creates, tree.by_id

    endpoints = group("endpoints", "subscriber endpoints")

    def transform_flags(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--filter", metavar="PATTERN_JSON",
            help='EventBridge event pattern, e.g. \'{"payload": {"amount": [{"exists": true}]}}\'',
        )  # fmt: skip
        p.add_argument(
            "--transform", metavar="TRANSFORMER_JSON",
            help='{"InputPathsMap": {...}, "InputTemplate": "..."}',
        )  # fmt: skip

    for verb in ("add", "update"):
        if verb == "add":
            p = endpoints.add_parser("add", parents=one, help="create an endpoint")
            p.add_argument("--tenant", required=True, metavar="ID")
            p.add_argument("--url", help="https URL (private addresses are refused)")
            p.add_argument("--kind", choices=KINDS, help="https (default) or an AWS target kind")
            p.add_argument("--target", metavar="ARN", help="the AWS target (not https)")
            p.add_argument(
                "--signing", choices=("hmac", "ed25519"),
                help="v1 HMAC (a whsec_ secret, shown once) or v1a Ed25519 (public keys shown)",
            )  # fmt: skip
            creates(p)
            p.set_defaults(func=cmd_endpoints_add)
        else:
            p = by_id(endpoints, "update", "change an endpoint's fields", cmd_endpoints_update)
            p.add_argument("--url", help="https URL (private addresses are refused)")
            p.add_argument("--clear-rate-limit", action="store_true", help="no rate limit")
            p.add_argument("--clear-filter", action="store_true", help="no content filter")
            p.add_argument("--clear-transform", action="store_true", help="no input transformer")
            p.add_argument("--clear-auth", action="store_true", help="no OAuth2 client")
            p.add_argument("--clear-tls", action="store_true", help="no mutual TLS")
            p.add_argument(
                "--clear-ordering", action="store_true", help="unordered (releases held events)"
            )
        p.add_argument(
            "--events", help="comma-separated type filters, e.g. 'payment_intent.*,charge.refunded'"
        )
        p.add_argument("--max-concurrency", type=int)
        p.add_argument("--rate-limit", help="e.g. 50/s, 600/m")
        p.add_argument("--header", action="append", help="'Name: value', repeatable")
        p.add_argument("--description")
        transform_flags(p)
        p.add_argument(
            "--auth-file", metavar="PATH",
            help='OAuth2 client credentials, a JSON file: {"type": "oauth2_client_credentials", '
            '"token_url", "client_id", "client_secret", "scope", "audience"}',
        )  # fmt: skip
        p.add_argument("--tls-cert", metavar="PEM_FILE", help="client certificate (mutual TLS)")
        p.add_argument("--tls-key", metavar="PEM_FILE", help="its private key (unencrypted)")
        p.add_argument("--tls-ca", metavar="PEM_FILE", help="CA bundle for the server certificate")
        p.add_argument(
            "--ordering-key", metavar="PATH",
            help="deliver events with the same value at this JSON path (e.g. "
            "'$.payload.customer_id') one at a time, in order; 'endpoint': one order for all",
        )  # fmt: skip
        p.add_argument("--role-arn", metavar="ARN", help="the role Hookline assumes (AWS kinds)")
        p.add_argument(
            "--destination", metavar="JSON",
            help='options of the kind, e.g. \'{"message_group_path": "$.payload.customer"}\'',
        )  # fmt: skip
        p.add_argument(
            "--retry-4xx",
            action=argparse.BooleanOptionalAction,
            default=None,
            help="retry 4xx answers too",
        )
    p = endpoints.add_parser("list", parents=many, help="list endpoints")
    p.add_argument("--tenant", metavar="ID")
    p.add_argument("--enabled", action=argparse.BooleanOptionalAction, default=None)
    p.set_defaults(func=cmd_endpoints_list)
    by_id(endpoints, "show", "one endpoint (never its secrets)", cmd_endpoints_show)
    by_id(endpoints, "enable", "enable an endpoint", cmd_endpoints_enable, enabled=True)
    p = by_id(endpoints, "disable", "disable an endpoint", cmd_endpoints_enable, enabled=False)
    p.add_argument("--reason", default="disabled by an operator")
    by_id(endpoints, "rotate-secret", "new signing secret (printed once)", cmd_endpoints_rotate)
    by_id(
        endpoints,
        "delete",
        "delete an endpoint (disabled for good; deliveries stay)",
        cmd_endpoints_delete,
    )
    p = by_id(
        endpoints, "preview", "what an event would become (filter, transform)",
        cmd_endpoints_preview,
    )  # fmt: skip
    p.add_argument("--event", required=True, metavar="EVT", help='{"type": ..., "payload": ...}')
    transform_flags(p)
    p = endpoints.add_parser(
        "role-template", parents=one,
        help="the CloudFormation role a customer deploys for an AWS target",
    )  # fmt: skip
    p.add_argument("--tenant", required=True, metavar="ID")
    p.add_argument("--kind", required=True, choices=KINDS[1:])
    p.add_argument("--target", required=True, metavar="ARN")
    p.add_argument(
        "--hookline-role", metavar="ARN", default=os.environ.get("HOOKLINE_DELIVER_ROLE_ARN"),
        help="Hookline's deliver role (default $HOOKLINE_DELIVER_ROLE_ARN)",
    )  # fmt: skip
    p.add_argument("--name", help="the role is named hookline-delivery-NAME (default tenant id)")
    p.add_argument("--prefix", default="", help="S3: the key prefix Hookline may write under")
    p.add_argument("--offload-bucket", default="", help="sqs, sns: the bucket large bodies go to")
    p.set_defaults(func=cmd_endpoints_role_template)
    p = by_id(endpoints, "test", "send a test event to this endpoint only", cmd_endpoints_test)
    p.add_argument("--type", help="event type (default hookline.test)")
    p.add_argument("--data", metavar="JSON", help="the payload, a JSON object")
    creates(p)
