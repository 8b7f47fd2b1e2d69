"""The encrypted secret store (DESIGN §10): provider keys are encrypted at rest and revealed only on purpose."""

import pytest
from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from agents.exceptions import ModelConfigError
from agents.models import ProviderSecret
from agents.secrets import secret_put, secret_reveal, secrets_reencrypt
from lomote.kernel.exceptions import InvalidInput
from workspace.services.workspaces import workspace_create

pytestmark = pytest.mark.django_db

API_KEY = "sk-test-Secr3tValue-0123456789abcdef"
OLD_KEY = Fernet.generate_key().decode()
NEW_KEY = Fernet.generate_key().decode()


def _stored(secret: ProviderSecret) -> bytes:
    return bytes(ProviderSecret.objects.get(pk=secret.pk).ciphertext)


def test_it_encrypts_the_value_at_rest_and_reveals_it_on_purpose(workspace):
    # given a provider key stored for the workspace
    secret = secret_put(workspace_id=workspace.pk, name="openai", value=API_KEY)
    # when the row is read back from the database
    stored = _stored(secret)
    # then the ciphertext holds neither the value nor any long piece of it, and reveal gives it back
    assert API_KEY.encode() not in stored
    assert all(API_KEY[i : i + 8].encode() not in stored for i in range(len(API_KEY) - 8))
    assert secret_reveal(ProviderSecret.objects.get(pk=secret.pk)) == API_KEY


def test_it_never_shows_the_value_in_str_or_repr(workspace):
    # given a stored secret
    secret = secret_put(workspace_id=workspace.pk, name="openai", value=API_KEY)
    fresh = ProviderSecret.objects.get(pk=secret.pk)
    # when it is printed in every way Django and Python print objects
    shown = [str(secret), repr(secret), str(fresh), repr(fresh), str(vars(fresh))]
    # then the value appears nowhere
    assert all(API_KEY not in text for text in shown)
    assert str(fresh) == "openai (encrypted)"


def test_it_rotates_the_value_under_the_same_name(workspace):
    # given a stored key
    first = secret_put(workspace_id=workspace.pk, name="openai", value=API_KEY)
    before = _stored(first)
    # when a new value is put under the same name
    second = secret_put(workspace_id=workspace.pk, name="openai", value="sk-rotated-value-9876543210")
    # then the same row now holds only the new value
    assert second.pk == first.pk
    assert ProviderSecret.objects.filter(workspace=workspace).count() == 1
    assert _stored(second) != before
    assert secret_reveal(ProviderSecret.objects.get(pk=first.pk)) == "sk-rotated-value-9876543210"


def test_it_scopes_names_to_a_workspace(workspace, dave):
    # given two workspaces using the same secret name
    other = workspace_create(user=dave, name="Dave's studio")
    mine = secret_put(workspace_id=workspace.pk, name="openai", value=API_KEY)
    theirs = secret_put(workspace_id=other.pk, name="openai", value="sk-dave-0000000000000000")
    # then each keeps its own value
    assert mine.pk != theirs.pk
    assert secret_reveal(mine) == API_KEY
    assert secret_reveal(theirs) == "sk-dave-0000000000000000"


def test_it_rotates_encryption_keys_without_losing_secrets(workspace):
    # given a secret encrypted under the old key
    with override_settings(LOMOTE_SECRETS_KEYS=[OLD_KEY]):
        secret = secret_put(workspace_id=workspace.pk, name="openai", value=API_KEY)
    # when a new key is prepended and the store re-encrypted
    with override_settings(LOMOTE_SECRETS_KEYS=[NEW_KEY, OLD_KEY]):
        assert secret_reveal(ProviderSecret.objects.get(pk=secret.pk)) == API_KEY  # old key still decrypts
        assert secrets_reencrypt() == 1
    # then the new key alone reads it, and the old key alone no longer does
    with override_settings(LOMOTE_SECRETS_KEYS=[NEW_KEY]):
        assert secret_reveal(ProviderSecret.objects.get(pk=secret.pk)) == API_KEY
    with override_settings(LOMOTE_SECRETS_KEYS=[OLD_KEY]), pytest.raises(ModelConfigError) as caught:
        secret_reveal(ProviderSecret.objects.get(pk=secret.pk))
    assert caught.value.code == "secret_unreadable"
    assert caught.value.retryable is False


def test_it_derives_its_key_from_secret_key_and_honours_fallbacks(workspace):
    # given a secret stored with no explicit keys (derived from SECRET_KEY)
    with override_settings(LOMOTE_SECRETS_KEYS=[], SECRET_KEY="first-secret-key-" + "x" * 40):
        secret = secret_put(workspace_id=workspace.pk, name="openai", value=API_KEY)
    # when SECRET_KEY is rotated the Django way, the old one kept as a fallback
    rotated = {"SECRET_KEY": "second-secret-key-" + "y" * 40, "SECRET_KEY_FALLBACKS": ["first-secret-key-" + "x" * 40]}
    with override_settings(LOMOTE_SECRETS_KEYS=[], **rotated):
        # then it still decrypts, and re-encryption moves it to the new key
        assert secret_reveal(ProviderSecret.objects.get(pk=secret.pk)) == API_KEY
        assert secrets_reencrypt(workspace_id=workspace.pk) == 1
    with override_settings(LOMOTE_SECRETS_KEYS=[], SECRET_KEY="second-secret-key-" + "y" * 40, SECRET_KEY_FALLBACKS=[]):
        assert secret_reveal(ProviderSecret.objects.get(pk=secret.pk)) == API_KEY


def test_it_refuses_a_tampered_ciphertext(workspace):
    # given a stored secret whose ciphertext was altered in the database
    secret = secret_put(workspace_id=workspace.pk, name="openai", value=API_KEY)
    tampered = bytearray(_stored(secret))
    tampered[-5] ^= 0x01
    ProviderSecret.objects.filter(pk=secret.pk).update(ciphertext=bytes(tampered))
    # when it is revealed
    with pytest.raises(ModelConfigError) as caught:
        secret_reveal(ProviderSecret.objects.get(pk=secret.pk))
    # then the authenticated encryption refuses it, and the message says which secret, not what it held
    assert caught.value.code == "secret_unreadable"
    assert "openai" in caught.value.message


@pytest.mark.parametrize("value", ["", "   ", None, "x" * 9000])
def test_it_refuses_an_empty_or_oversized_value_without_echoing_it(workspace, value):
    # when an invalid value is put
    with pytest.raises(InvalidInput) as caught:
        secret_put(workspace_id=workspace.pk, name="openai", value=value)
    # then nothing is stored and the error does not repeat the value
    assert ProviderSecret.objects.count() == 0
    assert "x" * 50 not in str(caught.value.message)


def test_it_refuses_a_malformed_key_setting_without_naming_the_key(workspace):
    # given a configured key that is not a Fernet key
    bad = "not-a-fernet-key-but-still-a-secret"
    with override_settings(LOMOTE_SECRETS_KEYS=[bad]), pytest.raises(ImproperlyConfigured) as caught:
        secret_put(workspace_id=workspace.pk, name="openai", value=API_KEY)
    # then the configuration error does not print the key
    assert bad not in str(caught.value)
