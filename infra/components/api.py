"""The API Gateway REST API (v1) in front of the receiver and the management API.

`POST /in/{source_id}` is open (the provider's signature is the auth) and goes to the
receiver; `/v1/{proxy+}` requires SigV4 (IAM) and goes to the management API function;
`/console` and `/portal` (and everything under them) go to the console function, which signs
its users in itself (decision 0053). Every
media type is binary, so the functions get the body base64-encoded and byte-exact — signatures
are computed over raw bytes. See docs/decisions/0004-api-gateway-rest-binary.md.
"""

from __future__ import annotations

import json

from aws_cdk import Aws, Fn, RemovalPolicy, Stack
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_wafv2 as wafv2
from constructs import Construct

from hookline.config import HooklineConfig
from infra.components.ingress import PAGE_ROOTS, PAGES_AUTH_REASON, PERIOD, FrontMetrics
from infra.components.logging import retention
from infra.components.queues import resource_prefix
from infra.nag import suppress

STAGE = "live"
ACCESS_LOG_FIELDS = {
    "requestId": "$context.requestId",
    "requestTime": "$context.requestTimeEpoch",
    "ip": "$context.identity.sourceIp",
    "userAgent": "$context.identity.userAgent",
    "caller": "$context.identity.userArn",
    "method": "$context.httpMethod",
    "resource": "$context.resourcePath",
    "path": "$context.path",
    "status": "$context.status",
    "responseLength": "$context.responseLength",
    "responseLatency": "$context.responseLatency",
    "integrationLatency": "$context.integrationLatency",
    "integrationStatus": "$context.integration.status",
    "error": "$context.error.message",
    "wafStatus": "$context.waf.status",
    "xrayTraceId": "$context.xrayTraceId",
}


class Api(Construct):
    """REST API + stage (throttled, JSON access logs, X-Ray) + optional WAF web ACL."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: HooklineConfig,
        receiver: lambda_.IFunction,
        management: lambda_.IFunction,
        waf: bool,
        console: lambda_.IFunction | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        infra = config.infrastructure
        self.access_logs = logs.LogGroup(
            self,
            "AccessLogs",
            retention=retention(config.log_retention_days),
            removal_policy=RemovalPolicy.DESTROY,
        )
        self.rest_api = apigw.RestApi(
            self,
            "RestApi",
            rest_api_name=f"{Stack.of(self).stack_name}-api",
            description="Hookline: inbound webhooks (/in) and the management API (/v1)",
            binary_media_types=["*/*"],
            endpoint_types=[apigw.EndpointType.REGIONAL],
            cloud_watch_role=True,
            # The role is API Gateway's account-wide setting (AWS::ApiGateway::Account): deleting
            # it with this stack would break every other API's logging in the account.
            cloud_watch_role_removal_policy=RemovalPolicy.RETAIN,
            deploy_options=apigw.StageOptions(
                stage_name=STAGE,
                throttling_rate_limit=infra.api_throttle_rate_per_second,
                throttling_burst_limit=infra.api_throttle_burst,
                access_log_destination=apigw.LogGroupLogDestination(self.access_logs),
                access_log_format=apigw.AccessLogFormat.custom(json.dumps(ACCESS_LOG_FIELDS)),
                logging_level=apigw.MethodLoggingLevel.ERROR,
                data_trace_enabled=False,  # bodies carry customer payloads
                tracing_enabled=True,
                metrics_enabled=True,
            ),
        )
        integration = apigw.LambdaIntegration(receiver, proxy=True)
        validator = self.rest_api.add_request_validator(
            # Bodies are opaque (any provider format): no model, so only parameters are checked.
            "Validator",
            validate_request_parameters=True,
            validate_request_body=True,
        )
        inbound = self.rest_api.root.add_resource("in").add_resource("{source_id}")
        self.inbound_method = inbound.add_method(
            "POST",
            integration,
            authorization_type=apigw.AuthorizationType.NONE,
            request_parameters={"method.request.path.source_id": True},
            request_validator=validator,
        )
        # Meta, X, Dropbox and Okta handshake with GET (decision 0038); the receiver answers 405
        # to a GET for any other provider.
        self.inbound_get_method = inbound.add_method(
            "GET",
            integration,
            authorization_type=apigw.AuthorizationType.NONE,
            request_parameters={"method.request.path.source_id": True},
            request_validator=validator,
        )
        v1 = self.rest_api.root.add_resource("v1").add_resource("{proxy+}")
        self.management_method = v1.add_method(
            "ANY",
            apigw.LambdaIntegration(management, proxy=True),
            authorization_type=apigw.AuthorizationType.IAM,
            request_parameters={"method.request.path.proxy": True},
            request_validator=validator,
        )
        self.console_methods: list[apigw.Method] = []
        if console is not None:
            pages = apigw.LambdaIntegration(console, proxy=True)
            for root in PAGE_ROOTS:
                resource = self.rest_api.root.add_resource(root)
                self.console_methods.append(
                    resource.add_method(
                        "ANY", pages, authorization_type=apigw.AuthorizationType.NONE
                    )
                )
                self.console_methods.append(
                    resource.add_resource("{proxy+}").add_method(
                        "ANY",
                        pages,
                        authorization_type=apigw.AuthorizationType.NONE,
                        request_parameters={"method.request.path.proxy": True},
                        request_validator=validator,
                    )
                )
        self.web_acl = (
            self._web_acl(
                infra.waf_rate_limit_per_5min,
                infra.waf_inbound_rate_limit_per_5min,
                infra.waf_inbound_ip_rate_limit_per_5min,
            )
            if waf
            else None
        )
        self._nag(waf)

    def _web_acl(
        self, rate_limit: int, inbound_limit: int, inbound_ip_limit: int
    ) -> wafv2.CfnWebACL:
        """A regional web ACL on the stage with two rate-based rules: inbound webhooks per
        source address *and source path* (a large provider sends from few addresses, to one
        path per source), at a higher limit; everything else per source address."""
        inbound = wafv2.CfnWebACL.StatementProperty(
            byte_match_statement=wafv2.CfnWebACL.ByteMatchStatementProperty(
                field_to_match=wafv2.CfnWebACL.FieldToMatchProperty(uri_path={}),
                positional_constraint="CONTAINS",
                search_string="/in/",
                text_transformations=[
                    wafv2.CfnWebACL.TextTransformationProperty(priority=0, type="NONE")
                ],
            )
        )
        web_acl = wafv2.CfnWebACL(
            self,
            "WebAcl",
            # Named per stack: its BlockedRequests metric is this stack's alone.
            name=f"{resource_prefix(self)}-api",
            scope="REGIONAL",
            default_action=wafv2.CfnWebACL.DefaultActionProperty(allow={}),
            visibility_config=_visibility(f"{resource_prefix(self)}-api"),
            rules=[
                wafv2.CfnWebACL.RuleProperty(
                    name="inbound-rate-per-ip-and-source",
                    priority=0,
                    action=wafv2.CfnWebACL.RuleActionProperty(block={}),
                    statement=wafv2.CfnWebACL.StatementProperty(
                        rate_based_statement=wafv2.CfnWebACL.RateBasedStatementProperty(
                            limit=inbound_limit,
                            aggregate_key_type="CUSTOM_KEYS",
                            custom_keys=[
                                wafv2.CfnWebACL.RateBasedStatementCustomKeyProperty(ip={}),
                                wafv2.CfnWebACL.RateBasedStatementCustomKeyProperty(
                                    uri_path=wafv2.CfnWebACL.RateLimitUriPathProperty(
                                        text_transformations=[
                                            wafv2.CfnWebACL.TextTransformationProperty(
                                                priority=0, type="NONE"
                                            )
                                        ]
                                    )
                                ),
                            ],
                            scope_down_statement=inbound,
                        )
                    ),
                    visibility_config=_visibility("hookline-inbound-rate"),
                ),
                # The rule above is keyed by path too: cycling made-up source ids would slip
                # past it. One address across every source gets a ceiling of its own.
                wafv2.CfnWebACL.RuleProperty(
                    name="inbound-rate-per-ip",
                    priority=2,
                    action=wafv2.CfnWebACL.RuleActionProperty(block={}),
                    statement=wafv2.CfnWebACL.StatementProperty(
                        rate_based_statement=wafv2.CfnWebACL.RateBasedStatementProperty(
                            limit=inbound_ip_limit,
                            aggregate_key_type="IP",
                            scope_down_statement=inbound,
                        )
                    ),
                    visibility_config=_visibility(f"{resource_prefix(self)}-inbound-rate-per-ip"),
                ),
                wafv2.CfnWebACL.RuleProperty(
                    name="rate-per-ip",
                    priority=1,
                    action=wafv2.CfnWebACL.RuleActionProperty(block={}),
                    statement=wafv2.CfnWebACL.StatementProperty(
                        rate_based_statement=wafv2.CfnWebACL.RateBasedStatementProperty(
                            limit=rate_limit,
                            aggregate_key_type="IP",
                            scope_down_statement=wafv2.CfnWebACL.StatementProperty(
                                not_statement=wafv2.CfnWebACL.NotStatementProperty(
                                    statement=inbound
                                )
                            ),
                        )
                    ),
                    visibility_config=_visibility("hookline-rate-per-ip"),
                ),
            ],
        )
        wafv2.CfnWebACLAssociation(
            self,
            "WebAclAssociation",
            resource_arn=self.rest_api.deployment_stage.stage_arn,
            web_acl_arn=web_acl.attr_arn,
        )
        return web_acl

    def _nag(self, waf: bool) -> None:
        for rule in ("AwsSolutions-APIG4", "AwsSolutions-COG4"):
            suppress(
                self.inbound_method,
                rule,
                "Inbound webhooks authenticate by the provider's HMAC signature over the raw "
                "body, verified by the receiver; providers cannot sign SigV4 or Cognito tokens.",
            )
            suppress(
                self.inbound_get_method,
                rule,
                "A provider's GET handshake (Meta, X, Dropbox, Okta) carries its verify token or "
                "signed challenge, checked by the receiver; providers cannot sign SigV4.",
            )
        for method in self.console_methods:
            for rule in ("AwsSolutions-APIG4", "AwsSolutions-COG4"):
                suppress(method, rule, PAGES_AUTH_REASON)
        suppress(
            self.management_method,
            "AwsSolutions-COG4",
            "The management API uses IAM (SigV4) authorization: callers are AWS principals.",
        )
        suppress(
            self.rest_api,
            "AwsSolutions-IAM4",
            "API Gateway's account-level CloudWatch role uses the AWS managed "
            "AmazonAPIGatewayPushToCloudWatchLogs policy, the documented setup.",
            [
                "Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
                "AmazonAPIGatewayPushToCloudWatchLogs"
            ],
        )
        if not waf:
            suppress(
                self.rest_api,
                "AwsSolutions-APIG3",
                "WAF is a config switch (infrastructure.waf_enabled); off in this deployment "
                "(LocalStack has no WAF, or the operator fronts the API otherwise).",
            )

    @property
    def inbound_url(self) -> str:
        """The base URL providers post to: `<url>in/<source_id>`."""
        return self.rest_api.url_for_path("/in")

    @property
    def url(self) -> str:
        """The stage's base URL."""
        return self.rest_api.url

    @property
    def console_base(self) -> str:
        """The console's base URL (`<base>/console`), from the API's id and the stage's name
        alone: the user pool's app client lists it, and the console function (whose routes
        the stage's deployment depends on) reads the client's id."""
        return Fn.join(
            "",
            ["https://", self.rest_api.rest_api_id, ".execute-api.", Aws.REGION, ".",
             Aws.URL_SUFFIX, "/", STAGE],
        )  # fmt: skip

    @property
    def management_arn(self) -> str:
        """execute-api ARN of the stage (grant `<arn>/<method>/v1/*`)."""
        return self.rest_api.arn_for_execute_api(stage=self.rest_api.deployment_stage.stage_name)

    @property
    def metrics(self) -> FrontMetrics:
        """The REST API's request and error counts."""
        api = self.rest_api
        return FrontMetrics(
            api.metric_count(period=PERIOD),
            api.metric_client_error(period=PERIOD),
            api.metric_server_error(period=PERIOD, statistic="Sum"),
            access_logs=self.access_logs,
            inbound_filters=({"Match": "$.resource", "In": ["/in/{source_id}"]},),
            web_acl_name=self.web_acl.name if self.web_acl is not None else None,
        )


def _visibility(metric_name: str) -> wafv2.CfnWebACL.VisibilityConfigProperty:
    return wafv2.CfnWebACL.VisibilityConfigProperty(
        cloud_watch_metrics_enabled=True,
        metric_name=metric_name,
        sampled_requests_enabled=True,
    )
