"""docs/cost.md is what infra/cost.py computes from the default configuration."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

from hookline.config import HooklineConfig
from infra.cost import (
    BEGIN,
    DOC,
    END,
    Workload,
    fixed_monthly,
    render,
    summary,
    variable_per_million,
    with_ingress,
)  # fmt: skip

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
    # 1.05 M attempts in batches of 3 (0.35 M invocations), a batch's attempts on threads at
    # once: 0.35 M x 150 ms x 1.2 x 0.25 GB x $0.0000133334 + 0.35 M invocations x $0.20
    assert lines["Lambda deliver"] == pytest.approx(
        0.35e6 * 0.150 * 1.2 * 0.25 * 0.0000133334 + 0.35 * 0.20
    )


def test_both_kms_keys_are_counted() -> None:
    lines = {line.item: line.usd for line in fixed_monthly(HooklineConfig())}
    assert lines["KMS keys"] == 2.00


@pytest.mark.parametrize(
    ("ingress", "front", "fee"),
    [("rest", "API Gateway REST", 3.50), ("http", "API Gateway HTTP", 1.00),
     ("function_url", "Lambda function URL", 0.0)],
)  # fmt: skip
def test_each_front_door_is_costed_at_its_fee(ingress: str, front: str, fee: float) -> None:
    lines = {
        line.item: line.usd
        for line in variable_per_million(with_ingress(HooklineConfig(), ingress))
    }
    assert lines[front] == fee
    # Only the REST API carries the WAF
    assert ("WAF requests" in lines) == (ingress == "rest")


def test_the_cheapest_front_doors_core_is_at_most_3_dollars_per_million() -> None:
    rows = [
        summary(with_ingress(HooklineConfig(), name)) for name in ("rest", "http", "function_url")
    ]
    cheapest = min(rows, key=lambda r: r["core_per_million"])
    assert cheapest["ingress"] == "function_url"
    assert cheapest["core_per_million"] <= 3.00


def test_the_json_summary_has_the_documented_keys() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "infra.cost", "--ingress", "http", "--json"],
        capture_output=True, text=True, check=True, cwd=DOC.parent.parent,
    )  # fmt: skip
    answer = json.loads(out.stdout)
    assert set(answer) == {"ingress", "core_per_million", "total_per_million", "fixed_per_month"}
    assert answer["ingress"] == "http"


def test_tracing_adds_one_trace_per_sampled_event() -> None:
    config = HooklineConfig()
    traced = dataclasses.replace(
        config, infrastructure=dataclasses.replace(config.infrastructure, tracing=True)
    )
    off = {line.item: line for line in variable_per_million(config)}["X-Ray"]
    on = {line.item: line for line in variable_per_million(traced)}["X-Ray"]
    assert "4 traces/event" in on.basis and on.usd == pytest.approx(off.usd * 4 / 3)


def test_the_wal_kept_for_recovery_follows_the_deliveries_and_the_retention() -> None:
    config = HooklineConfig()
    longer = dataclasses.replace(
        config,
        infrastructure=dataclasses.replace(config.infrastructure, db_backup_retention_days=14),
    )

    def backup(cfg: HooklineConfig, deliveries: float = 1.0) -> float:
        lines = variable_per_million(cfg, Workload(deliveries_per_event=deliveries))
        return {line.item: line.usd for line in lines}["RDS backup storage (WAL)"]

    # 4.75 KB of WAL per event with one delivery, kept 7 days of a 30.4-day month at $0.095
    assert backup(config) == pytest.approx(1e6 * 4.75 * 1024 / 1024**3 * 7 / (730 / 24) * 0.095)
    assert backup(longer) == pytest.approx(2 * backup(config))
    assert backup(config, 10) == pytest.approx(backup(config) * 11.05 / 4.75)
