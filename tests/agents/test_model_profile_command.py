import pytest
from django.core.management import CommandError, call_command

from agents.models import ModelProfile, ProviderSecret
from agents.secrets import secret_reveal

pytestmark = pytest.mark.django_db


def test_it_stores_the_key_encrypted_and_makes_the_profile_the_default(workspace, monkeypatch, capsys, settings):
    # given a key in the environment, and an operator who allows a model server on this machine (Ollama)
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-from-env-123")
    settings.LOMOTE_MODEL_ALLOW_PRIVATE = True
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


def _profile_with(workspace, base_url: str) -> None:
    call_command(
        "model_profile", "--workspace", str(workspace.pk), "--name", "p", "--model", "m", "--base-url", base_url
    )


@pytest.mark.parametrize("allow_private", [False, True])
def test_it_refuses_a_base_url_on_the_metadata_service_or_another_scheme(workspace, settings, allow_private):
    # given an operator setting that allows local model servers, or not
    settings.LOMOTE_MODEL_ALLOW_PRIVATE = allow_private

    # when profiles are saved pointing at the cloud metadata service or a file
    for url in ("http://169.254.169.254/latest/meta-data/", "http://[fd00:ec2::254]/", "file:///etc/passwd"):
        with pytest.raises(CommandError) as refused:
            _profile_with(workspace, url)
        # then each is refused, saying why, and nothing is saved
        assert url in str(refused.value)
    assert not ModelProfile.objects.exists()


def test_it_takes_a_loopback_server_only_when_the_operator_allows_it(workspace, settings):
    settings.LOMOTE_MODEL_ALLOW_PRIVATE = False
    with pytest.raises(CommandError, match="LOMOTE_MODEL_ALLOW_PRIVATE=1"):
        _profile_with(workspace, "http://127.0.0.1:11434/v1")
    assert not ModelProfile.objects.exists()

    settings.LOMOTE_MODEL_ALLOW_PRIVATE = True
    _profile_with(workspace, "http://127.0.0.1:11434/v1")
    assert ModelProfile.objects.get().base_url == "http://127.0.0.1:11434/v1"


def test_the_admin_form_refuses_the_metadata_service_too(workspace, settings):
    from django.core.exceptions import ValidationError

    settings.LOMOTE_MODEL_ALLOW_PRIVATE = True
    profile = ModelProfile(workspace=workspace, name="p", provider="openai_compat", model="m")
    profile.base_url = "http://169.254.169.254/v1"
    with pytest.raises(ValidationError) as refused:
        profile.full_clean()
    assert "link-local" in refused.value.message_dict["base_url"][0]
