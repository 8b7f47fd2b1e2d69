from django.urls import path

from workspace.consumers import WorkspaceEventsConsumer

websocket_urlpatterns = [
    path("ws/workspaces/<id:workspace_id>/", WorkspaceEventsConsumer.as_asgi()),
]
