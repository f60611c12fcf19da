"""How big and how deep a tenant's event-type schema and a published payload may be, and
the checks that refuse what is over a limit before anything expensive runs
(docs/decisions/0027).

A tenant writes both a schema and the payloads checked against it, and both are evaluated
on the shared API's CPU and memory: each limit here keeps one of them from costing more
than a bounded amount. The checks walk iteratively (never by recursion), so a 100,000-deep
document is refused in time linear in its size instead of exhausting the stack.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import fields
from itertools import accumulate
from typing import Any

from hookline.errors import BadRequest, PayloadTooLarge
from hookline.records import frozen

LOG2_10 = math.log2(10)


@frozen
class CatalogueLimits:
    """The limits of the event-type catalogue and of published payloads. Each can be set
    with the environment variable `HOOKLINE_<NAME>` (upper case), such as
    `HOOKLINE_SCHEMA_MAX_BYTES=131072`."""

    # At save (POST/PATCH /v1/event-types): the schema's canonical JSON size, its nesting
    # depth (JSON objects and arrays), how many regular expressions it holds (`pattern`
    # values and `patternProperties` keys), and the RE2 program size of each and of all.
    schema_max_bytes: int = 64 * 1024
    schema_max_depth: int = 64
    schema_max_patterns: int = 64
    pattern_max_program_size: int = 100_000
    schema_max_program_size: int = 200_000
    # At publish (any published payload): its JSON size, depth, and digits of an integer.
    payload_max_bytes: int = 1024 * 1024
    payload_max_depth: int = 64
    max_integer_digits: int = 100
    # Any JSON request body to the API, before it is parsed: deeper than this, Python's
    # parser under the handler's stack nears its recursion limit (it fails at ~950 levels).
    # Above the schema and payload limits, so that those name the path.
    body_max_depth: int = 640
    # Validating one payload against its schema: at most this many steps (one step is one
    # keyword evaluated; `enum`, `anyOf`, `oneOf`, `allOf` cost their length, a `$ref` 10, a
    # pattern search its text's length times the pattern's weight / 100). ~2-4 µs a step.
    validation_max_steps: int = 200_000
    # Compiled validators kept per container: schemas of at most this many bytes together.
    validator_cache_max_bytes: int = 8 * 1024 * 1024
    # Compiled patterns kept per container: at most this many, of at most this many RE2
    # instructions together.
    pattern_cache_max_entries: int = 1024
    pattern_cache_max_program_size: int = 2_000_000

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> CatalogueLimits:
        """The defaults, each overridden by `HOOKLINE_<NAME>` when set (Settings.from_env)."""
        values = {}
        for f in fields(cls):
            raw = env.get(f"HOOKLINE_{f.name.upper()}")
            if raw:
                values[f.name] = int(raw)
        return cls(**values)


DEFAULT_LIMITS = CatalogueLimits()


class LimitExceeded(BadRequest):
    """A document over one of the limits (400); `limit` names it, `where` is a path."""

    def __init__(self, message: str, *, limit: str, where: str) -> None:
        super().__init__(message)
        self.limit = limit
        self.where = where


def check_json_shape(
    document: Any, *, root: str, max_depth: int, max_integer_digits: int, depth_limit: str
) -> None:
    """Refuse `document` (parsed JSON) when it nests deeper than `max_depth` containers or
    holds an integer of more than `max_integer_digits` digits. Iterative and linear in its
    size; converts no integer to text (quadratic for long ones)."""
    max_bits = math.ceil(max_integer_digits * LOG2_10)
    if _within(document, max_depth, max_bits - 4):
        return  # the common case, without building paths
    stack: list[tuple[Any, str, int]] = [(document, root, 0)]
    while stack:
        node, where, depth = stack.pop()
        if isinstance(node, dict | list):
            if depth >= max_depth:
                shown = where if len(where) <= 120 else where[:119] + "…"
                raise LimitExceeded(
                    f"{root} nests deeper than {max_depth} levels at {shown} (limit {depth_limit})",
                    limit=depth_limit,
                    where=where,
                )
            if isinstance(node, dict):
                stack.extend((v, f"{where}.{k}", depth + 1) for k, v in node.items())
            else:
                stack.extend((v, f"{where}[{i}]", depth + 1) for i, v in enumerate(node))
        elif isinstance(node, int) and not isinstance(node, bool):
            bits = abs(node).bit_length()
            if bits > max_bits or (
                bits > max_bits - 4 and len(str(abs(node))) > max_integer_digits
            ):
                raise LimitExceeded(
                    f"{root}: the integer at {where} has more than {max_integer_digits} digits "
                    "(limit max_integer_digits); send it as a string",
                    limit="max_integer_digits",
                    where=where,
                )


def _within(document: Any, max_depth: int, safe_bits: int) -> bool:
    """Whether `document` is surely within the limits (a fast pass without paths)."""
    if not isinstance(document, dict | list):
        return not (isinstance(document, int) and abs(document).bit_length() > safe_bits)
    stack: list[tuple[Any, int]] = [(document, 0)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node
        if depth >= max_depth:
            return False
        for child in children:
            if isinstance(child, dict | list):
                stack.append((child, depth + 1))
            elif isinstance(child, int) and abs(child).bit_length() > safe_bits:
                return False
    return True


def check_payload_size(size: int, limits: CatalogueLimits) -> None:
    """Refuse a payload whose JSON is over `payload_max_bytes` (413)."""
    if size > limits.payload_max_bytes:
        raise PayloadTooLarge(
            f"payload is {size} bytes of JSON, over the limit of {limits.payload_max_bytes} "
            "(payload_max_bytes); nothing was stored"
        )


_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_DIGITS = re.compile(r"\d+")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def screen_json_text(text: str, limits: CatalogueLimits) -> None:
    """Refuse a JSON request body, before it is parsed, that nests deeper than
    `body_max_depth` or holds a number of more than `max_integer_digits` digits: Python's
    parser would raise RecursionError or ValueError on it, or spend quadratic time converting
    the integer. Linear in the text: strings are blanked out, then digit runs and brackets
    counted."""
    max_depth = limits.body_max_depth
    max_integer_digits = limits.max_integer_digits
    bare = _STRING.sub('""', text)
    longest = max((len(m) for m in _DIGITS.findall(bare)), default=0)
    if longest > max_integer_digits:
        raise LimitExceeded(
            f"body holds a number of more than {max_integer_digits} digits "
            "(limit max_integer_digits); send it as a string",
            limit="max_integer_digits",
            where="body",
        )
    brackets = _NOT_BRACKET.sub("", bare)
    if brackets.count("[") + brackets.count("{") <= max_depth:
        return
    deepest = max(accumulate(map(_STEP.__getitem__, brackets.encode())))
    if deepest > max_depth:
        raise LimitExceeded(
            f"body nests deeper than {max_depth} levels (limit body_max_depth)",
            limit="body_max_depth",
            where="body",
        )


def screen_received_body(body: bytes, max_depth: int) -> None:
    """Refuse a received body that JSON parsing would nest deeper than `max_depth` (the publish
    limit, `payload_max_depth`), whatever the scheme, so that nothing stored can stall what
    later parses it (fan-out's matching, transformers, the console; decision 0059). Only a body
    that starts like JSON (`[` or `{`) and is UTF-8 is read: any other is never parsed as JSON.
    Linear in the body, as `screen_json_text`."""
    # Nothing nests deeper than it has brackets (those inside strings only add to the count):
    # two counts in C spare most bodies the screen's two passes (decision 0077).
    if body.count(b"[") + body.count(b"{") <= max_depth:
        return
    start = body.lstrip()[:1]
    if start not in (b"[", b"{"):
        return
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return
    brackets = _NOT_BRACKET.sub("", _STRING.sub('""', text))
    if brackets.count("[") + brackets.count("{") <= max_depth:
        return
    if max(accumulate(map(_STEP.__getitem__, brackets.encode()))) > max_depth:
        raise LimitExceeded(
            f"body nests deeper than {max_depth} levels (limit payload_max_depth); "
            "nothing was stored",
            limit="payload_max_depth",
            where="body",
        )
