from typing import Literal

EndpointCreatedSigning = Literal["ed25519", "hmac"]

ENDPOINT_CREATED_SIGNING_VALUES: set[EndpointCreatedSigning] = {
    "ed25519",
    "hmac",
}


def check_endpoint_created_signing(value: str) -> EndpointCreatedSigning:
    if value in ENDPOINT_CREATED_SIGNING_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {ENDPOINT_CREATED_SIGNING_VALUES!r}")
