"""Every function: arm64, the configured Python, the core layer, X-Ray, JSON logs with
retention, Powertools environment, and the wiring the code reads from the environment."""

from __future__ import annotations

import pytest

from hookline.config import HooklineConfig
from tests.infra.view import StackView, env_of

pytestmark = pytest.mark.infra

NAMES = ("Receiver", "Management", "Fanout", "Reconcile", "Replay", "Migrate", "ConsoleFunction")


def test_the_service_functions_and_one_deliver_per_group(variant: StackView) -> None:
    fns = variant.functions()
    assert len(fns) == len(NAMES) + len(variant.config.tenant_groups)
    for name in NAMES:
        variant.function(name)


def test_shape_of_every_function(variant: StackView) -> None:
    layer = variant.logical_id("CoreLayer", "AWS::Lambda::LayerVersion")
    version = variant.config.infrastructure.python_version
    for name, fn in variant.functions().items():
        props = fn["Properties"]
        assert props["Architectures"] == ["arm64"], name
        assert props["Runtime"] == f"python{version}", name
        assert props["Handler"] == "handler.lambda_handler", name
        assert props["Layers"] == [{"Ref": layer}], name
        assert props["TracingConfig"] == {"Mode": "Active"}, name
        assert props["LoggingConfig"]["LogFormat"] == "JSON", name
        env = env_of(fn)
        assert env["POWERTOOLS_SERVICE_NAME"].startswith("hookline-"), name
        assert env["POWERTOOLS_METRICS_NAMESPACE"] == "Hookline", name
        assert env["HOOKLINE_CONFIG"] == "/opt/hookline/config.json", name
        assert "HOOKLINE_QUEUE_URL_PREFIX" in env, name


def test_layer_is_arm64_for_the_configured_python(aws: StackView) -> None:
    version = aws.config.infrastructure.python_version
    aws.template.has_resource_properties(
        "AWS::Lambda::LayerVersion",
        {"CompatibleArchitectures": ["arm64"], "CompatibleRuntimes": [f"python{version}"]},
    )


def test_each_function_logs_to_its_own_group_with_retention(variant: StackView) -> None:
    groups = variant.of_type("AWS::Logs::LogGroup")
    for name, fn in variant.functions().items():
        group = fn["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
        assert groups[group]["Properties"]["RetentionInDays"] >= variant.config.log_retention_days
        assert name


def test_queue_url_prefix_is_the_regional_sqs_endpoint(aws: StackView) -> None:
    _, fanout = aws.function("Fanout")
    prefix = env_of(fanout)["HOOKLINE_QUEUE_URL_PREFIX"]
    assert prefix == {"Fn::Sub": "https://sqs.${AWS::Region}.${AWS::URLSuffix}/${AWS::AccountId}/"}


def test_receiver_knows_the_fanout_function(aws: StackView) -> None:
    fanout_id, _ = aws.function("Fanout")
    _, receiver = aws.function("Receiver")
    assert env_of(receiver)["HOOKLINE_FANOUT_FUNCTION"] == {"Ref": fanout_id}
    # and fans out at receipt, sending the deliveries itself (decision 0076)
    assert env_of(receiver)["HOOKLINE_FANOUT_AT_RECEIPT"] == "true"


def test_fanout_and_reconcile_do_not_retry_superseded_ticks(aws: StackView) -> None:
    configs = aws.of_type("AWS::Lambda::EventInvokeConfig").values()
    targets = {c["Properties"]["FunctionName"]["Ref"] for c in configs}
    assert targets == {aws.function("Fanout")[0], aws.function("Reconcile")[0]}
    for config in configs:
        assert config["Properties"]["MaximumRetryAttempts"] == 0
        # A nudge older than the schedule's period is worth nothing: it expires.
        assert config["Properties"]["MaximumEventAgeInSeconds"] == 60


def test_only_the_deliver_functions_allow_their_recursive_loop(aws: StackView) -> None:
    for name, fn in aws.functions().items():
        loop = fn["Properties"].get("RecursiveLoop")
        assert loop == ("Allow" if "Deliver" in name else None), name


def test_the_management_api_times_out_before_api_gateway(aws: StackView) -> None:
    _, management = aws.function("Management")
    assert management["Properties"]["Timeout"] <= 29


def test_concurrency_limits(aws: StackView) -> None:
    infra = HooklineConfig().infrastructure
    _, fanout = aws.function("Fanout")
    _, reconcile = aws.function("Reconcile")
    _, migrate = aws.function("Migrate")
    assert fanout["Properties"]["ReservedConcurrentExecutions"] == infra.fanout_reserved_concurrency
    assert reconcile["Properties"]["ReservedConcurrentExecutions"] == 1
    assert migrate["Properties"]["ReservedConcurrentExecutions"] == 1


def test_the_management_api_function_runs_functions_api(aws: StackView) -> None:
    fanout_id, _ = aws.function("Fanout")
    replay_id, _ = aws.function("Replay")
    _, management = aws.function("Management")
    env = env_of(management)
    assert env["POWERTOOLS_SERVICE_NAME"] == "hookline-api"
    assert env["HOOKLINE_FANOUT_FUNCTION"] == {"Ref": fanout_id}
    assert env["HOOKLINE_FANOUT_AT_RECEIPT"] == "true"  # publish sends what it made (0076)
    assert env["HOOKLINE_REPLAY_FUNCTION"] == {"Ref": replay_id}


def test_every_function_can_unwrap_the_secrets_data_key(variant: StackView) -> None:
    ((key_id, key),) = [
        (k, v) for k, v in variant.of_type("AWS::KMS::Key").items() if "SecretsKey" in k
    ]
    assert key["Properties"]["EnableKeyRotation"] is True
    assert key["DeletionPolicy"] == "RetainExceptOnCreate"
    for name, fn in variant.functions().items():
        assert env_of(fn)["HOOKLINE_KMS_KEY_ID"] == {"Fn::GetAtt": [key_id, "Arn"]}, name
        actions = {
            a
            for s in variant.policy_statements(variant.role_of(name))
            if s.get("Resource") == {"Fn::GetAtt": [key_id, "Arn"]}
            for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])
        }
        assert {"kms:Decrypt", "kms:GenerateDataKey"} <= actions, name
