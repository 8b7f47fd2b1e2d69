from django.utils.translation import gettext_noop

from lomote.kernel.exceptions import Conflict, DomainError


class Fenced(Exception):
    """This worker no longer holds the turn (taken over, cancelled or paused): stop without writing."""


class ModelError(DomainError):
    """A model provider failed. `retryable` says whether our own loop may try again."""

    status, code, default_message = 502, "model_error", gettext_noop("The model provider failed.")


class ModelConfigError(ModelError):
    code, default_message = "model_config", gettext_noop("The model is misconfigured.")
    retryable = False


class ToolError(DomainError):
    """A tool refused or failed; its message goes back to the model as the call's error result."""

    code, default_message = "tool_error", gettext_noop("The tool failed.")


class ToolPermissionDenied(ToolError):
    code, default_message = "tool_forbidden", gettext_noop("This task may not use that tool.")


class TaskStateConflict(Conflict):
    code = "task_state"
