"""What an operator or tenant types for a tenant or an endpoint, checked before anything is
saved: the tenant group, a rate limit (`50/s`), custom header lines (`Name: value`)."""

from __future__ import annotations

from collections.abc import Sequence

from hookline.config import HooklineConfig
from hookline.delivery import RESERVED_HEADERS
from hookline.errors import BadRequest
from hookline.header_syntax import header_problem


def check_group(config: HooklineConfig, group: str | None) -> str:
    """The tenant group asked for (the default one when none is), if the deployment has it."""
    group = group or config.default_group
    if group not in config.group_names:
        raise BadRequest(f"unknown tenant group {group!r}; known: {', '.join(config.group_names)}")
    return group


def parse_rate_limit(text: str | None) -> float | None:
    """`50/s`, `600/m` or `3600/h` (or a bare number per second) → requests per second."""
    if text is None or text == "":
        return None
    amount, _, unit = text.strip().partition("/")
    per = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0}.get(unit.strip().lower())
    try:
        value = float(amount)
    except ValueError:
        per = None
        value = 0.0
    if per is None or not value > 0:
        raise BadRequest(f"rate limit {text!r}: use a positive number per s, m or h, e.g. 50/s")
    return value / per


def parse_headers(lines: Sequence[str]) -> dict[str, str]:
    """`Name: value` lines → a header dict: each an RFC 9110 name and an ASCII value
    (`header_problem`); signature and transport headers are refused."""
    headers: dict[str, str] = {}
    for number, line in enumerate(lines, 1):
        name, sep, value = line.partition(":")
        name, value = name.strip(), value.strip()
        if not sep or not name:
            raise BadRequest(f"header {number}: use 'Name: value'")  # a value may be a token
        problem = header_problem(name, value)
        if problem:
            raise BadRequest(problem)
        if name.lower() in RESERVED_HEADERS:
            raise BadRequest(f"header {name!r} is set by Hookline and cannot be overridden")
        headers[name] = value
    return headers
