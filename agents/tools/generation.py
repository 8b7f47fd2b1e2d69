"""Generation tools (domains image, video, 3d): quote, authorise and hold, then submit a job and wait.

The call id `turn:step:call` is the idempotency key of both the order (billing) and the job (workspace),
so an old and a new worker running the same call produce one order, one hold and one job. Authorisation
is decided by billing from recorded human approvals and the spend policy — never from the model's text.
The turn then suspends: no worker waits for the job; its completion decides whether the task wakes.
"""

from functools import partial
from typing import Any, Literal

from django.db import transaction
from pydantic import Field, ValidationError

from agents.exceptions import ToolError
from agents.fencing import fence_task
from agents.models import ChecklistItem, ChecklistStatus, InboxMessage
from agents.resume import Action, ReceiptLookupUnavailable
from agents.services.quote_words import limits_of
from agents.tools.base import Tool, ToolArgs, ToolContext, ToolResult
from billing.exceptions import ConfirmationRequired
from billing.models import Order, OrderStatus, order_fingerprint
from billing.selectors import budget_remaining, order_find, quote_approved_for, quote_open_for, spend_policy_get
from billing.services.orders import order_place
from billing.services.pricing import price_of
from billing.services.quotes import quote_create
from lomote.kernel.exceptions import Conflict, DomainError, PaymentRequired
from workspace.models import TERMINAL_JOB_STATUSES, GenerationJob, JobStatus, Role
from workspace.providers.base import IMAGE_FORMATS  # an image format's size (DESIGN §15: the format asked for)
from workspace.providers.edits import EDIT_CHANGES
from workspace.selectors import artifact_get
from workspace.services.jobs import job_submission_recover, job_submission_recoverable, job_submit


class GenerateArgs(ToolArgs):
    prompt: str = Field(min_length=1, max_length=2000, description="What to make, in the person's words.")
    checklist_position: int | None = Field(
        default=None, ge=1, le=1000, description="The checklist item this result completes."
    )
    artifact_id: int | None = Field(
        default=None, ge=1, description="Make a new version of this artifact instead of a new artifact."
    )
    changes: list[Literal[EDIT_CHANGES]] | None = Field(  # type: ignore[valid-type]
        default=None,
        min_length=1,
        max_length=len(EDIT_CHANGES),
        description=(
            "With artifact_id: the changes asked of its current version (e.g. brighter, text_bigger). The renderer "
            "applies them to the parameters that version recorded, keeping its title and composition."
        ),
    )


class ImageArgs(GenerateArgs):
    source_artifact_id: int | None = Field(
        default=None,
        ge=1,
        description="An image of the workspace this one is made from: the person's sketch to turn into a clean "
        "logo, their photo to use (it is the job's source and appears in the result's provenance).",
    )
    format: Literal["square", "portrait", "story", "wide", "logo"] | None = Field(
        default=None,
        description="The image's format: square (a social post, a sticker, an icon), portrait (a poster), story "
        "(9:16: a story or reel cover), wide (a banner, a header, a cover) or logo. Default: the provider's.",
    )
    title: str | None = Field(
        default=None, min_length=1, max_length=80, description="The headline set on the image: what it is about."
    )


class VideoArgs(GenerateArgs):
    seconds: int = Field(default=5, ge=1, le=60)
    source_artifact_id: int | None = Field(
        default=None, ge=1, description="An image of the workspace to animate (e.g. a photo found with search_assets)."
    )


def _check_source(ctx: ToolContext, source_artifact_id: int | None) -> None:
    """A source must be a live image of the caller's workspace (another workspace's id is not found)."""
    if source_artifact_id is None:
        return
    try:
        source = artifact_get(workspace_id=ctx.workspace_id, artifact_id=source_artifact_id)
    except DomainError as exc:
        raise ToolError(exc.message, code=exc.code) from None
    if source.kind != "image":
        raise ToolError("The source must be an image artifact.", code="source_not_an_image")


def api_requested(task_id: int) -> bool:
    """Work asked for through the open API (an API key's message): every paid step is confirmed one by one."""
    return InboxMessage.objects.filter(task_id=task_id, source="api_key").exists()


def _open_items(task_id: int) -> int:
    return ChecklistItem.objects.filter(
        task_id=task_id, status__in=[ChecklistStatus.PENDING, ChecklistStatus.IN_PROGRESS]
    ).count()


class _Generate(Tool):
    kind: str
    operation: str
    Args = GenerateArgs
    transactional = False  # the provider is called outside any transaction
    idempotent = True  # repeated with the same call id, billing and the job store return what exists
    required_role = Role.EDITOR
    paid = True
    keeps_receipts = True  # the job and the order, both under the call id
    # The job row commits before any provider hears of it (job_submit), and the hold is no effect by itself: no
    # job under the call id proves nothing was submitted, so the call runs again under that id (DESIGN §11).
    replay_safe_by_key = True

    def params(self, args: GenerateArgs) -> dict:
        """The job's parameters: the tool's own, and the changes an edit asks (only with an artifact to edit)."""
        edit = {"changes": list(dict.fromkeys(args.changes))} if args.changes and args.artifact_id else {}
        return {**self.own_params(args), **edit}

    def own_params(self, args: GenerateArgs) -> dict:
        return {}

    def plan_params(self, args: GenerateArgs, items: int) -> dict:
        """The parameters of one quote covering `items` such calls (approved as the task's budget)."""
        return self.params(args)

    def run(self, ctx: ToolContext, args: GenerateArgs) -> ToolResult:
        if args.changes and args.artifact_id is None:
            raise ToolError(
                "Changes are asked of an existing artifact: give its artifact_id.", code="edit_needs_artifact"
            )
        if args.artifact_id is not None:
            try:
                artifact_get(workspace_id=ctx.workspace_id, artifact_id=args.artifact_id)
            except DomainError as exc:
                raise ToolError(exc.message, code=exc.code) from None
        params = self.params(args)
        amount = price_of(self.operation, params)
        try:
            order = self._authorise_and_hold(ctx, args, amount)
        except ConfirmationRequired as exc:
            return self._needs_approval(ctx, args, amount, exc)
        except PaymentRequired as exc:
            raise ToolError(exc.message, code=exc.code, details=exc.details) from None
        except Conflict as exc:
            # Billing already holds something else under this call's key: a person reviews it (DESIGN §11).
            return _receipt_conflict(ctx, exc)
        if (
            order.status != OrderStatus.HELD
            and not GenerationJob.objects.filter(workspace_id=ctx.workspace_id, idempotency_key=ctx.call_id).exists()
        ):
            # A call run again long after its worker died: the money held for it came back by rule meanwhile
            # (billing's orphaned holds). Nothing is made on money no longer held; the model decides anew.
            raise ToolError(
                "The money held for this step was given back while it was interrupted; nothing was made. "
                "Call the tool again if the result is still needed.",
                code="hold_released",
                details={"order": order.pk, "status": order.status},
            )
        job = job_submit(
            workspace_id=ctx.workspace_id,
            idempotency_key=ctx.call_id,
            kind=self.kind,
            prompt=args.prompt,
            params=params,
            task_id=ctx.task_id,
            turn_id=ctx.turn_id,
            artifact_id=args.artifact_id,
        )
        content = {"job": job.pk, "status": job.status, "cost": amount, "checklist_position": args.checklist_position}
        if job.status == JobStatus.FAILED:
            # An uncertain or refused submission is never resubmitted automatically; its hold is released.
            return ToolResult(content={**content, "error": job.error})
        return ToolResult(content=content, job_submitted=True, suspend={"type": "jobs", "jobs": [job.pk]})

    # --- receipts: the job (workspace) and the order (billing) are both keyed by the call id ---

    @classmethod
    def action(cls, *, workspace_id: int, call_input: dict[str, Any]) -> Action:
        try:
            args = cls.Args.model_validate(call_input)
        except ValidationError:
            return super().action(workspace_id=workspace_id, call_input=call_input)
        target = {"workspace": workspace_id, "artifact": args.artifact_id}
        return Action(tool=cls.name, target=target, params={"prompt": args.prompt, **cls().params(args)})

    @classmethod
    def receipt(cls, *, workspace_id: int, operation_id: str, expected: Action | None = None) -> Action | None:
        """The job submitted under the call's id; else, when only money was held under it, nothing was submitted
        (None) — unless that hold is for another request, which is a conflict for review."""
        job = GenerationJob.objects.filter(workspace_id=workspace_id, idempotency_key=operation_id).first()
        if (
            job is not None
            and job.status == JobStatus.SUBMITTING
            and not job.upstream_id
            and not job_submission_recoverable(job)
        ):
            # Sent to a remote provider, which never confirmed it: whether it runs there nobody can say yet (the
            # jobs sweeper settles it as uncertain in time; then its receipt is that failed job). One for our own
            # workers is settled from our own records instead: the receipt is the job, its message queued again.
            raise ReceiptLookupUnavailable("the provider has not confirmed this job's submission")
        if job is not None:
            return Action(
                tool=TOOL_BY_KIND.get(job.kind, job.kind),
                # The artifact the call asked a version of: a new artifact the job made is its result, not its target.
                target={"workspace": workspace_id, "artifact": job.artifact_id if job.base_version else None},
                params={"prompt": job.prompt, **job.params},
                job=job.pk,
                status=job.status,
            )
        order = order_find(workspace_id=workspace_id, idempotency_key=operation_id)
        if order is None or expected is None or _same_order(order, expected):
            return None
        return Action(
            tool=TOOL_BY_KIND.get(order.operation.split(".")[0], order.operation),
            target={"workspace": workspace_id, "artifact": order.target.get("artifact")},
            params={"prompt": order.target.get("prompt"), "amount": order.amount},
            order=order.pk,
        )

    @classmethod
    def settled(cls, *, workspace_id: int, operation_id: str, call_input: dict[str, Any]) -> ToolResult:
        job = GenerationJob.objects.get(workspace_id=workspace_id, idempotency_key=operation_id)
        order = order_find(workspace_id=workspace_id, idempotency_key=operation_id)
        content = {
            "job": job.pk,
            "status": job.status,
            "cost": order.amount if order is not None else None,
            "checklist_position": call_input.get("checklist_position"),
            "settled_by_receipt": True,
        }
        if job.status in TERMINAL_JOB_STATUSES:
            return ToolResult(content=content, job_submitted=True)
        if job_submission_recoverable(job):
            # Ours, left `submitting` by the dead worker: its message is queued again once this settlement commits.
            transaction.on_commit(partial(job_submission_recover, job_id=job.pk))
        return ToolResult(content=content, job_submitted=True, suspend={"type": "jobs", "jobs": [job.pk]})

    def _authorise_and_hold(self, ctx: ToolContext, args: GenerateArgs, amount: int) -> Order:
        """Hold the money and mark the item in progress under the fence, in one transaction; the call's order."""
        with transaction.atomic():
            fence_task(ctx.turn_id, ctx.generation, ctx.task_id)
            self._check_plan_budget(ctx, args, amount)
            # A quote a person approved for this very step (work asked through the API is approved step by step).
            quote = quote_approved_for(
                workspace_id=ctx.workspace_id, task_id=ctx.task_id, operation=self.operation, amount=amount
            )
            order = order_place(
                workspace_id=ctx.workspace_id,
                idempotency_key=ctx.call_id,
                operation=self.operation,
                target={"task": ctx.task_id, "prompt": args.prompt, "artifact": args.artifact_id},
                amount=amount,
                task_id=ctx.task_id,
                quote_id=quote.pk if quote is not None else None,
                api_request=api_requested(ctx.task_id),
            )
            if args.checklist_position is not None:
                ChecklistItem.objects.filter(
                    task_id=ctx.task_id, position=args.checklist_position, status=ChecklistStatus.PENDING
                ).update(status=ChecklistStatus.IN_PROGRESS)
        return order

    def _check_plan_budget(self, ctx: ToolContext, args: GenerateArgs, amount: int) -> None:
        """The person's request is the plan: when the plan's total passes the per-request threshold, a
        person approves a budget for it before its first paid step, even if each step alone would not
        need it (DESIGN §5). Like any cost, the plan asks only when it is beyond both the threshold and what
        is left of the task's approved budget (a budget adds to the limits, never lowers them): once a budget
        covers it, billing draws each order from it."""
        if args.checklist_position is None:
            return
        items = _open_items(ctx.task_id)
        if items <= 1:  # a plan of one item is this step alone: the order's own checks decide (no policy read)
            return
        total = amount * items
        threshold = spend_policy_get(workspace_id=ctx.workspace_id).no_confirm_threshold
        if total <= threshold:
            return
        remaining = budget_remaining(workspace_id=ctx.workspace_id, task_id=ctx.task_id)
        # What is still to pay: the items in progress already hold their money (drawn from the budget).
        unpaid = amount * ChecklistItem.objects.filter(task_id=ctx.task_id, status=ChecklistStatus.PENDING).count()
        if remaining is not None and unpaid <= remaining:
            return
        over_by = {"plan_budget": total - threshold}
        if remaining is not None:
            over_by["budget"] = unpaid - remaining
        raise ConfirmationRequired(
            "The plan's total needs a person's approval before its first paid step.",
            details={
                "amount": total,
                "operation": self.operation,
                "reasons": list(over_by),
                "over_by": over_by,
                "no_confirm_threshold": threshold,
                "budget_remaining": remaining,
            },
        )

    def _needs_approval(self, ctx: ToolContext, args: GenerateArgs, amount: int, exc: ConfirmationRequired):
        """Quote the rest of the plan for this operation, and wait for a person to approve it."""
        with transaction.atomic():
            fence_task(ctx.turn_id, ctx.generation, ctx.task_id)
            one_by_one = "api_request" in exc.details.get("reasons", [])
            plan = args.checklist_position is not None and not one_by_one
            units = max(1, _open_items(ctx.task_id) if plan else 1)
            params = self.plan_params(args, units)
            plan_amount = price_of(self.operation, params)
            quote = quote_open_for(
                workspace_id=ctx.workspace_id, task_id=ctx.task_id, operation=self.operation, amount=plan_amount
            ) or quote_create(
                workspace_id=ctx.workspace_id, operation=self.operation, params=params, task_id=ctx.task_id
            )
            if args.checklist_position is not None:
                # Nothing started for this item: it waits for the approval, ready to start again.
                ChecklistItem.objects.filter(
                    task_id=ctx.task_id, position=args.checklist_position, status=ChecklistStatus.IN_PROGRESS
                ).update(status=ChecklistStatus.PENDING)
        waiting = {
            "type": "approval",
            "quote": quote.pk,
            "operation": self.operation,
            "amount": quote.amount,
            "per_item": amount,
            "items": units,
            "reasons": exc.details.get("reasons", []),
            "limits": limits_of(exc.details),
        }
        content = {"status": "needs_approval", **waiting, "message": "A person must approve this spending first."}
        return ToolResult(content=content, suspend=waiting)


class GenerateImage(_Generate):
    name = "generate_image"
    description = "Generate an image (a poster, an illustration...) from a prompt. Paid; runs asynchronously."
    domain = "image"
    kind = "image"
    operation = "image.generate"
    Args = ImageArgs

    def own_params(self, args: GenerateArgs) -> dict:
        params: dict = {}
        image_format = getattr(args, "format", None)  # plain GenerateArgs (a quote's plan) name none of these
        if image_format:
            params.update(IMAGE_FORMATS[image_format])
        if getattr(args, "title", None):
            params["title"] = args.title
        source = getattr(args, "source_artifact_id", None)
        if source is not None:
            params["source_artifact_id"] = source
        return params

    def plan_params(self, args: GenerateArgs, items: int) -> dict:
        return {"count": min(items, 8)}

    def run(self, ctx: ToolContext, args: GenerateArgs) -> ToolResult:
        _check_source(ctx, getattr(args, "source_artifact_id", None))
        return super().run(ctx, args)


class GenerateVideo(_Generate):
    name = "generate_video"
    description = "Generate a short video or animation from a prompt. Paid per second; runs asynchronously."
    domain = "video"
    kind = "video"
    operation = "video.generate"
    Args = VideoArgs

    def own_params(self, args: VideoArgs) -> dict:
        if args.source_artifact_id is None:
            return {"seconds": args.seconds}
        return {"seconds": args.seconds, "source_artifact_id": args.source_artifact_id}

    def plan_params(self, args: VideoArgs, items: int) -> dict:
        return {"seconds": min(args.seconds * items, 60)}

    def run(self, ctx: ToolContext, args: VideoArgs) -> ToolResult:
        _check_source(ctx, args.source_artifact_id)
        return super().run(ctx, args)


class Generate3D(_Generate):
    name = "generate_3d"
    description = "Generate a simple 3D asset (glTF) from a prompt. Paid; runs asynchronously."
    domain = "3d"
    kind = "3d"
    operation = "3d.generate"


TOOL_BY_KIND = {tool.kind: tool.name for tool in (GenerateImage, GenerateVideo, Generate3D)}
OPERATIONS = {tool.name: tool.operation for tool in (GenerateImage, GenerateVideo, Generate3D)}


def _same_order(order, expected: Action) -> bool:
    """Whether the order held under a call's id is the one that call would place (billing's own fingerprint)."""
    target = expected.target if isinstance(expected.target, dict) else {}
    params = {k: v for k, v in expected.params.items() if k != "prompt"}
    operation = OPERATIONS.get(expected.tool)
    if operation is None:
        return False
    try:
        amount = price_of(operation, params)
    except DomainError:
        return False
    # The hold's target as _authorise_and_hold placed it: the task, the prompt and the artifact.
    mine = {"task": order.task_id, "prompt": expected.params.get("prompt"), "artifact": target.get("artifact")}
    return order.fingerprint == order_fingerprint(operation=operation, target=mine, amount=amount)


def _receipt_conflict(ctx: ToolContext, exc: Conflict) -> ToolResult:
    question = (
        "Billing already holds a different request under this step's id, so it was not repeated. "
        "Review the task's spending, then tell the agent how to go on."
    )
    content = {"status": "receipt_conflict", "error": {"code": exc.code, "message": exc.message, **exc.details}}
    return ToolResult(content=content, suspend={"type": "person", "question": question})
