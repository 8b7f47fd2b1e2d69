"""Outbound endpoints (issue 31): a model or embedding base URL may not point at link-local or metadata
addresses ever, nor at private or loopback ones unless the operator allows them, nor use another scheme."""

import socket

import pytest

from lomote.kernel.endpoints import EndpointRefused, endpoint_check


def reason(url: str, **kwargs) -> str | None:
    try:
        endpoint_check(url, **kwargs)
    except EndpointRefused as refused:
        assert refused.status == 400 and refused.code == "endpoint_refused" and refused.message
        return refused.details["reason"]
    return None


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://[fd00:ec2::254]/latest/",
        "http://169.254.10.1:8080/v1",
        "http://[fe80::1]/v1",
        "http://[::ffff:169.254.169.254]/",
    ],
)
def test_it_always_refuses_link_local_and_metadata_addresses(url):
    assert reason(url, allow_private=False) == "link_local"
    assert reason(url, allow_private=True) == "link_local"


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:11434/v1",
        "http://localhost:8080/v1",
        "http://[::1]:8000/v1",
        "http://10.1.2.3/v1",
        "https://192.168.1.20/v1",
        "http://172.16.0.5/v1",
        "http://100.64.0.1/v1",
    ],
)
def test_it_refuses_private_and_loopback_addresses_unless_the_operator_allows_them(url, settings):
    settings.LOMOTE_MODEL_ALLOW_PRIVATE = False
    assert reason(url) == "private"
    settings.LOMOTE_MODEL_ALLOW_PRIVATE = True
    assert reason(url) is None


@pytest.mark.parametrize("url", ["ftp://93.184.215.14/v1", "file:///etc/passwd", "gopher://x/", "example.com/v1", ""])
def test_it_refuses_other_schemes(url):
    assert reason(url, allow_private=True) == "scheme"


def test_it_refuses_multicast_and_unspecified_addresses():
    assert reason("http://224.0.0.1/", allow_private=True) == "reserved"
    assert reason("http://0.0.0.0:8000/", allow_private=True) == "reserved"


def test_it_takes_a_public_address():
    assert reason("https://93.184.215.14/v1", allow_private=False) is None


def test_it_checks_every_address_a_name_resolves_to(monkeypatch):
    # given a name answering with a public address and the metadata service's
    answers = {"mixed.example": ["93.184.215.14", "169.254.169.254"], "public.example": ["93.184.215.14"]}

    def getaddrinfo(host, port, *args, **kwargs):
        if host not in answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port)) for address in answers[host]]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)

    # then it is refused for the one, and the all-public name is taken; a name that does not resolve is refused
    assert reason("https://mixed.example/v1", allow_private=True) == "link_local"
    assert reason("https://public.example/v1") is None
    assert reason("https://nowhere.example/v1") == "unresolved"
