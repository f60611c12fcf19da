"""How a content filter is evaluated, in bounded time (docs/decisions/0044, 0060).

A validated pattern (`hookline.patterns`) is compiled once per container into a tree of
fields; each leaf field keeps its exact values in hash sets (strings; numbers by their
exact double and by their JSON text; true, false, null) and its operators as a short list.
So a leaf of the event costs one set lookup per kind, whatever the number of values, plus
one test per operator. Every operator is linear in the leaf's length:

* **wildcard**: the literal runs between stars are found left to right with `str.find`
  (a greedy leftmost search is exact for `*`-only globs), so nothing backtracks;
* **equals-ignore-case** (alone or with prefix, suffix, anything-but): EventBridge's
  reading, per character of the pattern: a character matches its own lower- and
  upper-case forms (`Locale.ROOT`, as Event Ruler's `EqualsIgnoreCaseParser`), never a
  case fold of the event's text (the Kelvin sign K does not match `k`). ASCII against
  ASCII compares lower-cased text; anything else runs on RE2 (decision 0023's cache);
* **numbers** compare as Event Ruler compares them: equal when both are exactly a double
  and the doubles are equal, or when their JSON texts are the same, so `1234567890123456789`
  never matches `...788`; `numeric` ranges see only numbers that are exactly a double.

Each evaluation draws from the event's `Budget` (one per event document, shared by every
endpoint's filter): one step per leaf tested, one per operator tried, and one per
`SCAN_CHARS_PER_STEP` characters scanned. Past it, `EvaluationBudgetExceeded` is raised:
the filter fails closed and the caller records why.
"""

from __future__ import annotations

import ipaddress
import json
import math
import operator
import re
from collections.abc import Callable, Iterator
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from hookline.errors import EvaluationBudgetExceeded
from hookline.records import frozen

# Steps one event may spend in content filters, all its endpoints together. A step is
# ~0.2-1 µs of CPU here, so the worst event costs tens of milliseconds.
FILTER_MAX_STEPS = 100_000
SCAN_CHARS_PER_STEP = 64
OPERATOR_STEPS = 2  # an operator tried on a leaf (a set lookup is the leaf's one step)
_OR = "$or"
# A match over RE2 costs its text's length times the program's weight / this (0023).
_RE2_THREAD_STEPS_PER_STEP = 100


class Budget:
    """What is left of one event's evaluation steps."""

    __slots__ = ("left", "limit")

    def __init__(self, steps: int = FILTER_MAX_STEPS) -> None:
        self.left = self.limit = steps

    def spend(self, steps: int) -> None:
        """Draw `steps`; raise EvaluationBudgetExceeded past the limit."""
        self.left -= steps
        if self.left < 0:
            raise EvaluationBudgetExceeded(
                f"content filters took more than {self.limit} steps on this event "
                "(limit filter_max_steps); it is not delivered through a filter that could "
                "not finish"
            )


# -- numbers ----------------------------------------------------------------------------------


class JsonFloat(float):
    """A float parsed from JSON that keeps its text, so it compares as Event Ruler does."""

    __slots__ = ("text",)
    text: str


def json_float(text: str) -> JsonFloat:
    """`parse_float` for json.loads."""
    value = JsonFloat(text)
    value.text = text
    return value


def is_number(value: Any) -> bool:
    """A JSON number (not a boolean)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def number_text(value: int | float) -> str:
    """The JSON text of a number: as sent for a parsed float, canonical otherwise."""
    if isinstance(value, JsonFloat):
        return value.text
    return str(value) if isinstance(value, int) else repr(value)


def exact_double(value: int | float) -> float | None:
    """The double `value` is exactly (Event Ruler's ComparableNumber), or None when its
    text holds more than a double does (`1234567890123456789`, `0.30000000000000001`)."""
    if isinstance(value, int):
        try:
            double = float(value)
        except OverflowError:
            return None
        return double if int(double) == value else None
    double = float(value)
    if not math.isfinite(double):
        return None
    if isinstance(value, JsonFloat):
        try:
            if Decimal(repr(double)) != Decimal(value.text):
                return None
        except InvalidOperation:
            return None
    return double


def number_keys(value: int | float) -> tuple[Any, ...]:
    """What a number is looked up by: its exact double (when it is one) and its text."""
    double = exact_double(value)
    text = ("text", number_text(value))
    return (text,) if double is None else (text, double)


_EXACT_INT = 2**53


def has_number(keys: frozenset[Any], value: int | float) -> bool:
    """Whether `value` is among the `number_keys` of some numbers."""
    if type(value) is int and -_EXACT_INT <= value <= _EXACT_INT:
        return value in keys  # it is exactly its double, which compares equal to it
    return not keys.isdisjoint(number_keys(value))


def same_number(expected: int | float, actual: int | float) -> bool:
    """Event Ruler's equality of two numbers."""
    return not set(number_keys(expected)).isdisjoint(number_keys(actual))


# -- strings ----------------------------------------------------------------------------------


def _cases(char: str) -> tuple[str, ...]:
    # Java's String.valueOf(c).toLowerCase/toUpperCase(Locale.ROOT) per UTF-16 unit: a
    # character beyond the BMP is two surrogates there, which no case mapping changes.
    if ord(char) > 0xFFFF:
        return (char,)
    return tuple(dict.fromkeys((char.lower(), char.upper())))


@lru_cache(maxsize=1024)
def _ignore_case_regex(value: str, anchor: str) -> str:
    body = "".join(
        "(?:" + "|".join(re.escape(case) for case in _cases(char)) + ")" for char in value
    )
    start = r"\A" if anchor in ("full", "prefix") else ""
    end = r"\z" if anchor in ("full", "suffix") else ""
    return f"{start}(?:{body}){end}"


def ignore_case(value: str, leaf: str, anchor: str, budget: Budget) -> bool:
    """Whether `leaf` equals (`full`), starts with (`prefix`) or ends with (`suffix`)
    `value` where each character of `value` may also be its lower or upper case."""
    budget.spend(1 + len(leaf) // SCAN_CHARS_PER_STEP)
    if value.isascii() and leaf.isascii():
        low, text = value.lower(), leaf.lower()
        if anchor == "prefix":
            return text.startswith(low)
        if anchor == "suffix":
            return text.endswith(low)
        return text == low
    # RE2 (and the schema module that caches its programs) loads only for non-ASCII text:
    # the hot handlers' cold start does not pay for it (tests/unit/test_handler_imports.py).
    from hookline.schema_patterns import patterns as re2_patterns

    try:
        program, weight = re2_patterns.get(_ignore_case_regex(value, anchor))
    except UnicodeEncodeError:  # a lone surrogate (saved before patterns were checked for it)
        return False
    encoded = leaf.encode("utf-8", "surrogatepass")
    budget.spend(len(encoded) * weight // _RE2_THREAD_STEPS_PER_STEP)
    return program.search(encoded) is not None


@lru_cache(maxsize=1024)
def wildcard_parts(pattern: str) -> tuple[str, ...]:
    """The literal runs of a wildcard around its unescaped stars (`\\*` is a star, `\\\\`
    a backslash): n stars make n + 1 parts."""
    parts: list[str] = []
    run: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            run.append(pattern[i + 1])
            i += 2
            continue
        if char == "*":
            parts.append("".join(run))
            run = []
        else:
            run.append(char)
        i += 1
    parts.append("".join(run))
    return tuple(parts)


def wildcard(pattern: str, leaf: str, budget: Budget) -> bool:
    """Whether `leaf` matches the wildcard, in time linear in the leaf: the first part is a
    prefix, the last a suffix after it, each part between found leftmost after the one
    before (no backtracking is ever needed for `*`)."""
    parts = wildcard_parts(pattern)
    budget.spend(1 + len(parts) * len(leaf) // SCAN_CHARS_PER_STEP)
    if len(parts) == 1:
        return leaf == parts[0]
    first, last = parts[0], parts[-1]
    end = len(leaf) - len(last)
    if end < len(first) or not leaf.startswith(first) or not leaf.endswith(last):
        return False
    at = len(first)
    for part in parts[1:-1]:
        found = leaf.find(part, at, end)
        if found < 0:
            return False
        at = found + len(part)
    return True


# -- compiled patterns ------------------------------------------------------------------------

Test = Callable[[Any, Budget], bool]


@frozen
class Leaf:
    """The matchers of one field whose pattern is an array."""

    strings: frozenset[str]
    numbers: frozenset[Any]
    literals: tuple[Any, ...]  # of True, False, None, each present when matched
    exists: frozenset[bool]
    tests: tuple[Test, ...]


@frozen
class Node:
    """A pattern object: its fields (nested `Node`s or `Leaf`s) and its `$or` groups."""

    fields: tuple[tuple[str, Node | Leaf], ...]
    alternatives: tuple[tuple[Node, ...], ...]


class _Missing:
    pass


MISSING: Any = _Missing()


def compiled(pattern: dict[str, Any]) -> Node:
    """The compiled form of a validated pattern (cached by its JSON text)."""
    return _compile_text(json.dumps(pattern, sort_keys=True, ensure_ascii=False))


@lru_cache(maxsize=1024)
def _compile_text(text: str) -> Node:
    return _node(json.loads(text))


def _node(pattern: dict[str, Any]) -> Node:
    fields: list[tuple[str, Node | Leaf]] = []
    alternatives: list[tuple[Node, ...]] = []
    for key, sub in pattern.items():
        if key == _OR:
            alternatives.append(tuple(_node(alternative) for alternative in sub))
        elif isinstance(sub, dict):
            fields.append((key, _node(sub)))
        else:
            fields.append((key, _leaf(sub)))
    return Node(tuple(fields), tuple(alternatives))


def _leaf(matchers: list[Any]) -> Leaf:
    strings: set[str] = set()
    numbers: set[Any] = set()
    literals: list[Any] = []
    exists: set[bool] = set()
    tests: list[Test] = []
    for matcher in matchers:
        if isinstance(matcher, str):
            strings.add(matcher)
        elif is_number(matcher):
            numbers.update(number_keys(matcher))
        elif matcher is None or isinstance(matcher, bool):
            literals.append(matcher)
        else:
            ((op, arg),) = matcher.items()
            if op == "exists":
                exists.add(bool(arg))
            else:
                tests.append(_operator(op, arg))
    return Leaf(
        frozenset(strings), frozenset(numbers), tuple(literals), frozenset(exists), tuple(tests)
    )


def _operator(op: str, arg: Any) -> Test:
    if op == "prefix" or op == "suffix":
        if isinstance(arg, dict):
            folded = arg["equals-ignore-case"]
            return lambda leaf, budget: (
                isinstance(leaf, str) and ignore_case(folded, leaf, op, budget)
            )
        if op == "prefix":
            return lambda leaf, budget: isinstance(leaf, str) and leaf.startswith(arg)
        return lambda leaf, budget: isinstance(leaf, str) and leaf.endswith(arg)
    if op == "equals-ignore-case":
        return lambda leaf, budget: isinstance(leaf, str) and ignore_case(arg, leaf, "full", budget)
    if op == "wildcard":
        return lambda leaf, budget: isinstance(leaf, str) and wildcard(arg, leaf, budget)
    if op == "numeric":
        bounds = [(_COMPARE[arg[i]], float(arg[i + 1])) for i in range(0, len(arg), 2)]
        return lambda leaf, budget: _in_range(bounds, leaf)
    if op == "cidr":
        network = ipaddress.ip_network(arg, strict=False)
        return lambda leaf, budget: isinstance(leaf, str) and _in_network(network, leaf, budget)
    return _anything_but(arg)


_COMPARE: dict[str, Callable[[float, float], bool]] = {
    "=": operator.eq, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}  # fmt: skip


def _in_range(bounds: list[tuple[Callable[[float, float], bool], float]], leaf: Any) -> bool:
    number: float | None
    if type(leaf) is int and -_EXACT_INT <= leaf <= _EXACT_INT:
        number = leaf  # exactly a double; an int compares with a float exactly
    elif is_number(leaf):
        number = exact_double(leaf)
    else:
        return False
    return number is not None and all(compare(number, bound) for compare, bound in bounds)


_IP_CHARS = frozenset("0123456789abcdefABCDEF.:")
_PARSE_IP_STEPS = 8  # parsing an address costs about as much as 8 leaves


def _in_network(
    network: ipaddress.IPv4Network | ipaddress.IPv6Network, leaf: str, budget: Budget
) -> bool:
    if not 2 <= len(leaf) <= 45 or not _IP_CHARS.issuperset(leaf):
        return False
    budget.spend(_PARSE_IP_STEPS)
    try:
        address = ipaddress.ip_address(leaf)
    except ValueError:
        return False
    return address.version == network.version and address in network


def _anything_but(arg: Any) -> Test:
    if isinstance(arg, list) or not isinstance(arg, dict):
        values = arg if isinstance(arg, list) else [arg]
        strings = frozenset(v for v in values if isinstance(v, str))
        numbers = frozenset(k for v in values if is_number(v) for k in number_keys(v))
        literals = tuple(v for v in values if v is None or isinstance(v, bool))

        def none_of(leaf: Any, budget: Budget) -> bool:
            if isinstance(leaf, str):
                return leaf not in strings
            if is_number(leaf):
                return not has_number(numbers, leaf)
            return not any(leaf is v for v in literals)

        return none_of
    ((op, inner),) = arg.items()
    values = inner if isinstance(inner, list) else [inner]

    # EventBridge: string operators exclude strings only; other values pass.
    def none_like(leaf: Any, budget: Budget) -> bool:
        if not isinstance(leaf, str):
            return True
        if op == "prefix":
            return not leaf.startswith(inner)
        if op == "suffix":
            return not leaf.endswith(inner)
        if op == "equals-ignore-case":
            return not any(ignore_case(v, leaf, "full", budget) for v in values)
        return not any(wildcard(v, leaf, budget) for v in values)

    return none_like


# -- evaluation -------------------------------------------------------------------------------


def leaves(value: Any) -> Iterator[Any]:
    """The scalar values a field holds: itself, or the scalars of its (nested) arrays.
    Lazily and without recursion, so a match on a long array stops at the first element
    that matches."""
    if not isinstance(value, list):
        if value is not MISSING and not isinstance(value, dict):
            yield value
        return
    stack: list[Iterator[Any]] = [iter(value)]
    while stack:
        for element in stack[-1]:
            if isinstance(element, list):
                stack.append(iter(element))
                break
            if not isinstance(element, dict):
                yield element
        else:
            stack.pop()


def elements(value: list[Any]) -> Iterator[Any]:
    """The elements of an array, arrays inside it flattened (without recursion)."""
    stack: list[Iterator[Any]] = [iter(value)]
    while stack:
        for element in stack[-1]:
            if isinstance(element, list):
                stack.append(iter(element))
                break
            yield element
        else:
            stack.pop()


def match_node(node: Node, value: Any, budget: Budget) -> bool:
    """Whether `value` (an object, or an array of them) matches the pattern object."""
    if isinstance(value, list):
        # An array of objects: one element must match it all. An empty array holds no
        # field at all, so it is matched as a missing object (EventBridge: `exists: false`
        # under an empty array matches).
        seen = False
        for element in elements(value):
            seen = True
            budget.spend(1)
            if match_node(node, element, budget):
                return True
        return False if seen else match_node(node, None, budget)
    fields = value if isinstance(value, dict) else {}
    for key, sub in node.fields:
        if isinstance(sub, Node):
            if not match_node(sub, fields.get(key), budget):
                return False
        elif not match_leaf(sub, fields.get(key, MISSING), budget):
            return False
    return all(
        any(match_node(alternative, value, budget) for alternative in group)
        for group in node.alternatives
    )


def match_leaf(leaf: Leaf, value: Any, budget: Budget) -> bool:
    """Whether any scalar of `value` matches one of the field's matchers, or its presence
    is what an `exists` asks. The loop is the hot path of a long array: one set lookup by
    the scalar's type, then the operators."""
    if leaf.exists:
        present = next(leaves(value), MISSING) is not MISSING
        if present in leaf.exists:
            return True
    strings, numbers, literals, tests = leaf.strings, leaf.numbers, leaf.literals, leaf.tests
    cost = 1 + OPERATOR_STEPS * len(tests)
    spent = 0
    try:
        for scalar in leaves(value):
            spent += cost
            if spent > budget.left:
                break
            kind = type(scalar)
            if kind is str:
                if scalar in strings:
                    return True
            elif kind is bool or scalar is None:
                if any(scalar is literal for literal in literals):
                    return True
            elif numbers and has_number(numbers, scalar):
                return True
            if tests and any(test(scalar, budget) for test in tests):
                return True
    finally:
        budget.spend(spent)
    return False
