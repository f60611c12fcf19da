"""docs/cost.md is what infra/cost.py computes from the default configuration."""

from __future__ import annotations

import dataclasses

import pytest

from hookline.config import HooklineConfig
from infra.cost import BEGIN, DOC, END, fixed_monthly, render, variable_per_million

pytestmark = pytest.mark.infra


def test_cost_page_matches_the_script() -> None:
    generated = DOC.read_text().split(BEGIN, 1)[1].split(END, 1)[0]
    assert generated.strip() == render(HooklineConfig()).strip(), (
        "run: python -m infra.cost --write-doc"
    )


def test_fixed_cost_follows_the_config() -> None:
    config = HooklineConfig()
    one_nat = dataclasses.replace(
        config, infrastructure=dataclasses.replace(config.infrastructure, nat_gateways=1)
    )
    total = sum(line.usd for line in fixed_monthly(config))
    assert sum(line.usd for line in fixed_monthly(one_nat)) == pytest.approx(
        total - 730 * (0.045 + 0.005)
    )


def test_variable_cost_counts_api_gateway_at_its_list_price() -> None:
    lines = {line.item: line.usd for line in variable_per_million(HooklineConfig())}
    assert lines["API Gateway REST"] == 3.50
    # 1.05 M attempts x 150 ms x 0.25 GB x $0.0000133334 + 0.105 M invocations x $0.20
    assert lines["Lambda deliver"] == pytest.approx(
        1.05e6 * 0.150 * 0.25 * 0.0000133334 + 0.105 * 0.20
    )
