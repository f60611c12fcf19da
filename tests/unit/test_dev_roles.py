"""`hookline dev --role`: which components a process runs, and what role mode requires."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookline_dev.local.devoptions import DevOptions, DevStackError, parse_roles
from hookline_dev.local.devstack import DevStack


def test_roles_may_be_repeated_or_comma_separated_and_are_deduplicated() -> None:
    # Given --role values as an operator types them
    roles = parse_roles(["front,fanout", "deliver:bulk", " fanout ", "reconcile"])
    # Then each role appears once, in order
    assert roles == ("front", "fanout", "deliver:bulk", "reconcile")


@pytest.mark.parametrize("bad", ["receiver", "front:x", "deliver:", "fanout:standard"])
def test_an_unknown_role_is_refused_with_the_list_of_roles(bad: str) -> None:
    with pytest.raises(ValueError, match="roles: front, fanout, reconcile, deliver"):
        parse_roles([bad])


def test_deliver_runs_every_group_and_deliver_group_only_that_group() -> None:
    everything = DevOptions()
    one_group = DevOptions(roles=("deliver:priority",))
    all_groups = DevOptions(roles=("deliver", "front"))
    assert everything.runs("front") and everything.runs("deliver:bulk")
    assert one_group.runs("deliver:priority") and not one_group.runs("deliver:bulk")
    assert not one_group.runs("front") and not one_group.runs("reconcile")
    assert all_groups.runs("deliver:bulk") and all_groups.runs("front")
    assert not all_groups.runs("fanout")


def test_role_mode_refuses_to_start_without_a_shared_database_and_sqs(tmp_path: Path) -> None:
    # Given a role process with neither DATABASE_URL nor AWS_ENDPOINT_URL
    stack = DevStack(DevOptions(state_dir=tmp_path, roles=("front",), status="off"), environ={})
    # When it starts, then it says what is missing instead of starting its own Postgres/moto
    with pytest.raises(DevStackError, match="DATABASE_URL and AWS_ENDPOINT_URL"):
        stack.start()
