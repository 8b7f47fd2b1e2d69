"""Every reaction of workspace to its own domain events, in one list (`install`, from WorkspaceConfig.ready).

- a generation job settled → the Flow node waiting on it is settled by its own q-job (flows.runner);
- an artifact got a new version → Flow outputs made from an older version go stale (flows.stale);
- an artifact's title, description or tags were saved → its search vectors follow (search.artifacts).

Same app, but through the events like any subscriber: the services that publish them sit below the Flow
engine and do not import it. Both run inside the publisher's transaction.
"""

from django.db.models.signals import post_save

from lomote.kernel import domain_events
from workspace.domain_events import ARTIFACT_VERSION_ADDED, JOB_SETTLED
from workspace.flows.runner import on_job_settled
from workspace.flows.stale import flow_outputs_mark_stale
from workspace.models import Artifact
from workspace.search.artifacts import on_artifact_saved


def install() -> None:
    domain_events.subscribe(JOB_SETTLED)(on_job_settled)
    domain_events.subscribe(ARTIFACT_VERSION_ADDED)(flow_outputs_mark_stale)
    post_save.connect(on_artifact_saved, sender=Artifact, dispatch_uid="workspace.search.artifacts")
