"""Signed webhooks (DESIGN §12, §14): how a provider signs a delivery and how we verify it.

A delivery carries three headers:

    Lomote-Webhook-Id:         a unique id for this delivery (a retry of the same delivery reuses it)
    Lomote-Webhook-Timestamp:  when it was signed, in whole seconds since the Unix epoch
    Lomote-Webhook-Signature:  v1=<hex HMAC-SHA256 of "<id>.<timestamp>.<raw body>">

Several `v1=` signatures may be sent, separated by spaces (a sender in the middle of a secret rotation);
one matching any of our secrets is enough. Verification runs on the raw body bytes before anything parses
them, so a body re-serialised along the way (spaces, key order) no longer matches. A timestamp more than
the tolerance away from now, in the past or in the future, is refused: a captured delivery cannot be
replayed later. Within the tolerance, the delivery id is stored under a unique constraint by the view, so
the same delivery is processed at most once.
"""

import hashlib
import hmac
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

ID_HEADER = "Lomote-Webhook-Id"
TIMESTAMP_HEADER = "Lomote-Webhook-Timestamp"
SIGNATURE_HEADER = "Lomote-Webhook-Signature"
SCHEME = "v1"
MAX_ID = 200
_ID = re.compile(r"^[\x21-\x7e]{1,200}$")  # printable ASCII, no spaces; MAX_ID characters at most
_TIMESTAMP = re.compile(r"^[0-9]{1,12}$")
_SIGNATURE = re.compile(r"^v1=([0-9a-f]{64})$")
MAX_SIGNATURES = 8


class WebhookRefused(Exception):
    """The delivery is not authentic or not acceptable. `code` says why (it is returned to the sender)."""

    def __init__(self, code: str, message: str):
        self.code = code
        self.message = message
        super().__init__(message)


@dataclass(frozen=True)
class VerifiedDelivery:
    delivery_id: str
    timestamp: int


def signature(secret: str, delivery_id: str, timestamp: int | str, body: bytes) -> str:
    """The hex HMAC-SHA256 of "<id>.<timestamp>.<body>" under `secret`."""
    signed = f"{delivery_id}.{timestamp}.".encode() + body
    return hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def sign(secret: str, delivery_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    """The three headers for a delivery of `body` (what a provider, or our simulated upstream, sends)."""
    return {
        ID_HEADER: delivery_id,
        TIMESTAMP_HEADER: str(timestamp),
        SIGNATURE_HEADER: f"{SCHEME}={signature(secret, delivery_id, timestamp, body)}",
    }


def verify(
    headers: Mapping[str, str], body: bytes, *, secrets: Iterable[str], now: float, tolerance: float
) -> VerifiedDelivery:
    """Check a delivery's headers and signature against the raw `body`; raise WebhookRefused if anything is off.

    `headers` is case-insensitive (Django's `request.headers`).
    """
    delivery_id = headers.get(ID_HEADER)
    timestamp = headers.get(TIMESTAMP_HEADER)
    signatures = headers.get(SIGNATURE_HEADER)
    missing = [
        name
        for name, value in ((ID_HEADER, delivery_id), (TIMESTAMP_HEADER, timestamp), (SIGNATURE_HEADER, signatures))
        if not value
    ]
    if missing:
        raise WebhookRefused("missing_header", f"Missing webhook header(s): {', '.join(missing)}.")
    if not _ID.match(delivery_id):
        raise WebhookRefused("malformed_header", f"{ID_HEADER} must be 1 to {MAX_ID} printable characters.")
    if not _TIMESTAMP.match(timestamp):
        raise WebhookRefused("malformed_header", f"{TIMESTAMP_HEADER} must be whole seconds since the epoch.")
    offered = signatures.split()
    if len(offered) > MAX_SIGNATURES or not all(_SIGNATURE.match(item) for item in offered):
        raise WebhookRefused("malformed_signature", f"{SIGNATURE_HEADER} must be one or more 'v1=<64 hex digits>'.")
    # The age check comes after the format checks but before the HMAC: both are cheap, and an old delivery is
    # refused whatever its signature.
    age = now - int(timestamp)
    if age > tolerance:
        raise WebhookRefused("timestamp_too_old", "The delivery's timestamp is too old.")
    if age < -tolerance:
        raise WebhookRefused("timestamp_in_future", "The delivery's timestamp is too far in the future.")
    secrets = [secret for secret in secrets if secret]
    if not secrets:
        raise WebhookRefused("webhooks_not_configured", "No webhook secret is configured.")
    expected = [signature(secret, delivery_id, timestamp, body) for secret in secrets]
    matched = False
    for item in offered:
        candidate = item[len(SCHEME) + 1 :]
        for digest in expected:
            # No early exit: every comparison runs, each in constant time.
            matched |= hmac.compare_digest(candidate, digest)
    if not matched:
        raise WebhookRefused("invalid_signature", "The webhook signature does not match.")
    return VerifiedDelivery(delivery_id=delivery_id, timestamp=int(timestamp))
