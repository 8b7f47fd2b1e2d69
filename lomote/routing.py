from django.urls import path

from workspace.consumers import WorkspaceEventsConsumer

websocket_urlpatterns = [
    path("ws/workspaces/<int:workspace_id>/", WorkspaceEventsConsumer.as_asgi()),
]
