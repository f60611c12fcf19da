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

Schemas and payloads are bounded (docs/decisions/0027, `CatalogueLimits`): at save, a
schema's size, depth, number of patterns, their RE2 program sizes, and reference loops; at
publish, the payload's size, depth and integers, and a step budget for its validation. The
caches of compiled validators and patterns are bounded in memory.
"""

from __future__ import annotations

import copy
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import re2
from jsonschema import Draft202012Validator, FormatChecker, validators
from jsonschema.exceptions import SchemaError, ValidationError, best_match
from jsonschema.protocols import Validator
from referencing.exceptions import Unresolvable

from hookline.catalogue_limits import (
    DEFAULT_LIMITS,
    CatalogueLimits,
    LimitExceeded,
    check_json_shape,
)
from hookline.db import Connection
from hookline.errors import SchemaViolation as SchemaViolation  # re-exported
from hookline.repositories import event_types as repo
from hookline.schema_guards import (
    BudgetExceeded,
    ReferenceProblem,
    budgeted,
    check_references,
    unique_items,
    validate_within,
)
from hookline.schema_patterns import (
    RE2_KEYWORDS,
    UnusablePattern,
    clear_patterns,
    patterns,
    program_size_within,
    re2_compiles,
    re2_reason,
)

NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)*$")
MAX_NAME = 255
MAX_ERRORS = 10
MAX_MESSAGE = 300
CACHE_SIZE = 512
PATTERN_HELP = (
    "patterns run on RE2 (linear time, no backtracking): lookaround, backreferences, "
    "possessive or atomic groups and \\Z are not supported"
)


def validate_name(name: str) -> str:
    """A catalogue name: dotted lowercase segments (`invoice.paid`), at most 255."""
    if not (0 < len(name) <= MAX_NAME) or not NAME.match(name):
        raise SchemaViolation(
            f"name {name[:MAX_NAME]!r} is not a catalogue name: use lowercase dotted segments "
            f"of letters, digits, _ or - (such as invoice.paid), at most {MAX_NAME} characters",
            [{"path": "name", "rule": "pattern", "message": "dotted lowercase name"}],
        )
    return name


def check_schema(schema: Any, limits: CatalogueLimits = DEFAULT_LIMITS) -> int:
    """Refuse anything that is not a valid JSON Schema (Draft 2020-12 unless `$schema` says
    otherwise), that refers to documents outside itself (never fetched), or that is over one
    of `limits`; each refusal names the path and the limit. Returns its size in bytes."""
    if not isinstance(schema, dict | bool):
        raise SchemaViolation(
            "schema must be a JSON Schema: an object (or true/false)",
            [{"path": "schema", "rule": "type", "message": "not an object"}],
        )
    size = _check_bounds(schema, limits)
    if isinstance(schema, dict) and "$schema" in schema:
        known = validators.validator_for(schema, default=None)
        if known is None:
            raise SchemaViolation(
                f"schema: unknown $schema {str(schema['$schema'])[:200]!r}; use a JSON Schema "
                "draft such as https://json-schema.org/draft/2020-12/schema",
                [{"path": "schema.$schema", "rule": "$schema", "message": "unknown dialect"}],
            )
    _check_patterns(schema, limits)  # before the metaschema's check compiles them
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
    _check_reference_chains(schema, limits)
    return size


def _check_bounds(schema: Any, limits: CatalogueLimits) -> int:
    try:
        check_json_shape(
            schema,
            root="schema",
            max_depth=limits.schema_max_depth,
            max_integer_digits=limits.max_integer_digits,
            depth_limit="schema_max_depth",
        )
    except LimitExceeded as err:
        raise _over(str(err), err.where, err.limit) from None
    size = len(json.dumps(schema, separators=(",", ":"), ensure_ascii=False).encode())
    if size > limits.schema_max_bytes:
        raise _over(
            f"schema is {size} bytes of JSON, over the limit of {limits.schema_max_bytes} "
            "(schema_max_bytes)",
            "schema",
            "schema_max_bytes",
        )
    return size


def _check_reference_chains(schema: Any, limits: CatalogueLimits) -> None:
    try:
        check_references(schema, limits.schema_max_depth)
    except ReferenceProblem as err:
        if err.looped:
            raise _over(
                f"schema: following the references from {err.where} comes back to it without "
                "descending into the payload (a $ref loop: validation would never end)",
                err.where,
                "$ref",
            ) from None
        raise _over(
            f"schema: the references from {err.where} chain through more than "
            f"{limits.schema_max_depth} subschemas (limit schema_max_depth)",
            err.where,
            "schema_max_depth",
        ) from None


def _over(message: str, where: str, rule: str) -> SchemaViolation:
    return SchemaViolation(message, [{"path": where, "rule": rule, "message": _short(message)}])


def check_payload(
    conn: Connection,
    tenant_id: str,
    type: str,
    body: bytes,
    limits: CatalogueLimits = DEFAULT_LIMITS,
) -> None:
    """Refuse a published payload that breaks the schema of its type in the tenant's
    catalogue, or whose validation would take more than `limits.validation_max_steps`
    (SchemaViolation, nothing stored); any other payload passes. `body` is JSON within the
    payload limits (`hookline.ingest.publish` checks them first)."""
    version = repo.schema_version(conn, tenant_id, type)
    if version is None:
        return
    patterns.bound(limits.pattern_cache_max_entries, limits.pattern_cache_max_program_size)
    try:
        validator = _cached_validator(conn, tenant_id, *version, limits)
    except SchemaViolation as err:  # stored before today's rules (such as RE2 patterns)
        raise SchemaViolation(
            f"the schema of event type {type} cannot be used ({err}); fix it", err.errors
        ) from None
    payload = json.loads(body)
    try:
        found = validate_within(
            limits.validation_max_steps, lambda: list(validator.iter_errors(payload))
        )
        first = best_match(found)
    except (Unresolvable, UnusablePattern) as err:
        raise SchemaViolation(
            f"the schema of event type {type} cannot be used ({_short(str(err))}); fix it"
        ) from None
    except BudgetExceeded:
        raise SchemaViolation(
            f"validating this payload against the schema of event type {type} takes more than "
            f"{limits.validation_max_steps} steps (limit validation_max_steps); send a smaller "
            "payload or simplify the schema; nothing was stored",
            [{"path": "payload", "rule": "validation_max_steps", "message": "over budget"}],
        ) from None
    except RecursionError:  # a backstop: depth and reference chains are bounded at save
        raise SchemaViolation(
            f"the schema of event type {type} nests too deeply to evaluate on this payload "
            "(limits schema_max_depth and payload_max_depth); nothing was stored",
            [{"path": "payload", "rule": "schema_max_depth", "message": "too deep"}],
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

_cache: OrderedDict[tuple[str, str, datetime], tuple[Validator, int]] = OrderedDict()
_cache_lock = threading.Lock()
_cache_bytes = [0]


def _cached_validator(
    conn: Connection,
    tenant_id: str,
    type_id: str,
    updated_at: datetime,
    limits: CatalogueLimits,
) -> Validator:
    key = (tenant_id, type_id, updated_at)
    with _cache_lock:
        found = _cache.get(key)
        if found is not None:
            _cache.move_to_end(key)
            return found[0]
    schema = repo.schema_of(conn, type_id)
    size = check_schema(schema, limits)  # a schema stored under older rules is not run
    validator = _validator_class(schema)(schema)
    with _cache_lock:
        if key not in _cache:
            _cache[key] = (validator, size)
            _cache_bytes[0] += size
        while _cache and (
            len(_cache) > CACHE_SIZE or _cache_bytes[0] > limits.validator_cache_max_bytes
        ):
            _cache_bytes[0] -= _cache.popitem(last=False)[1][1]
    return validator


def clear_cache() -> None:
    """Forget every compiled validator and pattern (tests)."""
    with _cache_lock:
        _cache.clear()
        _cache_bytes[0] = 0
    clear_patterns()


def _validator_class(schema: Any) -> type[Validator]:
    found: type[Validator] = validators.validator_for(schema, default=Draft202012Validator)
    return _safe_validator_class(found)


_safe_classes: dict[Any, type[Validator]] = {}
_format_checkers: dict[Any, FormatChecker] = {}


def _safe_validator_class(dialect: type[Validator]) -> type[Validator]:
    """`dialect` with its regular-expression keywords matched by RE2 instead of `re`,
    `uniqueItems` in linear time, and every keyword drawing from the validation budget."""
    safe = _safe_classes.get(dialect)
    if safe is None:
        own = {**dialect.VALIDATORS, **RE2_KEYWORDS, "uniqueItems": unique_items}
        overrides = {k: budgeted(k, f) for k, f in own.items() if k in dialect.VALIDATORS}
        safe = _safe_classes.setdefault(dialect, validators.extend(dialect, overrides))
    return safe


def _schema_format_checker(dialect: type[Validator]) -> FormatChecker:
    """The dialect's metaschema format checker, with `regex` meaning "RE2 compiles it"."""
    checker = _format_checkers.get(dialect)
    if checker is None:
        checker = copy.copy(dialect.FORMAT_CHECKER)
        checker.checkers = dict(dialect.FORMAT_CHECKER.checkers)  # leave the shared one be
        checker.checks("regex", raises=re2.error)(re2_compiles)
        checker = _format_checkers.setdefault(dialect, checker)
    return checker


def _pattern_refused(where: str, err: SchemaError) -> SchemaViolation:
    pattern = str(err.instance)
    if err.absolute_path and err.absolute_path[-1] == "patternProperties":
        where += f"[{json.dumps(pattern)}]"  # the pattern is the key itself
    cause = err.cause if err.cause is not None else ValueError("not a regular expression")
    return _refusal(pattern, where, cause)


def _refusal(pattern: str, where: str, cause: BaseException) -> SchemaViolation:
    reason = re2_reason(cause)
    return SchemaViolation(
        f"schema: the pattern {pattern[:200]!r} at {where} cannot be used: {reason}; "
        f"{PATTERN_HELP}",
        [{"path": where, "rule": "pattern", "message": reason}],
    )


def _check_patterns(schema: Any, limits: CatalogueLimits) -> None:
    """Refuse a pattern RE2 cannot run, more patterns than `schema_max_patterns`, or
    programs over `pattern_max_program_size` each or `schema_max_program_size` together.
    Each is compiled with an RE2 memory budget just above the limit, so an oversized one
    (`(?:\\pL|\\pN){300,329}`, 441,551 instructions) is refused early in its compile."""
    found: dict[str, str] = {}
    count = total = 0
    for keyword, where, value in _keywords(schema, "schema"):
        if keyword in ("unevaluatedProperties", "patternProperties"):
            found.setdefault(keyword, where)
        if keyword == "pattern" and isinstance(value, str):
            patterns = [(value, where)]
        elif keyword == "patternProperties" and isinstance(value, dict):
            # Drafts 3 and 4 have no propertyNames: their metaschema never checks these keys.
            patterns = [(p, f"{where}[{json.dumps(p)}]") for p in value if isinstance(p, str)]
        else:
            continue
        for pattern, at in patterns:
            count += 1
            if count > limits.schema_max_patterns:
                raise _over(
                    f"schema holds more than {limits.schema_max_patterns} patterns "
                    f"(limit schema_max_patterns), the next at {at}",
                    at,
                    "schema_max_patterns",
                )
            total += _program_size(pattern, at, limits)
            if total > limits.schema_max_program_size:
                raise _over(
                    f"schema: the patterns up to {at} compile to {total} RE2 instructions, "
                    f"over the limit of {limits.schema_max_program_size} for one schema "
                    "(schema_max_program_size)",
                    at,
                    "schema_max_program_size",
                )
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


def _program_size(pattern: str, where: str, limits: CatalogueLimits) -> int:
    cap = limits.pattern_max_program_size
    try:
        size = program_size_within(pattern, cap)
    except re2.error as err:
        raise _refusal(pattern, where, err) from None
    if size > cap:
        raise SchemaViolation(
            f"schema: the pattern {pattern[:200]!r} at {where} compiles to more than {cap} "
            "RE2 instructions (limit pattern_max_program_size); a counted repetition of a "
            "class such as (?:\\pL|\\pN){300,329} is expanded copy by copy: bound the "
            "length with minLength/maxLength instead",
            [{"path": where, "rule": "pattern_max_program_size", "message": "too large"}],
        )
    return size


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
