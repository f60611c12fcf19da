"""The reconcile function tells people about endpoints (decision 0068): the operator's
subscriptions are in its environment, and it may send e-mail through SES as the configured
sender only."""

from __future__ import annotations

import pytest

from hookline.config import HooklineConfig, Infrastructure
from tests.infra.view import actions_of, env_of, synthesize

pytestmark = pytest.mark.infra


def test_the_reconcile_function_sends_as_the_configured_sender_only() -> None:
    # Given a configuration naming a sender, an operator tenant, addresses and a chat webhook
    config = HooklineConfig(
        infrastructure=Infrastructure(
            notify_from="alerts@example.com", operator_tenant="ten_ops",
            operator_emails="oncall@example.com", operator_chat_url="https://chat.example/x",
        )
    )  # fmt: skip
    # When the stack is synthesized
    view = synthesize({"localstack": "true"}, config)
    _, fn = view.function("Reconcile")
    # Then the reconcile function has the subscriptions in its environment
    env = env_of(fn)
    assert env["HOOKLINE_NOTIFY_FROM"] == "alerts@example.com"
    assert env["HOOKLINE_OPERATOR_TENANT"] == "ten_ops"
    assert env["HOOKLINE_OPERATOR_EMAILS"] == "oncall@example.com"
    # And it may send e-mail only as that sender
    role = fn["Properties"]["Role"]["Fn::GetAtt"][0]
    sends = [s for s in view.policy_statements(role) if "ses:SendEmail" in actions_of(s)]
    assert len(sends) == 1
    assert sends[0]["Condition"] == {"StringEquals": {"ses:FromAddress": "alerts@example.com"}}


def test_without_a_sender_there_is_no_ses_permission(localstack) -> None:
    _, fn = localstack.function("Reconcile")
    role = fn["Properties"]["Role"]["Fn::GetAtt"][0]
    assert not any("ses:SendEmail" in actions_of(s) for s in localstack.policy_statements(role))
    assert "HOOKLINE_NOTIFY_FROM" not in env_of(fn)
