"""Time passing for a workspace: every stored time of its rows moves back, as if it had all happened earlier.

A scenario cannot wait a week. Moving the workspace's past back is the honest equivalent for what reads time
— "untouched for a week", today's spending against the daily cap, recency in routing — without touching the
clock of the processes. Only run it when nothing is running (the runner settles first).
"""

from datetime import timedelta

from django.apps import apps
from django.core.exceptions import FieldDoesNotExist
from django.db import models, transaction
from django.db.models import F

APPS = ("workspace", "billing", "memory", "agents")
# How a row reaches its workspace, tried in order.
PATHS = ("workspace", "task__workspace", "turn__task__workspace", "artifact__workspace", "memory__workspace")


def _path_to_workspace(model) -> str | None:
    for path in PATHS:
        try:
            field = model._meta.get_field(path.split("__", 1)[0])
        except FieldDoesNotExist:
            continue
        if not field.is_relation:
            continue
        rest = path.split("__", 1)[1] if "__" in path else None
        if rest is None and field.related_model._meta.label == "workspace.Workspace":
            return path
        if rest is not None and _path_to_workspace(field.related_model) == rest:
            return path
    return None


@transaction.atomic
def workspace_age(*, workspace_id: int, days: float) -> int:
    """Move every date-time of the workspace's rows back by `days`; returns how many rows moved."""
    delta = timedelta(days=days)
    moved = 0
    for label in APPS:
        for model in apps.get_app_config(label).get_models():
            path = _path_to_workspace(model)
            if model._meta.label == "workspace.Workspace":
                path = "pk"
            if path is None:
                continue
            times = [f.name for f in model._meta.concrete_fields if isinstance(f, models.DateTimeField)]
            if not times:
                continue
            rows = model.objects.filter(**{path: workspace_id})
            # One UPDATE per field, so a NULL in one column does not hold the others back.
            for name in times:
                moved += rows.exclude(**{f"{name}__isnull": True}).update(**{name: F(name) - delta})
    return moved
