from django.urls import path

from memory import apis

MEMORIES = "workspaces/<id:workspace_id>/memories/"
MEMORY = MEMORIES + "<id:memory_id>/"
# `…/memories/forget/` is routed by agents (it opens the confirmation card); an id here is digits only, so
# these paths never take it.

urlpatterns = [
    path(MEMORIES, apis.MemoryListCreateApi.as_view(), name="memory-list"),
    path(MEMORY, apis.MemoryDetailApi.as_view(), name="memory-detail"),
    path(MEMORY + "correct/", apis.MemoryCorrectApi.as_view(), name="memory-correct"),
    path(MEMORY + "confirm/", apis.MemoryConfirmApi.as_view(), name="memory-confirm"),
    path("workspaces/<id:workspace_id>/memory/profile/", apis.ProfileApi.as_view(), name="memory-profile"),
    path(
        "workspaces/<id:workspace_id>/memory/profile/versions/",
        apis.ProfileVersionListApi.as_view(),
        name="memory-profile-versions",
    ),
    path("workspaces/<id:workspace_id>/memory/episodes/", apis.EpisodeListApi.as_view(), name="memory-episodes"),
]
