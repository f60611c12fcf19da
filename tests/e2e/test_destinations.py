"""The receiver-to-destination path through a real `hookline dev` (issue 18): a signed
inbound webhook to a source, fan-out, and delivery into a customer's SQS queue through the
role the customer deployed from `hookline endpoints role-template` (a CloudFormation stack on
the stack's moto); the test reads the message and verifies its Standard Webhooks attributes
with the independent `standardwebhooks` package. The customer's queue is in another account
than the one moto gives Hookline's own credentials, so it is reachable only with the
credentials of an AssumeRole of the customer's role (moto maps them to the role's account; it
does not evaluate trust policies or the ExternalId)."""

from __future__ import annotations

import json
import uuid
from typing import Any

import boto3
import httpx
import pytest
from standardwebhooks.webhooks import Webhook

from tests.e2e.conftest import Stack, wait_until
from tests.support.signers import standard_headers

pytestmark = pytest.mark.e2e

SOURCE_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
# Hookline's deliver role as the customer's template trusts it (moto's default account)
DELIVER_ROLE = "arn:aws:iam::123456789012:role/hookline-deliver-standard"
CUSTOMER_ACCOUNT = "111122223333"


def customer(stack: Stack, service: str) -> Any:
    """A client in the customer's account on the stack's emulator (moto serves an account to
    the credentials of a role assumed in it)."""
    region = stack.state.aws_region
    sts = boto3.client(
        "sts", endpoint_url=stack.state.aws_endpoint_url, region_name=region,
        aws_access_key_id="testing", aws_secret_access_key="testing",
    )  # fmt: skip
    creds = sts.assume_role(
        RoleArn=f"arn:aws:iam::{CUSTOMER_ACCOUNT}:role/admin", RoleSessionName="customer"
    )["Credentials"]
    return boto3.client(
        service, endpoint_url=stack.state.aws_endpoint_url, region_name=region,
        aws_access_key_id=creds["AccessKeyId"], aws_secret_access_key=creds["SecretAccessKey"],
        aws_session_token=creds["SessionToken"],
    )  # fmt: skip


def deploy_role(stack: Stack, tenant: str, queue_arn: str) -> str:
    """What the customer does: print the template, deploy it, read its RoleArn output."""
    template = stack.cli(
        "endpoints", "role-template", "--tenant", tenant, "--kind", "sqs",
        "--target", queue_arn, "--hookline-role", DELIVER_ROLE,
    )  # fmt: skip
    cloudformation = customer(stack, "cloudformation")
    name = f"hookline-role-{uuid.uuid4().hex[:8]}"
    cloudformation.create_stack(
        StackName=name, TemplateBody=json.dumps(template), Capabilities=["CAPABILITY_NAMED_IAM"]
    )
    # moto creates the stack at once; LocalStack (make test-localstack) in the background
    cloudformation.get_waiter("stack_create_complete").wait(
        StackName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 60}
    )
    [deployed] = cloudformation.describe_stacks(StackName=name)["Stacks"]
    outputs = {o["OutputKey"]: o["OutputValue"] for o in deployed["Outputs"]}
    return outputs["RoleArn"]


def test_a_signed_inbound_webhook_arrives_in_the_customers_queue_signed(stack: Stack) -> None:
    # Given a tenant with a Standard Webhooks source, and a queue in the customer's account
    # reached through the role they deployed from Hookline's template
    tenant = stack.tenant(name="e2e-destinations")
    path = stack.source(tenant, "standard", SOURCE_SECRET)
    sqs = customer(stack, "sqs")
    url = sqs.create_queue(QueueName=f"orders-{uuid.uuid4().hex[:8]}")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    assert f":{CUSTOMER_ACCOUNT}:" in arn
    role_arn = deploy_role(stack, tenant, arn)
    assert role_arn.startswith(f"arn:aws:iam::{CUSTOMER_ACCOUNT}:role/hookline-delivery-")
    iam_role = customer(stack, "iam").get_role(RoleName=role_arn.rsplit("/", 1)[1])["Role"]
    [trust] = iam_role["AssumeRolePolicyDocument"]["Statement"]
    external_id = trust["Condition"]["StringEquals"]["sts:ExternalId"]
    endpoint = stack.cli(
        "endpoints", "add", "--tenant", tenant, "--kind", "sqs", "--target", arn,
        "--role-arn", role_arn,
    )  # fmt: skip
    assert endpoint["external_id"] == external_id
    # When the provider POSTs a signed webhook to the source
    body = json.dumps({"type": "invoice.paid", "data": {"amount": 42}}).encode()
    answer = httpx.post(
        stack.url + path, content=body,
        headers=standard_headers(SOURCE_SECRET, body, f"msg_{uuid.uuid4().hex}"),
    )  # fmt: skip
    assert answer.status_code == 200, answer.text
    event_id = answer.json()["id"]
    # Then it is fanned out and delivered into the queue
    [delivery] = wait_until(
        lambda: [d for d in stack.deliveries(event_id=event_id) if d["state"] == "delivered"],
        what="the delivery to the queue",
    )
    [attempt] = stack.attempts(delivery["id"])
    assert attempt["status_code"] == 200
    messages = sqs.receive_message(
        QueueUrl=url, MessageAttributeNames=["All"], WaitTimeSeconds=2, MaxNumberOfMessages=10
    )["Messages"]
    # Once, with the exact bytes, signed for the endpoint, webhook-id = the delivery
    [message] = messages
    assert message["Body"].encode() == body
    headers = {k: v["StringValue"] for k, v in message["MessageAttributes"].items()}
    Webhook(endpoint["secret"]).verify(message["Body"].encode(), headers)
    assert headers["webhook-id"] == delivery["id"]
