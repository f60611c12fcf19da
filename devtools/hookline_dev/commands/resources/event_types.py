"""`hookline event-types add|list|show|update|archive`: the event type catalogue, each one
management API request."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hookline.errors import BadRequest
from hookline_dev.commands.resources.parsers import ResourceParsers, drop_none

if TYPE_CHECKING:
    from hookline_dev.cli import Runtime

EVENT_TYPE_COLUMNS = ("id", "tenant_id", "name", "description", "archived")


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
    body = drop_none(
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
    body = drop_none({"description": args.description, "schema": _schema(args)})
    if not body:
        raise BadRequest("nothing to change: give --description, --schema or --schema-file")
    return rt.client(args).request("PATCH", f"/v1/event-types/{args.id}", data=body)


def cmd_event_types_archive(args: argparse.Namespace, rt: Runtime) -> Any:
    answer = rt.client(args).request("DELETE", f"/v1/event-types/{args.id}")
    return answer if answer is not None else {"id": args.id, "archived": True}


# -- the command tree -----------------------------------------------------------------------


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add `event-types`."""
    from hookline_dev.cli import api_options, list_options

    one = [common, api_options()]
    many = [*one, list_options()]
    tree = ResourceParsers(sub, one, many)
    group, creates, by_id = tree.group, tree.creates, tree.by_id

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
