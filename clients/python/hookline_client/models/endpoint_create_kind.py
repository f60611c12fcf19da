from typing import Literal

EndpointCreateKind = Literal["eventbridge", "https", "kinesis", "lambda", "s3", "sns", "sqs"]

ENDPOINT_CREATE_KIND_VALUES: set[EndpointCreateKind] = {
    "eventbridge",
    "https",
    "kinesis",
    "lambda",
    "s3",
    "sns",
    "sqs",
}


def check_endpoint_create_kind(value: str) -> EndpointCreateKind:
    if value in ENDPOINT_CREATE_KIND_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {ENDPOINT_CREATE_KIND_VALUES!r}")
