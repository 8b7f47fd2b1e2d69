"""One error shape everywhere: {"error": {"code", "message", "details"}}.

Domain code raises DomainError subclasses; the runtime reads `retryable`, clients read `code`. The human `message`
follows the request's language (LocaleMiddleware) where it is one of ours marked for makemessages: the classes'
default messages (gettext_noop, here and in each app's DomainError subclasses) and the handler's own; a message a
raise site writes itself (most of them, with their values in) goes out as written, in English.
"""

import logging
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.db import OperationalError
from django.http import Http404
from django.utils.translation import gettext, gettext_lazy, gettext_noop
from rest_framework import exceptions as drf
from rest_framework.response import Response

logger = logging.getLogger(__name__)


class DomainError(Exception):
    status = 400
    code = "invalid"
    default_message = gettext_noop("The request is invalid.")
    retryable = False

    def __init__(
        self,
        message: str | None = None,
        *,
        code: str | None = None,
        details: dict[str, Any] | None = None,
        retryable: bool | None = None,
    ):
        self.message = message or self.default_message
        if code:
            self.code = code
        if retryable is not None:
            self.retryable = retryable
        self.details = details or {}
        super().__init__(self.message)


class InvalidInput(DomainError):
    status, code, default_message = 400, "invalid", gettext_noop("The request is invalid.")


class NotFound(DomainError):
    status, code, default_message = 404, "not_found", gettext_noop("Not found.")


class PermissionDenied(DomainError):
    status, code, default_message = 403, "permission_denied", gettext_noop("Your role does not allow this.")


class Conflict(DomainError):
    status, code, default_message = 409, "conflict", gettext_noop("The request conflicts with the current state.")


class PaymentRequired(DomainError):
    status, code, default_message = 402, "payment_required", gettext_noop("The balance does not cover this.")


class PayloadTooLarge(drf.APIException):
    status_code = 413
    default_code = "payload_too_large"
    default_detail = gettext_lazy("The request body is too large.")


def _said(message: str) -> str:
    """A message in the request's language when the catalogues hold it (a marked default), else as written."""
    return gettext(message) if message else message


def error_body(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details or {}}}


_DRF_CODES = {
    drf.ParseError: "malformed_json",
    drf.NotAuthenticated: "not_authenticated",
    drf.AuthenticationFailed: "authentication_failed",
    drf.PermissionDenied: "permission_denied",
    drf.NotFound: "not_found",
    drf.MethodNotAllowed: "method_not_allowed",
    drf.NotAcceptable: "not_acceptable",
    drf.UnsupportedMediaType: "unsupported_media_type",
    drf.Throttled: "rate_limited",
    PayloadTooLarge: "payload_too_large",
}


def _drf_code(exc: drf.APIException) -> str:
    for cls, code in _DRF_CODES.items():
        if isinstance(exc, cls):
            # Specific codes set by our own code (e.g. "invalid_api_key") win over the class default.
            detail_code = getattr(exc, "detail", None)
            if hasattr(detail_code, "code") and detail_code.code not in (None, exc.default_code):
                return str(detail_code.code)
            return code
    return "invalid" if isinstance(exc, drf.ValidationError) else str(exc.default_code)


DATABASE_RETRY_SECONDS = 2


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DomainError):
        return Response(error_body(exc.code, _said(exc.message), exc.details), status=exc.status)
    if isinstance(exc, OperationalError):
        # No connection to be had (the pool's wait ran out, the server restarts or refuses more clients), or a
        # transaction the server broke off: nothing about the request is wrong and nothing was committed.
        logger.warning("database unavailable for %s: %s", context.get("request") and context["request"].path, exc)
        return Response(
            error_body("database_unavailable", gettext("The service is busy or restarting; try again in a moment.")),
            status=503,
            headers={"Retry-After": str(DATABASE_RETRY_SECONDS)},
        )
    if isinstance(exc, Http404):
        exc = drf.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = drf.PermissionDenied()
    elif isinstance(exc, RequestDataTooBig):
        # DRF reads JSON bodies through `request.body`, so Django's DATA_UPLOAD_MAX_MEMORY_SIZE check fires
        # first; left alone it would become Django's HTML 400.
        exc = PayloadTooLarge()
    # Imported here: rest_framework.views loads the parser setting, which imports this module.
    from rest_framework.views import exception_handler as drf_exception_handler

    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    assert isinstance(exc, drf.APIException)
    if isinstance(exc, drf.ValidationError):
        details = exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
        response.data = error_body("invalid", gettext("Some fields are invalid."), {"fields": details})
    else:
        details = {"wait_seconds": exc.wait} if isinstance(exc, drf.Throttled) and exc.wait else {}
        response.data = error_body(_drf_code(exc), str(exc.detail), details)
    return response
