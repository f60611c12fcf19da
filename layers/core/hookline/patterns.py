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
within one element. `validate_pattern` refuses what EventBridge would refuse, naming the
part; `matches` is the evaluation the fan-out runs.
"""

from __future__ import annotations

import ipaddress
import json
import math
import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from hookline.errors import BadRequest

MAX_PATTERN_CHARS = 4096  # of the pattern's JSON, as EventBridge's rule limit
EVENT_FIELDS = ("type", "tenant_id", "source_id", "payload")
_OR = "$or"
_LOWER = (">", ">=")
_UPPER = ("<", "<=")
_OPERATORS = ("=", *_LOWER, *_UPPER)


class _Invalid(Exception):
    def __init__(self, path: str, reason: str) -> None:
        super().__init__(path, reason)
        self.path, self.reason = path, reason


def event_document(
    event_type: str, tenant_id: str, source_id: str | None, payload: bytes | str | Any
) -> dict[str, Any]:
    """The document a pattern (and a transformer) sees for one event. A payload that is not
    JSON is absent from it, so only `{"exists": false}` matches on it."""
    doc: dict[str, Any] = {"type": event_type, "tenant_id": tenant_id, "source_id": source_id}
    if isinstance(payload, (bytes, str)):
        try:
            doc["payload"] = json.loads(payload)
        except ValueError:
            return doc
    else:
        doc["payload"] = payload
    return doc


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
    if len(json.dumps(pattern, ensure_ascii=False)) > MAX_PATTERN_CHARS:
        raise BadRequest(f"filter: longer than {MAX_PATTERN_CHARS} characters")
    try:
        _check_object(pattern, "", top=True)
    except _Invalid as err:
        raise BadRequest(f"filter at {err.path or '(top)'}: {err.reason}") from err
    return pattern


def matches(pattern: dict[str, Any] | None, document: dict[str, Any]) -> bool:
    """Whether an event (its `event_document`) matches `pattern`; no pattern matches all."""
    return pattern is None or _match_object(pattern, document)


# -- validation -------------------------------------------------------------------------------


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


def _check_text_or_ignore_case(arg: Any, path: str, op: str) -> None:
    if isinstance(arg, dict):
        if set(arg) != {"equals-ignore-case"}:
            raise _Invalid(path, f'{op} takes a string or {{"equals-ignore-case": string}}')
        arg = arg["equals-ignore-case"]
    _check_string(arg, path, op)


def _check_wildcard(arg: str, path: str) -> None:
    if "**" in arg:
        raise _Invalid(path, "wildcard may not have consecutive '*'")
    i = 0
    while i < len(arg):
        if arg[i] == "\\":
            if i + 1 >= len(arg) or arg[i + 1] not in "*\\":
                raise _Invalid(path, "in a wildcard, '\\' escapes only '*' or '\\'")
            i += 1
        i += 1


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


# -- evaluation -------------------------------------------------------------------------------


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _is_scalar(value: Any) -> bool:
    return type(value) in _SCALARS


def _match_object(pattern: dict[str, Any], value: Any) -> bool:
    if isinstance(value, list):  # an array of objects: one element must match it all
        return any(_match_object(pattern, element) for element in _flatten(value))
    fields = value if isinstance(value, dict) else {}
    for key, sub in pattern.items():
        if key == _OR:
            if not any(_match_object(alternative, value) for alternative in sub):
                return False
        elif isinstance(sub, dict):
            if not _match_object(sub, fields.get(key)):
                return False
        elif not _match_leaf(sub, fields.get(key, _MISSING)):
            return False
    return True


class _Missing:
    pass


_MISSING = _Missing()


def _flatten(value: list[Any]) -> Iterator[Any]:
    for element in value:
        if isinstance(element, list):
            yield from _flatten(element)
        else:
            yield element


def _leaves(value: Any) -> Iterator[Any]:
    # Lazily, so a match on a long array stops at the first element that matches.
    if isinstance(value, list):
        for element in _flatten(value):
            if _is_scalar(element):
                yield element
    elif value is not _MISSING and _is_scalar(value):
        yield value


def _match_leaf(matchers: list[Any], value: Any) -> bool:
    for matcher in matchers:
        if isinstance(matcher, dict) and "exists" in matcher:
            present = next(_leaves(value), _MISSING) is not _MISSING
            if present == matcher["exists"]:
                return True
            continue
        if any(_match_one(matcher, leaf) for leaf in _leaves(value)):
            return True
    return False


def _same(expected: Any, actual: Any) -> bool:
    if _is_number(expected):
        return _is_number(actual) and float(expected) == float(actual)
    if isinstance(expected, bool) or expected is None:
        return actual is expected
    return isinstance(actual, str) and actual == expected


def _match_one(matcher: Any, leaf: Any) -> bool:
    if not isinstance(matcher, dict):
        return _same(matcher, leaf)
    ((op, arg),) = matcher.items()
    if op == "numeric":
        return _is_number(leaf) and _in_range(arg, float(leaf))
    if op == "cidr":
        return isinstance(leaf, str) and _in_network(arg, leaf)
    if op == "anything-but":
        return _anything_but(arg, leaf)
    if not isinstance(leaf, str):
        return False
    if op == "prefix":
        return _affix(arg, leaf, str.startswith)
    if op == "suffix":
        return _affix(arg, leaf, str.endswith)
    if op == "equals-ignore-case":
        return bool(leaf.lower() == str(arg).lower())
    return op == "wildcard" and _wildcard(arg).fullmatch(leaf) is not None


def _affix(arg: Any, leaf: str, test: Any) -> bool:
    if isinstance(arg, dict):
        return bool(test(leaf.lower(), arg["equals-ignore-case"].lower()))
    return bool(test(leaf, arg))


def _anything_but(arg: Any, leaf: Any) -> bool:
    if isinstance(arg, list):
        return not any(_same(v, leaf) for v in arg)
    if not isinstance(arg, dict):
        return not _same(arg, leaf)
    ((op, inner),) = arg.items()
    if not isinstance(leaf, str):
        # EventBridge: string operators exclude strings only; other values pass.
        return True
    values = inner if isinstance(inner, list) else [inner]
    if op == "prefix":
        return not leaf.startswith(inner)
    if op == "suffix":
        return not leaf.endswith(inner)
    if op == "equals-ignore-case":
        return all(leaf.lower() != v.lower() for v in values)
    return all(_wildcard(v).fullmatch(leaf) is None for v in values)


def _in_range(arg: list[Any], number: float) -> bool:
    for i in range(0, len(arg), 2):
        op, bound = arg[i], float(arg[i + 1])
        ok = {
            "=": number == bound,
            "<": number < bound,
            "<=": number <= bound,
            ">": number > bound,
            ">=": number >= bound,
        }[op]
        if not ok:
            return False
    return True


@lru_cache(maxsize=1024)
def _network(cidr: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    return ipaddress.ip_network(cidr, strict=False)


def _in_network(cidr: str, leaf: str) -> bool:
    try:
        address = ipaddress.ip_address(leaf)
    except ValueError:
        return False
    network = _network(cidr)
    return address.version == network.version and address in network


@lru_cache(maxsize=1024)
def _wildcard(pattern: str) -> re.Pattern[str]:
    parts: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            parts.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        parts.append(".*" if char == "*" else re.escape(char))
        i += 1
    return re.compile("".join(parts), re.DOTALL)
