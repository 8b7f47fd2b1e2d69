"""The generation webhook: POST /api/v1/webhooks/generation/<provider>/ (DESIGN §4, §12, §14).

No session, no CSRF token, no API key: a delivery is authenticated by its signature alone
(workspace/webhooks.py), checked on the raw body before anything parses it. Then, in one transaction, the
delivery id is stored under its unique constraint (workspace/services/deliveries.py) and the report is applied
through `job_event_apply`:

- bad, missing or malformed headers or signature, a body changed on the way, a timestamp out of tolerance,
  malformed JSON or an invalid report → 400 with the error body, and nothing is written;
- a job we do not know (yet) → 404 `unknown_job`, nothing stored, so the sender's retry is processed;
- the same delivery again, one after the other or at the same moment → 200 `duplicate`, nothing
  reprocessed (the second insert waits for the first transaction, then finds its row);
- otherwise 200, with `applied` false when the report did not move the job forward (late or repeated).
"""

import json
import time

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import transaction
from django.http import JsonResponse
from django.views.decorators.csrf import csrf_exempt

from lomote.kernel.exceptions import DomainError, InvalidInput, error_body
from workspace.models import JobStatus
from workspace.providers import registry
from workspace.services.deliveries import delivery_claim
from workspace.services.jobs import job_event_apply
from workspace.webhooks import WebhookRefused, verify

REPORT_STATUSES = tuple(s for s in JobStatus.values if s != JobStatus.SUBMITTING)


def _error(status: int, code: str, message: str, details: dict | None = None) -> JsonResponse:
    return JsonResponse(error_body(code, message, details), status=status)


@csrf_exempt
def generation_webhook(request, provider: str):
    if request.method != "POST":
        response = _error(405, "method_not_allowed", f'Method "{request.method}" not allowed.')
        response["Allow"] = "POST"
        return response
    if not registry.provider_known(provider):
        return _error(404, "not_found", "Not found.")
    try:
        body = request.body
    except RequestDataTooBig:
        return _error(413, "payload_too_large", "The request body is too large.")
    try:
        delivery = verify(
            request.headers,
            body,
            secrets=settings.LOMOTE_WEBHOOK_SECRETS,
            now=time.time(),
            tolerance=settings.LOMOTE_WEBHOOK_TOLERANCE_SECONDS,
        )
    except WebhookRefused as exc:
        return _error(503 if exc.code == "webhooks_not_configured" else 400, exc.code, exc.message)
    try:
        report = _report(body)
    except InvalidInput as exc:
        return _error(400, exc.code, exc.message, exc.details)

    applied = False
    try:
        with transaction.atomic(durable=True):
            job_id, claimed = delivery_claim(
                delivery_id=delivery.delivery_id, provider=provider, upstream_id=report["upstream_id"]
            )
            if claimed:
                applied = job_event_apply(
                    job_id=job_id,
                    status=report["status"],
                    progress=report.get("progress"),
                    result=report.get("result"),
                    error=report.get("error"),
                    savepoint=False,  # any failure ends this transaction, delivery row included
                )
    except DomainError as exc:
        return _error(exc.status if exc.status < 500 else 400, exc.code, exc.message, exc.details)
    return JsonResponse({"delivery": delivery.delivery_id, "duplicate": not claimed, "applied": applied})


def _report(body: bytes) -> dict:
    """The report a delivery carries, checked for shape (fields we do not know are ignored)."""
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, ValueError):
        raise InvalidInput("The body is not valid JSON.", code="malformed_json") from None
    if not isinstance(data, dict):
        raise InvalidInput("The body must be a JSON object.")
    errors: dict[str, list[str]] = {}
    upstream_id = data.get("upstream_id")
    if not isinstance(upstream_id, str) or not 0 < len(upstream_id) <= 200:
        errors["upstream_id"] = ["A string of 1 to 200 characters."]
    if data.get("status") not in REPORT_STATUSES:
        errors["status"] = [f"One of {', '.join(REPORT_STATUSES)}."]
    progress = data.get("progress")
    if progress is not None and (
        isinstance(progress, bool) or not isinstance(progress, int) or not 0 <= progress <= 100
    ):
        errors["progress"] = ["A whole number from 0 to 100."]
    if data.get("result") is not None and not isinstance(data["result"], dict):
        errors["result"] = ["An object."]
    if data.get("error") is not None and not isinstance(data["error"], dict | str):
        errors["error"] = ["An object or a string."]
    if errors:
        raise InvalidInput("The report is invalid.", details={"fields": errors})
    return data
