import pytest
from django.core.management import CommandError, call_command

from agents.models import ModelProfile, ProviderSecret
from agents.secrets import secret_reveal

pytestmark = pytest.mark.django_db


def test_it_stores_the_key_encrypted_and_makes_the_profile_the_default(workspace, monkeypatch, capsys):
    # given a key in the environment
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-from-env-123")
    # when an operator configures a profile
    call_command(
        "model_profile",
        "--workspace",
        str(workspace.pk),
        "--name",
        "local",
        "--model",
        "llama3",
        "--base-url",
        "http://127.0.0.1:11434/v1",
        "--api-key-env",
        "FAKE_PROVIDER_KEY",
        "--default",
    )
    # then the profile is the default, its key is stored encrypted, and the output does not show it
    profile = ModelProfile.objects.get(workspace=workspace, name="local")
    assert profile.is_default and profile.provider == "openai_compat"
    assert secret_reveal(profile.secret) == "sk-from-env-123"
    assert b"sk-from-env-123" not in bytes(ProviderSecret.objects.get().ciphertext)
    assert "sk-from-env-123" not in capsys.readouterr().out


def test_it_refuses_an_empty_key_variable(workspace, monkeypatch):
    monkeypatch.delenv("MISSING_KEY", raising=False)
    with pytest.raises(CommandError):
        call_command(
            "model_profile",
            "--workspace",
            str(workspace.pk),
            "--name",
            "x",
            "--model",
            "m",
            "--api-key-env",
            "MISSING_KEY",
        )
    assert not ModelProfile.objects.exists()
