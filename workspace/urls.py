from django.urls import path

from workspace import apis, views

COLLECTION = "workspaces/<id:workspace_id>/collections/<id:collection_id>/"

urlpatterns = [
    path("workspaces/", apis.WorkspaceListCreateApi.as_view(), name="workspace-list"),
    path("workspaces/<id:workspace_id>/", apis.WorkspaceDetailApi.as_view(), name="workspace-detail"),
    path("workspaces/<id:workspace_id>/members/", apis.MemberListCreateApi.as_view(), name="member-list"),
    path(
        "workspaces/<id:workspace_id>/members/<id:membership_id>/",
        apis.MemberDetailApi.as_view(),
        name="member-detail",
    ),
    path("workspaces/<id:workspace_id>/api-keys/", apis.ApiKeyListCreateApi.as_view(), name="api-key-list"),
    path(
        "workspaces/<id:workspace_id>/api-keys/<id:key_id>/",
        apis.ApiKeyDetailApi.as_view(),
        name="api-key-detail",
    ),
    path("workspaces/<id:workspace_id>/events/", apis.EventListApi.as_view(), name="event-list"),
    path("workspaces/<id:workspace_id>/jobs/", apis.GenerationJobListApi.as_view(), name="generation-job-list"),
    path(
        "workspaces/<id:workspace_id>/jobs/<id:job_id>/",
        apis.GenerationJobDetailApi.as_view(),
        name="generation-job-detail",
    ),
    path(
        "workspaces/<id:workspace_id>/artifacts/<id:artifact_id>/",
        apis.ArtifactDetailApi.as_view(),
        name="artifact-detail",
    ),
    path(
        "workspaces/<id:workspace_id>/artifacts/<id:artifact_id>/versions/<id:number>/file",
        apis.ArtifactVersionFileApi.as_view(),
        name="artifact-version-file",
    ),
    path("workspaces/<id:workspace_id>/artifacts/", apis.ArtifactCreateApi.as_view(), name="artifact-list"),
    path("workspaces/<id:workspace_id>/artifacts/upload/", apis.ArtifactUploadApi.as_view(), name="artifact-upload"),
    path(
        "workspaces/<id:workspace_id>/artifacts/<id:artifact_id>/versions/upload/",
        apis.ArtifactVersionUploadApi.as_view(),
        name="artifact-version-upload",
    ),
    path(
        "workspaces/<id:workspace_id>/artifacts/<id:artifact_id>/document/",
        apis.DocumentApi.as_view(),
        name="artifact-document",
    ),
    path(
        "workspaces/<id:workspace_id>/artifacts/<id:artifact_id>/document/edits/",
        apis.DocumentEditsApi.as_view(),
        name="artifact-document-edits",
    ),
    path(
        "workspaces/<id:workspace_id>/artifacts/<id:artifact_id>/flow/edits/",
        apis.FlowEditsApi.as_view(),
        name="artifact-flow-edits",
    ),
    path(
        "workspaces/<id:workspace_id>/flow-runs/<id:run_id>/", apis.FlowRunDetailApi.as_view(), name="flow-run-detail"
    ),
    path("workspaces/<id:workspace_id>/flow-templates/", apis.FlowTemplateListApi.as_view(), name="flow-template-list"),
    path(
        "workspaces/<id:workspace_id>/flow-templates/<slug:name>/use/",
        apis.FlowTemplateUseApi.as_view(),
        name="flow-template-use",
    ),
    path("workspaces/<id:workspace_id>/collections/", apis.CollectionListCreateApi.as_view(), name="collection-list"),
    path(COLLECTION, apis.CollectionDetailApi.as_view(), name="collection-detail"),
    path(COLLECTION + "items/", apis.CollectionItemsApi.as_view(), name="collection-items"),
    path(COLLECTION + "items/<id:artifact_id>/", apis.CollectionItemDetailApi.as_view(), name="collection-item"),
    path(COLLECTION + "order/", apis.CollectionOrderApi.as_view(), name="collection-order"),
    path("workspaces/<id:workspace_id>/guides/", apis.GuideListCreateApi.as_view(), name="guide-list"),
    path("workspaces/<id:workspace_id>/guides/<slug:name>/", apis.GuideDetailApi.as_view(), name="guide-detail"),
    path("webhooks/generation/<slug:provider>/", views.generation_webhook, name="generation-webhook"),
]
