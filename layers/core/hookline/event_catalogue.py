"""The event-type catalogue's rules: what a type name and a schema may be, and the check a
published payload passes when its type has a schema (docs/decisions/0015).

The catalogue is optional: a type that is not in it (or has no schema, or is archived)
publishes as before. Inbound provider webhooks are never checked — they are facts from a
third party, and refusing them would lose them.

Compiled validators are cached per container, keyed by (tenant, type id, updated_at): an
update or an archive changes the key, so a stale schema is never used, and a type id belongs
to one tenant, so a schema never applies across tenants.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import SchemaError, ValidationError, best_match
from jsonschema.protocols import Validator
from referencing.exceptions import Unresolvable

from hookline.db import Connection
from hookline.errors import BadRequest
from hookline.repositories import event_types as repo

NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)*$")
MAX_NAME = 255
MAX_ERRORS = 10
MAX_MESSAGE = 300
CACHE_SIZE = 512


class SchemaViolation(BadRequest):
    """A payload that breaks its type's schema, or a schema that is not a JSON Schema
    (the API answers 422). `errors` lists each failure: path, rule and message."""

    def __init__(self, message: str, errors: list[dict[str, str]] | None = None) -> None:
        super().__init__(message)
        self.errors = errors or []


def validate_name(name: str) -> str:
    """A catalogue name: dotted lowercase segments (`invoice.paid`), at most 255."""
    if not (0 < len(name) <= MAX_NAME) or not NAME.match(name):
        raise SchemaViolation(
            f"name {name[:MAX_NAME]!r} is not a catalogue name: use lowercase dotted segments "
            f"of letters, digits, _ or - (such as invoice.paid), at most {MAX_NAME} characters",
            [{"path": "name", "rule": "pattern", "message": "dotted lowercase name"}],
        )
    return name


def check_schema(schema: Any) -> None:
    """Refuse anything that is not a valid JSON Schema (Draft 2020-12 unless `$schema` says
    otherwise), or that refers to documents outside itself (never fetched)."""
    if not isinstance(schema, dict | bool):
        raise SchemaViolation(
            "schema must be a JSON Schema: an object (or true/false)",
            [{"path": "schema", "rule": "type", "message": "not an object"}],
        )
    if isinstance(schema, dict) and "$schema" in schema:
        known = validators.validator_for(schema, default=None)
        if known is None:
            raise SchemaViolation(
                f"schema: unknown $schema {str(schema['$schema'])[:200]!r}; use a JSON Schema "
                "draft such as https://json-schema.org/draft/2020-12/schema",
                [{"path": "schema.$schema", "rule": "$schema", "message": "unknown dialect"}],
            )
    cls = _validator_class(schema)
    try:
        cls.check_schema(schema)
    except SchemaError as err:
        where = _json_path("schema", err.absolute_path)
        raise SchemaViolation(
            f"schema is not a valid JSON Schema: at {where}: {_short(err.message)} "
            f"(rule: {err.validator})",
            [{"path": where, "rule": str(err.validator), "message": _short(err.message)}],
        ) from None
    for where, ref in _refs(schema, "schema"):
        if not ref.startswith("#"):
            raise SchemaViolation(
                f"schema: {where} refers to {ref[:200]!r}; only references inside the schema "
                "(#/$defs/...) are supported, nothing is fetched",
                [{"path": where, "rule": "$ref", "message": "external reference"}],
            )


def check_payload(conn: Connection, tenant_id: str, type: str, body: bytes) -> None:
    """Refuse a published payload that breaks the schema of its type in the tenant's
    catalogue (SchemaViolation, nothing stored); any other payload passes."""
    version = repo.schema_version(conn, tenant_id, type)
    if version is None:
        return
    validator = _cached_validator(conn, tenant_id, *version)
    payload = json.loads(body)
    try:
        found = list(validator.iter_errors(payload))
        first = best_match(found)
    except Unresolvable as err:  # a schema stored before external refs were refused
        raise SchemaViolation(
            f"the schema of event type {type} cannot be used ({_short(str(err))}); fix it"
        ) from None
    if first is None:
        return
    errors = [_describe(e) for e in found[:MAX_ERRORS]]
    headline = _describe(first)
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    raise SchemaViolation(
        f"payload does not match the schema of event type {type}: at {headline['path']}: "
        f"{headline['message']} (rule: {headline['rule']}){more}; nothing was stored",
        errors,
    )


# -- validators ------------------------------------------------------------------------------

_cache: OrderedDict[tuple[str, str, datetime], Validator] = OrderedDict()
_cache_lock = threading.Lock()


def _cached_validator(
    conn: Connection, tenant_id: str, type_id: str, updated_at: datetime
) -> Validator:
    key = (tenant_id, type_id, updated_at)
    with _cache_lock:
        found = _cache.get(key)
        if found is not None:
            _cache.move_to_end(key)
            return found
    schema = repo.schema_of(conn, type_id)
    validator = _validator_class(schema)(schema)
    with _cache_lock:
        _cache[key] = validator
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return validator


def clear_cache() -> None:
    """Forget every compiled validator (tests)."""
    with _cache_lock:
        _cache.clear()


def _validator_class(schema: Any) -> type[Validator]:
    found: type[Validator] = validators.validator_for(schema, default=Draft202012Validator)
    return found


def _describe(error: ValidationError) -> dict[str, str]:
    return {
        "path": _json_path("payload", error.absolute_path),
        "rule": str(error.validator),
        "message": _short(error.message),
    }


def _json_path(root: str, parts: Any) -> str:
    path = root
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def _short(text: str) -> str:
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


def _refs(node: Any, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("$ref", "$dynamicRef") and isinstance(value, str):
                yield f"{where}.{key}", value
            else:
                yield from _refs(value, f"{where}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _refs(value, f"{where}[{i}]")
