"""`hookline sources ...`: inbound sources (create, schemes, list, show, enable/disable,
update, delete, rotate the secret), each one management API request (`hookline_dev.apiclient`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from hookline.errors import BadRequest
from hookline.verifiers.schemes import SCHEMES as _REGISTRY
from hookline.verifiers.schemes import describe_schemes
from hookline_dev.commands.resources.parsers import ResourceParsers, drop_none

if TYPE_CHECKING:
    from hookline_dev.cli import Runtime

SCHEMES = sorted(_REGISTRY)

SOURCE_COLUMNS = ("id", "tenant_id", "name", "scheme", "enabled", "path")


def _hmac_options(args: argparse.Namespace) -> dict[str, Any]:
    """The hmac scheme options the flags set."""
    return drop_none(
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
    options.update(drop_none({"verify_token": args.verify_token, "public_url": args.public_url}))
    secrets = args.secret or []
    if len(secrets) > 2:
        raise BadRequest("a source takes one or two secrets (--secret twice during rotation)")
    body = drop_none(
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
    body = drop_none({"name": args.name, "tolerance_seconds": args.tolerance, "options": options})
    if not body:
        raise BadRequest("nothing to change: give --name, --tolerance or --options")
    return rt.client(args).request("PATCH", f"/v1/sources/{args.id}", data=body)


def cmd_sources_delete(args: argparse.Namespace, rt: Runtime) -> Any:
    return rt.client(args).request("DELETE", f"/v1/sources/{args.id}")


def cmd_sources_rotate(args: argparse.Namespace, rt: Runtime) -> Any:
    body = drop_none({"secret": args.secret, "keep_previous": not args.drop_previous})
    return rt.client(args).request("POST", f"/v1/sources/{args.id}/rotate-secret", data=body)


# -- the command tree -----------------------------------------------------------------------


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add `sources`."""
    from hookline_dev.cli import api_options, list_options

    one = [common, api_options()]
    many = [*one, list_options()]
    tree = ResourceParsers(sub, one, many)
    group, creates, by_id = tree.group, tree.creates, tree.by_id

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
