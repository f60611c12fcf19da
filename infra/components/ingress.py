"""The front door other than the REST API (`infrastructure.ingress`, docs/decisions/0035).

* `http` — an API Gateway HTTP API: `POST /in/{source_id}` open to the receiver, `ANY
  /v1/{proxy+}` behind IAM to the management API, payload format 2.0, stage throttling and a
  JSON access log; $1.00 per million requests, no WAF.
* `function_url` — Lambda function URLs: the receiver's open (the provider's signature is the
  auth; its reserved concurrency is the throttle), the management API's behind IAM, the
  console's open (it signs its users in, decision 0053); no request fee, no WAF, no access
  log.

Each exposes what the stack and the monitoring need: `url`, `inbound_url`, `management_arn`
and `metrics` (requests, 4xx, 5xx), as the REST API (`infra.components.api.Api`) does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import jsii
from aws_cdk import Aws, Duration, Fn, RemovalPolicy, Stack
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_apigatewayv2 as apigwv2
from aws_cdk import aws_cloudwatch as cw
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk.aws_apigatewayv2_authorizers import HttpIamAuthorizer
from aws_cdk.aws_apigatewayv2_integrations import HttpLambdaIntegration
from constructs import Construct

from hookline.config import HooklineConfig
from infra.components.logging import retention
from infra.nag import suppress

PERIOD = Duration.minutes(5)
PAGE_ROOTS = ("console", "portal")  # the console function's pages (hookline.console)
PAGES_AUTH_REASON = (
    "The console signs operators in itself through the Cognito hosted UI (a verified ID token "
    "becomes its own session cookie, decision 0053) and the portal through signed portal "
    "links: browsers cannot sign SigV4, and a Cognito authorizer reads a bearer header, not "
    "a cookie."
)
HTTP_ACCESS_LOG_FIELDS = {
    "requestId": "$context.requestId",
    "requestTime": "$context.requestTimeEpoch",
    "ip": "$context.identity.sourceIp",
    "userAgent": "$context.identity.userAgent",
    "caller": "$context.identity.userArn",
    "method": "$context.httpMethod",
    "route": "$context.routeKey",
    "path": "$context.path",
    "status": "$context.status",
    "responseLength": "$context.responseLength",
    "responseLatency": "$context.responseLatency",
    "integrationLatency": "$context.integrationLatency",
    "integrationStatus": "$context.integrationStatus",
    "error": "$context.error.message",
}


@dataclass(frozen=True)
class FrontMetrics:
    """Requests, 4xx and 5xx of the front door, for the dashboard and the 5xx alarm."""

    requests: cw.Metric
    client_errors: cw.Metric
    server_errors: cw.Metric
    # The access log and the JSON filters that pick inbound requests out of it: a Contributor
    # Insights rule counts rejections per source path (none behind function URLs: no log).
    access_logs: logs.ILogGroup | None = None
    inbound_filters: tuple[dict[str, object], ...] = ()
    web_acl_name: str | None = None  # the REST API's web ACL (its BlockedRequests alarm)


class HttpIngress(Construct):
    """An HTTP API in front of the receiver and the management API."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: HooklineConfig,
        receiver: lambda_.IFunction,
        management: lambda_.IFunction,
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
        self.http_api = apigwv2.HttpApi(
            self,
            "HttpApi",
            api_name=f"{Stack.of(self).stack_name}-api",
            description="Hookline: inbound webhooks (/in) and the management API (/v1)",
            create_default_stage=False,
        )
        self.stage = apigwv2.HttpStage(
            self,
            "Stage",
            http_api=self.http_api,
            auto_deploy=True,
            throttle=apigwv2.ThrottleSettings(
                rate_limit=infra.api_throttle_rate_per_second,
                burst_limit=infra.api_throttle_burst,
            ),
            access_log_settings=AccessLogs(
                apigwv2.LogGroupLogDestination(self.access_logs),
                apigw.AccessLogFormat.custom(json.dumps(HTTP_ACCESS_LOG_FIELDS)),
            ),
        )
        v2 = apigwv2.PayloadFormatVersion.VERSION_2_0
        self.inbound_routes = self.http_api.add_routes(
            path="/in/{source_id}",
            # GET: the verification handshakes of Meta, X, Dropbox and Okta.
            methods=[apigwv2.HttpMethod.POST, apigwv2.HttpMethod.GET],
            integration=HttpLambdaIntegration("Receiver", receiver, payload_format_version=v2),
        )
        self.management_routes = self.http_api.add_routes(
            path="/v1/{proxy+}",
            methods=[apigwv2.HttpMethod.ANY],
            integration=HttpLambdaIntegration("Management", management, payload_format_version=v2),
            authorizer=HttpIamAuthorizer(),
        )
        for route in self.inbound_routes:
            suppress(
                route,
                "AwsSolutions-APIG4",
                "Inbound webhooks authenticate by the provider's HMAC signature over the raw "
                "body, verified by the receiver; providers cannot sign SigV4.",
            )
        self.console_routes: list[apigwv2.HttpRoute] = []
        if console is not None:
            # Payload 1.0: the console's resolver is REST-shaped (cookies in the Cookie header,
            # multi-value Set-Cookie); `$default` stage, so no prefix in the browser's paths.
            pages = HttpLambdaIntegration(
                "Console", console, payload_format_version=apigwv2.PayloadFormatVersion.VERSION_1_0
            )
            for path in ("/console", "/console/{proxy+}", "/portal", "/portal/{proxy+}"):
                self.console_routes += self.http_api.add_routes(
                    path=path, methods=[apigwv2.HttpMethod.ANY], integration=pages
                )
            for route in self.console_routes:
                suppress(route, "AwsSolutions-APIG4", PAGES_AUTH_REASON)

    @property
    def url(self) -> str:
        """The stage's base URL."""
        url = self.stage.url
        assert url is not None
        return url

    @property
    def inbound_url(self) -> str:
        """`<url>in`."""
        return f"{self.url}in"

    @property
    def console_base(self) -> str:
        """The console's base URL (`<base>/console`), from the API's id alone (see
        `Api.console_base`)."""
        return Fn.join(
            "", ["https://", self.http_api.api_id, ".execute-api.", Aws.REGION, ".", Aws.URL_SUFFIX]
        )

    @property
    def management_arn(self) -> str:
        """execute-api ARN of the API (grant `<arn>/*/*/v1/*`)."""
        return self.http_api.arn_for_execute_api()

    @property
    def metrics(self) -> FrontMetrics:
        """The HTTP API's request and error counts."""
        api = self.http_api
        return FrontMetrics(
            api.metric_count(period=PERIOD, statistic="Sum"),
            api.metric_client_error(period=PERIOD, statistic="Sum"),
            api.metric_server_error(period=PERIOD, statistic="Sum"),
            access_logs=self.access_logs,
            inbound_filters=({"Match": "$.path", "StartsWith": ["/in/"]},),
        )


class FunctionUrlIngress(Construct):
    """Function URLs: the receiver's open, the management API's behind IAM."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        receiver: lambda_.Function,
        management: lambda_.Function,
        console: lambda_.Function | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        self.receiver = receiver
        self.inbound = receiver.add_function_url(auth_type=lambda_.FunctionUrlAuthType.NONE)
        self.management = management.add_function_url(auth_type=lambda_.FunctionUrlAuthType.AWS_IAM)
        # The console's own URL, open: it signs operators in and reads portal sessions itself.
        self.console = (
            console.add_function_url(auth_type=lambda_.FunctionUrlAuthType.NONE)
            if console is not None
            else None
        )

    @property
    def url(self) -> str:
        """The management API's function URL (`<url>v1/...`, SigV4 for service `lambda`)."""
        return self.management.url

    @property
    def inbound_url(self) -> str:
        """`<receiver URL>in`."""
        return f"{self.inbound.url}in"

    @property
    def console_base(self) -> str:
        """The console function URL's origin (`https://<id>.lambda-url.<region>.on.aws`)."""
        if self.console is None:
            raise ValueError("no console function URL")
        return Fn.join("", ["https://", Fn.select(2, Fn.split("/", self.console.url))])

    @property
    def management_arn(self) -> str:
        """The management function: grant lambda:InvokeFunctionUrl on it."""
        return self.management.function_arn

    @property
    def metrics(self) -> FrontMetrics:
        """The receiver's function URL request and error counts (Lambda's Url* metrics)."""

        def metric(name: str) -> cw.Metric:
            return cw.Metric(
                namespace="AWS/Lambda",
                metric_name=name,
                dimensions_map={"FunctionName": self.receiver.function_name},
                period=PERIOD,
                statistic="Sum",
            )

        return FrontMetrics(
            metric("UrlRequestCount"),
            metric("Url4xxCount"),
            metric("Url5xxCount"),
        )


@jsii.implements(apigwv2.IAccessLogSettings)
class AccessLogs:
    """The HTTP stage's access log: where, and in which format."""

    def __init__(
        self, destination: apigwv2.IAccessLogDestination, log_format: apigw.AccessLogFormat
    ) -> None:
        self._destination = destination
        self._format = log_format

    @property
    def destination(self) -> apigwv2.IAccessLogDestination:
        """The log group."""
        return self._destination

    @property
    def format(self) -> apigw.AccessLogFormat:
        """The JSON line."""
        return self._format
