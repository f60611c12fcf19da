"""EventBridge rules with schedule expressions: fan-out and reconcile sweeps from config."""

from __future__ import annotations

import pytest

from tests.infra.view import StackView

pytestmark = pytest.mark.infra


def _rate(minutes: int) -> str:
    return f"rate({minutes} minute{'s' if minutes != 1 else ''})"


@pytest.mark.parametrize(
    ("fragment", "attr"), [("Fanout", "fanout_minutes"), ("Reconcile", "reconcile_minutes")]
)
def test_sweep_runs_on_its_schedule(variant: StackView, fragment: str, attr: str) -> None:
    fn, _ = variant.function(fragment)
    minutes = getattr(variant.config.schedules, attr)
    (rule,) = [
        r["Properties"]
        for r in variant.of_type("AWS::Events::Rule").values()
        if r["Properties"]["Targets"][0]["Arn"] == {"Fn::GetAtt": [fn, "Arn"]}
    ]
    assert rule["ScheduleExpression"] == _rate(minutes)
    assert rule["State"] == "ENABLED"
    # EventBridge may invoke the function (and nothing else may through this permission)
    assert any(
        p["Properties"]["Principal"] == "events.amazonaws.com"
        and p["Properties"]["FunctionName"] == {"Fn::GetAtt": [fn, "Arn"]}
        for p in variant.of_type("AWS::Lambda::Permission").values()
    )
