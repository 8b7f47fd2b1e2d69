"""Quotes: the price of an operation, shown to a person before anything is spent (DESIGN §5)."""

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from billing.models import Quote
from billing.scopes import check_task_scope
from billing.services.pricing import price_of
from billing.services.validation import check_id, check_json_object
from workspace.services.events import event_append

MAX_PARAMS_BYTES = 8 * 1024


@transaction.atomic
def quote_create(
    *,
    workspace_id: int,
    operation: str,
    params: dict[str, Any] | None = None,
    task_id: int | None = None,
    created_by: AbstractBaseUser | None = None,
) -> Quote:
    """Price `operation` with `params` and record the quote; it can be approved until it expires.

    The quote carries its task's current scope: once the task's goal changes it is neither reused nor usable.
    A task the workspace does not have (another workspace's included) is NotFound, and nothing is recorded.
    """
    params = check_json_object(params if params is not None else {}, field="params", max_bytes=MAX_PARAMS_BYTES)
    task_id = check_id(task_id, field="task")
    amount = price_of(operation, params)
    scope = check_task_scope(task_id, workspace_id=workspace_id)
    quote = Quote.objects.create(
        workspace_id=workspace_id,
        operation=operation,
        params=params,
        amount=amount,
        expires_at=timezone.now() + timedelta(seconds=settings.LOMOTE_QUOTE_TTL_SECONDS),
        task_id=task_id,
        scope=scope,
        created_by=created_by,
    )
    event_append(
        workspace_id=workspace_id,
        kind="billing.quote",
        data={"quote": quote.pk, "operation": operation, "amount": amount, "task": task_id},
    )
    return quote
