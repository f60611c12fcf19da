"""`hookline api`: the management API from the command line.

* `hookline api call METHOD PATH` sends one request to the API: to a deployed one with
  `--api URL`, signed with SigV4 (credentials from the usual AWS chain), or with `--key` to a
  local stack; without `--api`, to the API run in this process (as every resource command);
* `hookline api principals add|list|remove` maps IAM principals (or local keys) to a tenant
  scope, or to `*` for operators;
* `hookline api encrypt-secrets` seals secrets still stored in plaintext (decision 0013);
* `hookline api openapi` prints the OpenAPI document.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from hookline.errors import BadRequest

if TYPE_CHECKING:
    from hookline_dev.cli import Runtime


def cmd_call(args: argparse.Namespace, rt: Runtime) -> Any:
    """Send one request; print its answer."""
    from hookline_dev.cli import json_argument

    data = json_argument(args.data, "--data")
    query = dict(item.split("=", 1) for item in args.query if "=" in item)
    answer = rt.client(args).request(
        args.method, args.path, data=data, query=query, idempotency_key=args.idempotency_key
    )
    return answer if args.json else json.dumps(answer, indent=2, default=str)


def cmd_principal_add(args: argparse.Namespace, rt: Runtime) -> Any:
    """Map a principal (or a local key) to a tenant, or to operators."""
    from hookline.management.access import OPERATOR, key_principal
    from hookline.repositories import api as repo
    from hookline.repositories import tenants

    if bool(args.tenant) == bool(args.operator):
        raise BadRequest("give --tenant ID or --operator")
    principal = key_principal(args.principal) if args.local_key else args.principal
    with rt.db.connection() as conn:
        if args.tenant:
            tenants.get_tenant(conn, args.tenant)
        row = repo.upsert_principal(conn, principal, args.tenant or OPERATOR, args.description)
    return {k: str(v) for k, v in row.items()}


def cmd_principal_list(args: argparse.Namespace, rt: Runtime) -> Any:
    """Every principal and its scope."""
    from hookline.repositories import api as repo

    with rt.db.connection() as conn:
        rows = repo.list_principals(conn)
    return [{k: str(v) for k, v in r.items()} for r in rows]


def cmd_principal_remove(args: argparse.Namespace, rt: Runtime) -> Any:
    """Forget a principal."""
    from hookline.repositories import api as repo

    with rt.db.connection() as conn:
        repo.delete_principal(conn, args.principal)
    return {"removed": args.principal}


def cmd_encrypt_secrets(args: argparse.Namespace, rt: Runtime) -> Any:
    """Seal every secret still stored in plaintext."""
    from hookline.secretbox import build_box, encrypt_existing_secrets

    return {"sealed_rows": encrypt_existing_secrets(rt.db, build_box(rt.settings))}


def cmd_openapi(args: argparse.Namespace, rt: Runtime) -> Any:
    """The OpenAPI document of the management API."""
    from hookline.api.openapi import openapi_document

    document: dict[str, Any] = openapi_document()
    return document if args.json else json.dumps(document, indent=2, sort_keys=True)


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add `hookline api call|principals|encrypt-secrets|openapi`."""
    api = sub.add_parser("api", help="the management API").add_subparsers(
        dest="api_action", required=True
    )
    from hookline_dev.cli import api_options

    p = api.add_parser(
        "call", parents=[common, api_options()], help="one request to the API (SigV4 with --api)"
    )
    p.add_argument("method", type=str.upper, choices=["GET", "POST", "PATCH", "DELETE"])
    p.add_argument("path", help="e.g. /v1/endpoints or endpoints/ep_.../rotate-secret")
    p.add_argument("--data", metavar="JSON", help="the request body")
    p.add_argument("--query", action="append", default=[], metavar="K=V")
    p.add_argument("--idempotency-key", metavar="KEY")
    p.set_defaults(func=cmd_call)

    principals = api.add_parser("principals", help="who may call the API").add_subparsers(
        dest="principal_action", required=True
    )
    p = principals.add_parser("add", parents=[common], help="map a principal to a scope")
    p.add_argument("principal", help="an IAM user or role ARN, or a local key with --local-key")
    p.add_argument("--tenant", metavar="ID")
    p.add_argument("--operator", action="store_true", help="every tenant")
    p.add_argument("--local-key", action="store_true", help="PRINCIPAL is a local bearer key")
    p.add_argument("--description", default="")
    p.set_defaults(func=cmd_principal_add)
    p = principals.add_parser("list", parents=[common], help="every principal and its scope")
    p.set_defaults(func=cmd_principal_list)
    p = principals.add_parser("remove", parents=[common], help="forget a principal")
    p.add_argument("principal")
    p.set_defaults(func=cmd_principal_remove)

    p = api.add_parser("encrypt-secrets", parents=[common], help="seal plaintext secrets")
    p.set_defaults(func=cmd_encrypt_secrets)
    p = api.add_parser("openapi", parents=[common], help="print the OpenAPI document")
    p.set_defaults(func=cmd_openapi)
