"""`@frozen` (hookline.records, decision 0115) behaves as `@dataclass(frozen=True)` does: each
class below is made both ways from the same body, and the two must compare, hash, show,
copy and refuse assignment alike. The runtime package uses `@frozen` for every frozen value
class, so a cold start compiles no equality, hash or repr per class."""

from __future__ import annotations

import dataclasses
import pickle
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from hookline.records import frozen

ROOT = Path(__file__).resolve().parents[2]


def both(body: dict[str, Any], annotations: dict[str, str], name: str = "Thing") -> tuple[Any, Any]:
    """The class of `body` made by @frozen and by @dataclass(frozen=True)."""

    def make() -> type:
        namespace = {**body, "__annotations__": dict(annotations), "__module__": __name__}
        return type(name, (), namespace)

    return frozen(make()), dataclass(frozen=True)(make())


FIELD_OPTIONS = [
    pytest.param({}, {}, id="no fields"),
    pytest.param({}, {"a": "int"}, id="one field"),
    pytest.param({"b": "x"}, {"a": "int", "b": "str"}, id="a default"),
    pytest.param(
        {"b": field(default="x", compare=False)}, {"a": "int", "b": "str"}, id="compare=False"
    ),
    pytest.param({"b": field(default="x", repr=False)}, {"a": "int", "b": "str"}, id="repr=False"),
    pytest.param({"b": field(default="x", hash=False)}, {"a": "int", "b": "str"}, id="hash=False"),
    pytest.param(
        {"b": field(default="x", compare=False, hash=True)},
        {"a": "int", "b": "str"},
        id="hash=True without compare",
    ),
    pytest.param(
        {"c": field(default_factory=tuple)}, {"a": "int", "c": "tuple"}, id="default_factory"
    ),
]


def values(annotations: dict[str, str], seed: int) -> list[Any]:
    """Constructor arguments for a class of these fields, varied by `seed`."""
    made = {"int": seed, "str": f"s{seed % 2}", "tuple": (seed, "t")}
    return [made[kind] for kind in annotations.values()]


@pytest.mark.parametrize(("body", "annotations"), FIELD_OPTIONS)
def test_equality_hash_and_repr_are_the_dataclass_ones(
    body: dict[str, Any], annotations: dict[str, str]
) -> None:
    record_class, data_class = both(body, annotations)
    for left in range(3):
        for right in range(3):
            first, second = values(annotations, left), values(annotations, right)
            mine = record_class(*first), record_class(*second)
            theirs = data_class(*first), data_class(*second)
            assert (mine[0] == mine[1]) == (theirs[0] == theirs[1])
            assert (mine[0] != mine[1]) == (theirs[0] != theirs[1])
        one = record_class(*values(annotations, left))
        other = data_class(*values(annotations, left))
        assert hash(one) == hash(other)
        assert repr(one) == repr(other)
        assert one != other  # another class, as two dataclasses of one shape are unequal


def test_fields_copies_and_pickles_as_a_dataclass() -> None:
    record_class, _ = both({"b": "x"}, {"a": "int", "b": "str"}, name="Pickled")
    globals()["Pickled"] = record_class  # pickle finds a class by its module and name
    thing = record_class(1, "y")
    assert [f.name for f in dataclasses.fields(thing)] == ["a", "b"]
    assert dataclasses.replace(thing, a=2) == record_class(2, "y")
    assert dataclasses.asdict(thing) == {"a": 1, "b": "y"}
    assert pickle.loads(pickle.dumps(thing)) == thing  # noqa: S301 - our own bytes
    assert record_class.__match_args__ == ("a", "b")
    with pytest.raises(dataclasses.FrozenInstanceError):
        thing.a = 3  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del thing.b  # type: ignore[attr-defined]


def test_a_subclass_compares_and_shows_its_own_fields() -> None:
    @frozen
    class Base:
        a: int

    @frozen
    class Child(Base):
        b: int = 0

    assert Child(1, 2) == Child(1, 2) and Child(1, 2) != Child(1, 3)
    assert Child(1) != Base(1)  # as dataclasses: another class
    assert repr(Child(1, 2)).endswith(".<locals>.Child(a=1, b=2)")
    assert hash(Child(1, 2)) == hash((1, 2))


def test_what_the_class_defines_itself_is_kept() -> None:
    @frozen
    class Shown:
        a: int

        def __repr__(self) -> str:
            return "mine"

    @frozen
    class Compared:
        a: int
        b: int

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Compared) and other.a == self.a

    @frozen
    class Unhashable:
        a: int
        __hash__ = None  # type: ignore[assignment]

    assert repr(Shown(1)) == "mine"
    assert Compared(1, 2) == Compared(1, 3)
    # a class's own __eq__ does not make it unhashable: the fields' hash, as dataclass does
    assert hash(Compared(1, 2)) == hash((1, 2))
    with pytest.raises(TypeError):
        hash(Unhashable(1))


def test_a_record_holding_itself_shows_an_ellipsis() -> None:
    @frozen
    class Node:
        items: list[Any]

    node = Node([])
    node.items.append(node)
    assert repr(node).endswith("Node(items=[...])")


def test_the_runtime_package_makes_no_frozen_dataclass() -> None:
    """Lambda imports layers/core and functions: a frozen value class there is `@frozen`."""
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for folder in ("layers/core/hookline", "functions")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if re.match(r"\s*@(dataclasses\.)?dataclass\(.*frozen=True", line)
    ]
    assert found == []
