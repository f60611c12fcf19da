"""The console on AWS (decision 0053): a `console` function behind the same API for `/console`
and `/portal`, operators signing in through a Cognito user pool the stack creates (an
`operators` group, the configured admin invited by e-mail), the session key in Secrets
Manager; cdk-nag and cfn-lint clean with the admin configured and with MFA optional, and
behind each front (REST, HTTP API, function URLs)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from cdk_nag import AwsSolutionsChecks

from hookline.config import Console, HooklineConfig
from tests.infra.view import StackView, actions_of, env_of, resources_of, synthesize

pytestmark = pytest.mark.infra

ADMIN = "first.operator@example.com"


def _config(ingress: str = "rest", **console: Any) -> HooklineConfig:
    config = HooklineConfig()
    return dataclasses.replace(
        config,
        infrastructure=dataclasses.replace(config.infrastructure, ingress=ingress),
        console=Console(**console),
    )


@pytest.fixture(scope="module")
def with_admin() -> StackView:
    """The REST stack with an admin e-mail and MFA optional."""
    view = synthesize({}, config=_config(admin_email=ADMIN, mfa="optional"))
    view.start_lint()
    return view


@pytest.fixture(scope="module")
def http() -> StackView:
    return synthesize({}, config=_config("http"))


@pytest.fixture(scope="module")
def function_url() -> StackView:
    view = synthesize({}, config=_config("function_url"))
    view.start_lint()
    return view


def _console(view: StackView) -> tuple[str, dict[str, Any]]:
    return view.function("ConsoleFunction")


def _integration_target(method: dict[str, Any]) -> str:
    uri = method["Properties"]["Integration"]["Uri"]["Fn::Join"][1]
    return next(p["Fn::GetAtt"][0] for p in uri if isinstance(p, dict) and "Fn::GetAtt" in p)


def test_the_rest_api_sends_console_and_portal_to_the_console_function(aws: StackView) -> None:
    console, fn = _console(aws)
    assert env_of(fn)["POWERTOOLS_SERVICE_NAME"] == "hookline-console"
    resources = aws.of_type("AWS::ApiGateway::Resource")
    paths = {}
    for logical, resource in resources.items():
        parent = resource["Properties"]["ParentId"]
        parent_part = resources[parent["Ref"]]["Properties"]["PathPart"] if "Ref" in parent else ""
        paths[logical] = f"{parent_part}/{resource['Properties']['PathPart']}".lstrip("/")
    routed = {
        paths[m["Properties"]["ResourceId"]["Ref"]]
        for m in aws.of_type("AWS::ApiGateway::Method").values()
        if _integration_target(m) == console
    }
    assert routed == {"console", "console/{proxy+}", "portal", "portal/{proxy+}"}
    for method in aws.of_type("AWS::ApiGateway::Method").values():
        if _integration_target(method) == console:
            assert method["Properties"]["HttpMethod"] == "ANY"
            assert method["Properties"]["AuthorizationType"] == "NONE"  # it signs users in


def test_the_console_reaches_the_database_like_the_api_and_knows_where_to_sign_in(
    aws: StackView,
) -> None:
    _, console = _console(aws)
    _, api = aws.function("Management")
    vpc, api_vpc = console["Properties"]["VpcConfig"], api["Properties"]["VpcConfig"]
    assert vpc["SubnetIds"] == api_vpc["SubnetIds"]
    (group,) = vpc["SecurityGroupIds"]
    sources = [
        rule["Properties"].get("SourceSecurityGroupId")
        for rule in aws.of_type("AWS::EC2::SecurityGroupIngress").values()
    ]
    assert group in sources  # let in to the database proxy, as the API's is
    env, api_env = env_of(console), env_of(api)
    for name in ("HOOKLINE_DATABASE_HOST", "HOOKLINE_DATABASE_IAM_USER"):
        assert env.get(name) == api_env.get(name), name
    pool = aws.logical_id("OperatorSignInOperators", "AWS::Cognito::UserPool")
    client = aws.logical_id("OperatorSignInOperatorsConsole", "AWS::Cognito::UserPoolClient")
    assert env["HOOKLINE_COGNITO_USER_POOL_ID"] == {"Ref": pool}
    assert env["HOOKLINE_COGNITO_CLIENT_ID"] == {"Ref": client}
    assert "amazoncognito.com" in str(env["HOOKLINE_COGNITO_DOMAIN"])
    # Both the console and the API (portal links) read the generated session key
    secret = aws.logical_id("SessionKey", "AWS::SecretsManager::Secret")
    assert env["HOOKLINE_PORTAL_SESSION_KEY_SECRET_ARN"] == {"Ref": secret}
    assert api_env["HOOKLINE_PORTAL_SESSION_KEY_SECRET_ARN"] == {"Ref": secret}
    assert "HOOKLINE_PORTAL_SESSION_KEY" not in env  # never the key itself


def test_the_console_role_touches_only_what_the_pages_call(aws: StackView) -> None:
    console, _ = _console(aws)
    statements = aws.policy_statements(aws.role_of(console))
    invoked = {
        r["Fn::GetAtt"][0]
        for s in statements
        if "lambda:InvokeFunction" in actions_of(s)
        for r in resources_of(s)
        if isinstance(r, dict) and "Fn::GetAtt" in r
    }
    assert invoked == {aws.function("Fanout")[0], aws.function("Replay")[0]}
    secrets = {
        str(r)
        for s in statements
        if "secretsmanager:GetSecretValue" in actions_of(s)
        for r in resources_of(s)
    }
    session_key = aws.logical_id("SessionKey", "AWS::SecretsManager::Secret")
    assert any(session_key in s for s in secrets)
    for s in statements:
        assert not any(a.startswith("cognito-idp:") for a in actions_of(s))


def test_the_user_pool_admits_only_invited_operators_with_mfa(aws: StackView) -> None:
    (pool,) = aws.of_type("AWS::Cognito::UserPool").values()
    props = pool["Properties"]
    assert props["AdminCreateUserConfig"]["AllowAdminCreateUserOnly"] is True
    policy = props["Policies"]["PasswordPolicy"]
    assert policy["MinimumLength"] >= 14
    assert all(policy[k] for k in ("RequireUppercase", "RequireLowercase", "RequireNumbers"))
    assert policy["RequireSymbols"] is True
    assert props["MfaConfiguration"] == "ON"
    assert props["EnabledMfas"] == ["SOFTWARE_TOKEN_MFA"]
    assert props["UserPoolTier"] == "PLUS"
    assert props["UserPoolAddOns"]["AdvancedSecurityMode"] == "ENFORCED"
    (group,) = aws.of_type("AWS::Cognito::UserPoolGroup").values()
    assert group["Properties"]["GroupName"] == "operators"
    # No admin configured: nobody is invited
    aws.template.resource_count_is("AWS::Cognito::UserPoolUser", 0)


def test_the_console_client_uses_the_code_flow_back_to_the_console(aws: StackView) -> None:
    (client,) = aws.of_type("AWS::Cognito::UserPoolClient").values()
    props = client["Properties"]
    assert props["AllowedOAuthFlows"] == ["code"]
    assert props["GenerateSecret"] is False  # a public client: PKCE
    assert set(props["AllowedOAuthScopes"]) == {"openid", "email"}
    assert props["SupportedIdentityProviders"] == ["COGNITO"]
    (callback,) = props["CallbackURLs"]
    parts = callback["Fn::Join"][1]
    rest_api = aws.logical_id("RestApi", "AWS::ApiGateway::RestApi")
    assert {"Ref": rest_api} in parts
    assert parts[-1] == "/live/console/callback"
    aws.template.resource_count_is("AWS::Cognito::UserPoolDomain", 1)


def test_the_configured_admin_is_invited_by_email_into_the_operators(
    with_admin: StackView,
) -> None:
    (user,) = with_admin.of_type("AWS::Cognito::UserPoolUser").values()
    props = user["Properties"]
    assert props["Username"] == ADMIN
    assert props["DesiredDeliveryMediums"] == ["EMAIL"]
    assert {"Name": "email", "Value": ADMIN} in props["UserAttributes"]
    (membership,) = with_admin.of_type("AWS::Cognito::UserPoolUserToGroupAttachment").values()
    assert membership["Properties"]["GroupName"] == "operators"
    assert membership["Properties"]["Username"] == ADMIN
    (pool,) = with_admin.of_type("AWS::Cognito::UserPool").values()
    assert pool["Properties"]["MfaConfiguration"] == "OPTIONAL"


def test_the_admin_can_come_from_the_command_line() -> None:
    view = synthesize({"consoleAdminEmail": "cli.admin@example.com"})
    (user,) = view.of_type("AWS::Cognito::UserPoolUser").values()
    assert user["Properties"]["Username"] == "cli.admin@example.com"


def test_the_http_api_routes_the_pages_with_payload_1(http: StackView) -> None:
    console, _ = _console(http)
    routes = {
        r["Properties"]["RouteKey"]: r["Properties"]
        for r in http.of_type("AWS::ApiGatewayV2::Route").values()
    }
    integrations = http.of_type("AWS::ApiGatewayV2::Integration")
    for key in ("ANY /console", "ANY /console/{proxy+}", "ANY /portal", "ANY /portal/{proxy+}"):
        target = routes[key]["Target"]["Fn::Join"][1][-1]["Ref"]
        integration = integrations[target]["Properties"]
        assert integration["PayloadFormatVersion"] == "1.0", key
        assert integration["IntegrationUri"]["Fn::GetAtt"][0] == console
    (client,) = http.of_type("AWS::Cognito::UserPoolClient").values()
    parts = client["Properties"]["CallbackURLs"][0]["Fn::Join"][1]
    assert parts[-1] == "/console/callback"  # the $default stage: no prefix


def test_behind_function_urls_the_console_has_its_own_and_reads_the_client_from_ssm(
    function_url: StackView,
) -> None:
    console, fn = _console(function_url)
    (url,) = [
        u for u in function_url.of_type("AWS::Lambda::Url").values()
        if u["Properties"]["TargetFunctionArn"]["Fn::GetAtt"][0] == console
    ]  # fmt: skip
    assert url["Properties"]["AuthType"] == "NONE"
    (client,) = function_url.of_type("AWS::Cognito::UserPoolClient").values()
    callback = str(client["Properties"]["CallbackURLs"][0])
    assert "FunctionUrl" in callback and "/console/callback" in callback
    env = env_of(fn)
    assert "HOOKLINE_COGNITO_CLIENT_ID" not in env  # it would close a cycle
    name = env["HOOKLINE_COGNITO_CLIENT_ID_PARAMETER"]
    (parameter,) = function_url.of_type("AWS::SSM::Parameter").values()
    assert parameter["Properties"]["Name"] == name
    assert parameter["Properties"]["Value"] == {
        "Ref": function_url.logical_id(
            "OperatorSignInOperatorsConsole", "AWS::Cognito::UserPoolClient"
        )
    }
    reads = [
        s for s in function_url.policy_statements(function_url.role_of(console))
        if "ssm:GetParameter" in actions_of(s)
    ]  # fmt: skip
    assert len(reads) == 1 and name.lstrip("/") in str(reads[0]["Resource"])


def test_localstack_serves_the_portal_without_a_user_pool(localstack: StackView) -> None:
    _, fn = _console(localstack)
    assert "HOOKLINE_COGNITO_USER_POOL_ID" not in env_of(fn)
    localstack.template.resource_count_is("AWS::Cognito::UserPool", 0)


@pytest.mark.parametrize("view", ["with_admin", "http", "function_url"])
def test_cdk_nag_finds_nothing_unacknowledged(view: str, request: pytest.FixtureRequest) -> None:
    stack: StackView = request.getfixturevalue(view)
    report = AwsSolutionsChecks(stack.app).validate_scope(stack.stack)
    findings = [
        f"{v.rule_name}: {r.resource_logical_id or r.locations} — {v.description[:120]}"
        for v in report.violations
        for r in v.violating_resources
    ]
    assert findings == []


@pytest.mark.parametrize("view", ["with_admin", "function_url"])
def test_cfn_lint_reports_no_error_or_new_warning(
    view: str, request: pytest.FixtureRequest
) -> None:
    stack: StackView = request.getfixturevalue(view)
    problems = [
        f"{m['Rule']['Id']} {m['Message']}"
        for m in stack.lint_matches()
        if m["Level"] == "Error" or m["Rule"]["Id"] != "W3005"
    ]
    assert problems == []
