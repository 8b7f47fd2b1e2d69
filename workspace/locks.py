"""Row locks for the workspace app, always taken in primary-key order to avoid deadlocks.

Order across tables: a generation job before the artifact its result goes to; an artifact before the asset
collections it leaves when it is deleted; a guide before its document.

FOR NO KEY UPDATE, never FOR UPDATE: see agents/locks.py (a FOR UPDATE lock blocks other transactions'
foreign-key checks at COMMIT and deadlocks them).
"""

from workspace.models import Artifact, AssetCollection, GenerationJob, Guide, Membership, Workspace


def workspace_qs_for_update():
    return Workspace.objects.order_by("pk").select_for_update(of=("self",), no_key=True)


def membership_qs_for_update():
    return Membership.objects.order_by("pk").select_for_update(of=("self",), no_key=True)


def artifact_qs_for_update():
    return Artifact.objects.order_by("pk").select_for_update(of=("self",), no_key=True)


def generation_job_qs_for_update():
    return GenerationJob.objects.order_by("pk").select_for_update(of=("self",), no_key=True)


def asset_collection_qs_for_update():
    return AssetCollection.objects.order_by("pk").select_for_update(of=("self",), no_key=True)


def guide_qs_for_update():
    return Guide.objects.order_by("pk").select_for_update(of=("self",), no_key=True)
