"""How deep a JSON payload may nest and still be answered as JSON: shared by the API's input
guard (`hookline.api.inputs`, which loads on every request) and the event reads
(`hookline.management.event_service`, which loads with the events' routes)."""

from __future__ import annotations

from typing import Any

# A stored payload nested deeper than this is answered as base64: pydantic's serializer stops
# near 255 levels, and what the API takes in is refused past it (hookline.api.inputs).
MAX_RENDERED_DEPTH = 200


def nesting_depth(value: Any) -> int:
    """How deeply arrays and objects nest in a JSON value (a scalar: 0), without recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return deepest
