from typing import Literal

EndpointDeletedSigning = Literal["ed25519", "hmac"]

ENDPOINT_DELETED_SIGNING_VALUES: set[EndpointDeletedSigning] = {
    "ed25519",
    "hmac",
}


def check_endpoint_deleted_signing(value: str) -> EndpointDeletedSigning:
    if value in ENDPOINT_DELETED_SIGNING_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {ENDPOINT_DELETED_SIGNING_VALUES!r}")
