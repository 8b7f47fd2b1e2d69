"""What the billing app tells the apps above it (DESIGN §1: it never imports them).

Published with lomote.kernel.domain_events.publish inside the publisher's transaction, so a subscriber's
reaction commits or rolls back with the change. Subscribe with these constants, never with the strings.
This module imports nothing, so any app may import it.
"""

APPROVAL_GRANTED = "billing.approval_granted"
"""A person approved spending: one quote, or a budget for a task.

Payload: workspace_id, task_id (the task the approval is for, or None), approval_id.
Published by billing.services.approvals.approval_grant once the approval row is written."""
