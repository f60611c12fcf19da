"""What keeps one payload's validation bounded, whatever the tenant's schema
(docs/decisions/0027): a step budget every keyword draws from, `uniqueItems` in linear
time, and, at save, references that loop or chain too deep refused.

JSON Schema validation is not linear in general: `anyOf` branches that refer to each other
multiply, an `enum` is compared item by item, and jsonschema's `uniqueItems` compares every
pair of unsortable items (11 s of CPU for 3,000 objects). The budget counts work instead of
time, so a refusal is the same on a fast and a slow machine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any
from urllib.parse import unquote

from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator

Keyword = Callable[..., Any]


class BudgetExceeded(Exception):
    """Validating one payload took more steps than its budget."""


_budget: ContextVar[list[int] | None] = ContextVar("validation_budget", default=None)


def validate_within(steps: int, validate: Callable[[], Any]) -> Any:
    """`validate()`, which may spend `steps`; one more raises BudgetExceeded."""
    token = _budget.set([steps])
    try:
        return validate()
    finally:
        _budget.reset(token)


def spend(steps: int) -> None:
    """Draw `steps` from the current budget (nothing outside a `validation_budget`)."""
    left = _budget.get()
    if left is None:
        return
    left[0] -= steps
    if left[0] < 0:
        raise BudgetExceeded


def _one(value: Any, instance: Any) -> int:
    return 1


def _per_item(value: Any, instance: Any) -> int:
    return 1 + (len(value) if isinstance(value, list) else 0)


def _per_instance_item(value: Any, instance: Any) -> int:
    return 1 + (len(instance) if isinstance(instance, list) else 0)


# What a keyword costs beyond one step: the work it does without descending (descents are
# counted as the keywords they evaluate).
def _reference(value: Any, instance: Any) -> int:
    return REFERENCE_STEPS


# Resolving a reference (jsonschema's `referencing` lookups) costs ~10 keywords' time.
REFERENCE_STEPS = 10
_COSTS: dict[str, Callable[[Any, Any], int]] = {
    "enum": _per_item,
    "uniqueItems": _per_instance_item,
    "anyOf": _per_item,
    "oneOf": _per_item,
    "allOf": _per_item,
    "$ref": _reference,
    "$dynamicRef": _reference,
    "$recursiveRef": _reference,
}


def budgeted(keyword: str, function: Keyword) -> Keyword:
    """`function` (a jsonschema keyword) drawing from the budget each time it runs."""
    cost = _COSTS.get(keyword, _one)

    # Not a generator itself: jsonschema iterates what a keyword returns at once, and one
    # generator layer less per keyword is ~1/3 of the wrapper's cost.
    def run(validator: Validator, value: Any, instance: Any, schema: Any) -> Any:
        spend(cost(value, instance))
        return function(validator, value, instance, schema)

    return run


def unique_items(
    validator: Validator, unique: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    """`uniqueItems` by hashing each item's canonical form: linear, where jsonschema's own
    compares every pair of items it cannot sort."""
    if not (unique and validator.is_type(instance, "array")):
        return
    seen: set[Any] = set()
    for item in instance:
        key = _canonical(item)
        if key in seen:
            yield ValidationError(f"{instance!r} has non-unique elements")
            return
        seen.add(key)


def _canonical(value: Any) -> Any:
    # JSON Schema equality: 1 == 1.0, true != 1, objects equal whatever their key order.
    # Recursion is bounded by the payload's depth limit, checked before validation.
    if isinstance(value, dict):
        return ("o", frozenset((k, _canonical(v)) for k, v in value.items()))
    if isinstance(value, list):
        return ("a", tuple(_canonical(v) for v in value))
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, int | float):
        return ("n", value)
    return ("s", value)


# -- references ------------------------------------------------------------------------------

# Keywords whose subschemas apply to the same instance (no descent into the payload): a
# cycle through them and references never ends.
_IN_PLACE_LISTS = ("allOf", "anyOf", "oneOf")
_IN_PLACE_ONE = ("not", "if", "then", "else", "$ref", "$dynamicRef", "$recursiveRef")
_IN_PLACE_MAPS = ("dependentSchemas",)
_NAMED_SUBSCHEMAS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_DATA = ("enum", "const", "default", "examples")


class ReferenceProblem(Exception):
    """A schema whose references loop, or chain deeper than allowed; `where` is a path."""

    def __init__(self, where: str, looped: bool) -> None:
        super().__init__(where)
        self.where = where
        self.looped = looped


def check_references(schema: Any, max_chain: int) -> None:
    """Raise ReferenceProblem when following `$ref`s and in-place applicators (`allOf`,
    `anyOf`, `not`, …) from some subschema comes back to it (validation would recurse for
    ever) or runs through more than `max_chain` subschemas (it would exhaust the stack)."""
    nodes = _schema_nodes(schema)
    anchors = {
        f"#{n[a]}": i
        for i, (n, _) in enumerate(nodes)
        for a in ("$anchor", "$dynamicAnchor")
        if isinstance(n.get(a), str)
    }
    index = {id(n): i for i, (n, _) in enumerate(nodes)}

    def targets(node: dict[str, Any]) -> Iterator[int]:
        for key in _IN_PLACE_LISTS:
            children = node.get(key)
            if isinstance(children, list):
                yield from (index[id(c)] for c in children if id(c) in index)
        for key in _IN_PLACE_ONE:
            value = node.get(key)
            if isinstance(value, str):
                found = _resolve(schema, value, anchors, nodes)
                if found is not None and id(found) in index:
                    yield index[id(found)]
            elif isinstance(value, dict) and id(value) in index:
                yield index[id(value)]
        for key in _IN_PLACE_MAPS:
            value = node.get(key)
            if isinstance(value, dict):
                yield from (index[id(v)] for v in value.values() if id(v) in index)

    chain = [0] * len(nodes)  # 0: not seen; -1: on the current path; else chain length
    for start in range(len(nodes)):
        if chain[start]:
            continue
        chain[start] = -1
        stack = [(start, targets(nodes[start][0]))]
        while stack:
            at, pending = stack[-1]
            step = next(pending, None)
            if step is None:
                stack.pop()
                longest = 1 + max((chain[t] for t in targets(nodes[at][0])), default=0)
                chain[at] = longest
                if longest > max_chain:
                    raise ReferenceProblem(nodes[at][1], looped=False)
            elif chain[step] == -1:
                raise ReferenceProblem(nodes[at][1], looped=True)
            elif chain[step] == 0:
                chain[step] = -1
                stack.append((step, targets(nodes[step][0])))


def _schema_nodes(schema: Any) -> list[tuple[dict[str, Any], str]]:
    """Every subschema (object) of `schema` with its path, data and names aside."""
    found: list[tuple[dict[str, Any], str]] = []
    stack: list[tuple[Any, str, bool]] = [(schema, "schema", True)]
    while stack:
        node, where, is_schema = stack.pop()
        if isinstance(node, list):
            stack.extend((v, f"{where}[{i}]", True) for i, v in enumerate(node))
        elif isinstance(node, dict):
            if not is_schema:  # a map of names to subschemas
                stack.extend((v, f"{where}.{k}", True) for k, v in node.items())
                continue
            found.append((node, where))
            for key, value in node.items():
                if key not in _DATA:
                    stack.append((value, f"{where}.{key}", key not in _NAMED_SUBSCHEMAS))
    return found


def _resolve(
    schema: Any, ref: str, anchors: dict[str, int], nodes: list[tuple[dict[str, Any], str]]
) -> Any:
    if ref in anchors:
        return nodes[anchors[ref]][0]
    if not ref.startswith("#"):
        return None
    node = schema
    for token in unquote(ref[1:]).split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node
