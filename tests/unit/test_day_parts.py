"""How deliver splits a batch into the statements it runs (decision 0103): one per UTC day its
deliveries lie in when they lie in two to four days, else one for all."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

from hookline.ids import ulid
from hookline.repositories.hot_cursors import day_parts

NOON = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)


def delivery(days_ago: int) -> str:
    """A delivery id made at noon `days_ago` days before 2026-12-06."""
    at = NOON - timedelta(days=days_ago)
    return "dlv_" + ulid(int(at.timestamp() * 1000), os.urandom(10))


def parts(ids: list[str]) -> list[list[str]]:
    return day_parts(ids, lambda delivery_id: delivery_id)


def test_a_batch_of_one_day_is_one_part() -> None:
    ids = [delivery(0) for _ in range(4)]
    assert parts(ids) == [ids]


def test_a_batch_of_two_to_four_days_is_a_part_per_day_in_the_order_first_seen() -> None:
    yesterday, today, today_too = delivery(1), delivery(0), delivery(0)
    assert parts([yesterday, today, today_too]) == [[yesterday], [today, today_too]]
    older, oldest, latest = delivery(2), delivery(3), delivery(0)
    assert parts([latest, yesterday, older, oldest, latest]) == [
        [latest, latest], [yesterday], [older], [oldest]
    ]  # fmt: skip


def test_a_batch_of_five_days_or_an_id_without_a_day_is_one_part() -> None:
    five = [delivery(4), delivery(3), delivery(2), delivery(1), delivery(0)]
    assert parts(five) == [five]
    odd = [delivery(1), "dlv_not-a-ulid", delivery(0)]
    assert parts(odd) == [odd]


def test_nothing_makes_no_part() -> None:
    assert parts([]) == []


def test_the_parts_keep_whatever_items_they_are_given() -> None:
    items = [(delivery(1), 7), (delivery(0), 3)]
    assert day_parts(items, lambda item: item[0]) == [[items[0]], [items[1]]]
