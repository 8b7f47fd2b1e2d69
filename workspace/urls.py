from django.urls import path

from workspace import apis

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
]
