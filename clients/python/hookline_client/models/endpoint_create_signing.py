from typing import Literal

EndpointCreateSigning = Literal["ed25519", "hmac"]

ENDPOINT_CREATE_SIGNING_VALUES: set[EndpointCreateSigning] = {
    "ed25519",
    "hmac",
}


def check_endpoint_create_signing(value: str) -> EndpointCreateSigning:
    if value in ENDPOINT_CREATE_SIGNING_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {ENDPOINT_CREATE_SIGNING_VALUES!r}")
