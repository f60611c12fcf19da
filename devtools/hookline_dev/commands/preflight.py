"""`hookline preflight`: will `cdk deploy` fit this account? Run it before deploying.

It reads, with the usual credential chain (boto3), what the stack's configuration needs and
what the account has left — the region (does it have every service the stack uses?), the
alarm destination (is anyone told?), Lambda concurrency (reserved concurrency must leave 100
unreserved), Elastic IPs for the NAT gateways, a VPC, a database instance, the console's
Cognito hosted-UI domain prefix (unique in the region across every account) — and prints what
to change or which quota to request. Exit 1 when the deploy would fail.

On an update, what the stack itself already holds (its functions' reservations, its Elastic
IPs and VPC, tagged with its name by CloudFormation) is counted as available to it.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from hookline.config import HooklineConfig, load_config, supported_regions
from hookline_dev.terminal import Outcome

if TYPE_CHECKING:
    from hookline_dev.cli import Runtime

LAMBDA_MIN_UNRESERVED = 100  # Lambda keeps this much concurrency unreserved
DEFAULT_EIP_QUOTA = 5
DEFAULT_VPC_QUOTA = 5
DEFAULT_DB_INSTANCE_QUOTA = 40
STACK_TAG = "aws:cloudformation:stack-name"
# Cognito's rule for a hosted-UI domain prefix: lowercase letters, digits and hyphens, not
# starting or ending with a hyphen, at most 63, and none of its reserved words.
DOMAIN_PREFIX = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
RESERVED_IN_PREFIX = ("aws", "amazon", "cognito")


@dataclass(frozen=True)
class Check:
    """One quota against what the stack needs of it."""

    name: str
    needed: int
    available: int | None  # None: could not be read
    ok: bool
    advice: str


def reserved_concurrency(config: HooklineConfig) -> int:
    """Reserved concurrency the stack sets: each deliver function its group's cap, fan-out
    its reservation, reconcile and migrate one each, and behind function URLs the receiver
    and the console their throttles (infra/components); none with `reserve_concurrency:
    false`."""
    infra = config.infrastructure
    if not infra.reserve_concurrency:
        return 0
    deliver = sum(g.max_concurrency for g in config.tenant_groups)
    urls = infra.ingress == "function_url"
    receiver = (
        infra.receiver_reserved_concurrency + infra.console_reserved_concurrency if urls else 0
    )
    return deliver + infra.fanout_reserved_concurrency + 2 + receiver


def check_lambda(lambda_: Any, config: HooklineConfig, stack: str) -> Check:
    """Unreserved concurrency after the stack's reservations must stay at 100 or more."""
    needed = reserved_concurrency(config)
    limits = lambda_.get_account_settings()["AccountLimit"]
    total = int(limits["ConcurrentExecutions"])
    unreserved = int(limits["UnreservedConcurrentExecutions"])
    own = _own_reservations(lambda_, stack)
    available = unreserved + own - LAMBDA_MIN_UNRESERVED
    # Nothing reserved: Lambda's unreserved minimum does not apply.
    ok = needed == 0 or available >= needed
    advice = (
        (
            "fits"
            if needed
            else f"nothing reserved: the tenant groups share the account's {total} without a "
            "guaranteed share (set infrastructure.reserve_concurrency back to true once the "
            "quota is raised)"
        )
        if ok
        else f"the account's Lambda concurrency is {total} with {total - unreserved - own} "
        f"reserved by others; the stack reserves {needed} and Lambda keeps "
        f"{LAMBDA_MIN_UNRESERVED} unreserved: request a 'Concurrent executions' quota "
        f"(Service Quotas, Lambda, L-B99A9384) of at least "
        f"{total + needed - available}; to deploy now, set infrastructure.reserve_concurrency "
        f"to false (each tenant group stays capped by its queue's MaximumConcurrency, without "
        f"a guaranteed share; docs/operations.md, 'Concurrency') and set it back to true once "
        f"the quota is raised"
    )
    return Check("lambda reserved concurrency", needed, available, ok, advice)


def check_elastic_ips(ec2: Any, config: HooklineConfig, stack: str) -> Check:
    """One Elastic IP per NAT gateway."""
    needed = config.infrastructure.nat_gateways
    attributes = ec2.describe_account_attributes(AttributeNames=["vpc-max-elastic-ips"])
    quota = DEFAULT_EIP_QUOTA
    for attribute in attributes["AccountAttributes"]:
        if attribute["AttributeName"] == "vpc-max-elastic-ips":
            quota = int(attribute["AttributeValues"][0]["AttributeValue"])
    used = [a for a in ec2.describe_addresses()["Addresses"] if not _tagged(a, stack)]
    available = quota - len(used)
    ok = available >= needed
    advice = (
        "fits"
        if ok
        else f"{len(used)} of {quota} Elastic IPs are in use and the stack's NAT gateways "
        f"need {needed}: release unused addresses, request an 'EC2-VPC Elastic IPs' quota "
        f"(Service Quotas, EC2, L-0263D0A3) of at least {len(used) + needed}, or set "
        f"infrastructure.nat_gateways to 1"
    )
    return Check("elastic ips (nat gateways)", needed, available, ok, advice)


def check_vpcs(ec2: Any, quotas: Any, stack: str) -> Check:
    """The stack creates one VPC."""
    quota = _quota(quotas, "vpc", "L-F678F1CE", DEFAULT_VPC_QUOTA)
    used = [v for v in ec2.describe_vpcs()["Vpcs"] if not _tagged(v, stack)]
    available = quota - len(used)
    ok = available >= 1
    advice = (
        "fits"
        if ok
        else f"{len(used)} of {quota} VPCs exist in this region: delete one or request a "
        f"'VPCs per Region' quota (Service Quotas, VPC, L-F678F1CE) of at least {len(used) + 1}"
    )
    return Check("vpcs", 1, available, ok, advice)


def check_db_instances(rds: Any, stack: str) -> Check:
    """The stack creates one RDS instance."""
    quota, used = DEFAULT_DB_INSTANCE_QUOTA, None
    try:
        for entry in rds.describe_account_attributes()["AccountQuotas"]:
            if entry["AccountQuotaName"] == "DBInstances":
                quota, used = int(entry["Max"]), int(entry["Used"])
    except Exception:  # not answered (an emulator): count the instances against the default
        used = None
    if used is None:
        used = len(rds.describe_db_instances()["DBInstances"])
    available = quota - used
    ok = available >= 1
    advice = (
        "fits"
        if ok
        else f"{used} of {quota} RDS DB instances exist: request a 'DB instances' quota "
        f"(Service Quotas, RDS, L-7B6409FD) of at least {used + 1}"
    )
    return Check("rds db instances", 1, available, ok, advice)


def check_cognito_domain(cognito: Any, account: str, config: HooklineConfig, stack: str) -> Check:
    """The operators' hosted UI needs its domain prefix (`console.cognito_domain_prefix`, else
    `<stack>-<account>`, as infra/components/console.py names it) free in the region, or
    already this stack's own (an update)."""
    prefix = config.console.cognito_domain_prefix or f"{stack.lower()}-{account}"
    reserved = [w for w in RESERVED_IN_PREFIX if w in prefix]
    if not DOMAIN_PREFIX.match(prefix) or reserved:
        why = f"contains {reserved[0]!r}" if reserved else "is not lowercase letters, digits, -"
        advice = (
            f"the hosted UI's domain prefix {prefix!r} {why}: set console.cognito_domain_prefix"
        )
        return Check("cognito hosted-ui domain", 1, 0, False, advice)
    found = cognito.describe_user_pool_domain(Domain=prefix).get("DomainDescription") or {}
    pool_id = found.get("UserPoolId")
    # This stack's own: a pool this account can read, named as the stack names its pool
    own = bool(pool_id) and _pool_name(cognito, str(pool_id)) == f"{stack}-operators"
    ok = not pool_id or own
    advice = (
        ("fits (this stack's own)" if own else "fits")
        if ok
        else f"the hosted UI's domain prefix {prefix!r} is taken in this region (prefixes are "
        "unique across accounts): set console.cognito_domain_prefix to another"
    )
    return Check("cognito hosted-ui domain", 1, 1 if ok else 0, ok, advice)


def check_region(region: str, config: HooklineConfig) -> Check:
    """The region has every service the stack uses (`hookline.config.supported_regions`; the
    template's own rule refuses the others before CloudFormation creates anything)."""
    regions = supported_regions(config)
    ok = region in regions
    why = (
        " with infrastructure.ingress function_url"
        if config.infrastructure.ingress == ("function_url")
        else ""
    )
    advice = (
        "supported"
        if ok
        else f"{region} lacks a service the stack uses{why}: deploy to one of "
        f"{', '.join(regions)} (docs/operations.md, 'Regions')"
    )
    return Check(f"region {region}", 1, 1 if ok else 0, ok, advice)


def check_alarm_destination(sns: Any, config: HooklineConfig) -> Check:
    """Someone is told: an alarm e-mail, an existing topic this account can publish to, or a
    chat webhook. Without one the alarms fire into a topic nobody reads."""
    infra = config.infrastructure
    destinations = [
        d for d in (infra.alarm_email, infra.alarm_topic_arn, infra.alarm_chat_webhook_url) if d
    ]
    if infra.alarm_topic_arn:
        try:
            sns.get_topic_attributes(TopicArn=infra.alarm_topic_arn)
        except Exception:  # missing, another region, or not ours to read
            return Check(
                "alarm destination", 1, 0, False,
                f"infrastructure.alarm_topic_arn {infra.alarm_topic_arn} cannot be read from "
                "this account and region: create it, or fix the ARN",
            )  # fmt: skip
    if infra.alarm_chat_webhook_url and not infra.alarm_chat_webhook_url.startswith("https://"):
        return Check(
            "alarm destination", 1, 0, False,
            "infrastructure.alarm_chat_webhook_url must be an https:// URL",
        )  # fmt: skip
    ok = bool(destinations)
    advice = (
        "alarms go to " + ", ".join(destinations)
        if ok
        else "no alarm reaches anyone: set infrastructure.alarm_email (confirm the e-mail SNS "
        "sends), infrastructure.alarm_topic_arn (an existing SNS topic) or "
        "infrastructure.alarm_chat_webhook_url"
    )
    return Check("alarm destination", 1, len(destinations), ok, advice)


def preflight(
    clients: Any, config: HooklineConfig, stack: str, region: str | None = None
) -> list[Check]:
    """Every check; `clients(service)` returns a boto3 client."""
    ec2 = clients("ec2")
    account = str(clients("sts").get_caller_identity()["Account"])
    region = region or str(ec2.meta.region_name)
    return [
        check_region(region, config),
        check_alarm_destination(clients("sns"), config),
        check_lambda(clients("lambda"), config, stack),
        check_elastic_ips(ec2, config, stack),
        check_vpcs(ec2, clients("service-quotas"), stack),
        check_db_instances(clients("rds"), stack),
        check_cognito_domain(clients("cognito-idp"), account, config, stack),
    ]


def _pool_name(cognito: Any, pool_id: str) -> str | None:
    try:
        return str(cognito.describe_user_pool(UserPoolId=pool_id)["UserPool"]["Name"])
    except Exception:  # not readable from here: someone else's
        return None


def _own_reservations(lambda_: Any, stack: str) -> int:
    # CloudFormation names the stack's functions "<stack>-<logical id>-<suffix>".
    own = 0
    for page in lambda_.get_paginator("list_functions").paginate():
        for fn in page["Functions"]:
            if fn["FunctionName"].startswith(f"{stack}-"):
                answer = lambda_.get_function_concurrency(FunctionName=fn["FunctionName"])
                own += int(answer.get("ReservedConcurrentExecutions") or 0)
    return own


def _tagged(resource: dict[str, Any], stack: str) -> bool:
    return any(t["Key"] == STACK_TAG and t["Value"] == stack for t in resource.get("Tags", []))


def _quota(quotas: Any, service: str, code: str, default: int) -> int:
    try:
        answer = quotas.get_service_quota(ServiceCode=service, QuotaCode=code)
    except Exception:  # no Service Quotas access: AWS's default
        return default
    return int(answer["Quota"]["Value"])


def cmd_preflight(args: argparse.Namespace, rt: Runtime) -> Any:
    """Run the checks; exit 1 if any fails."""
    from hookline.aws import client

    config = load_config(args.config) if args.config else rt.settings.config
    checks = preflight(lambda service: client(service, rt.settings), config, args.stack)
    code = 0 if all(c.ok for c in checks) else 1
    if args.json:
        return Outcome({"ok": code == 0, "checks": [asdict(c) for c in checks]}, code)
    lines = [
        f"{'ok  ' if c.ok else 'FAIL'}  {c.name}: needs {c.needed}, available "
        f"{'unknown' if c.available is None else c.available} — {c.advice}"
        for c in checks
    ]
    verdict = "the deploy fits" if code == 0 else "the deploy would fail: see FAIL above"
    return Outcome("\n".join([*lines, verdict]), code)


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add `preflight`."""
    p = sub.add_parser(
        "preflight",
        parents=[common],
        help="check the account's quotas against the configuration before cdk deploy",
    )
    p.add_argument("--stack", default="Hookline", help="the stack's name (default Hookline)")
    p.add_argument("--config", help="hookline.json to check (default: the configured one)")
    p.set_defaults(func=cmd_preflight)
