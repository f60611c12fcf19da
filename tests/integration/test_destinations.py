"""AWS destination kinds end to end against moto: STS AssumeRole with the tenant's
ExternalId, then SQS (standard and FIFO), SNS, EventBridge (a rule forwarding to a queue),
Kinesis and S3; every message verifiable with an independent Standard Webhooks library
(decision 0046)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from standardwebhooks.webhooks import Webhook

import hookline
from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.errors import BadRequest
from hookline.settings import get_settings
from tests.support import customer_aws, operator
from tests.support.aws import REGION
from tests.support.customer_aws import ACCOUNT, ROLE, attributes

pytestmark = pytest.mark.integration


@pytest.fixture
def aws(moto_endpoint: str):
    return lambda service: customer_aws.client(moto_endpoint, service)


def tenant(db: Database) -> dict[str, Any]:
    return operator.add_tenant(db, HooklineConfig(), name="acme", group="standard")


def add(db: Database, tenant_id: str, kind: str, target: str, **options: Any) -> dict[str, Any]:
    return operator.add_endpoint(
        db, get_settings(), tenant_id=tenant_id, url=None, kind=kind, target=target,
        role_arn=ROLE, **options,
    )  # fmt: skip


def publish(db: Database, tenant_id: str, payload: dict[str, Any]) -> str:
    with db.connection() as conn, conn.transaction():
        return hookline.publish(conn, tenant_id=tenant_id, type="order.paid", payload=payload).id


def queue(aws: Any, name: str, **attributes: str) -> tuple[str, str]:
    return customer_aws.queue(aws("sqs"), name, **attributes)


def received(aws: Any, url: str) -> list[dict[str, Any]]:
    return customer_aws.received(aws("sqs"), url)


def test_an_event_arrives_in_a_standard_and_a_fifo_queue_signed(pipeline, db, aws):
    # Given a tenant with a standard queue and a FIFO queue, grouped by customer
    t = tenant(db)
    standard_url, standard_arn = queue(aws, "orders")
    fifo_url, fifo_arn = queue(aws, "orders.fifo", FifoQueue="true")
    standard = add(db, t["id"], "sqs", standard_arn)
    fifo = add(
        db, t["id"], "sqs", fifo_arn, destination={"message_group_path": "$.payload.customer"}
    )
    assert standard["external_id"] == t_external_id(db, t["id"])
    # When an event is published and delivered
    publish(db, t["id"], {"customer": "cus_1", "amount": 5})
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 2})
    # Then each queue holds it once, with signature attributes that verify
    for url, ep in ((standard_url, standard), (fifo_url, fifo)):
        [message] = received(aws, url)
        assert json.loads(message["Body"]) == {"customer": "cus_1", "amount": 5}
        headers = attributes(message)
        Webhook(ep["secret"]).verify(message["Body"].encode(), headers)
    # And the FIFO message is grouped by the payload path and deduplicated by webhook-id
    assert message["Attributes"]["MessageGroupId"] == "cus_1"
    assert message["Attributes"]["MessageDeduplicationId"] == attributes(message)["webhook-id"]


def t_external_id(db: Database, tenant_id: str) -> str:
    with db.connection() as conn:
        row = conn.execute("SELECT external_id FROM tenants WHERE id = %s", (tenant_id,)).fetchone()
    assert row is not None and row["external_id"].startswith("hkl-")
    return str(row["external_id"])


def test_sns_eventbridge_kinesis_and_s3_receive_it_signed(pipeline, db, aws):
    t = tenant(db)
    # SNS topic -> queue (raw delivery keeps the attributes); EventBridge bus -> rule -> queue
    sns_url, sns_queue = queue(aws, "from-sns")
    topic = aws("sns").create_topic(Name="orders")["TopicArn"]
    aws("sns").subscribe(
        TopicArn=topic, Protocol="sqs", Endpoint=sns_queue,
        Attributes={"RawMessageDelivery": "true"},
    )  # fmt: skip
    bus_url, bus_queue = queue(aws, "from-bus")
    bus = aws("events").create_event_bus(Name="customer-bus")["EventBusArn"]
    aws("events").put_rule(
        Name="all", EventBusName="customer-bus",
        EventPattern=json.dumps({"source": ["acme.hookline"]}),
    )  # fmt: skip
    aws("events").put_targets(
        Rule="all", EventBusName="customer-bus", Targets=[{"Id": "q", "Arn": bus_queue}]
    )
    aws("kinesis").create_stream(StreamName="orders", ShardCount=1)
    stream = aws("kinesis").describe_stream(StreamName="orders")["StreamDescription"]["StreamARN"]
    aws("s3").create_bucket(Bucket="acme-events")
    endpoints = {
        "sns": add(db, t["id"], "sns", topic),
        "eventbridge": add(
            db, t["id"], "eventbridge", bus, destination={"source": "acme.hookline"}
        ),
        "kinesis": add(
            db, t["id"], "kinesis", stream, destination={"partition_key_path": "$.payload.customer"}
        ),
        "s3": add(db, t["id"], "s3", "arn:aws:s3:::acme-events", destination={"prefix": "in/"}),
    }
    publish(db, t["id"], {"customer": "cus_9", "amount": 7})
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 4})
    body = {"customer": "cus_9", "amount": 7}
    # SNS: the message and its attributes
    [message] = received(aws, sns_url)
    Webhook(endpoints["sns"]["secret"]).verify(message["Body"].encode(), attributes(message))
    assert json.loads(message["Body"]) == body
    # EventBridge: detail-type = event type, source configured, signature in the metadata
    [message] = received(aws, bus_url)
    event = json.loads(message["Body"])
    assert (event["detail-type"], event["source"]) == ("order.paid", "acme.hookline")
    detail = event["detail"]
    Webhook(endpoints["eventbridge"]["secret"]).verify(detail["body"].encode(), detail["metadata"])
    assert detail["data"] == body
    # Kinesis: the envelope, keyed by the payload path
    kinesis = aws("kinesis")
    shard = kinesis.describe_stream(StreamName="orders")["StreamDescription"]["Shards"][0]
    iterator = kinesis.get_shard_iterator(
        StreamName="orders", ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
    )["ShardIterator"]
    [record] = kinesis.get_records(ShardIterator=iterator)["Records"]
    assert record["PartitionKey"] == "cus_9"
    envelope = json.loads(record["Data"])
    Webhook(endpoints["kinesis"]["secret"]).verify(envelope["body"].encode(), envelope["headers"])
    # S3: one object per delivery, signature as object metadata
    [listed] = aws("s3").list_objects_v2(Bucket="acme-events", Prefix="in/")["Contents"]
    stored = aws("s3").get_object(Bucket="acme-events", Key=listed["Key"])
    data = stored["Body"].read()
    Webhook(endpoints["s3"]["secret"]).verify(data, stored["Metadata"])
    assert listed["Key"] == f"in/{stored['Metadata']['webhook-id']}"


def test_a_missing_target_fails_the_delivery_with_the_aws_reason(pipeline, db, aws):
    t = tenant(db)
    add(db, t["id"], "sqs", f"arn:aws:sqs:{REGION}:{ACCOUNT}:no-such-queue")
    event_id = publish(db, t["id"], {"n": 1})
    pipeline.run_until(lambda: pipeline.states() == {"failed": 1})
    delivery = pipeline.delivery(event_id=event_id)
    [attempt] = pipeline.attempts(delivery["id"])
    assert "NonExistentQueue" in attempt["error_class"]


def test_replay_resends_to_the_queue_with_the_same_webhook_id(pipeline, db, aws):
    t = tenant(db)
    url, arn = queue(aws, "replayed")
    ep = add(db, t["id"], "sqs", arn)
    event_id = publish(db, t["id"], {"n": 1})
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    [first] = received(aws, url)
    delivery = pipeline.delivery(event_id=event_id)
    from hookline.management import delivery_service
    from hookline.replay import run_replay
    from hookline.runtime import delivery_queues, replay_options

    settings = get_settings()
    resent = delivery_service.resend_delivery(
        db, operator.OPERATOR, delivery["id"],
        lambda doc: run_replay(db, delivery_queues(settings), doc, replay_options(settings)),
    )  # fmt: skip
    assert resent["enqueued"] == 1, resent
    pipeline.run_until(lambda: len(pipeline.attempts(delivery["id"])) == 2)
    [second] = received(aws, url)
    assert attributes(second)["webhook-id"] == attributes(first)["webhook-id"] == delivery["id"]
    Webhook(ep["secret"]).verify(second["Body"].encode(), attributes(second))


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"kind": "sqs", "target": f"arn:aws:sqs:{REGION}:{ACCOUNT}:q", "role_arn": "hookline"},
         "role_arn: 'hookline' is not an IAM role ARN"),
        ({"kind": "sqs", "target": f"arn:aws:sqs:{REGION}:{ACCOUNT}:q",
          "role_arn": f"arn:aws:iam::{ACCOUNT}:role/admin"},
         "must start with 'hookline-delivery-'"),
        ({"kind": "sqs", "target": f"arn:aws:sns:{REGION}:{ACCOUNT}:t", "role_arn": ROLE},
         "is an sns ARN, not an sqs one"),
        ({"kind": "kinesis", "target": "arn:aws:s3:::bucket", "role_arn": ROLE},
         "target: 'arn:aws:s3:::bucket' is an s3 ARN, not an kinesis one"),
        ({"kind": "sqs", "target": f"arn:aws:sqs:{REGION}:{ACCOUNT}:q"}, "role_arn: an sqs"),
        ({"kind": "s3", "target": "arn:aws:s3:::bucket", "role_arn": ROLE,
          "destination": {"source": "x"}}, "destination.source: s3 takes only prefix"),
        ({"kind": "sqs", "target": f"arn:aws:sqs:{REGION}:{ACCOUNT}:q.fifo", "role_arn": ROLE,
          "destination": {"message_group_path": "payload.x"}},
         "destination.message_group_path: 'payload.x' is not a JSON path"),
        ({"kind": "sqs", "target": f"arn:aws:sqs:{REGION}:{ACCOUNT}:q", "role_arn": ROLE,
          "url": "https://example.com"}, "url: an sqs endpoint is given by its target ARN"),
    ],
)  # fmt: skip
def test_bad_destinations_are_refused_at_save_with_the_field(db, fields, message):
    t = tenant(db)
    with pytest.raises(BadRequest) as raised:
        operator.add_endpoint(db, get_settings(), tenant_id=t["id"], **{"url": None, **fields})
    assert message in str(raised.value)


def test_a_body_over_the_queue_limit_goes_to_the_offload_bucket_with_a_pointer(pipeline, db, aws):
    # Given a queue whose endpoint offloads large bodies to the customer's bucket, and one
    # that does not
    t = tenant(db)
    url, arn = queue(aws, "large")
    _, plain_arn = queue(aws, "plain")
    aws("s3").create_bucket(Bucket="acme-large")
    offloading = add(
        db, t["id"], "sqs", arn,
        destination={"offload_bucket": "acme-large", "offload_prefix": "big/"},
    )  # fmt: skip
    plain = add(db, t["id"], "sqs", plain_arn)
    # When an event of 300 KB is published
    payload = {"blob": "x" * 300_000}
    event_id = publish(db, t["id"], payload)
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1, "failed": 1})
    # Then the offloading queue gets the extended client's pointer, signed for the stored body
    [message] = received(aws, url)
    pointer_class, pointer = json.loads(message["Body"])
    assert pointer_class == "software.amazon.payloadoffloading.PayloadS3Pointer"
    delivery = pipeline.delivery(event_id=event_id, endpoint_id=offloading["id"])
    assert pointer == {"s3BucketName": "acme-large", "s3Key": f"big/{delivery['id']}"}
    stored = aws("s3").get_object(Bucket="acme-large", Key=pointer["s3Key"])["Body"].read()
    assert json.loads(stored) == payload
    headers = attributes(message)
    assert headers.pop("ExtendedPayloadSize") == str(len(stored))
    Webhook(offloading["secret"]).verify(stored, headers)
    # And the other fails with the size as the reason, as before
    failed = pipeline.delivery(event_id=event_id, endpoint_id=plain["id"])
    assert failed["state"] == "failed"
    assert "over the sqs limit of 262144" in failed["last_error"]


def test_an_offload_bucket_that_is_not_a_bucket_name_is_refused(db):
    t = tenant(db)
    with pytest.raises(BadRequest, match=r"destination\.offload_bucket: 'Not_A_Bucket'"):
        add(
            db, t["id"], "sqs", f"arn:aws:sqs:{REGION}:{ACCOUNT}:q",
            destination={"offload_bucket": "Not_A_Bucket"},
        )  # fmt: skip
