"""What the resource command groups (`tenants`, `sources`, `endpoints`, `events`,
`event-types`) share: the shape of their parsers, and a request body of the flags given."""

from __future__ import annotations

import argparse
from typing import Any


def drop_none(values: dict[str, Any]) -> dict[str, Any]:
    """The values of the flags that were given (an absent flag is an absent field)."""
    return {k: v for k, v in values.items() if v is not None}


class ResourceParsers:
    """Adds a resource's command group and its commands to the command tree: `one` are the
    parents of a command that is one API request, `many` those of a list."""

    def __init__(self, sub: Any, one: list[argparse.ArgumentParser], many: list[Any]) -> None:
        self.sub = sub
        self.one = one
        self.many = many

    def group(self, name: str, help: str) -> Any:
        """A command group (`hookline NAME ACTION`)."""
        return self.sub.add_parser(name, help=help).add_subparsers(dest="action", required=True)

    @staticmethod
    def creates(p: argparse.ArgumentParser) -> None:
        """`--idempotency-key`, for a command that creates something."""
        p.add_argument(
            "--idempotency-key", metavar="KEY", help="a retry with the same key creates nothing new"
        )

    def by_id(
        self, g: Any, verb: str, help: str, func: Any, **defaults: Any
    ) -> argparse.ArgumentParser:
        """A command on one object, named by its id."""
        p: argparse.ArgumentParser = g.add_parser(verb, parents=self.one, help=help)
        p.add_argument("id")
        p.set_defaults(func=func, **defaults)
        return p
