"""`@frozen`: an immutable value class, as `@dataclass(frozen=True)` makes it, whose `__eq__`,
`__hash__` and `__repr__` are three shared functions instead of code written and compiled for
each class (decision 0115).

`dataclasses` writes the source of every method it adds and compiles it with `exec` when the
class is made: six functions for a frozen class, the three here the largest for a class of many
fields. Lambda pays that at every cold start for each class a handler imports (~0.7 ms a class
here, 25 to 35 ms of deliver's import in all, of which these three are 7 to 12 ms). The shared
functions read the class's fields at call time through the `operator.attrgetter` made for it
once, and compare, hash and show exactly what the generated ones would: the fields that
`compare`, those that `hash` (`hash=None` follows `compare`) and those that `repr`, in order.
Everything else is the dataclass's own: `__init__`, frozenness, `fields()`, `replace()`,
`asdict()`, pickling, `__match_args__`.

A method the class defines itself is left as it is, as `dataclass` leaves it.
"""

from __future__ import annotations

import dataclasses
from operator import attrgetter
from reprlib import recursive_repr
from typing import Any, TypeVar, cast, dataclass_transform

T = TypeVar("T", bound=type)


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, dataclasses.Field))
def frozen(cls: T) -> T:
    """Make `cls` a frozen dataclass with the shared equality, hash and repr."""
    made: Any = dataclasses.dataclass(frozen=True, eq=False, repr=False)(cls)
    fields = dataclasses.fields(made)
    made.__record_compared__ = _getter([f.name for f in fields if f.compare])
    made.__record_hashed__ = _getter(
        [f.name for f in fields if (f.compare if f.hash is None else f.hash)]
    )
    made.__record_shown__ = tuple(f.name for f in fields if f.repr)
    own = made.__dict__
    # As dataclass(frozen=True, eq=True): a hash the class sets stays, but not the `__hash__ =
    # None` Python sets in a class that defines `__eq__`, which the fields' hash replaces.
    chosen = own.get("__hash__", dataclasses.MISSING)
    hashed = chosen is dataclasses.MISSING or (chosen is None and "__eq__" in own)
    if "__repr__" not in own:
        made.__repr__ = _repr
    if "__eq__" not in own:
        made.__eq__ = _eq
    if hashed:
        made.__hash__ = _hash
    return cast(T, made)


def _getter(names: list[str]) -> staticmethod[[Any], tuple[Any, ...]]:
    """The tuple of these attributes of an object (`attrgetter` gives a lone one bare), as a
    class attribute that is not bound to the instance it is read from."""
    if not names:
        return staticmethod(lambda _obj: ())
    if len(names) == 1:
        one = attrgetter(names[0])
        return staticmethod(lambda obj: (one(obj),))
    return staticmethod(attrgetter(*names))


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    compared = self.__record_compared__
    return compared(self) == compared(other)


def _hash(self: Any) -> int:
    return hash(self.__record_hashed__(self))


@recursive_repr()
def _repr(self: Any) -> str:
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__record_shown__)
    return f"{self.__class__.__qualname__}({shown})"
