from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from agents.models import (
    PERMISSION_DOMAINS,
    AssistantPreset,
    AssistantPresetVersion,
    Autonomy,
    Card,
    CardKind,
    CardStatus,
    ChecklistItem,
    ContextSegment,
    GoalRevision,
    InboxMessage,
    MainMessage,
    ModelLease,
    Step,
    Task,
    TaskKind,
    TaskStatus,
    ToolCall,
    Turn,
)
from agents.services import presets as preset_services
from agents.services.cards import PUBLIC_ACTIONS, card_actions
from agents.services.flow_threads import DEFAULT_MESSAGES as DEFAULT_THREAD_MESSAGES
from agents.services.flow_threads import MAX_MESSAGES as MAX_THREAD_MESSAGES
from lomote.kernel.serializers import StrictSerializer
from workspace.serializers import FlowRunOut

# Long enough for a detailed brief or message; the body limit (LOMOTE_MAX_JSON_BODY) still applies on top.
MAX_TEXT = 20_000

# --- tasks ------------------------------------------------------------------------------------------------


class TaskOut(serializers.ModelSerializer):
    waiting_for = serializers.DictField(read_only=True, help_text="What a waiting task waits for; empty otherwise.")
    permissions = serializers.DictField(
        read_only=True, help_text="What the task may do: `domains` (tool domains) and `irreversible`."
    )

    class Meta:
        model = Task
        fields = [
            "id",
            "title",
            "kind",
            "status",
            "stop_reason",
            "waiting_for",
            "autonomy",
            "permissions",
            "language",
            "summary",
            "archived_at",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields


class ChecklistItemOut(serializers.ModelSerializer):
    artifacts = serializers.ListField(read_only=True, help_text="Artifacts this item produced.")

    class Meta:
        model = ChecklistItem
        fields = ["id", "position", "title", "status", "needs_confirmation", "evidence", "artifacts", "updated_at"]
        read_only_fields = fields


class ActiveTurnOut(serializers.ModelSerializer):
    step_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = Turn
        fields = [
            "id",
            "number",
            "status",
            "trigger",
            "generation",
            "attempts",
            "enqueued_at",
            "started_at",
            "lease_expires_at",
            "step_count",
        ]
        read_only_fields = fields


class TaskCountsOut(serializers.Serializer):
    turns = serializers.IntegerField(source="turn_count")
    steps = serializers.IntegerField(source="step_count")
    tool_calls = serializers.IntegerField(source="tool_call_count")
    pending_messages = serializers.IntegerField(
        source="pending_message_count", help_text="Inbox messages the agent has not read yet."
    )


class CardOut(serializers.ModelSerializer):
    options = serializers.ListField(
        child=serializers.DictField(), read_only=True, help_text='The choices offered: [{"id", "label"}].'
    )
    payload = serializers.DictField(read_only=True, help_text="What the card is about (question, quote, call…).")
    resolution = serializers.DictField(read_only=True, help_text="The action taken, by whom, with what.")
    resolved_by = serializers.CharField(
        source="resolved_by.username", allow_null=True, read_only=True, help_text="The person who resolved it."
    )
    actions = serializers.SerializerMethodField(help_text="The actions the card accepts now (none once closed).")

    class Meta:
        model = Card
        fields = [
            "id",
            "task",
            "turn",
            "kind",
            "status",
            "title",
            "body",
            "options",
            "actions",
            "payload",
            "resolution",
            "resolved_by",
            "resolved_at",
            "created_at",
        ]
        read_only_fields = fields

    def get_actions(self, card) -> list[str]:
        return list(card_actions(card))


class GoalRevisionOut(serializers.ModelSerializer):
    class Meta:
        model = GoalRevision
        fields = ["revision", "brief", "reason", "created_at"]
        read_only_fields = fields


class TaskDetailOut(TaskOut):
    """A task as `agents.selectors.task_get` returns it (checklist, active turn, open cards and counts prefetched)."""

    checklist = ChecklistItemOut(source="checklist_items", many=True, read_only=True)
    goal_revisions = GoalRevisionOut(
        many=True, read_only=True, help_text="What the task had to deliver, oldest first: 1 is its brief at creation."
    )
    active_turn = serializers.SerializerMethodField(help_text="The queued or running turn, if any.")
    counts = TaskCountsOut(source="*", read_only=True)
    cards = CardOut(source="open_cards", many=True, read_only=True, help_text="The task's open cards, oldest first.")

    class Meta(TaskOut.Meta):
        fields = [
            *TaskOut.Meta.fields,
            "brief",
            "goal_revision",
            "goal_revisions",
            "checklist",
            "active_turn",
            "cards",
            "counts",
        ]
        read_only_fields = fields

    @extend_schema_field(ActiveTurnOut(allow_null=True))
    def get_active_turn(self, task) -> dict | None:
        turns = task.active_turns
        return ActiveTurnOut(turns[0]).data if turns else None


class GoalReviseIn(StrictSerializer):
    brief = serializers.CharField(max_length=MAX_TEXT, min_length=1, help_text="What the task must deliver now.")
    reason = serializers.CharField(max_length=2000, required=False, allow_blank=True)


class ResumeVerdictOut(serializers.Serializer):
    """What judging a resume found (agents/resume.py): the verdict and what it did."""

    verdict = serializers.CharField(help_text="e.g. next_step_proposed, action_not_found_replay, goal_changed_review.")
    message = serializers.CharField()
    pendingAction = serializers.CharField(allow_null=True, help_text="The operation id still pending, if any.")
    completed = serializers.ListField(child=serializers.CharField(), help_text="Completed operation ids.")
    lookups = serializers.IntegerField(help_text="Receipt lookups made (at most one).")
    writes = serializers.IntegerField(help_text="Writes to the target: always 0, a resume never acts.")
    outcome = serializers.CharField(help_text="go, wait_jobs, review (a card is open), cancelled, or a stop reason.")


class TaskResumeOut(TaskDetailOut):
    resume = ResumeVerdictOut(allow_null=True, read_only=True, help_text="Null when the task was not paused.")

    class Meta(TaskDetailOut.Meta):
        fields = [*TaskDetailOut.Meta.fields, "resume"]
        read_only_fields = fields


class PendingActionOut(serializers.Serializer):
    id = serializers.CharField(help_text="The operation id: `turn:step:call`.")
    tool = serializers.CharField()
    target = serializers.JSONField()
    params = serializers.JSONField()


class CheckpointOut(serializers.Serializer):
    """The portable checkpoint, schema 1 (DESIGN §11)."""

    schema = serializers.IntegerField()
    mission = serializers.IntegerField(help_text="The task's id.")
    tenant = serializers.IntegerField(help_text="The workspace's id.")
    subject = serializers.IntegerField(allow_null=True, help_text="The person the task acts for.")
    goalRevision = serializers.IntegerField(help_text="The goal revision the work relies on.")
    sourceRevision = serializers.IntegerField(allow_null=True, help_text="Every source version up to it was seen.")
    configVersion = serializers.CharField(help_text="The model and spending policy the work runs under.")
    status = serializers.CharField(help_text="ready, running, paused, action_unknown, awaiting_approval, …")
    facts = serializers.JSONField()
    completedActions = serializers.ListField(child=serializers.CharField())
    pendingAction = PendingActionOut(allow_null=True)
    spent = serializers.IntegerField()
    held = serializers.IntegerField()
    stepCount = serializers.IntegerField(help_text="Steps of the turn a resume would continue (0 for a new one).")


LANGUAGE_TAG = r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$"


class TaskCreateIn(StrictSerializer):
    title = serializers.CharField(max_length=200, min_length=1)
    brief = serializers.CharField(
        max_length=MAX_TEXT, min_length=1, help_text="What the person wants; it becomes the first inbox message."
    )
    language = serializers.RegexField(
        LANGUAGE_TAG, max_length=16, default="en", help_text="The person's language as a BCP 47 tag, e.g. `fr`."
    )
    kind = serializers.ChoiceField(choices=TaskKind.choices, default=TaskKind.PERSISTENT)


class PageQueryIn(StrictSerializer):
    """The pagination parameters, checked so a bad value is a 400 rather than silently the default."""

    limit = serializers.IntegerField(min_value=1, max_value=500, required=False)
    offset = serializers.IntegerField(min_value=0, required=False)


TASK_LIST_KINDS = [*TaskKind.values, "all"]


class TaskQueryIn(PageQueryIn):
    status = serializers.ChoiceField(choices=TaskStatus.choices, required=False)
    kind = serializers.ChoiceField(
        choices=TASK_LIST_KINDS,
        required=False,
        help_text="persistent (the default), lightweight (quick results, not listed otherwise) or all.",
    )


class NoBodyIn(StrictSerializer):
    """Actions take no fields; sending some is a mistake worth reporting."""


class TaskSettingsIn(StrictSerializer):
    autonomy = serializers.ChoiceField(
        choices=Autonomy.choices,
        required=False,
        help_text="`ask`: confirm each paid step and each next step; `checkpoints`: ask at checklist items "
        "that need confirmation and when billing requires; `auto`: go on without asking, within the budget.",
    )
    permissions = serializers.JSONField(
        required=False,
        help_text="The keys given replace the task's: `domains` (tool domains the task may use, among "
        f"{', '.join(PERMISSION_DOMAINS)}) and `irreversible` (whether irreversible tools may run at all; each "
        "call is still confirmed by a person).",
    )

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError("Give `autonomy`, `permissions`, or both.")
        return attrs


# --- cards ------------------------------------------------------------------------------------------------


class CardQueryIn(PageQueryIn):
    status = serializers.ChoiceField(choices=CardStatus.choices, required=False)
    kind = serializers.ChoiceField(choices=CardKind.choices, required=False)
    task = serializers.IntegerField(min_value=1, max_value=2**63 - 1, required=False)


class CardActionIn(StrictSerializer):
    action = serializers.ChoiceField(choices=PUBLIC_ACTIONS)
    option = serializers.CharField(max_length=80, required=False, help_text="With `choose`: the option's id.")
    text = serializers.CharField(
        max_length=MAX_TEXT, required=False, help_text="With `adjust`: what to change. Optional otherwise."
    )
    budget = serializers.IntegerField(
        min_value=1, required=False, help_text="With `approve`: the budget to grant, if not the quoted amount."
    )


# --- execution log ----------------------------------------------------------------------------------------


class ModelLeaseOut(serializers.ModelSerializer):
    """The exact model a turn used. Deliberately without the secret: only its adapter ever reads that."""

    base_url = serializers.SerializerMethodField(help_text="The provider's endpoint; null for an embedded model.")

    class Meta:
        model = ModelLease
        fields = ["provider", "model", "base_url", "params", "created_at"]
        read_only_fields = fields

    @extend_schema_field(serializers.URLField(allow_null=True))
    def get_base_url(self, lease) -> str | None:
        return lease.base_url or None


class ToolCallOut(serializers.ModelSerializer):
    call_id = serializers.CharField(read_only=True, help_text="Stable id `turn:step:index`, the idempotency key.")

    class Meta:
        model = ToolCall
        fields = [
            "id",
            "call_id",
            "provider_call_id",
            "index",
            "name",
            "status",
            "idempotent",
            "input",
            "result",
            "error",
            "attempts",
            "started_generation",
            "started_at",
            "finished_at",
        ]
        read_only_fields = fields


class StepUsageOut(serializers.ModelSerializer):
    class Meta:
        model = Step
        fields = ["prompt_tokens", "cached_prompt_tokens", "completion_tokens"]
        read_only_fields = fields


class StepOut(serializers.ModelSerializer):
    usage = StepUsageOut(source="*", read_only=True)
    consumed_message_ids = serializers.PrimaryKeyRelatedField(
        source="consumed_messages",
        many=True,
        read_only=True,
        help_text="Inbox messages the model read in this step.",
    )
    tool_calls = ToolCallOut(many=True, read_only=True)

    class Meta:
        model = Step
        fields = [
            "id",
            "index",
            "number",
            "generation",
            "model",
            "text",
            "decision",
            "usage",
            "prefix_hash",
            "context_tokens",
            "visible_tools",
            "memory",
            "consumed_message_ids",
            "created_at",
            "tool_calls",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "number": {"help_text": "The step's place in its task, across turns (what read_history counts in)."},
            "prefix_hash": {"help_text": "SHA-256 of the stable prefix the model was sent (DESIGN §7)."},
            "context_tokens": {"help_text": "Our estimate of the whole request, in tokens."},
            "visible_tools": {"help_text": "The tools the model could call, in the order it saw them."},
            "memory": {"help_text": "The long-term memory it was shown: profile version, memory versions, recall."},
        }


class TurnLogOut(serializers.ModelSerializer):
    model_lease = ModelLeaseOut(read_only=True, allow_null=True)
    steps = StepOut(many=True, read_only=True)
    resume = serializers.SerializerMethodField(help_text="The resume check this turn ran first, if any: its verdict.")

    class Meta:
        model = Turn
        fields = [
            "id",
            "number",
            "status",
            "trigger",
            "generation",
            "attempts",
            "stop_reason",
            "error",
            "made_progress",
            "created_at",
            "enqueued_at",
            "started_at",
            "finished_at",
            "model_lease",
            "resume",
            "steps",
        ]
        read_only_fields = fields

    @extend_schema_field(serializers.JSONField(allow_null=True))
    def get_resume(self, turn) -> dict | None:
        resume = (turn.checkpoint or {}).get("resume")
        return resume if resume and resume.get("verdict") else None


class TaskLogQueryIn(PageQueryIn):
    limit = serializers.IntegerField(min_value=1, max_value=50, required=False, help_text="Turns per page (1-50).")


# --- inbox ------------------------------------------------------------------------------------------------


class ReplyQueryIn(PageQueryIn):
    task = serializers.IntegerField(min_value=1, max_value=2**63 - 1, required=False)


class ReplyOut(serializers.ModelSerializer):
    """The agent's words to the person in one step of a task."""

    task = serializers.IntegerField(source="turn.task_id", read_only=True)
    turn = serializers.IntegerField(source="turn.id", read_only=True)
    answers = serializers.SerializerMethodField(
        help_text="The inbox messages (ids) the step read: the person's words it answers. A Main message names "
        "its inbox message as `inbox_message`."
    )

    class Meta:
        model = Step
        fields = ["id", "task", "turn", "index", "number", "text", "model", "answers", "created_at"]
        read_only_fields = fields
        extra_kwargs = {
            "index": {"help_text": "The step's place in its turn (the `step` of its step.committed event)."},
            "number": {"help_text": "The step's number across the task's turns."},
            "model": {"help_text": "What answered: a model's name, or Lomote's scripted planner."},
        }

    def get_answers(self, step) -> list[int]:
        return [message.pk for message in step.consumed_messages.all()]


class InboxMessageOut(serializers.ModelSerializer):
    author = serializers.CharField(
        source="author.username", allow_null=True, read_only=True, help_text="Null when an API key posted it."
    )

    class Meta:
        model = InboxMessage
        fields = [
            "id",
            "text",
            "status",
            "source",
            "author",
            "replaces",
            "consumed_by_step",
            "consumed_at",
            "flow_run",
            "created_at",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "source": {
                "help_text": "person, api_key, card (a person's answer to a card, in the runtime's words), "
                "runtime (a note to the agent) or flow (a Flow run's result)."
            },
            "flow_run": {"help_text": "The Flow run whose result this is (source `flow`)."},
            "replaces": {"help_text": "The message this one replaced."},
            "consumed_by_step": {"help_text": "The step in which the agent read this message."},
        }


class InboxMessageIn(StrictSerializer):
    text = serializers.CharField(max_length=MAX_TEXT, min_length=1)


# --- Main messages ----------------------------------------------------------------------------------------


class StrictIdField(serializers.IntegerField):
    """An id as a JSON integer: "12", 12.0 and true are refused, not coerced (the JSON type is the contract)."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class MainMessageIn(StrictSerializer):
    text = serializers.CharField(max_length=MAX_TEXT, min_length=1, help_text="The person's message, as written.")
    task = StrictIdField(
        min_value=1, max_value=2**63 - 1, required=False, help_text="Reply inside this task: delivered to it directly."
    )
    artifact = StrictIdField(
        min_value=1,
        max_value=2**63 - 1,
        required=False,
        help_text="A request about this artifact: delivered to the task that made it.",
    )
    card = StrictIdField(
        min_value=1,
        max_value=2**63 - 1,
        required=False,
        help_text="An answer to this card: to its task, or (clarification card) the id or label of an option.",
    )

    def validate(self, attrs):
        if sum(name in attrs for name in ("task", "artifact", "card")) > 1:
            raise serializers.ValidationError("Name at most one of task, artifact and card.")
        return attrs


class MainCandidateOut(serializers.Serializer):
    task = serializers.IntegerField()
    title = serializers.CharField(required=False)
    similarity = serializers.FloatField(required=False, help_text="Lexical similarity with the message (0-1).")


class MainLookupOut(serializers.Serializer):
    task = serializers.IntegerField(allow_null=True, help_text="The task id the Router asked to open.")
    result = serializers.ChoiceField(
        choices=["opened", "not_found", "refused", "invalid"],
        help_text="opened; not_found (not a candidate of this workspace, archived or cancelled); refused (past "
        "the look-up cap); invalid (arguments that were not a task id).",
    )


class MainMessageOut(serializers.ModelSerializer):
    author = serializers.CharField(
        source="author.username", allow_null=True, read_only=True, help_text="Null when an API key posted it."
    )
    api_key = serializers.SerializerMethodField(
        help_text='The API key that posted it, as it was named then: {"id", "name"}; null for a person.'
    )
    candidates = MainCandidateOut(many=True, read_only=True, help_text="The tasks the routing considered.")
    delivered = serializers.SerializerMethodField(help_text="Whether the message reached a task's inbox.")
    router_lookups = MainLookupOut(
        many=True, read_only=True, help_text="The tasks the Router opened (read-only) before deciding, in order."
    )

    class Meta:
        model = MainMessage
        fields = [
            "id",
            "text",
            "language",
            "route",
            "task",
            "card",
            "candidates",
            "reply",
            "refusal",
            "route_reason",
            "delivered",
            "inbox_message",
            "api_request",
            "router_model",
            "router_prompt_chars",
            "router_lookups",
            "author",
            "api_key",
            "flow_run",
            "created_at",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "route": {
                "help_text": "direct (explicit target), answer, lightweight, follow_up, new_task or clarify; flow for "
                "a Flow run's result posted to Main (not a person's message: `text` is the Flow's, never routed)."
            },
            "flow_run": {"help_text": "The Flow run whose result this is (route `flow`)."},
            "task": {"help_text": "The task the message went to (or was refused by, see `refusal`)."},
            "card": {"help_text": "The clarification card asked, or the card answered."},
            "reply": {"help_text": "What Main tells the person: its answer, or why nothing ran."},
            "refusal": {
                "help_text": "Why nothing ran: task_archived, task_cancelled, artifact_deleted or card_closed."
            },
            "language": {"help_text": "Detected from the person's wording; a new task keeps it."},
            "router_model": {"help_text": "The model that routed it; empty when no model was asked."},
            "router_prompt_chars": {
                "help_text": "Characters the Router read, over all its requests for this message (the index, then "
                "any look-ups): bounded, whatever the task count."
            },
        }

    def get_delivered(self, message) -> bool:
        return message.inbox_message_id is not None

    @extend_schema_field(
        {
            "type": "object",
            "nullable": True,
            "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
        }
    )
    def get_api_key(self, message) -> dict | None:
        key = message.api_key
        return None if key is None else {"id": key.pk, "name": key.name}


@extend_schema_field(
    {
        "oneOf": [
            {"type": "string", "enum": ["main"]},
            {
                "type": "object",
                "properties": {"task": {"type": "integer", "minimum": 1}},
                "required": ["task"],
                "additionalProperties": False,
            },
        ]
    }
)
class ThreadField(serializers.Field):
    """A conversation thread: "main", or {"task": <id>} — nothing else (no coercion of "12" or extra keys)."""

    # Doubled braces: DRF formats its error messages.
    default_error_messages = {"invalid": 'Expected "main" or {{"task": <task id>}}.'}

    def to_internal_value(self, data):
        if data == "main":
            return "main"
        if isinstance(data, dict) and set(data) == {"task"}:
            task = data["task"]
            if isinstance(task, int) and not isinstance(task, bool) and 1 <= task <= 2**63 - 1:
                return {"task": task}
        self.fail("invalid")

    def to_representation(self, value):
        return value


class FlowThreadRunIn(StrictSerializer):
    thread = ThreadField(help_text='The thread to read and answer in: "main" (the Main thread) or {"task": id}.')
    messages = StrictIdField(
        min_value=1,
        max_value=MAX_THREAD_MESSAGES,
        required=False,
        default=DEFAULT_THREAD_MESSAGES,
        help_text="How many of the thread's most recent messages the run reads.",
    )


class FlowRunRequestOut(FlowRunOut):
    """A run as its request left it: running with its paid nodes held, or waiting on a quote card."""

    cost = serializers.IntegerField(help_text="Credits its paid nodes cost (held, or quoted on the card).")
    card = CardOut(allow_null=True, help_text="The quote card the run waits on, while it needs an approval.")


class FlowPortTypeOut(serializers.Serializer):
    name = serializers.ChoiceField(choices=["text", "image", "video", "3d", "document", "choice"])
    title = serializers.CharField()
    description = serializers.CharField()


class FlowInputPortOut(serializers.Serializer):
    name = serializers.CharField(help_text="Every wire into the node lands on this port.")
    title = serializers.CharField()
    accepts = serializers.ListField(child=serializers.CharField(), help_text="The port types a wire may carry in.")
    description = serializers.CharField(allow_blank=True)


class FlowOutputPortOut(serializers.Serializer):
    name = serializers.CharField()
    title = serializers.CharField()
    types = serializers.ListField(
        child=serializers.CharField(),
        help_text="What it may carry (an artifact input: its artifact's kind decides which, once it names one).",
    )
    description = serializers.CharField(allow_blank=True)


class FlowNodePriceOut(serializers.Serializer):
    paid = serializers.BooleanField(help_text="Whether a run holds credits for it (a generation node).")
    operation = serializers.CharField(allow_null=True, help_text="The priced operation, e.g. `image.generate`.")
    credits_default = serializers.IntegerField(help_text="What it costs with its default parameters.")
    credits_per_unit = serializers.IntegerField(required=False)
    unit = serializers.CharField(required=False, help_text="What a unit is: image, second, request.")
    unit_param = serializers.CharField(
        required=False, allow_null=True, help_text="The param counting units, e.g. `generation_params.seconds`."
    )
    unit_default = serializers.IntegerField(required=False)
    unit_min = serializers.IntegerField(required=False)
    unit_max = serializers.IntegerField(required=False)


class FlowNodeTypeOut(serializers.Serializer):
    name = serializers.CharField(help_text="The `type` of a node.")
    title = serializers.CharField()
    description = serializers.CharField()
    inputs = FlowInputPortOut(many=True, help_text="No input: where a run starts.")
    outputs = FlowOutputPortOut(many=True, help_text="No output: where a run ends.")
    params_schema = serializers.DictField(
        help_text="The node's params as a JSON Schema (titles, defaults, enums, limits); the server validates "
        "params against it on every create and edit (400 `invalid_node_params` naming the node and field)."
    )
    generates = serializers.CharField(allow_null=True, help_text="The artifact kind a generation node makes.")
    price = FlowNodePriceOut()


class FlowNodeTypesOut(serializers.Serializer):
    port_types = FlowPortTypeOut(many=True)
    node_types = FlowNodeTypeOut(many=True)


class ContextLayerOut(serializers.Serializer):
    name = serializers.ChoiceField(
        choices=["system", "tools", "profile", "guides", "summaries", "recall", "history", "tail", "input"],
        help_text="Stable first: system, tools, profile, guides (names and purposes), summaries and recall make the "
        "prefix.",
    )
    tokens = serializers.IntegerField(help_text="Estimated tokens.")
    hash = serializers.CharField(help_text="SHA-256 of the layer's canonical JSON lines.")
    content = serializers.JSONField(help_text="The layer's messages (the tool schemas for `tools`).")


class ContextSegmentOut(serializers.ModelSerializer):
    class Meta:
        model = ContextSegment
        fields = ["number", "from_step", "to_step", "tokens", "source_tokens", "summariser", "created_at"]
        read_only_fields = fields


class TaskContextOut(serializers.Serializer):
    task = serializers.IntegerField(source="task.pk")
    goal_revision = serializers.IntegerField(source="task.goal_revision")
    profile_version = serializers.IntegerField()
    prefix_hash = serializers.CharField(source="built.prefix_hash", help_text="SHA-256 of the stable prefix.")
    tokens = serializers.IntegerField(source="built.tokens", help_text="Estimated tokens of the whole request.")
    budget = serializers.IntegerField(help_text="The most a request may take: the model's window less the answer.")
    high_water = serializers.IntegerField(help_text="Past this, the oldest history is summarised before the call.")
    visible_tools = serializers.ListField(source="built.visible_tools", child=serializers.CharField())
    layers = ContextLayerOut(source="built.layers", many=True)
    segments = ContextSegmentOut(source="task.context_segments.all", many=True)


# --- forgetting (memory) ---------------------------------------------------------------------------------


class ForgetEvidenceIn(StrictSerializer):
    type = serializers.CharField(
        max_length=32, help_text="main_message, task_message or artifact_version (other types: 400)."
    )
    id = StrictIdField(min_value=1, max_value=2**63 - 1, help_text="The message's or the version's id.")


class ForgetIn(StrictSerializer):
    memory = StrictIdField(min_value=1, max_value=2**63 - 1, required=False, help_text="A memory to forget.")
    evidence = ForgetEvidenceIn(required=False, help_text="Or a source whose every memory use is forgotten.")

    def validate(self, attrs):
        if ("memory" in attrs) == ("evidence" in attrs):
            raise serializers.ValidationError("Name either a memory or a piece of evidence.")
        return attrs


class ForgetOut(serializers.Serializer):
    forget = serializers.IntegerField(help_text="The forget request.")
    status = serializers.ChoiceField(choices=["awaiting_confirmation", "done", "cancelled"])
    card = serializers.IntegerField(
        allow_null=True, help_text="The confirmation card a person must confirm; null once done."
    )


class ArtifactDeleteOut(serializers.Serializer):
    artifact = serializers.IntegerField()
    status = serializers.ChoiceField(choices=["awaiting_confirmation"])
    card = CardOut(help_text="The confirmation card: a person confirms it to delete the artifact for good.")


# --- provenance: how an artifact version was made -----------------------------------------------------------


class ProvenanceArtifactOut(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField()
    title = serializers.CharField()
    version = serializers.IntegerField(help_text="The version described.")
    current_version = serializers.IntegerField()
    media_type = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()


class ProvenanceTaskOut(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()
    status = serializers.CharField(help_text="The task's status now.")


class ProvenanceRequestOut(serializers.Serializer):
    kind = serializers.ChoiceField(
        choices=["message", "brief"], help_text="An inbox message the step read, or the task's brief."
    )
    id = serializers.IntegerField(help_text="The inbox message's id, or the task's for its brief.")
    source = serializers.CharField(help_text="person, api_key, runtime… or `task` for the brief.")
    author = serializers.CharField(allow_null=True, help_text="The author's username.")
    text = serializers.CharField(allow_blank=True)
    main_message_id = serializers.IntegerField(allow_null=True, help_text="The Main message it came through.")
    created_at = serializers.DateTimeField()


class ProvenanceModelOut(serializers.Serializer):
    lease_id = serializers.IntegerField(help_text="The model lease the turn held.")
    provider = serializers.CharField()
    model = serializers.CharField()
    params = serializers.JSONField(help_text="The lease's model parameters (temperature…), as fixed for the turn.")
    leased_at = serializers.DateTimeField()
    base_url_host = serializers.CharField(allow_blank=True, help_text="Only the host; never a key or a path.")
    context_tokens = serializers.IntegerField()
    turn_id = serializers.IntegerField()
    turn_number = serializers.IntegerField()


class ProvenanceStepOut(serializers.Serializer):
    id = serializers.IntegerField()
    number = serializers.IntegerField(help_text="The step's place in its task.")
    turn_number = serializers.IntegerField()
    model = serializers.CharField(help_text="The model that produced the step's decision, as it answered.")
    text = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()
    made_by_call = serializers.CharField(help_text="The id of the tool call that made the version.")


class ProvenanceCallOut(serializers.Serializer):
    call_id = serializers.CharField()
    name = serializers.CharField()
    status = serializers.CharField()
    input = serializers.JSONField()
    result = serializers.JSONField(allow_null=True)
    error = serializers.JSONField(allow_null=True)
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


class ProvenanceJobOut(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField()
    provider = serializers.CharField()
    status = serializers.CharField()
    prompt = serializers.CharField(allow_blank=True)
    params = serializers.JSONField()
    call_id = serializers.CharField(help_text="The tool call that submitted it.")
    submitted_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


class ProvenanceCoversOut(serializers.Serializer):
    operation = serializers.CharField(allow_blank=True)
    items = serializers.IntegerField(allow_null=True)
    per_item = serializers.IntegerField(allow_null=True, help_text="Credits per item.")
    amount = serializers.IntegerField(help_text="Credits in all.")
    things = serializers.CharField(help_text='What the items are, in words: "3 images".')


class ProvenanceDecisionOut(serializers.Serializer):
    card_id = serializers.IntegerField()
    kind = serializers.CharField()
    title = serializers.CharField()
    status = serializers.CharField(help_text="open, resolved or cancelled.")
    resolution = serializers.JSONField()
    resolved_by = serializers.CharField(allow_null=True, help_text="The username of who resolved it.")
    resolved_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    covers = ProvenanceCoversOut(
        allow_null=True, help_text="What a quote card asked to approve; it may cover more than this version."
    )
    approval_id = serializers.IntegerField(allow_null=True, help_text="The approval the card recorded, if any.")


class ProvenanceChargeOut(serializers.Serializer):
    order_id = serializers.IntegerField()
    call_id = serializers.CharField(help_text="The tool call the order is keyed by: the call that made the version.")
    operation = serializers.CharField()
    amount = serializers.IntegerField(help_text="Credits.")
    status = serializers.CharField(help_text="held, captured, released or refunded.")
    authorisation = serializers.CharField()
    approval_id = serializers.IntegerField(allow_null=True, help_text="The person's approval it was held under.")
    captured = serializers.BooleanField()
    released = serializers.BooleanField(help_text="Released or refunded: nothing was kept.")
    created_at = serializers.DateTimeField()
    settled_at = serializers.DateTimeField(allow_null=True)


class ProvenanceSourceOut(serializers.Serializer):
    relation = serializers.ChoiceField(choices=["previous_version", "source"])
    artifact_id = serializers.IntegerField()
    artifact_title = serializers.CharField()
    artifact_kind = serializers.CharField()
    version = serializers.IntegerField()
    created_at = serializers.DateTimeField()


class ProvenanceMemoryOut(serializers.Serializer):
    version_id = serializers.IntegerField()
    kind = serializers.CharField(allow_blank=True)
    subject = serializers.CharField(allow_blank=True)
    status = serializers.CharField(help_text="active, superseded, forgotten (content removed) or deleted.")
    content = serializers.CharField(allow_blank=True)


class ProvenanceGuideOut(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["guide"])
    name = serializers.CharField()
    version = serializers.IntegerField(help_text="The guide version read (GET …/guides/<name>/?version=).")
    builtin = serializers.BooleanField()
    artifact_id = serializers.IntegerField(allow_null=True, help_text="A workspace guide's document; null if built in.")
    purpose = serializers.CharField(allow_blank=True)
    call_id = serializers.CharField(help_text="The read_guide call that loaded it.")
    read_at = serializers.DateTimeField(allow_null=True)


class ProvenanceOut(serializers.Serializer):
    artifact = ProvenanceArtifactOut()
    made_by = serializers.ChoiceField(choices=["agent", "person", "system"])
    person = serializers.CharField(allow_null=True, help_text="The username of the person who wrote or uploaded it.")
    task = ProvenanceTaskOut(allow_null=True)
    request = ProvenanceRequestOut(many=True)
    model = ProvenanceModelOut(allow_null=True, help_text="The exact model lease of the turn that made it.")
    step = ProvenanceStepOut(allow_null=True)
    tool_calls = ProvenanceCallOut(many=True, help_text="The calls of the step that made it, in order.")
    job = ProvenanceJobOut(allow_null=True, help_text="The generation job that produced it.")
    decisions = ProvenanceDecisionOut(many=True, help_text="The task's cards that led to it, newest first.")
    charges = ProvenanceChargeOut(many=True)
    derived_from = ProvenanceSourceOut(many=True)
    memories = ProvenanceMemoryOut(many=True, help_text="The long-term memories its step was shown.")
    sources = ProvenanceGuideOut(
        many=True, help_text="The creative guides its turn read before the step that made it, with their versions."
    )


# --- assistant presets ----------------------------------------------------------------------------------------


class _PresetFieldsIn(StrictSerializer):
    name = serializers.CharField(max_length=preset_services.MAX_NAME)
    instructions = serializers.CharField(
        max_length=preset_services.MAX_INSTRUCTIONS,
        allow_blank=True,
        required=False,
        trim_whitespace=False,
        help_text="The system instructions of every call made with this preset.",
    )
    params = serializers.JSONField(
        required=False,
        help_text="Model parameters laid over the profile's, among: "
        f"{', '.join(sorted(preset_services.PRESET_PARAMS))}.",
    )
    model_profile = StrictIdField(
        min_value=1,
        max_value=2**63 - 1,
        allow_null=True,
        required=False,
        help_text="The id of the model profile it runs on; null: the workspace's default profile when it runs.",
    )


class PresetCreateIn(_PresetFieldsIn):
    """A new preset: its name is required (an edit may leave it out)."""


class PresetUpdateIn(_PresetFieldsIn):
    base_version = StrictIdField(
        min_value=1,
        max_value=2**31 - 1,
        help_text="The version the edit was made on; a stale one is refused (409 `version_conflict`).",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["name"].required = False

    def validate(self, attrs):
        if set(attrs) == {"base_version"}:
            raise serializers.ValidationError("Give at least one of name, instructions, params, model_profile.")
        return attrs


class PresetOut(serializers.ModelSerializer):
    class Meta:
        model = AssistantPreset
        fields = ["id", "name", "instructions", "params", "model_profile", "version", "created_at", "updated_at"]
        read_only_fields = fields


class PresetVersionOut(serializers.ModelSerializer):
    class Meta:
        model = AssistantPresetVersion
        fields = ["number", "name", "instructions", "params", "model_profile", "created_at"]
        read_only_fields = fields
