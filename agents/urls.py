from django.urls import path

from agents import apis

TASK = "workspaces/<id:workspace_id>/tasks/<id:task_id>/"
MESSAGE = TASK + "messages/<id:message_id>/"
CARD = "workspaces/<id:workspace_id>/cards/<id:card_id>/"
PRESET = "workspaces/<id:workspace_id>/assistant-presets/<id:preset_id>/"

urlpatterns = [
    path("workspaces/<id:workspace_id>/messages/", apis.MainMessageListCreateApi.as_view(), name="main-message-list"),
    path("workspaces/<id:workspace_id>/tasks/", apis.TaskListCreateApi.as_view(), name="task-list"),
    path(TASK, apis.TaskDetailApi.as_view(), name="task-detail"),
    path(TASK + "log/", apis.TaskLogApi.as_view(), name="task-log"),
    path(TASK + "context/", apis.TaskContextApi.as_view(), name="task-context"),
    path(TASK + "cancel/", apis.TaskCancelApi.as_view(), name="task-cancel"),
    path(TASK + "pause/", apis.TaskPauseApi.as_view(), name="task-pause"),
    path(TASK + "archive/", apis.TaskArchiveApi.as_view(), name="task-archive"),
    path(TASK + "unarchive/", apis.TaskUnarchiveApi.as_view(), name="task-unarchive"),
    path(TASK + "resume/", apis.TaskResumeApi.as_view(), name="task-resume"),
    path(TASK + "goal/", apis.TaskGoalApi.as_view(), name="task-goal"),
    path(TASK + "checkpoint/", apis.TaskCheckpointApi.as_view(), name="task-checkpoint"),
    path(TASK + "settings/", apis.TaskSettingsApi.as_view(), name="task-settings"),
    path(TASK + "messages/", apis.TaskMessageListCreateApi.as_view(), name="task-message-list"),
    path(MESSAGE + "withdraw/", apis.TaskMessageWithdrawApi.as_view(), name="task-message-withdraw"),
    path(MESSAGE + "replace/", apis.TaskMessageReplaceApi.as_view(), name="task-message-replace"),
    path("workspaces/<id:workspace_id>/cards/", apis.CardListApi.as_view(), name="card-list"),
    path("workspaces/<id:workspace_id>/replies/", apis.ReplyListApi.as_view(), name="reply-list"),
    path("workspaces/<id:workspace_id>/memories/forget/", apis.MemoryForgetApi.as_view(), name="memory-forget"),
    path(CARD, apis.CardDetailApi.as_view(), name="card-detail"),
    path(
        "workspaces/<id:workspace_id>/assistant-presets/",
        apis.PresetListCreateApi.as_view(),
        name="assistant-preset-list",
    ),
    path(PRESET, apis.PresetDetailApi.as_view(), name="assistant-preset-detail"),
    path(PRESET + "versions/", apis.PresetVersionListApi.as_view(), name="assistant-preset-versions"),
    path(CARD + "actions/", apis.CardActionApi.as_view(), name="card-actions"),
    path(
        "workspaces/<id:workspace_id>/artifacts/<id:artifact_id>/delete/",
        apis.ArtifactDeleteApi.as_view(),
        name="artifact-delete",
    ),
    path(
        "workspaces/<id:workspace_id>/artifacts/<id:artifact_id>/versions/<id:number>/provenance/",
        apis.ArtifactVersionProvenanceApi.as_view(),
        name="artifact-version-provenance",
    ),
    path(
        "workspaces/<id:workspace_id>/artifacts/<id:artifact_id>/flow/runs/",
        apis.FlowRunCreateApi.as_view(),
        name="artifact-flow-runs",
    ),
    path(
        "workspaces/<id:workspace_id>/flows/<id:artifact_id>/runs/",
        apis.FlowThreadRunCreateApi.as_view(),
        name="flow-thread-runs",
    ),
    path(
        "workspaces/<id:workspace_id>/flow-node-types/",
        apis.FlowNodeTypesApi.as_view(),
        name="flow-node-types",
    ),
    path(
        "workspaces/<id:workspace_id>/flow-runs/<id:run_id>/rerun-stale/",
        apis.FlowRunRerunStaleApi.as_view(),
        name="flow-run-rerun-stale",
    ),
    path(
        "workspaces/<id:workspace_id>/flow-runs/<id:run_id>/nodes/<slug:node_id>/retry/",
        apis.FlowNodeRetryApi.as_view(),
        name="flow-node-retry",
    ),
]
