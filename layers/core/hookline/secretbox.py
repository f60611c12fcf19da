"""Secrets at rest: endpoint signing secrets, source secrets and sources' inline catch-up API
keys, sealed with AES-GCM under a data key (envelope encryption,
docs/decisions/0013-secrets-encrypted-with-a-kms-data-key.md and 0020).

The data key is made once per database by KMS (`GenerateDataKey`) and stored only wrapped
(KMS-encrypted) in `secret_keys`; in development a local master key file under `.hookline/`
wraps it instead. Each process unwraps it once and keeps it in memory. A sealed secret is
text, `hlenc1:<key id>:<base64 nonce||ciphertext>`, so it fits the columns that used to hold
the plaintext; a value without the prefix is a legacy plaintext one and is read as it is
until `encrypt_existing_secrets` seals it.
"""

from __future__ import annotations

import base64
import binascii
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from hookline.db import Connection, Database
from hookline.errors import SecretsUnavailable as SecretsUnavailable  # re-exported
from hookline.ids import new_id
from hookline.records import frozen
from hookline.settings import Settings, get_settings
from hookline.sqlfiles import query

PREFIX = "hlenc1:"
_NONCE = 12
_AAD = b"hookline-secret-v1"
# Opened secrets kept per process, by their sealed text (decision 0078): the deliverer opens
# an endpoint's secrets for every message. A sealed text is unique (a random nonce) and its
# plaintext never changes, so a rotated or removed secret is simply never asked for again.
OPENED_LIMIT = 4096


class KeyWrapper(Protocol):
    """What makes and unwraps data keys: KMS, or a local master key."""

    name: str

    def new_data_key(self) -> tuple[bytes, bytes]:
        """A fresh 256-bit data key: (plaintext, wrapped)."""
        ...

    def unwrap(self, wrapped: bytes) -> bytes:
        """The plaintext data key of a wrapped one."""
        ...


class KmsWrapper:
    """Data keys from AWS KMS: GenerateDataKey and Decrypt with one customer key."""

    def __init__(self, kms: object, key_id: str) -> None:
        self.kms = kms
        self.name = key_id

    def new_data_key(self) -> tuple[bytes, bytes]:
        """A fresh 256-bit data key: (plaintext, wrapped)."""
        answer = self.kms.generate_data_key(KeyId=self.name, KeySpec="AES_256")  # type: ignore[attr-defined]
        return bytes(answer["Plaintext"]), bytes(answer["CiphertextBlob"])

    def unwrap(self, wrapped: bytes) -> bytes:
        """The plaintext data key of a wrapped one (KMS finds the key from the blob)."""
        answer = self.kms.decrypt(CiphertextBlob=wrapped, KeyId=self.name)  # type: ignore[attr-defined]
        return bytes(answer["Plaintext"])


class LocalWrapper:
    """Development only: a 256-bit master key in a file wraps the data key with AES-GCM."""

    name = "local"

    def __init__(self, master_key: bytes) -> None:
        self._aead = AESGCM(master_key)

    @classmethod
    def from_file(cls, path: Path) -> LocalWrapper:
        """The master key in `path`, created (mode 0600) on first use."""
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "wb") as out:
                out.write(base64.b64encode(AESGCM.generate_key(bit_length=256)) + b"\n")
        for _ in range(50):  # another process may be writing it right now
            text = path.read_bytes().strip()
            if text:
                return cls(base64.b64decode(text))
            threading.Event().wait(0.01)
        raise SecretsUnavailable(f"the local master key file {path} is empty")

    def new_data_key(self) -> tuple[bytes, bytes]:
        """A fresh 256-bit data key: (plaintext, wrapped)."""
        key = AESGCM.generate_key(bit_length=256)
        nonce = os.urandom(_NONCE)
        return key, nonce + self._aead.encrypt(nonce, key, b"hookline-data-key")

    def unwrap(self, wrapped: bytes) -> bytes:
        """The plaintext data key of a wrapped one."""
        try:
            return self._aead.decrypt(wrapped[:_NONCE], wrapped[_NONCE:], b"hookline-data-key")
        except InvalidTag as err:
            raise SecretsUnavailable("the data key was wrapped by another master key") from err


@frozen
class _DataKey:
    id: str
    aead: AESGCM


class SecretBox:
    """Seals and opens secrets with the database's data key, unwrapped once per process."""

    def __init__(self, wrapper: KeyWrapper) -> None:
        self.wrapper = wrapper
        self._lock = threading.Lock()
        # Keyed by the wrapped bytes: a test database cloned anew has a new data key.
        self._unwrapped: dict[bytes, AESGCM] = {}
        # Key ids are unique and their rows never change: the receiver's hot path reads a
        # sealed secret without a second query once its key is known.
        self._by_id: dict[str, AESGCM] = {}
        self._opened: dict[str, str] = {}

    def seal(self, conn: Connection, plaintext: str) -> str:
        """The sealed form of `plaintext`, under the active data key (made on first use)."""
        key = self._active_key(conn)
        nonce = os.urandom(_NONCE)
        sealed = key.aead.encrypt(nonce, plaintext.encode(), _AAD)
        return f"{PREFIX}{key.id}:{base64.b64encode(nonce + sealed).decode()}"

    def open(self, conn: Connection, stored: str) -> str:
        """The plaintext of a sealed secret (a legacy plaintext value is returned as is)."""
        if not stored.startswith(PREFIX):
            return stored
        opened = self._opened.get(stored)
        if opened is not None:
            return opened
        key_id, sep, blob = stored[len(PREFIX) :].partition(":")
        if not sep:
            raise SecretsUnavailable("a stored secret is malformed")
        aead = self._key(conn, key_id)
        try:
            raw = base64.b64decode(blob, validate=True)
            opened = aead.decrypt(raw[:_NONCE], raw[_NONCE:], _AAD).decode()
        except (binascii.Error, ValueError, InvalidTag) as err:
            raise SecretsUnavailable("a stored secret cannot be decrypted") from err
        with self._lock:
            if len(self._opened) >= OPENED_LIMIT:
                self._opened.clear()
            self._opened[stored] = opened
        return opened

    def _active_key(self, conn: Connection) -> _DataKey:
        row = conn.execute(query("active_secret_key")).fetchone()
        if row is None:
            plaintext, wrapped = self.wrapper.new_data_key()
            row = conn.execute(
                query("insert_secret_key"),
                {"id": new_id("key"), "wrapped": wrapped, "wrapped_by": self.wrapper.name},
            ).fetchone()
            if row is None:  # another process made it first: use theirs
                row = conn.execute(query("active_secret_key")).fetchone()
            else:
                with self._lock:
                    self._unwrapped[wrapped] = AESGCM(plaintext)
        assert row is not None
        return _DataKey(row["id"], self._unwrap(bytes(row["wrapped"])))

    def _key(self, conn: Connection, key_id: str) -> AESGCM:
        with self._lock:
            known = self._by_id.get(key_id)
        if known is not None:
            return known
        row = conn.execute(query("get_secret_key"), {"id": key_id}).fetchone()
        if row is None:
            raise SecretsUnavailable("the data key of a stored secret is missing")
        aead = self._unwrap(bytes(row["wrapped"]))
        with self._lock:
            self._by_id[key_id] = aead
        return aead

    def _unwrap(self, wrapped: bytes) -> AESGCM:
        with self._lock:
            aead = self._unwrapped.get(wrapped)
        if aead is None:
            try:
                aead = AESGCM(self.wrapper.unwrap(wrapped))
            except SecretsUnavailable:
                raise
            except Exception as err:  # KMS errors: never echo them (they name the key)
                raise SecretsUnavailable("the secrets key cannot be unwrapped") from err
            with self._lock:
                self._unwrapped[wrapped] = aead
        return aead


def build_box(settings: Settings, kms_client: Callable[[], object] | None = None) -> SecretBox:
    """KMS when a key is configured (always on AWS), else the local master key file."""
    if settings.kms_key_id:
        if kms_client is None:
            from hookline.aws import client

            kms = client("kms", settings)
        else:
            kms = kms_client()
        return SecretBox(KmsWrapper(kms, settings.kms_key_id))
    return SecretBox(LocalWrapper.from_file(Path(settings.local_key_file)))


_box_lock = threading.Lock()
_boxes: dict[Settings, SecretBox] = {}


def get_secret_box() -> SecretBox:
    """The process's secret box, built once for the current settings."""
    settings = get_settings()
    with _box_lock:
        box = _boxes.get(settings)
        if box is None:
            box = _boxes[settings] = build_box(settings)
        return box


def seal(conn: Connection, plaintext: str) -> str:
    """Seal with the process's box (repositories call this before storing a secret)."""
    return get_secret_box().seal(conn, plaintext)


def reveal(conn: Connection, stored: str) -> str:
    """Open with the process's box (repositories call this after reading a secret)."""
    return get_secret_box().open(conn, stored)


def encrypt_existing_secrets(db: Database, box: SecretBox | None = None) -> int:
    """Seal every secret still stored in plaintext (rows written before 0006, and catch-up API
    keys in source options written before decision 0020); how many values changed. Safe to run
    again: sealed values are left alone."""
    box = box or get_secret_box()
    changed = 0
    with db.connection() as conn, conn.transaction():
        for row in conn.execute(query("plaintext_endpoint_secrets"), {}).fetchall():
            conn.execute(
                query("seal_endpoint_secret"),
                {
                    "endpoint_id": row["endpoint_id"],
                    "created_at": row["created_at"],
                    "secret": box.seal(conn, row["secret"]),
                },
            )
            changed += 1
        for row in conn.execute(query("plaintext_source_secrets"), {}).fetchall():
            sealed = [box.seal(conn, s) if not s.startswith(PREFIX) else s for s in row["secrets"]]
            conn.execute(query("seal_source_secrets"), {"id": row["id"], "secrets": sealed})
            changed += 1
        for row in conn.execute(query("plaintext_catchup_keys"), {}).fetchall():
            conn.execute(
                query("seal_catchup_key"),
                {"id": row["id"], "api_key": box.seal(conn, row["api_key"])},
            )
            changed += 1
    return changed
