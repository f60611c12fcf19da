"""Every log group of the stack expires, the ones CDK's own functions write to included."""

from __future__ import annotations

import pytest

from tests.infra.view import StackView

pytestmark = pytest.mark.infra


def test_every_log_group_expires(variant: StackView) -> None:
    # Given the synthesized stack
    groups = variant.of_type("AWS::Logs::LogGroup")
    # Then each log group it creates keeps logs for the configured retention, not forever
    assert groups
    for name, group in groups.items():
        assert group["Properties"]["RetentionInDays"] >= variant.config.log_retention_days, name


def test_every_function_writes_to_a_log_group_that_expires(variant: StackView) -> None:
    # Given the synthesized stack, CDK's custom resource providers among its functions
    groups = variant.of_type("AWS::Logs::LogGroup")
    functions = variant.of_type("AWS::Lambda::Function")
    assert any(f["Properties"]["Handler"] == "__entrypoint__.handler" for f in functions.values())
    # Then every function logs to one of the stack's log groups (never Lambda's default
    # /aws/lambda/<name>, which is created at the first run and never expires)
    for name, function in functions.items():
        target = function["Properties"].get("LoggingConfig", {}).get("LogGroup")
        assert target is not None, name
        assert target["Ref"] in groups, name
        assert "RetentionInDays" in groups[target["Ref"]]["Properties"], name
