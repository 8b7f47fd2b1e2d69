"""Row locks for the workspace app, always taken in primary-key order to avoid deadlocks."""

from workspace.models import Artifact, Membership, Workspace


def workspace_qs_for_update():
    return Workspace.objects.order_by("pk").select_for_update(of=("self",))


def membership_qs_for_update():
    return Membership.objects.order_by("pk").select_for_update(of=("self",))


def artifact_qs_for_update():
    return Artifact.objects.order_by("pk").select_for_update(of=("self",))
