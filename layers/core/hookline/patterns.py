"""Content filters: EventBridge event patterns over an event (docs/decisions/0044).

An endpoint may carry a pattern in EventBridge's syntax, matched against the event seen as
the document ``{"type", "tenant_id", "source_id", "payload"}``, e.g.
``{"payload": {"amount": [{"numeric": [">", 100]}]}}``. A pattern is an object whose fields
are either nested patterns (objects) or non-empty arrays of matchers; the fields are ANDed,
the matchers of one array ORed, and ``"$or": [pattern, pattern, ...]`` ORs whole patterns.

Matchers: an exact value (string, number, boolean, null; numbers compare as numbers and
never equal a string: ``"100"`` does not match ``100``), ``prefix``/``suffix`` (optionally
``{"equals-ignore-case": ...}``), ``equals-ignore-case``, ``wildcard`` (``*`` any run,
``\\*`` a literal star), ``anything-but`` (a value, a list of strings or of numbers, or
``prefix``/``suffix``/``equals-ignore-case``/``wildcard``), ``numeric`` (``["=", 5]``,
``[">", 0, "<=", 5]``), ``exists`` and ``cidr`` (IPv4 or IPv6).

As in EventBridge, an array in the event matches when any element does (arrays of arrays
are flattened); comparison operators only see leaf values, so an object where a leaf is
expected neither matches nor "exists"; a missing field matches only ``{"exists": false}``
(``anything-but`` needs a value). A nested pattern over an array of objects must match
within one element; an empty array holds no field, so `{"exists": false}` under it
matches. Numbers compare as EventBridge compares them (exactly: by their double when they
are one, else by their JSON text), and ignore-case operators fold the pattern per character.
`validate_pattern` refuses what EventBridge would refuse, naming the part, and what would
cost more than our limits (decision 0060); `matches` is the evaluation the fan-out runs, in
time linear in the event and within a per-event budget (`hookline.pattern_matching`).
"""

from __future__ import annotations

import codecs
import ipaddress
import json
import math
from dataclasses import replace
from typing import Any

from hookline.catalogue_limits import DEFAULT_LIMITS, LimitExceeded, screen_json_text
from hookline.errors import BadRequest
from hookline.pattern_matching import (
    Budget,
    compiled,
    exact_double,
    json_float,
    match_node,
    wildcard_parts,
)

MAX_PATTERN_CHARS = 4096  # of the pattern's JSON, as EventBridge's rule limit
# Stars in the wildcards of one field together. EventBridge refuses a rule whose wildcards
# make its matcher "too complex" without publishing the measure; it refused 8 stars on one
# field (4 values of `*:stack/<name>/*`) where 6 passed, so 6 is the most we accept.
MAX_FIELD_WILDCARDS = 6
MAX_PATTERN_DEPTH = 32  # nested objects of a pattern, `$or` alternatives included
# A payload nesting deeper than what a publish may (64 levels), or with an integer of more
# than 100 digits, is not read: it is absent from the document (decision 0060).
_DOCUMENT_LIMITS = replace(DEFAULT_LIMITS, body_max_depth=DEFAULT_LIMITS.payload_max_depth)
EVENT_FIELDS = ("type", "tenant_id", "source_id", "payload")
_OR = "$or"
_LOWER = (">", ">=")
_UPPER = ("<", "<=")
_OPERATORS = ("=", *_LOWER, *_UPPER)


class _Invalid(Exception):
    def __init__(self, path: str, reason: str) -> None:
        super().__init__(path, reason)
        self.path, self.reason = path, reason


class EventDocument(dict[str, Any]):
    """The document of one event, with what evaluating it may still spend (`budget`, shared
    by every filter tried on it), its payload's size in bytes, and why its payload is absent
    when it could not be read (`unreadable`)."""

    budget: Budget
    payload_bytes: int
    unreadable: str | None


def event_document(
    event_type: str, tenant_id: str, source_id: str | None, payload: bytes | str | Any
) -> EventDocument:
    """The document a pattern (and a transformer) sees for one event. A payload that is not
    JSON, or nests deeper than a publish may (`payload_max_depth`), or holds an integer of
    more than `max_integer_digits` digits, is absent from it, so only `{"exists": false}`
    matches on it; `unreadable` says why. Never raises: the check is linear in the bytes
    and runs before the parser, which would otherwise recurse once per level."""
    doc = EventDocument(type=event_type, tenant_id=tenant_id, source_id=source_id)
    doc.budget = Budget()
    doc.unreadable = None
    if isinstance(payload, (bytes, str)):
        doc.payload_bytes = len(payload)
        try:
            text = payload if isinstance(payload, str) else _decoded(payload)
            screen_json_text(text, _DOCUMENT_LIMITS)
            doc["payload"] = json.loads(text, parse_float=json_float)
        except LimitExceeded as err:
            doc.unreadable = (
                f"the payload nests deeper than {_DOCUMENT_LIMITS.body_max_depth} levels "
                "(limit payload_max_depth), so it is not read"
                if err.limit == "body_max_depth"
                else f"the payload holds a number of more than "
                f"{_DOCUMENT_LIMITS.max_integer_digits} digits, so it is not read"
            )
        except ValueError:
            doc.unreadable = "the payload is not JSON"
    else:
        doc.payload_bytes = len(json.dumps(payload, ensure_ascii=False).encode())
        doc["payload"] = payload
    return doc


def _decoded(payload: bytes) -> str:
    # As json.loads decodes bytes (UTF-8, or UTF-16/32 by their first bytes).
    encoding = json.detect_encoding(payload)
    return codecs.decode(payload, encoding, "surrogatepass")


def parse_pattern(value: Any) -> dict[str, Any]:
    """A pattern from the API (an object) or the CLI (its JSON text), validated."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as err:
            raise BadRequest(f"filter: not JSON ({err})") from err
    return validate_pattern(value)


def validate_pattern(pattern: Any) -> dict[str, Any]:
    """Return `pattern` if EventBridge would accept it over an event document, else raise
    `BadRequest` naming the field of the pattern that is wrong and why."""
    if not isinstance(pattern, dict):
        raise BadRequest("filter: must be a JSON object")
    _check_depth(pattern)
    if len(json.dumps(pattern, ensure_ascii=False)) > MAX_PATTERN_CHARS:
        raise BadRequest(f"filter: longer than {MAX_PATTERN_CHARS} characters")
    try:
        _check_object(pattern, "", top=True)
    except _Invalid as err:
        raise BadRequest(f"filter at {err.path or '(top)'}: {err.reason}") from err
    return pattern


def matches(pattern: dict[str, Any] | None, document: dict[str, Any]) -> bool:
    """Whether an event (its `event_document`) matches `pattern`; no pattern matches all.
    Draws from the document's budget; raises EvaluationBudgetExceeded past it."""
    if pattern is None:
        return True
    budget = document.budget if isinstance(document, EventDocument) else Budget()
    return match_node(compiled(pattern), document, budget)


# -- validation -------------------------------------------------------------------------------


def _check_depth(pattern: dict[str, Any]) -> None:
    # Before anything recursive: a 4 KB pattern can nest ~1,000 objects.
    stack: list[tuple[Any, int]] = [(pattern, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_PATTERN_DEPTH:
            raise BadRequest(f"filter: nests deeper than {MAX_PATTERN_DEPTH} objects")
        children = node.values() if isinstance(node, dict) else node
        stack.extend(
            (child, depth + isinstance(child, dict))
            for child in children
            if isinstance(child, (dict, list))
        )


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _check_object(pattern: dict[str, Any], path: str, *, top: bool = False) -> None:
    if not pattern:
        raise _Invalid(path, "an empty pattern matches nothing useful; give at least one field")
    for key, value in pattern.items():
        where = _join(path, key)
        if key == _OR:
            if not isinstance(value, list) or len(value) < 2:
                raise _Invalid(where, "$or needs an array of at least two patterns")
            for i, alternative in enumerate(value):
                if not isinstance(alternative, dict):
                    raise _Invalid(f"{where}[{i}]", "each $or alternative must be an object")
                _check_object(alternative, f"{where}[{i}]", top=top)
            continue
        if top and key not in EVENT_FIELDS:
            raise _Invalid(where, f"unknown field; the event has {', '.join(EVENT_FIELDS)}")
        if isinstance(value, dict):
            _check_object(value, where)
        elif isinstance(value, list):
            if not value:
                raise _Invalid(where, "an empty array matches nothing; give at least one value")
            for i, matcher in enumerate(value):
                _check_matcher(matcher, f"{where}[{i}]")
            stars = sum(_stars(matcher) for matcher in value)
            if stars > MAX_FIELD_WILDCARDS:
                raise _Invalid(
                    where,
                    f"its wildcards hold {stars} '*' together; at most {MAX_FIELD_WILDCARDS} "
                    "(EventBridge refuses such rules as too complex)",
                )
        else:
            raise _Invalid(where, "must be an array of values or matchers, or an object")


def _check_matcher(matcher: Any, path: str) -> None:
    if _is_scalar(matcher):
        _check_number(matcher, path)
        return
    if not isinstance(matcher, dict) or len(matcher) != 1:
        raise _Invalid(path, "a matcher is a value or an object with exactly one operator")
    ((op, arg),) = matcher.items()
    if op in ("prefix", "suffix"):
        _check_text_or_ignore_case(arg, path, op)
    elif op == "equals-ignore-case":
        _check_string(arg, path, op)
    elif op == "wildcard":
        _check_string(arg, path, op)
        _check_wildcard(arg, path)
    elif op == "anything-but":
        _check_anything_but(arg, path)
    elif op == "numeric":
        _check_numeric(arg, path)
    elif op == "exists":
        if not isinstance(arg, bool):
            raise _Invalid(path, "exists takes true or false")
    elif op == "cidr":
        _check_string(arg, path, op)
        try:
            ipaddress.ip_network(arg, strict=False)
        except ValueError as err:
            raise _Invalid(path, f"cidr {arg!r} is not an IP network: {err}") from err
    else:
        raise _Invalid(path, f"unknown operator {op!r}")


def _check_string(arg: Any, path: str, op: str) -> None:
    if not isinstance(arg, str):
        raise _Invalid(path, f"{op} takes a string")
    try:
        arg.encode()
    except UnicodeEncodeError as err:
        raise _Invalid(path, f"{op} takes text without lone surrogates") from err


def _check_text_or_ignore_case(arg: Any, path: str, op: str) -> None:
    if isinstance(arg, dict):
        if set(arg) != {"equals-ignore-case"}:
            raise _Invalid(path, f'{op} takes a string or {{"equals-ignore-case": string}}')
        arg = arg["equals-ignore-case"]
    _check_string(arg, path, op)


def _check_wildcard(arg: str, path: str) -> None:
    # As Event Ruler's WildcardParser: an escaped star (`\\*`) is a character, so `he\\**o`
    # is valid; an unescaped star right before another star is not.
    i = 0
    while i < len(arg):
        if arg[i] == "\\":
            if i + 1 >= len(arg) or arg[i + 1] not in "*\\":
                raise _Invalid(path, "in a wildcard, '\\' escapes only '*' or '\\'")
            i += 1
        elif arg[i] == "*" and arg[i + 1 : i + 2] == "*":
            raise _Invalid(path, "wildcard may not have consecutive '*'")
        i += 1


def _stars(matcher: Any) -> int:
    if not isinstance(matcher, dict) or len(matcher) != 1:
        return 0
    ((op, arg),) = matcher.items()
    if op == "anything-but" and isinstance(arg, dict) and "wildcard" in arg:
        arg, op = arg["wildcard"], "wildcard"
    if op != "wildcard":
        return 0
    values = arg if isinstance(arg, list) else [arg]
    return sum(len(wildcard_parts(v)) - 1 for v in values if isinstance(v, str))


def _check_anything_but(arg: Any, path: str) -> None:
    if isinstance(arg, list):
        if not arg:
            raise _Invalid(path, "anything-but takes a non-empty list")
        if not (all(isinstance(v, str) for v in arg) or all(_is_number(v) for v in arg)):
            raise _Invalid(path, "anything-but takes a list of only strings or only numbers")
        for v in arg:
            _check_number(v, path)
        return
    if isinstance(arg, dict):
        if len(arg) != 1:
            raise _Invalid(
                path, "anything-but takes one of prefix, suffix, equals-ignore-case, wildcard"
            )
        ((op, inner),) = arg.items()
        if op in ("prefix", "suffix"):
            _check_string(inner, path, f"anything-but {op}")
        elif op in ("equals-ignore-case", "wildcard"):
            values = inner if isinstance(inner, list) and inner else [inner]
            for v in values:
                _check_string(v, path, f"anything-but {op}")
                if op == "wildcard":
                    _check_wildcard(v, path)
        else:
            raise _Invalid(path, f"anything-but does not take {op!r}")
        return
    if isinstance(arg, str) or _is_number(arg):
        _check_number(arg, path)
        return
    raise _Invalid(path, "anything-but takes a string, a number, a list or an operator")


def _check_numeric(arg: Any, path: str) -> None:
    if not isinstance(arg, list) or len(arg) not in (2, 4):
        raise _Invalid(path, "numeric takes [op, number] or [op, number, op, number]")
    for i in range(0, len(arg), 2):
        op, bound = arg[i], arg[i + 1]
        if op not in _OPERATORS:
            raise _Invalid(path, f"numeric operator {op!r} is not one of {', '.join(_OPERATORS)}")
        if not _is_number(bound):
            raise _Invalid(path, f"numeric bound {bound!r} is not a number")
        _check_number(bound, path)
        _check_bound(bound, path)
    if len(arg) == 4:
        if arg[0] not in _LOWER or arg[2] not in _UPPER:
            raise _Invalid(path, "a numeric range is a lower bound (>, >=) then an upper (<, <=)")
        if arg[1] >= arg[3]:
            raise _Invalid(
                path, "the numeric range is empty: its lower bound is not below its upper"
            )


def _check_number(value: Any, path: str) -> None:
    if _is_number(value) and not math.isfinite(value):
        raise _Invalid(path, "numbers must be finite")


def _check_bound(value: Any, path: str) -> None:
    # EventBridge compares numeric bounds as doubles and refuses one that is not exactly a
    # double (Event Ruler's ComparableNumber), such as 2**53 + 1.
    if exact_double(value) is None:
        raise _Invalid(path, f"numeric bound {value!r} is not exactly a double; round it")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _is_scalar(value: Any) -> bool:
    return type(value) in _SCALARS
