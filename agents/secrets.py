"""The server-side store for provider API keys (DESIGN §10): encrypted at rest, revealed only to adapters.

Keys are encrypted with Fernet (AES-128-CBC + HMAC-SHA256, authenticated). `settings.LOMOTE_SECRETS_KEYS`
lists Fernet keys newest first: the first encrypts, all of them decrypt (MultiFernet), so keys rotate without
downtime — prepend a new key, call `secrets_reencrypt()`, then drop the old one. Without that setting the key
is derived from SECRET_KEY with HKDF (and SECRET_KEY_FALLBACKS still decrypt, so rotating SECRET_KEY the
Django way keeps stored secrets readable until they are re-encrypted).

The plaintext never lives on a model instance: `secret_put` returns the row with its ciphertext only, and
`secret_reveal` is called inside a provider adapter right before the HTTP client is built.
"""

import base64
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction

from agents.exceptions import ModelConfigError
from agents.models import ProviderSecret
from lomote.kernel.exceptions import InvalidInput

# Changing these would make every secret stored under a derived key unreadable.
_HKDF_SALT = b"lomote.agents.secrets"
_HKDF_INFO = b"provider-secret-fernet-v1"
MAX_SECRET_LENGTH = 8192


def _derive_key(secret_key: str) -> bytes:
    raw = HKDF(algorithm=hashes.SHA256(), length=32, salt=_HKDF_SALT, info=_HKDF_INFO).derive(
        secret_key.encode("utf-8")
    )
    return base64.urlsafe_b64encode(raw)


@lru_cache(maxsize=8)
def _multifernet(keys: tuple[str, ...], secret_key: str, fallbacks: tuple[str, ...]) -> MultiFernet:
    if keys:
        try:
            fernets = [Fernet(key.encode("ascii")) for key in keys]
        except (ValueError, UnicodeEncodeError) as exc:
            # The message names no key: a malformed key is still half a secret.
            raise ImproperlyConfigured(
                "LOMOTE_SECRETS_KEYS must be comma-separated Fernet keys (32 url-safe base64-encoded bytes)."
            ) from exc
    else:
        fernets = [Fernet(_derive_key(k)) for k in (secret_key, *fallbacks)]
    return MultiFernet(fernets)


def _cipher() -> MultiFernet:
    # Read settings on every call (cheap thanks to the cache) so override_settings and rotation take effect.
    return _multifernet(
        tuple(settings.LOMOTE_SECRETS_KEYS or ()),
        settings.SECRET_KEY,
        tuple(getattr(settings, "SECRET_KEY_FALLBACKS", ()) or ()),
    )


def _encrypt(value: str) -> bytes:
    return _cipher().encrypt(value.encode("utf-8"))


def secret_put(*, workspace_id: int, name: str, value: str) -> ProviderSecret:
    """Store a provider key under `name` in the workspace, or rotate it (replace the value) if it exists."""
    name = (name or "").strip()
    if not name or len(name) > 120:
        raise InvalidInput("A secret needs a name of 1 to 120 characters.", details={"fields": {"name": ["invalid"]}})
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_SECRET_LENGTH:
        # Never echo the value back, not even in a validation error.
        raise InvalidInput("A secret value must be a non-empty string.", details={"fields": {"value": ["invalid"]}})
    ciphertext = _encrypt(value)
    with transaction.atomic():
        # update_or_create locks the row; a concurrent first insert is caught inside get_or_create's savepoint.
        secret, _created = ProviderSecret.objects.update_or_create(
            workspace_id=workspace_id, name=name, defaults={"ciphertext": ciphertext}
        )
    return secret


def secret_reveal(secret: ProviderSecret) -> str:
    """The plaintext of a stored secret. For provider adapters only: never log, return or store the result."""
    try:
        return _cipher().decrypt(bytes(secret.ciphertext)).decode("utf-8")
    except InvalidToken:
        raise ModelConfigError(
            f"The provider secret {secret.name!r} cannot be decrypted with the configured keys.",
            code="secret_unreadable",
        ) from None


def secrets_reencrypt(*, workspace_id: int | None = None) -> int:
    """Re-encrypt stored secrets under the newest key (after prepending one to LOMOTE_SECRETS_KEYS).

    Returns how many rows were rewritten. Each row is re-read under a lock, so a concurrent `secret_put` is
    never overwritten with an older value.
    """
    cipher = _cipher()
    rows = (
        ProviderSecret.objects.all()
        if workspace_id is None
        else ProviderSecret.objects.filter(workspace_id=workspace_id)
    )
    count = 0
    for pk in rows.order_by("pk").values_list("pk", flat=True):
        with transaction.atomic():
            secret = ProviderSecret.objects.select_for_update(no_key=True).filter(pk=pk).first()
            if secret is None:
                continue
            try:
                rotated = cipher.rotate(bytes(secret.ciphertext))
            except InvalidToken:
                raise ModelConfigError(
                    f"The provider secret {secret.name!r} cannot be decrypted with the configured keys.",
                    code="secret_unreadable",
                ) from None
            ProviderSecret.objects.filter(pk=pk).update(ciphertext=rotated)
            count += 1
    return count
