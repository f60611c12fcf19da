from typing import Literal

EndpointSigning = Literal["ed25519", "hmac"]

ENDPOINT_SIGNING_VALUES: set[EndpointSigning] = {
    "ed25519",
    "hmac",
}


def check_endpoint_signing(value: str) -> EndpointSigning:
    if value in ENDPOINT_SIGNING_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {ENDPOINT_SIGNING_VALUES!r}")
