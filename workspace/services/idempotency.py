"""`Idempotency-Key` on requests that change something (issue 31): one effect per key, one answer to every repeat.

    idempotent_call(*, access, key, fingerprint, request, call) -> Answer(status, body, replayed)

A client that may send a request twice (a retry after a timeout, a double click, a replayed queue) sends the
same `Idempotency-Key` (1–255 printable characters) each time. The key belongs to the principal that sent it
(a person or an API key) in one workspace: another caller or another workspace may use the same key freely.

- The first request with a key inserts the key's row in its own short transaction and commits it before doing
  the work: the unique constraint (workspace, principal, key) elects exactly one winner among parallel repeats
  (the insert runs in a savepoint, caught outside it: DESIGN §14). The work then runs in its own transactions;
  none is held open across it, since a Main message calls the Router model (DESIGN rule 8). The answer
  (status and JSON body) is stored on the row afterwards.
- A repeat with another method, path or body (`fingerprint`) is 409 `idempotency_key_reuse`, and does nothing.
- A repeat of a finished request gets the stored answer: same status, same body, nothing done again.
- A repeat while the first still runs waits for its answer (polling the row, up to `WAIT_SECONDS`), then
  gives up with 409 `idempotency_key_in_progress`; it never does the work itself.
- A first request refused with an error answer (a DomainError or DRF error: raised before the service
  commits anything) deletes its row: nothing was done, so the same key may be sent again and do it.
  Any other failure, or a process that dies between the work and the stored answer, leaves the outcome
  unknown: the row stays unfinished and repeats get 409 `idempotency_key_in_progress` until the key expires.
  A second effect is never risked (as with a tool call found `started`, DESIGN §3).
- Keys are kept `KEEP`; after that the same key starts a new request.
"""

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework.exceptions import APIException

from lomote.kernel.exceptions import Conflict, DomainError, InvalidInput
from workspace.models import IdempotentRequest
from workspace.selectors import Access

HEADER = "Idempotency-Key"
MAX_KEY_CHARS = 255
KEEP = timedelta(hours=24)
# A repeat waits this long for the first request's answer: longer than a Main message takes to route.
WAIT_SECONDS = 30.0
# Polls start quick (most first requests take well under a second) and slow down to a few a second.
POLL_SECONDS = (0.02, 0.5)


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any
    replayed: bool  # the stored answer of an earlier request with the same key


def request_fingerprint(*, method: str, path: str, body: Any) -> str:
    """What makes two requests the same: method, path and body, the body as canonical JSON (key order and
    spacing of the sent JSON do not count)."""
    if hasattr(body, "lists"):  # a QueryDict (form or multipart body)
        body = dict(body.lists())
    canonical = json.dumps([method.upper(), path, body], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def check_idempotency_key(key: str) -> str:
    if not isinstance(key, str) or not key.strip() or len(key) > MAX_KEY_CHARS or not key.isprintable():
        raise InvalidInput(
            f"An {HEADER} header needs 1 to {MAX_KEY_CHARS} printable characters.",
            code="invalid_idempotency_key",
            details={"header": HEADER, "max_length": MAX_KEY_CHARS},
        )
    return key


def _principal(access: Access) -> str:
    return f"api_key:{access.api_key.pk}" if access.api_key is not None else f"user:{access.user.pk}"


def _claimed(*, access: Access, principal: str, key: str, fingerprint: str, request: str) -> IdempotentRequest | None:
    """Insert the key's row and commit it; None when another request holds the key."""
    try:
        with transaction.atomic(durable=True):
            return IdempotentRequest.objects.create(
                workspace=access.workspace,
                principal=principal,
                key=key,
                fingerprint=fingerprint,
                request=request[:300],
                created_at=timezone.now(),
            )
    except IntegrityError:
        return None


def _renewed(found: IdempotentRequest, *, fingerprint: str, request: str) -> IdempotentRequest | None:
    """Take over an expired key's row (compare-and-set on its creation time); None when another request did."""
    now = timezone.now()
    fields = {
        "fingerprint": fingerprint,
        "request": request[:300],
        "created_at": now,
        "response_status": None,
        "response_body": None,
        "finished_at": None,
    }
    with transaction.atomic(durable=True):
        won = IdempotentRequest.objects.filter(pk=found.pk, created_at=found.created_at).update(**fields)
    if won != 1:
        return None
    for name, value in fields.items():
        setattr(found, name, value)
    return found


def _run(row: IdempotentRequest, call: Callable[[], tuple[int, Any]]) -> Answer:
    try:
        status, body = call()
    except (DomainError, APIException):
        # Refused before anything was committed: the key is free for a corrected or later attempt.
        IdempotentRequest.objects.filter(pk=row.pk, response_status__isnull=True).delete()
        raise
    with transaction.atomic(durable=True):
        IdempotentRequest.objects.filter(pk=row.pk).update(
            response_status=status, response_body=body, finished_at=timezone.now()
        )
    return Answer(status=status, body=body, replayed=False)


def idempotent_call(
    *, access: Access, key: str, fingerprint: str, request: str, call: Callable[[], tuple[int, Any]]
) -> Answer:
    """Do `call()` once for this principal's key in this workspace and store its (status, JSON body); a repeat
    gets that answer (module docstring). Called outside any transaction: the key's row must commit first."""
    key = check_idempotency_key(key)
    principal = _principal(access)
    deadline = time.monotonic() + WAIT_SECONDS
    pause, longest = POLL_SECONDS
    while True:
        found = IdempotentRequest.objects.filter(workspace=access.workspace, principal=principal, key=key).first()
        if found is None:
            row = _claimed(access=access, principal=principal, key=key, fingerprint=fingerprint, request=request)
            if row is not None:
                return _run(row, call)
            continue  # another request took the key between the read and the insert: read its row
        if found.created_at < timezone.now() - KEEP:
            row = _renewed(found, fingerprint=fingerprint, request=request)
            if row is not None:
                return _run(row, call)
            continue
        if found.fingerprint != fingerprint:
            raise Conflict(
                f"This {HEADER} was already used for another request; use a new key for a new request.",
                code="idempotency_key_reuse",
                details={"header": HEADER, "request": found.request},
            )
        if found.finished:
            return Answer(status=found.response_status, body=found.response_body, replayed=True)
        if time.monotonic() >= deadline:
            raise Conflict(
                f"A request with this {HEADER} has not finished yet; send it again later to get its answer.",
                code="idempotency_key_in_progress",
                details={"header": HEADER},
            )
        time.sleep(min(pause, max(deadline - time.monotonic(), 0)))
        pause = min(pause * 1.5, longest)
