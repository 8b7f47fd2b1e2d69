"""Which outbound endpoints the server may call: the one check for every base URL an operator or a person gives
(model profiles, their embedding endpoints, the image provider), run when it is saved and again before it is used.

    endpoint_check(url, *, allow_private=None) -> None
        Raises EndpointRefused (400 `endpoint_refused`, details `reason`) unless `url` is http(s) with a host whose
        every resolved address may be called. Never: link-local addresses (169.254.0.0/16, fe80::/10, where cloud
        metadata services answer), the metadata addresses themselves (169.254.169.254, fd00:ec2::254), multicast,
        unspecified, reserved. Private, loopback and other non-public addresses (10/8, 192.168/16, 127/8, fc00::/7,
        100.64/10…) only when `allow_private` — by default settings.LOMOTE_MODEL_ALLOW_PRIVATE, which an operator
        sets to use a model server of their own on 127.0.0.1 or the local network (llama.cpp, Ollama).

Every address the name resolves to is checked, not the first: a name answering with a public and a private
address is refused. The HTTP client resolves the name again when it connects, so a name whose answer changes in
between (DNS rebinding) is not covered by this check alone; the use-time check narrows that window to one call.
"""

import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings
from django.utils.translation import gettext_noop

from lomote.kernel.exceptions import DomainError

DEFAULT_PORTS = {"http": 80, "https": 443}
METADATA_ADDRESSES = {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}


class EndpointRefused(DomainError):
    status, code, default_message = (
        400,
        "endpoint_refused",
        gettext_noop("This endpoint may not be called from the server."),
    )


def _refused(url: str, message: str, reason: str, address: str | None = None) -> EndpointRefused:
    details = {"reason": reason, "host": urlsplit(url).hostname or ""}
    if address is not None:
        details["address"] = address
    return EndpointRefused(message, details=details)


def _resolved(host: str, port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """Every address `host` resolves to (a literal address is itself); IPv4-mapped IPv6 addresses as IPv4."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses = []
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        addresses.append(address)
    return addresses


def endpoint_check(url: str, *, allow_private: bool | None = None) -> None:
    """Refuse `url` unless the server may call it (module docstring)."""
    if allow_private is None:
        allow_private = settings.LOMOTE_MODEL_ALLOW_PRIVATE
    try:
        parts = urlsplit(url or "")
        port = parts.port or DEFAULT_PORTS.get(parts.scheme.lower(), 0)
    except ValueError:
        raise _refused(url, "The endpoint is not a valid URL.", "invalid_url") from None
    if parts.scheme.lower() not in DEFAULT_PORTS:
        raise _refused(url, "An endpoint URL must start with http:// or https://.", "scheme")
    if not parts.hostname:
        raise _refused(url, "The endpoint URL names no host.", "no_host")
    try:
        addresses = _resolved(parts.hostname, port)
    except (OSError, UnicodeError, ValueError):
        raise _refused(url, f"The endpoint's host {parts.hostname!r} cannot be resolved.", "unresolved") from None
    for address in addresses:
        shown = str(address)
        if address in METADATA_ADDRESSES or address.is_link_local:
            raise _refused(
                url,
                f"The endpoint's host resolves to {shown}, a link-local address where cloud metadata services "
                "answer; the server never calls it.",
                "link_local",
                shown,
            )
        if address.is_multicast or address.is_unspecified or (address.is_reserved and not address.is_loopback):
            raise _refused(url, f"The endpoint's host resolves to {shown}, which is not a server.", "reserved", shown)
        if (address.is_loopback or not address.is_global) and not allow_private:
            raise _refused(
                url,
                f"The endpoint's host resolves to {shown}, a private or loopback address. An operator allows "
                "model servers on such addresses with LOMOTE_MODEL_ALLOW_PRIVATE=1.",
                "private",
                shown,
            )
