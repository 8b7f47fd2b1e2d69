"""REST API v1 for tasks: list, create, detail, execution log, inbox, cancel / pause / resume, settings; cards.

Views parse, check the role, call a selector or service, and serialize. Services take their own locks and
append the events; the view re-reads the task afterwards so the answer shows what was committed.
"""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.response import Response

from agents import selectors, serializers
from agents.main import messages as main_services
from agents.models import CardKind, CardStatus, TaskStatus
from agents.runtime.context import context_preview
from agents.runtime.resumption import checkpoint_export, task_resume_checked
from agents.services import flow_runs as flow_run_services
from agents.services import flow_threads as flow_thread_services
from agents.services import goals as goal_services
from agents.services import inbox as inbox_services
from agents.services import presets as preset_services
from agents.services import task_settings as settings_services
from agents.services import tasks as task_services
from agents.services.artifact_delete import artifact_delete_ask
from agents.services.memory_forget import memory_forget_ask
from agents.services.provenance import version_provenance
from lomote.kernel.pagination import CursorlessPagination
from lomote.kernel.serializers import error_responses, validated
from workspace.apis import IDEMPOTENCY_DESCRIPTION, IDEMPOTENCY_KEY, WorkspaceApi
from workspace.models import Role
from workspace.serializers import FlowRunIn


class TaskLogPagination(CursorlessPagination):
    """A page of the log is turns with all their steps and tool calls, so pages are kept small."""

    default_limit = 10
    max_limit = 50


class TaskListCreateApi(WorkspaceApi):
    serializer_class = serializers.TaskOut

    @extend_schema(
        operation_id="tasks_list",
        description="The workspace's tasks, most recently changed first: the persistent ones. Lightweight tasks "
        "(quick results, reachable from their result card and artifacts) are listed only with `kind=lightweight` "
        "or `kind=all`; a promoted one is persistent.",
        parameters=[
            OpenApiParameter("status", str, enum=TaskStatus.values, description="Only tasks with this status."),
            OpenApiParameter(
                "kind",
                str,
                enum=serializers.TASK_LIST_KINDS,
                description="persistent (the default), lightweight or all.",
            ),
        ],
        responses={200: serializers.TaskOut(many=True), **error_responses(400, 404)},
    )
    def get(self, request, workspace_id):
        access = self.access()
        query = validated(serializers.TaskQueryIn, request.query_params.dict())
        tasks = selectors.task_list(access=access, status=query.get("status"), kind=query.get("kind"))
        page = self.paginate_queryset(tasks)
        return self.get_paginated_response(serializers.TaskOut(page, many=True).data)

    @extend_schema(
        operation_id="tasks_create",
        description="Create a task. Its brief becomes the first inbox message and a turn is queued.",
        request=serializers.TaskCreateIn,
        responses={201: serializers.TaskDetailOut, **error_responses(400, 403, 404, 413)},
    )
    def post(self, request, workspace_id):
        access = self.access().require(Role.EDITOR)
        data = validated(serializers.TaskCreateIn, request.data)
        task = task_services.task_create(access=access, **data)
        task = selectors.task_get(access=access, task_id=task.pk)
        return Response(serializers.TaskDetailOut(task).data, status=status.HTTP_201_CREATED)


class TaskDetailApi(WorkspaceApi):
    serializer_class = serializers.TaskDetailOut

    @extend_schema(operation_id="tasks_retrieve", responses={200: serializers.TaskDetailOut, **error_responses(404)})
    def get(self, request, workspace_id, task_id):
        task = selectors.task_get(access=self.access(), task_id=task_id)
        return Response(serializers.TaskDetailOut(task).data)


class TaskLogApi(WorkspaceApi):
    serializer_class = serializers.TurnLogOut
    pagination_class = TaskLogPagination

    @extend_schema(
        operation_id="tasks_log",
        description="The execution log: turns (newest first, paged with `limit`/`offset`, 10 by default, at most "
        "50), each with its model lease and its steps in order, each step with its token usage, the inbox "
        "messages it consumed and its tool calls.",
        responses={200: serializers.TurnLogOut(many=True), **error_responses(400, 404)},
    )
    def get(self, request, workspace_id, task_id):
        access = self.access()
        validated(serializers.TaskLogQueryIn, request.query_params.dict())
        page = self.paginate_queryset(selectors.task_log(access=access, task_id=task_id))
        return self.get_paginated_response(serializers.TurnLogOut(page, many=True).data)


class TaskContextApi(WorkspaceApi):
    serializer_class = serializers.TaskContextOut

    @extend_schema(
        operation_id="tasks_context",
        description="What the model sees: the context the task's next decision would get if it started now, "
        "layer by layer (stable first: system rules, tool schemas, profile snapshot, history summaries; then "
        "recent steps, the task's current state and the new messages), each with its token estimate, hash and "
        "content; the prefix hash (unchanged from step to step unless a tool domain was loaded, the profile "
        "changed or a summary was appended), the visible tools, the budget and the summaries written so far. "
        "Nothing runs and nothing is written.",
        responses={200: serializers.TaskContextOut, **error_responses(404)},
    )
    def get(self, request, workspace_id, task_id):
        task = selectors.task_get(access=self.access(), task_id=task_id)
        return Response(serializers.TaskContextOut(context_preview(task)).data)


class MemoryForgetApi(WorkspaceApi):
    serializer_class = serializers.ForgetOut

    @extend_schema(
        operation_id="memories_forget",
        description='Ask to forget a memory (`{"memory": id}`) or everything memory took from a source '
        '(`{"evidence": {"type": "task_message", "id": id}}`). Forgetting is irreversible, so this '
        "answers 202 with a confirmation card that a person (not an API key) must confirm; then the source stops "
        "feeding memory, what was derived from it is erased and rebuilt from what remains, the profile moves to "
        "a new version and no later context shows it. Asking again for the same thing changes nothing more "
        "(the same request and card, or no card once done). 404 for another workspace's memory or source; 400 "
        "`invalid_evidence_type` for a type that is not main_message, task_message or artifact_version.",
        request=serializers.ForgetIn,
        responses={202: serializers.ForgetOut, 200: serializers.ForgetOut, **error_responses(400, 403, 404)},
    )
    def post(self, request, workspace_id):
        access = self.access().require(Role.EDITOR)
        data = validated(serializers.ForgetIn, request.data)
        forget, card = memory_forget_ask(access=access, memory_id=data.get("memory"), evidence=data.get("evidence"))
        body = {"forget": forget.pk, "status": forget.status, "card": card.pk if card is not None else None}
        waiting = forget.status == "awaiting_confirmation"
        return Response(serializers.ForgetOut(body).data, status=status.HTTP_202_ACCEPTED if waiting else 200)


class ArtifactDeleteApi(WorkspaceApi):
    serializer_class = serializers.ArtifactDeleteOut

    @extend_schema(
        operation_id="artifacts_delete",
        description="Ask to delete an artifact. Deleting is irreversible, so this answers 202 with a confirmation "
        "card that a person (not an API key: 403 `person_required`) must confirm through its actions; then the "
        "artifact is deleted for good — gone from listings, search and its collections — and every task that "
        "had seen it gets a change notice. Asking again while the card is open returns the same card. Editors "
        "and owners; 404 for another workspace's or an already deleted artifact.",
        request=None,
        responses={202: serializers.ArtifactDeleteOut, **error_responses(403, 404)},
    )
    def post(self, request, workspace_id, artifact_id):
        access = self.access().require(Role.EDITOR)
        card, _ = artifact_delete_ask(access=access, artifact_id=artifact_id)
        body = {"artifact": artifact_id, "status": "awaiting_confirmation", "card": card}
        return Response(serializers.ArtifactDeleteOut(body).data, status=status.HTTP_202_ACCEPTED)


class ArtifactVersionProvenanceApi(WorkspaceApi):
    serializer_class = serializers.ProvenanceOut

    @extend_schema(
        operation_id="artifacts_versions_provenance",
        description="How this version was made: the task, the person's request (the messages the step read, or "
        "the brief), the exact model lease (provider, model, base URL host), the tool calls of the step that made "
        "it with their results, the generation job, the human decisions (cards and who resolved them), the "
        "charges keyed by call id, the earlier version and source artifacts it came from, the memories the "
        "step was shown, and (`sources`) the creative guides its turn read before making it, with their versions. "
        "A person's own version says who wrote it. Anything forgotten is shown as removed. "
        "Viewers may read; 404 for another workspace's or a deleted artifact, or a version that does not exist.",
        responses={200: serializers.ProvenanceOut, **error_responses(404)},
    )
    def get(self, request, workspace_id, artifact_id, number):
        found = version_provenance(access=self.access(), artifact_id=artifact_id, number=number)
        return Response(serializers.ProvenanceOut(found).data)


def _task_action(view: WorkspaceApi, service, task_id: int) -> Response:
    """A state move of the task (no body), answered with the task as it now is."""
    access = view.access().require(Role.EDITOR)
    validated(serializers.NoBodyIn, view.request.data)
    service(access=access, task_id=task_id)
    return Response(serializers.TaskDetailOut(selectors.task_get(access=access, task_id=task_id)).data)


def _action_schema(operation_id: str, description: str):
    return extend_schema(
        operation_id=operation_id,
        description=description,
        request=None,
        responses={200: serializers.TaskDetailOut, **error_responses(400, 403, 404, 409)},
    )


def _task_action_api(name: str, service, operation_id: str, description: str) -> type[WorkspaceApi]:
    """A POST endpoint moving a task's state with `service` (no body), answered with the task as it now is."""

    @_action_schema(operation_id, description)
    def post(self, request, workspace_id, task_id):
        return _task_action(self, service, task_id)

    return type(name, (WorkspaceApi,), {"serializer_class": serializers.TaskDetailOut, "post": post})


TaskCancelApi = _task_action_api(
    "TaskCancelApi",
    task_services.task_cancel,
    "tasks_cancel",
    "Stop the task for good. Its workers are fenced out; cancelling twice is harmless. A cancelled task "
    "cannot be paused or resumed (409 `task_state`).",
)
TaskArchiveApi = _task_action_api(
    "TaskArchiveApi",
    task_services.task_archive,
    "tasks_archive",
    "Put a finished, idle or cancelled task away: Main no longer routes to it and it takes no messages. "
    "409 `task_state` while it is working or waiting.",
)
TaskUnarchiveApi = _task_action_api(
    "TaskUnarchiveApi",
    task_services.task_unarchive,
    "tasks_unarchive",
    "Bring an archived task back; archiving or unarchiving twice is harmless.",
)
TaskPauseApi = _task_action_api(
    "TaskPauseApi",
    task_services.task_pause,
    "tasks_pause",
    "Pause the task, keeping its state. 409 `task_state` when the task is finished or cancelled.",
)


class TaskResumeApi(WorkspaceApi):
    serializer_class = serializers.TaskResumeOut

    @extend_schema(
        operation_id="tasks_resume",
        request=None,
        description="Resume a paused task. Its checkpoint is judged first (DESIGN §11): an action interrupted with "
        "its outcome unknown is settled by its receipt, then the goal, configuration, sources, permissions and "
        "budget are re-checked. `resume` is the verdict (null when the task was not paused). A verdict a person "
        "must review opens a card and the task waits; otherwise a turn starts if messages or checklist items "
        "are waiting, else the task becomes idle. 409 `task_state` for a cancelled task.",
        responses={200: serializers.TaskResumeOut, **error_responses(400, 403, 404, 409)},
    )
    def post(self, request, workspace_id, task_id):
        access = self.access().require(Role.EDITOR)
        validated(serializers.NoBodyIn, request.data)
        task, verdict = task_resume_checked(access=access, task_id=task_id)
        task = selectors.task_get(access=access, task_id=task.pk)
        return Response({**serializers.TaskDetailOut(task).data, "resume": verdict})


class TaskGoalApi(WorkspaceApi):
    serializer_class = serializers.TaskDetailOut

    @extend_schema(
        operation_id="tasks_goal_revise",
        request=serializers.GoalReviseIn,
        description="Rewrite what the task must deliver: the brief becomes the goal's next revision (the earlier "
        "ones stay). Work in progress is reviewed before it goes on, and spending approved for the old goal is "
        "asked for again. 400 `brief_unchanged` when the brief is the same.",
        responses={200: serializers.TaskDetailOut, **error_responses(400, 403, 404)},
    )
    def post(self, request, workspace_id, task_id):
        access = self.access()
        data = validated(serializers.GoalReviseIn, request.data)
        goal_services.goal_revise_by_person(
            access=access, task_id=task_id, brief=data["brief"], reason=data.get("reason", "")
        )
        return Response(serializers.TaskDetailOut(selectors.task_get(access=access, task_id=task_id)).data)


class TaskCheckpointApi(WorkspaceApi):
    serializer_class = serializers.CheckpointOut

    @extend_schema(
        operation_id="tasks_checkpoint",
        description="The task's portable checkpoint (JSON, `schema: 1`): what its work relies on (goal revision, "
        "newest source version, configuration version), where it stands (`status`, the pending action whose "
        "outcome is unknown, completed operation ids), its spending and its step count. `manage.py resume_check` "
        "judges one against a context.",
        responses={200: serializers.CheckpointOut, **error_responses(404)},
    )
    def get(self, request, workspace_id, task_id):
        task = selectors.task_get(access=self.access(), task_id=task_id)
        return Response(checkpoint_export(task).to_json())


class TaskSettingsApi(WorkspaceApi):
    serializer_class = serializers.TaskDetailOut

    @extend_schema(
        operation_id="tasks_settings",
        description="Change the task's autonomy and/or permissions, two of its three separate settings (the "
        "budget is a person's approval in billing). The keys of `permissions` given replace the task's. Takes "
        "effect at the task's next decision. 409 `task_cancelled` for a cancelled task.",
        request=serializers.TaskSettingsIn,
        responses={200: serializers.TaskDetailOut, **error_responses(400, 403, 404, 409, 413)},
    )
    def patch(self, request, workspace_id, task_id):
        access = self.access().require(Role.EDITOR)
        data = validated(serializers.TaskSettingsIn, request.data)
        settings_services.task_settings_update(
            access=access, task_id=task_id, autonomy=data.get("autonomy"), permissions=data.get("permissions")
        )
        return Response(serializers.TaskDetailOut(selectors.task_get(access=access, task_id=task_id)).data)


class CardListApi(WorkspaceApi):
    serializer_class = serializers.CardOut

    @extend_schema(
        operation_id="cards_list",
        description="The workspace's cards (decisions shown to a person), newest first. Filter with `status` "
        "(e.g. `open`), `kind` (e.g. `quote`) and `task`.",
        parameters=[
            OpenApiParameter("status", str, enum=CardStatus.values, description="Only cards with this status."),
            OpenApiParameter("kind", str, enum=CardKind.values, description="Only cards of this kind."),
            OpenApiParameter("task", int, description="Only this task's cards."),
        ],
        responses={200: serializers.CardOut(many=True), **error_responses(400, 404)},
    )
    def get(self, request, workspace_id):
        access = self.access()
        query = validated(serializers.CardQueryIn, request.query_params.dict())
        cards = selectors.card_list(
            access=access, status=query.get("status"), task_id=query.get("task"), kind=query.get("kind")
        )
        page = self.paginate_queryset(cards)
        return self.get_paginated_response(serializers.CardOut(page, many=True).data)


class ReplyListApi(WorkspaceApi):
    serializer_class = serializers.ReplyOut

    @extend_schema(
        operation_id="replies_list",
        description="What the agent said to the person in the workspace's tasks, newest first: its questions, "
        "notes, why it stopped and what it made, one entry per step that wrote words, with the inbox messages it "
        "answers. Filter with `task`. Live, each arrives as a `step.committed` event with its text.",
        parameters=[OpenApiParameter("task", int, description="Only this task's words.")],
        responses={200: serializers.ReplyOut(many=True), **error_responses(400, 404)},
    )
    def get(self, request, workspace_id):
        access = self.access()
        query = validated(serializers.ReplyQueryIn, request.query_params.dict())
        page = self.paginate_queryset(selectors.reply_list(access=access, task_id=query.get("task")))
        return self.get_paginated_response(serializers.ReplyOut(page, many=True).data)


class CardDetailApi(WorkspaceApi):
    serializer_class = serializers.CardOut

    @extend_schema(operation_id="cards_retrieve", responses={200: serializers.CardOut, **error_responses(404)})
    def get(self, request, workspace_id, card_id):
        return Response(serializers.CardOut(selectors.card_get(access=self.access(), card_id=card_id)).data)


class CardActionApi(WorkspaceApi):
    serializer_class = serializers.CardOut

    @extend_schema(
        operation_id="cards_act",
        description="Act on an open card, once: `confirm`, `adjust` (with `text`), `choose` (with `option`), "
        "`approve` or `decline` (quote cards; `approve` may name a `budget`). The answer reaches the task, "
        "which goes on by itself; `approve` grants the budget and wakes the task, `decline` stops it with "
        "`spending_declined`. The card's `actions` list what it accepts (400 `invalid_action` otherwise). "
        "Editors and owners; approving spending or confirming an irreversible operation needs a person, not "
        "an API key (403 `person_required`). 409 `card_resolved` once resolved (`card_cancelled` when "
        "withdrawn), `task_cancelled` when its task was cancelled.",
        request=serializers.CardActionIn,
        responses={200: serializers.CardOut, **error_responses(400, 403, 404, 409, 413)},
    )
    def post(self, request, workspace_id, card_id):
        access = self.access().require(Role.EDITOR)
        data = validated(serializers.CardActionIn, request.data)
        main_services.main_card_act(access=access, card_id=card_id, **data)
        return Response(serializers.CardOut(selectors.card_get(access=access, card_id=card_id)).data)


class TaskMessageListCreateApi(WorkspaceApi):
    serializer_class = serializers.InboxMessageOut

    @extend_schema(
        operation_id="task_messages_list",
        description="The task's inbox in arrival order, with each message's status and the step that consumed it.",
        responses={200: serializers.InboxMessageOut(many=True), **error_responses(400, 404)},
    )
    def get(self, request, workspace_id, task_id):
        access = self.access()
        validated(serializers.PageQueryIn, request.query_params.dict())
        page = self.paginate_queryset(selectors.inbox_list(access=access, task_id=task_id))
        return self.get_paginated_response(serializers.InboxMessageOut(page, many=True).data)

    @extend_schema(
        operation_id="task_messages_create",
        description="Post a message to the task. The agent reads it at its next safe boundary; until then it may "
        "be withdrawn or replaced. 409 `task_cancelled` for a cancelled task." + IDEMPOTENCY_DESCRIPTION,
        parameters=[IDEMPOTENCY_KEY],
        request=serializers.InboxMessageIn,
        responses={201: serializers.InboxMessageOut, **error_responses(400, 403, 404, 409, 413)},
    )
    def post(self, request, workspace_id, task_id):
        access = self.access().require(Role.EDITOR)
        data = validated(serializers.InboxMessageIn, request.data)
        return self.idempotent(access, lambda: self._post(access, task_id, data))

    def _post(self, access, task_id, data) -> Response:
        message = inbox_services.message_post(access=access, task_id=task_id, text=data["text"])
        message = selectors.inbox_message_get(access=access, task_id=task_id, message_id=message.pk)
        return Response(serializers.InboxMessageOut(message).data, status=status.HTTP_201_CREATED)


class TaskMessageWithdrawApi(WorkspaceApi):
    serializer_class = serializers.InboxMessageOut

    @extend_schema(
        operation_id="task_messages_withdraw",
        description="Withdraw a message the agent has not read yet. 409 `message_not_pending` once it has.",
        request=None,
        responses={200: serializers.InboxMessageOut, **error_responses(400, 403, 404, 409)},
    )
    def post(self, request, workspace_id, task_id, message_id):
        access = self.access().require(Role.EDITOR)
        validated(serializers.NoBodyIn, request.data)
        inbox_services.message_withdraw(access=access, task_id=task_id, message_id=message_id)
        message = selectors.inbox_message_get(access=access, task_id=task_id, message_id=message_id)
        return Response(serializers.InboxMessageOut(message).data)


_REPLACE_DESCRIPTION = (
    "Replace a message the agent has not read yet: the old one becomes `replaced` and the answer is the new "
    "message (its `replaces` is the old id). 409 `message_not_pending` once the agent has read it."
)


class TaskMessageReplaceApi(WorkspaceApi):
    serializer_class = serializers.InboxMessageOut

    def _replace(self, request, task_id, message_id):
        access = self.access().require(Role.EDITOR)
        data = validated(serializers.InboxMessageIn, request.data)
        new = inbox_services.message_replace(access=access, task_id=task_id, message_id=message_id, text=data["text"])
        new = selectors.inbox_message_get(access=access, task_id=task_id, message_id=new.pk)
        return Response(serializers.InboxMessageOut(new).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        operation_id="task_messages_replace",
        description=_REPLACE_DESCRIPTION,
        request=serializers.InboxMessageIn,
        responses={201: serializers.InboxMessageOut, **error_responses(400, 403, 404, 409, 413)},
    )
    def put(self, request, workspace_id, task_id, message_id):
        return self._replace(request, task_id, message_id)

    @extend_schema(
        operation_id="task_messages_replace_post",
        description=_REPLACE_DESCRIPTION + " Same as PUT, for clients that only send POST.",
        request=serializers.InboxMessageIn,
        responses={201: serializers.InboxMessageOut, **error_responses(400, 403, 404, 409, 413)},
    )
    def post(self, request, workspace_id, task_id, message_id):
        return self._replace(request, task_id, message_id)


# --- Main: the single entry point -------------------------------------------------------------------------


class MainMessageListCreateApi(WorkspaceApi):
    serializer_class = serializers.MainMessageOut

    @extend_schema(
        operation_id="main_messages_list",
        description="Messages the workspace's people sent to Main, newest first, each with how it was routed.",
        responses={200: serializers.MainMessageOut(many=True), **error_responses(400, 404)},
    )
    def get(self, request, workspace_id):
        access = self.access()
        validated(serializers.PageQueryIn, request.query_params.dict())
        page = self.paginate_queryset(main_services.main_message_list(access=access))
        return self.get_paginated_response(serializers.MainMessageOut(page, many=True).data)

    @extend_schema(
        operation_id="main_messages_create",
        description="Send a message to Main. With `task`, `artifact` or `card` it goes straight to that target "
        "(route `direct`, no model call); otherwise the Router decides over a bounded index of the tasks: "
        "`answer`, `lightweight`, `follow_up`, `new_task` or `clarify` (a card asks the person). A target that "
        "no longer takes messages (archived or cancelled task, deleted artifact, closed card) is reported in "
        "`refusal` and `reply`, and nothing runs. Messages sent with an API key are marked `api_request`: "
        "paid operations they lead to are confirmed one by one." + IDEMPOTENCY_DESCRIPTION,
        parameters=[IDEMPOTENCY_KEY],
        request=serializers.MainMessageIn,
        responses={201: serializers.MainMessageOut, **error_responses(400, 403, 404, 409, 413)},
    )
    def post(self, request, workspace_id):
        access = self.access().require(Role.EDITOR)
        data = validated(serializers.MainMessageIn, request.data)
        return self.idempotent(access, lambda: self._post(access, data))

    def _post(self, access, data) -> Response:
        message = main_services.main_message_post(
            access=access,
            text=data["text"],
            task_id=data.get("task"),
            artifact_id=data.get("artifact"),
            card_id=data.get("card"),
            api_request=access.api_key is not None,
        )
        message = main_services.main_message_get(access=access, message_id=message.pk)
        return Response(serializers.MainMessageOut(message).data, status=status.HTTP_201_CREATED)


# A retry of a Flow run request with the same key returns the run it started (200).
FLOW_RUN_IDEMPOTENCY_KEY = OpenApiParameter(
    "Idempotency-Key", str, location=OpenApiParameter.HEADER, required=False, description="1–200 chars."
)


def _flow_run_response(started: flow_run_services.FlowRunRequest) -> Response:
    """200 for a run an idempotency key already started; else 201 running, or 202 waiting on a quote card."""
    code = status.HTTP_200_OK
    if started.created:
        code = status.HTTP_202_ACCEPTED if started.card is not None else status.HTTP_201_CREATED
    return Response(_flow_run_body(started), status=code)


def _flow_run_body(request: flow_run_services.FlowRunRequest) -> dict:
    run = request.run
    run.refresh_from_db()
    card = serializers.CardOut(request.card).data if request.card is not None else None
    return {**serializers.FlowRunOut(run).data, "cost": request.amount, "card": card}


class FlowRunCreateApi(WorkspaceApi):
    serializer_class = serializers.FlowRunRequestOut

    @extend_schema(
        operation_id="flow_runs_create",
        description="Run the Flow's current version; its nodes run as background jobs. Its paid nodes are priced "
        "first: within the spend policy (and for a person) they are held and the run starts (201); above a limit, "
        "or through an API key, the run waits on a quote card for a person's approval (202), nothing held and no "
        "job submitted; without the funds, 402 and no run. Send `Idempotency-Key` to make a retry of the request "
        "return the same run (200) instead of starting another.",
        parameters=[FLOW_RUN_IDEMPOTENCY_KEY],
        request=FlowRunIn,
        responses={
            200: serializers.FlowRunRequestOut,
            201: serializers.FlowRunRequestOut,
            202: serializers.FlowRunRequestOut,
            **error_responses(400, 402, 403, 404, 409),
        },
    )
    def post(self, request, workspace_id, artifact_id):
        access = self.access().require(Role.EDITOR)
        data = validated(FlowRunIn, request.data)
        started = flow_run_services.flow_run_request(
            workspace_id=access.workspace.pk,
            artifact_id=artifact_id,
            inputs=data["inputs"],
            started_by=access.user,
            api_request=access.api_key is not None,
            idempotency_key=request.headers.get("Idempotency-Key"),
        )
        return _flow_run_response(started)


class FlowThreadRunCreateApi(WorkspaceApi):
    serializer_class = serializers.FlowRunRequestOut

    @extend_schema(
        operation_id="flow_thread_runs_create",
        description='Run the Flow over a conversation thread: the Main thread (`"main"`) or a task\'s '
        '(`{"task": id}`). The run reads the thread\'s `messages` most recent messages (default 20, at most 50) '
        "as its `text` input, a transcript bounded in size, and is priced and authorised like any run (201 running, "
        "202 waiting on a quote card, 402 without the funds). Its progress events name the thread, and when it "
        "ends its result is posted in that thread once: a Main message with route `flow`, or a message with "
        "source `flow` in the task's conversation, which the agent reads at its next turn but which starts none. "
        "404 for a task outside the workspace; 409 `task_cancelled` / `task_archived` for a task that takes no "
        "more messages. Send `Idempotency-Key` to make a retry return the same run (200).",
        parameters=[FLOW_RUN_IDEMPOTENCY_KEY],
        request=serializers.FlowThreadRunIn,
        responses={
            200: serializers.FlowRunRequestOut,
            201: serializers.FlowRunRequestOut,
            202: serializers.FlowRunRequestOut,
            **error_responses(400, 402, 403, 404, 409),
        },
    )
    def post(self, request, workspace_id, artifact_id):
        access = self.access().require(Role.EDITOR)
        data = validated(serializers.FlowThreadRunIn, request.data)
        started = flow_thread_services.flow_thread_run_request(
            access=access,
            artifact_id=artifact_id,
            thread=flow_thread_services.Thread.of(data["thread"]),
            messages=data["messages"],
            idempotency_key=request.headers.get("Idempotency-Key"),
        )
        return _flow_run_response(started)


class FlowRunRerunStaleApi(WorkspaceApi):
    serializer_class = serializers.FlowRunRequestOut

    @extend_schema(
        operation_id="flow_runs_rerun_stale",
        description="Re-run the run's stale nodes — those made from an artifact version that has changed since, "
        "and what is downstream of them — on their current inputs. Nodes still current keep their outputs and do "
        "not run; a re-run generation node adds the next version to the artifact it made before. Paid nodes are "
        "priced and authorised like a new run (201 running, 202 waiting on a quote card). 409 `nothing_stale` "
        "when no node is stale, `run_not_settled` while the run has not ended.",
        request=None,
        responses={
            201: serializers.FlowRunRequestOut,
            202: serializers.FlowRunRequestOut,
            **error_responses(402, 403, 404, 409),
        },
    )
    def post(self, request, workspace_id, run_id):
        access = self.access().require(Role.EDITOR)
        started = flow_run_services.flow_run_rerun_stale_request(access=access, run_id=run_id)
        return _flow_run_response(started)


class FlowNodeRetryApi(WorkspaceApi):
    serializer_class = serializers.FlowRunRequestOut

    @extend_schema(
        operation_id="flow_nodes_retry",
        description="Retry a failed node, and the nodes skipped because of it, as a new attempt: nothing that "
        "succeeded runs again. Paid nodes are priced and authorised like a new run (201 running, 202 waiting on a "
        "quote card); the failed attempt's hold was released, so nothing is charged twice.",
        request=None,
        responses={
            201: serializers.FlowRunRequestOut,
            202: serializers.FlowRunRequestOut,
            **error_responses(402, 403, 404, 409),
        },
    )
    def post(self, request, workspace_id, run_id, node_id):
        access = self.access().require(Role.EDITOR)
        started = flow_run_services.flow_node_retry_request(access=access, run_id=run_id, node_id=node_id)
        return _flow_run_response(started)


class FlowNodeTypesApi(WorkspaceApi):
    serializer_class = serializers.FlowNodeTypesOut
    pagination_class = None

    @extend_schema(
        operation_id="flow_node_types_list",
        description="The node types a Flow is built from, each describing itself: its input and output ports with "
        "the types they carry (a wire whose types do not meet is refused: 400 `wire_type_mismatch` naming both "
        "ends), its params as a JSON Schema (a create or edit with params outside it is refused: 400 "
        "`invalid_node_params` naming the node and the field), and its price.",
        responses={200: serializers.FlowNodeTypesOut, **error_responses(404)},
    )
    def get(self, request, workspace_id):
        self.access()
        return Response(flow_run_services.flow_node_types_list())


# --- assistant presets ----------------------------------------------------------------------------------------


def _preset_changes(data: dict) -> dict:
    changes = {k: data[k] for k in ("name", "instructions", "params") if k in data}
    if "model_profile" in data:
        changes["model_profile_id"] = data["model_profile"]
    return changes


class PresetListCreateApi(WorkspaceApi):
    serializer_class = serializers.PresetOut

    @extend_schema(
        operation_id="assistant_presets_list",
        description="The workspace's assistant presets (seed 002): instructions, model parameters and model "
        "profile for one model call, referred to by Flow nodes.",
        responses={200: serializers.PresetOut(many=True), **error_responses(404)},
    )
    def get(self, request, workspace_id):
        page = self.paginate_queryset(preset_services.preset_list(access=self.access()))
        return self.get_paginated_response(serializers.PresetOut(page, many=True).data)

    @extend_schema(
        operation_id="assistant_presets_create",
        description="Create a preset at version 1. 400 `invalid_params` for model parameters the adapters do not "
        "accept, `unknown_model_profile` for a profile outside the workspace; 409 `preset_name_taken`.",
        request=serializers.PresetCreateIn,
        responses={201: serializers.PresetOut, **error_responses(400, 403, 404, 409)},
    )
    def post(self, request, workspace_id):
        access = self.access().require(Role.EDITOR)
        data = validated(serializers.PresetCreateIn, request.data)
        preset = preset_services.preset_create(access=access, **_preset_changes(data))
        return Response(serializers.PresetOut(preset).data, status=status.HTTP_201_CREATED)


class PresetDetailApi(WorkspaceApi):
    serializer_class = serializers.PresetOut

    @extend_schema(
        operation_id="assistant_presets_retrieve", responses={200: serializers.PresetOut, **error_responses(404)}
    )
    def get(self, request, workspace_id, preset_id):
        preset = preset_services.preset_get(access=self.access(), preset_id=preset_id)
        return Response(serializers.PresetOut(preset).data)

    @extend_schema(
        operation_id="assistant_presets_update",
        description="Edit a preset: the fields given replace its own, on top of `base_version`, which must be its "
        "current version (else 409 `version_conflict`, nothing changed). A change makes the next version; Flow "
        "nodes without a pinned version run it from then on.",
        request=serializers.PresetUpdateIn,
        responses={200: serializers.PresetOut, **error_responses(400, 403, 404, 409)},
    )
    def patch(self, request, workspace_id, preset_id):
        access = self.access().require(Role.EDITOR)
        data = validated(serializers.PresetUpdateIn, request.data)
        preset = preset_services.preset_update(
            access=access, preset_id=preset_id, base_version=data["base_version"], **_preset_changes(data)
        )
        return Response(serializers.PresetOut(preset).data)

    @extend_schema(
        operation_id="assistant_presets_destroy",
        description="Delete a preset and its versions; Flow nodes naming it fail with `preset_not_found`.",
        responses={204: None, **error_responses(403, 404)},
    )
    def delete(self, request, workspace_id, preset_id):
        preset_services.preset_delete(access=self.access().require(Role.EDITOR), preset_id=preset_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class PresetVersionListApi(WorkspaceApi):
    serializer_class = serializers.PresetVersionOut

    @extend_schema(
        operation_id="assistant_preset_versions_list",
        description="Every version of a preset, newest first.",
        responses={200: serializers.PresetVersionOut(many=True), **error_responses(404)},
    )
    def get(self, request, workspace_id, preset_id):
        versions = preset_services.preset_versions(access=self.access(), preset_id=preset_id)
        page = self.paginate_queryset(versions)
        return self.get_paginated_response(serializers.PresetVersionOut(page, many=True).data)
