"""`hookline tenants|sources|endpoints|events|event-types` (and `publish`): each command is
one management API request (`hookline_dev.apiclient`), in this process or to `--api URL`."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hookline.destinations import KINDS
from hookline.errors import BadRequest

if TYPE_CHECKING:
    from hookline_dev.cli import Runtime

from hookline.verifiers import SCHEMES as _REGISTRY
from hookline.verifiers import describe_schemes

SCHEMES = sorted(_REGISTRY)

TENANT_COLUMNS = ("id", "name", "group", "created_at")
SOURCE_COLUMNS = ("id", "tenant_id", "name", "scheme", "enabled", "path")
ENDPOINT_COLUMNS = ("id", "tenant_id", "url", "enabled", "event_types", "disabled_reason")
EVENT_COLUMNS = ("id", "tenant_id", "type", "origin", "source_id", "received_at", "size")
EVENT_TYPE_COLUMNS = ("id", "tenant_id", "name", "description", "archived")


def _drop_none(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def _split(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [part.strip() for part in text.split(",") if part.strip()]


# -- tenants --------------------------------------------------------------------------------


def cmd_tenants_add(args: argparse.Namespace, rt: Runtime) -> Any:
    body = _drop_none({"name": args.name, "group": args.group})
    return rt.client(args).request(
        "POST", "/v1/tenants", data=body, idempotency_key=args.idempotency_key
    )


def cmd_tenants_list(args: argparse.Namespace, rt: Runtime) -> Any:
    from hookline_dev.cli import listing

    return listing(args, rt, "/v1/tenants", {}, TENANT_COLUMNS)


def cmd_tenants_show(args: argparse.Namespace, rt: Runtime) -> Any:
    return rt.client(args).request("GET", f"/v1/tenants/{args.id}")


# -- sources --------------------------------------------------------------------------------


def _hmac_options(args: argparse.Namespace) -> dict[str, Any]:
    """The hmac scheme options the flags set."""
    return _drop_none(
        {
            "header": args.header,
            "algorithm": args.algorithm,
            "encoding": args.encoding,
            "prefix": args.prefix,
            "id_header": args.id_header,
            "type_header": args.type_header,
            "type_field": args.type_field,
        }
    )


def cmd_sources_add(args: argparse.Namespace, rt: Runtime) -> Any:
    options = _hmac_options(args) if args.scheme == "hmac" else {}
    options.update(_drop_none({"verify_token": args.verify_token, "public_url": args.public_url}))
    secrets = args.secret or []
    if len(secrets) > 2:
        raise BadRequest("a source takes one or two secrets (--secret twice during rotation)")
    body = _drop_none(
        {
            "tenant_id": args.tenant,
            "scheme": args.scheme,
            "name": args.name,
            "secret": secrets[0] if len(secrets) == 1 else None,
            "secrets": secrets if len(secrets) == 2 else None,
            "tolerance_seconds": args.tolerance,
            "options": options or None,
        }
    )
    return rt.client(args).request(
        "POST", "/v1/sources", data=body, idempotency_key=args.idempotency_key
    )


def cmd_sources_schemes(args: argparse.Namespace, rt: Runtime) -> Any:
    """Every scheme a source can use, with what it needs (no API request: the registry)."""
    return describe_schemes()


def cmd_sources_list(args: argparse.Namespace, rt: Runtime) -> Any:
    from hookline_dev.cli import listing

    return listing(args, rt, "/v1/sources", {"tenant_id": args.tenant}, SOURCE_COLUMNS)


def cmd_sources_show(args: argparse.Namespace, rt: Runtime) -> Any:
    return rt.client(args).request("GET", f"/v1/sources/{args.id}")


def cmd_sources_enable(args: argparse.Namespace, rt: Runtime) -> Any:
    verb = "enable" if args.enabled else "disable"
    return rt.client(args).request("POST", f"/v1/sources/{args.id}/{verb}")


def cmd_sources_update(args: argparse.Namespace, rt: Runtime) -> Any:
    from hookline_dev.cli import json_argument

    options = json_argument(args.options, "--options")
    if options is not None and not isinstance(options, dict):
        raise BadRequest("--options must be a JSON object")
    body = _drop_none({"name": args.name, "tolerance_seconds": args.tolerance, "options": options})
    if not body:
        raise BadRequest("nothing to change: give --name, --tolerance or --options")
    return rt.client(args).request("PATCH", f"/v1/sources/{args.id}", data=body)


def cmd_sources_delete(args: argparse.Namespace, rt: Runtime) -> Any:
    return rt.client(args).request("DELETE", f"/v1/sources/{args.id}")


def cmd_sources_rotate(args: argparse.Namespace, rt: Runtime) -> Any:
    body = _drop_none({"secret": args.secret, "keep_previous": not args.drop_previous})
    return rt.client(args).request("POST", f"/v1/sources/{args.id}/rotate-secret", data=body)


# -- endpoints ------------------------------------------------------------------------------


def _endpoint_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The endpoint fields the flags set (absent flags: absent fields)."""
    from hookline.management.inputs import parse_headers, parse_rate_limit

    return _drop_none(
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
        }
    )


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
        **_drop_none({"kind": args.kind, "target": args.target}),
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
    if not body:
        raise BadRequest("nothing to change: give at least one field to update")
    return rt.client(args).request("PATCH", f"/v1/endpoints/{args.id}", data=body)


def cmd_endpoints_preview(args: argparse.Namespace, rt: Runtime) -> Any:
    event = _json_flag("--event", args.event)
    if not isinstance(event, dict) or "type" not in event:
        raise BadRequest('--event: a JSON object {"type": ..., "payload": ...}')
    body = {
        **event,
        **_drop_none(
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
    body = _drop_none({"reason": args.reason})
    return rt.client(args).request("POST", f"/v1/endpoints/{args.id}/disable", data=body)


def cmd_endpoints_delete(args: argparse.Namespace, rt: Runtime) -> Any:
    return rt.client(args).request("DELETE", f"/v1/endpoints/{args.id}")


def cmd_endpoints_rotate(args: argparse.Namespace, rt: Runtime) -> Any:
    return rt.client(args).request("POST", f"/v1/endpoints/{args.id}/rotate-secret")


def cmd_endpoints_test(args: argparse.Namespace, rt: Runtime) -> Any:
    from hookline_dev.cli import json_argument

    body = _drop_none({"type": args.type, "payload": json_argument(args.data, "--data")})
    return rt.client(args).request(
        "POST", f"/v1/endpoints/{args.id}/test", data=body, idempotency_key=args.idempotency_key
    )


# -- events ---------------------------------------------------------------------------------


def cmd_publish(args: argparse.Namespace, rt: Runtime) -> Any:
    from hookline_dev.cli import json_argument

    body = {
        "tenant_id": args.tenant,
        "type": args.type,
        "payload": json_argument(args.data, "--data"),
    }
    return rt.client(args).request(
        "POST", "/v1/events", data=body, idempotency_key=args.idempotency_key
    )


def cmd_events_list(args: argparse.Namespace, rt: Runtime) -> Any:
    from hookline_dev.cli import instant, listing

    query = {
        "tenant_id": args.tenant,
        "type": args.type,
        "source_id": args.source,
        "since": instant(args.since, "--since"),
        "until": instant(args.until, "--until"),
    }
    return listing(args, rt, "/v1/events", query, EVENT_COLUMNS)


def cmd_events_show(args: argparse.Namespace, rt: Runtime) -> Any:
    return rt.client(args).request("GET", f"/v1/events/{args.id}")


# -- event types ----------------------------------------------------------------------------


def _schema(args: argparse.Namespace) -> Any:
    """The JSON Schema from `--schema` or `--schema-file`."""
    from hookline_dev.cli import json_argument

    if args.schema is not None and args.schema_file is not None:
        raise BadRequest("give --schema or --schema-file, not both")
    if args.schema_file is not None:
        try:
            text = Path(args.schema_file).read_text()
        except OSError as err:
            raise BadRequest(f"--schema-file {args.schema_file}: {err.strerror}") from err
        return json_argument(text, "--schema-file")
    return json_argument(args.schema, "--schema")


def cmd_event_types_add(args: argparse.Namespace, rt: Runtime) -> Any:
    body = _drop_none(
        {
            "tenant_id": args.tenant,
            "name": args.name,
            "description": args.description,
            "schema": _schema(args),
        }
    )
    return rt.client(args).request(
        "POST", "/v1/event-types", data=body, idempotency_key=args.idempotency_key
    )


def cmd_event_types_list(args: argparse.Namespace, rt: Runtime) -> Any:
    from hookline_dev.cli import listing

    query = {"tenant_id": args.tenant, "name": args.name, "archived": args.archived or None}
    return listing(args, rt, "/v1/event-types", query, EVENT_TYPE_COLUMNS)


def cmd_event_types_show(args: argparse.Namespace, rt: Runtime) -> Any:
    return rt.client(args).request("GET", f"/v1/event-types/{args.id}")


def cmd_event_types_update(args: argparse.Namespace, rt: Runtime) -> Any:
    body = _drop_none({"description": args.description, "schema": _schema(args)})
    if not body:
        raise BadRequest("nothing to change: give --description, --schema or --schema-file")
    return rt.client(args).request("PATCH", f"/v1/event-types/{args.id}", data=body)


def cmd_event_types_archive(args: argparse.Namespace, rt: Runtime) -> Any:
    answer = rt.client(args).request("DELETE", f"/v1/event-types/{args.id}")
    return answer if answer is not None else {"id": args.id, "archived": True}


# -- the command tree -----------------------------------------------------------------------


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add `tenants`, `sources`, `endpoints`, `events`, `event-types` and `publish`."""
    from hookline_dev.cli import api_options, list_options

    one = [common, api_options()]
    many = [*one, list_options()]

    def group(name: str, help: str) -> Any:
        return sub.add_parser(name, help=help).add_subparsers(dest="action", required=True)

    def creates(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--idempotency-key", metavar="KEY", help="a retry with the same key creates nothing new"
        )

    def by_id(g: Any, verb: str, help: str, func: Any, **defaults: Any) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = g.add_parser(verb, parents=one, help=help)
        p.add_argument("id")
        p.set_defaults(func=func, **defaults)
        return p

    tenants = group("tenants", "tenants")
    p = tenants.add_parser("add", parents=one, help="create a tenant")
    p.add_argument("name")
    p.add_argument("--group", help="tenant group (default: the configured default)")
    creates(p)
    p.set_defaults(func=cmd_tenants_add)
    tenants.add_parser("list", parents=many, help="list tenants").set_defaults(
        func=cmd_tenants_list
    )
    by_id(tenants, "show", "one tenant", cmd_tenants_show)

    sources = group("sources", "inbound sources")
    p = sources.add_parser("add", parents=one, help="create an inbound source")
    p.add_argument("--tenant", required=True, metavar="ID")
    p.add_argument("--scheme", required=True, choices=SCHEMES)
    p.add_argument(
        "--secret",
        action="append",
        help="the verification material: the provider's shared secret, or its public key for "
        "Ed25519/ECDSA providers (see `sources schemes`); twice during a rotation "
        "(default: Hookline makes one)",
    )
    p.add_argument("--verify-token", help="the verify token of a GET handshake (Meta)")
    p.add_argument(
        "--public-url",
        metavar="URL",
        help="the URL the provider posts to, if it signs it "
        "(Twilio, Square, HubSpot) and a proxy changes it",
    )
    p.add_argument("--name")
    p.add_argument("--tolerance", type=int, help="timestamp tolerance, seconds (default 300)")
    hmac_opts = p.add_argument_group("hmac scheme options")
    hmac_opts.add_argument("--header", help="signature header name")
    hmac_opts.add_argument("--algorithm", choices=["sha1", "sha256", "sha512"])
    hmac_opts.add_argument("--encoding", choices=["hex", "base64"])
    hmac_opts.add_argument("--prefix", help="signature prefix, e.g. sha256=")
    hmac_opts.add_argument("--id-header", help="header holding the provider's delivery id")
    hmac_opts.add_argument("--type-header", help="header holding the event type")
    hmac_opts.add_argument("--type-field", help="dotted JSON path of the event type")
    creates(p)
    p.set_defaults(func=cmd_sources_add)
    sources.add_parser(
        "schemes", parents=[common], help="the schemes and what each needs"
    ).set_defaults(func=cmd_sources_schemes)
    p = sources.add_parser("list", parents=many, help="list sources")
    p.add_argument("--tenant", metavar="ID")
    p.set_defaults(func=cmd_sources_list)
    by_id(sources, "show", "one source (never its secrets)", cmd_sources_show)
    by_id(sources, "enable", "enable a source", cmd_sources_enable, enabled=True)
    by_id(sources, "disable", "disable a source", cmd_sources_enable, enabled=False)
    p = by_id(sources, "update", "change a source's name, tolerance or options", cmd_sources_update)
    p.add_argument("--name")
    p.add_argument("--tolerance", type=int, help="timestamp tolerance, seconds")
    p.add_argument(
        "--options", metavar="JSON", help="the scheme options, a JSON object (replaces them whole)"
    )
    by_id(
        sources, "delete", "delete a source (it stops receiving; events stay)", cmd_sources_delete
    )
    p = by_id(sources, "rotate-secret", "a new secret (printed once)", cmd_sources_rotate)
    p.add_argument("--secret", help="the provider's new secret (default: Hookline makes one)")
    p.add_argument(
        "--drop-previous", action="store_true", help="stop verifying with the previous secret now"
    )

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
            creates(p)
            p.set_defaults(func=cmd_endpoints_add)
        else:
            p = by_id(endpoints, "update", "change an endpoint's fields", cmd_endpoints_update)
            p.add_argument("--url", help="https URL (private addresses are refused)")
            p.add_argument("--clear-rate-limit", action="store_true", help="no rate limit")
            p.add_argument("--clear-filter", action="store_true", help="no content filter")
            p.add_argument("--clear-transform", action="store_true", help="no input transformer")
        p.add_argument(
            "--events", help="comma-separated type filters, e.g. 'payment_intent.*,charge.refunded'"
        )
        p.add_argument("--max-concurrency", type=int)
        p.add_argument("--rate-limit", help="e.g. 50/s, 600/m")
        p.add_argument("--header", action="append", help="'Name: value', repeatable")
        p.add_argument("--description")
        transform_flags(p)
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

    events = group("events", "the event ledger")

    def publish_parser(parent: Any, name: str, help: str) -> None:
        p = parent.add_parser(name, parents=one, help=help)
        p.add_argument("--tenant", required=True, metavar="ID")
        p.add_argument("--type", required=True)
        p.add_argument("--data", required=True, metavar="JSON", help="the payload, as JSON")
        p.add_argument("--idempotency-key", metavar="KEY", help="a repeat is a duplicate")
        p.set_defaults(func=cmd_publish)

    publish_parser(events, "publish", "publish one of your own events")
    publish_parser(sub, "publish", "publish one of your own events (= events publish)")
    p = events.add_parser("list", parents=many, help="newest events first")
    p.add_argument("--tenant", metavar="ID")
    p.add_argument("--type")
    p.add_argument("--source", metavar="ID")
    p.add_argument("--since", metavar="TIME", help="ISO 8601 or a duration ago (30m, 6h, 2d)")
    p.add_argument("--until", metavar="TIME", help="ISO 8601 or a duration ago")
    p.set_defaults(func=cmd_events_list)
    by_id(events, "show", "one event with its payload", cmd_events_show)

    types = group("event-types", "the event type catalogue (schemas payloads are checked against)")
    p = types.add_parser("add", parents=one, help="add an event type")
    p.add_argument("name")
    p.add_argument("--tenant", required=True, metavar="ID")
    p.add_argument("--description")
    p.add_argument("--schema", metavar="JSON", help="a JSON Schema the payloads must match")
    p.add_argument("--schema-file", metavar="PATH", help="the JSON Schema, from a file")
    creates(p)
    p.set_defaults(func=cmd_event_types_add)
    p = types.add_parser("list", parents=many, help="list event types")
    p.add_argument("--tenant", metavar="ID")
    p.add_argument("--name", help="only this name")
    p.add_argument("--archived", action="store_true", help="archived types too")
    p.set_defaults(func=cmd_event_types_list)
    by_id(types, "show", "one event type with its schema", cmd_event_types_show)
    p = by_id(types, "update", "change the description or schema", cmd_event_types_update)
    p.add_argument("--description")
    p.add_argument("--schema", metavar="JSON")
    p.add_argument("--schema-file", metavar="PATH")
    by_id(types, "archive", "archive an event type", cmd_event_types_archive)
