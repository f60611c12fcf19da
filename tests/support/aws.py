"""AWS emulation for tests: one moto server for the session, emptied before each test.

Register with `pytest_plugins = ["tests.support.aws"]`, or import the fixtures by name.
"""

from __future__ import annotations

import logging
import os
import urllib.request
from collections.abc import Iterator
from typing import TYPE_CHECKING

import boto3
import pytest
from moto.server import ThreadedMotoServer

from hookline_dev.local.emulator import make_sqs_thread_safe

if TYPE_CHECKING:
    from mypy_boto3_sqs.client import SQSClient

REGION = "us-east-1"

# Code under test may build its own clients from the environment: make them dummy ones.
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
os.environ.setdefault("AWS_DEFAULT_REGION", REGION)


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    """The endpoint URL of a moto server on a free local port, for the whole session."""
    # werkzeug logs every request at INFO: thousands of lines of long polls otherwise.
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    make_sqs_thread_safe()  # as the dev stack's emulator: moto alone can drop a message
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


def reset_moto(endpoint: str) -> None:
    """Forget every resource moto holds (queues, messages, secrets, ...)."""
    request = urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        response.read()


@pytest.fixture
def sqs(moto_endpoint: str) -> SQSClient:
    """An SQS client on an empty moto: this test starts with no queues."""
    reset_moto(moto_endpoint)
    return boto3.client(
        "sqs",
        endpoint_url=moto_endpoint,
        region_name=REGION,
        # Explicit dummies: real credentials in the environment are never sent anywhere.
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
