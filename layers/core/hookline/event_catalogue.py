"""The event-type catalogue's rules: what a type name and a schema may be, and the check a
published payload passes when its type has a schema (docs/decisions/0015).

The catalogue is optional: a type that is not in it (or has no schema, or is archived)
publishes as before. Inbound provider webhooks are never checked — they are facts from a
third party, and refusing them would lose them.

Compiled validators are cached per container, keyed by (tenant, type id, updated_at): an
update or an archive changes the key, so a stale schema is never used, and a type id belongs
to one tenant, so a schema never applies across tenants.

A schema's `pattern` and `patternProperties` are the tenant's regular expressions, run on the
shared API's CPU: they are compiled and matched by RE2 (linear time, no backtracking), never
by Python's `re`, and a pattern RE2 cannot run is refused when the schema is saved
(docs/decisions/0023).
"""

from __future__ import annotations

import copy
import functools
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

import re2
from jsonschema import Draft202012Validator, FormatChecker, validators
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
PATTERN_CACHE_SIZE = 1024
PATTERN_HELP = (
    "patterns run on RE2 (linear time, no backtracking): lookaround, backreferences, "
    "possessive or atomic groups and \\Z are not supported"
)


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
        # The metaschema marks every `pattern` and `patternProperties` key `format: regex`;
        # with RE2 as that format's judge, a pattern that will not run is refused here.
        cls.check_schema(schema, format_checker=_schema_format_checker(cls))
    except SchemaError as err:
        where = _json_path("schema", err.absolute_path)
        if err.validator == "format" and err.validator_value == "regex":
            raise _pattern_refused(where, err) from None
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
    _check_patterns(schema)


def check_payload(conn: Connection, tenant_id: str, type: str, body: bytes) -> None:
    """Refuse a published payload that breaks the schema of its type in the tenant's
    catalogue (SchemaViolation, nothing stored); any other payload passes."""
    version = repo.schema_version(conn, tenant_id, type)
    if version is None:
        return
    try:
        validator = _cached_validator(conn, tenant_id, *version)
    except SchemaViolation as err:  # stored before today's rules (such as RE2 patterns)
        raise SchemaViolation(
            f"the schema of event type {type} cannot be used ({err}); fix it", err.errors
        ) from None
    payload = json.loads(body)
    try:
        found = list(validator.iter_errors(payload))
        first = best_match(found)
    except (Unresolvable, UnusablePattern) as err:
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
    check_schema(schema)  # a schema stored under older rules is refused, not run
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
    return _safe_validator_class(found)


_safe_classes: dict[Any, type[Validator]] = {}
_format_checkers: dict[Any, FormatChecker] = {}


def _safe_validator_class(dialect: type[Validator]) -> type[Validator]:
    """`dialect` with its regular-expression keywords matched by RE2 instead of `re`."""
    safe = _safe_classes.get(dialect)
    if safe is None:
        overrides = {k: f for k, f in _RE2_KEYWORDS.items() if k in dialect.VALIDATORS}
        safe = _safe_classes.setdefault(dialect, validators.extend(dialect, overrides))
    return safe


def _schema_format_checker(dialect: type[Validator]) -> FormatChecker:
    """The dialect's metaschema format checker, with `regex` meaning "RE2 compiles it"."""
    checker = _format_checkers.get(dialect)
    if checker is None:
        checker = copy.copy(dialect.FORMAT_CHECKER)
        checker.checkers = dict(dialect.FORMAT_CHECKER.checkers)  # leave the shared one be
        checker.checks("regex", raises=re2.error)(_re2_compiles)
        checker = _format_checkers.setdefault(dialect, checker)
    return checker


# -- patterns (RE2) --------------------------------------------------------------------------


class UnusablePattern(Exception):
    """A stored pattern RE2 cannot compile (saved before patterns were checked)."""


_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # a refused pattern is the caller's 422, not a log line
_RE2_OPTIONS.never_capture = True  # only "does it match" is asked


@functools.lru_cache(maxsize=PATTERN_CACHE_SIZE)
def _re2_program(pattern: str) -> Any:
    # Compiled and searched as UTF-8 bytes (RE2's own encoding): the same matches as str,
    # without the wrapper's per-call character-offset bookkeeping (~3x faster).
    return re2.compile(pattern.encode(), _RE2_OPTIONS)


def _re2_compiles(pattern: object) -> bool:
    if isinstance(pattern, str):
        _re2_program(pattern)
    return True


def _re2_reason(err: BaseException) -> str:
    reason = err.args[0] if err.args else err
    text = reason.decode(errors="replace") if isinstance(reason, bytes) else str(reason)
    return _short(text)


def _matches(pattern: str, text: str) -> bool:
    """Whether `pattern` matches anywhere in `text` (ECMA-262's `test`, which JSON Schema
    asks for), in time linear in the text."""
    try:
        program = _re2_program(pattern)
    except re2.error as err:
        raise UnusablePattern(f"pattern {pattern[:100]!r}: {_re2_reason(err)}") from None
    try:
        encoded = text.encode()
    except UnicodeEncodeError:
        # A lone surrogate is valid in JSON text but not in UTF-8: match it as U+FFFD.
        encoded = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode()
    return program.search(encoded) is not None


def _pattern(
    validator: Validator, pattern: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not _matches(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Validator, patterns: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _matches(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Validator, allowed: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    # jsonschema's own runs the patternProperties keys with `re`: the same rule, on RE2.
    if not validator.is_type(instance, "object"):
        return
    known = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = sorted(
        (k for k in instance if k not in known and not any(_matches(p, k) for p in patterns)),
        key=str,
    )
    if validator.is_type(allowed, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], allowed, path=extra)
    elif not allowed and extras:
        joined = ", ".join(repr(each) for each in extras)
        if patterns:
            verb = "does" if len(extras) == 1 else "do"
            listed = ", ".join(repr(each) for each in sorted(patterns))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {listed}")
        else:
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(
                f"Additional properties are not allowed ({joined} {verb} unexpected)"
            )


_RE2_KEYWORDS: dict[str, Callable[..., Iterator[ValidationError]]] = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
}


def _pattern_refused(where: str, err: SchemaError) -> SchemaViolation:
    pattern = str(err.instance)
    if err.absolute_path and err.absolute_path[-1] == "patternProperties":
        where += f"[{json.dumps(pattern)}]"  # the pattern is the key itself
    cause = err.cause if err.cause is not None else ValueError("not a regular expression")
    return _refusal(pattern, where, cause)


def _refusal(pattern: str, where: str, cause: BaseException) -> SchemaViolation:
    reason = _re2_reason(cause)
    return SchemaViolation(
        f"schema: the pattern {pattern[:200]!r} at {where} cannot be used: {reason}; "
        f"{PATTERN_HELP}",
        [{"path": where, "rule": "pattern", "message": reason}],
    )


def _check_patterns(schema: Any) -> None:
    found: dict[str, str] = {}
    for keyword, where, value in _keywords(schema, "schema"):
        if keyword not in ("unevaluatedProperties", "patternProperties"):
            continue
        found.setdefault(keyword, where)
        if keyword == "patternProperties" and isinstance(value, dict):
            # Drafts 3 and 4 have no propertyNames: their metaschema never checks these keys.
            for pattern in value:
                try:
                    _re2_program(pattern)
                except re2.error as err:
                    raise _refusal(pattern, f"{where}[{json.dumps(pattern)}]", err) from None
    # jsonschema's unevaluatedProperties runs patternProperties keys with `re` deep in its
    # own recursion, which cannot be given another engine: the combination is refused.
    if len(found) == 2:
        where = found["unevaluatedProperties"]
        raise SchemaViolation(
            f"schema: {where} cannot be combined with patternProperties (at "
            f"{found['patternProperties']}) in one schema: their patterns would not run on "
            "RE2; use additionalProperties instead",
            [{"path": where, "rule": "unevaluatedProperties", "message": "with patterns"}],
        )


# Keywords whose value maps names (not keywords) to subschemas; and those holding data.
_NAMED_SUBSCHEMAS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_DATA = ("enum", "const", "default", "examples")


def _keywords(node: Any, where: str) -> Iterator[tuple[str, str, Any]]:
    """Each (keyword, path, value) in a schema document, data and property names aside."""
    if isinstance(node, list):
        for i, value in enumerate(node):
            yield from _keywords(value, f"{where}[{i}]")
    elif isinstance(node, dict):
        for key, value in node.items():
            if not isinstance(key, str) or key in _DATA:
                continue
            yield key, f"{where}.{key}", value
            if key in _NAMED_SUBSCHEMAS and isinstance(value, dict):
                for name, subschema in value.items():
                    yield from _keywords(subschema, f"{where}.{key}.{name}")
            else:
                yield from _keywords(value, f"{where}.{key}")


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
