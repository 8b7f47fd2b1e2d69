"""Webhook deliveries (DESIGN §12, §14): a delivery id is processed at most once.

    delivery_claim(*, delivery_id, provider, upstream_id) -> tuple[int, bool]
        Inside the caller's transaction: store the delivery for the job the provider names by its upstream id, and
        return (job id, True); (job id, False) when that delivery id is already stored (a re-sent delivery: nothing
        to do); NotFound `unknown_job` when no job has that upstream id (yet), with nothing stored, so the sender's
        retry is processed. Two claims of one delivery at the same moment: the second waits for the first
        transaction and finds its row (or claims it, if the first rolled back).

On PostgreSQL the claim is one statement (the job looked up and the row inserted, a conflict on the delivery id
doing nothing): no savepoint around an insert that may fail, no separate look-up — the webhook is on every
provider report's path (make bench).
"""

from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from lomote.kernel.exceptions import NotFound
from workspace.models import GenerationJob, WebhookDelivery


def delivery_claim(*, delivery_id: str, provider: str, upstream_id: str) -> tuple[int, bool]:
    """Store a delivery once, for the job named by (provider, upstream_id); see the module docstring."""
    if connection.vendor == "postgresql":
        job_id = _claim_in_one_statement(delivery_id, provider, upstream_id)
        if job_id is not None:
            return job_id, True
        return _job_id(provider, upstream_id), False
    job_id = _job_id(provider, upstream_id)
    try:
        with transaction.atomic():
            WebhookDelivery.objects.create(delivery_id=delivery_id, provider=provider, job_id=job_id)
    except IntegrityError:
        return job_id, False
    return job_id, True


def _job_id(provider: str, upstream_id: str) -> int:
    job_id = (
        GenerationJob.objects.filter(provider=provider, upstream_id=upstream_id).values_list("pk", flat=True).first()
    )
    if job_id is None:
        raise NotFound(gettext_noop("No job has this upstream id (yet)."), code="unknown_job")
    return job_id


def _claim_in_one_statement(delivery_id: str, provider: str, upstream_id: str) -> int | None:
    """The job's id when this call stored the delivery; None when the job is unknown or the delivery stored."""
    deliveries = connection.ops.quote_name(WebhookDelivery._meta.db_table)
    jobs = connection.ops.quote_name(GenerationJob._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {deliveries} (delivery_id, provider, job_id, received_at) "  # noqa: S608 - names from model meta
            f"SELECT %s, %s, j.id, %s FROM {jobs} j WHERE j.provider = %s AND j.upstream_id = %s "
            "ON CONFLICT (delivery_id) DO NOTHING RETURNING job_id",
            [delivery_id, provider, timezone.now(), provider, upstream_id],
        )
        row = cursor.fetchone()
    return None if row is None else row[0]
