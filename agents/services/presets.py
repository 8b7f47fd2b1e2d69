"""Assistant presets (seed 002's AiAssistant): a stored, versioned preset for one model call.

    preset_create(*, access, name, instructions="", params=None, model_profile_id=None) -> AssistantPreset
    preset_update(*, access, preset_id, base_version, **changes) -> AssistantPreset
    preset_delete(*, access, preset_id) -> None
    preset_version_resolve(*, workspace_id, preset_id, version=None) -> AssistantPresetVersion

A preset names its instructions, its model parameters and the model profile it runs on (none: the workspace's
default profile, resolved when it runs). Every save writes an immutable AssistantPresetVersion; an edit names
the version it was based on and a stale one is refused (409 `version_conflict`, nothing written), as for
artifacts (DESIGN §9). An edit that changes nothing writes no version.

Flow nodes refer to a preset by id, with an optional pinned version (`{"preset": id, "preset_version": n}`):
without a pin the node runs the preset's latest version at the moment it runs, and records which one.
"""

import json
from typing import Any

from django.db import IntegrityError, transaction
from django.utils.translation import gettext_noop

from agents.models import AssistantPreset, AssistantPresetVersion, ModelProfile
from lomote.kernel.exceptions import Conflict, InvalidInput, NotFound
from workspace.models import Role
from workspace.selectors import Access
from workspace.services.events import event_append

MAX_NAME = 120
MAX_INSTRUCTIONS = 20_000
MAX_PARAMS_BYTES = 4_000
# The model parameters a preset may set: those the OpenAI-compatible adapter sends (it refuses any other, and
# a preset refusing them at save time beats a node failing at run time).
PRESET_PARAMS = frozenset(
    {
        "temperature",
        "top_p",
        "max_tokens",
        "max_completion_tokens",
        "seed",
        "stop",
        "presence_penalty",
        "frequency_penalty",
        "reasoning_effort",
    }
)
FIELDS = ("name", "instructions", "params", "model_profile_id")


def _invalid(field: str, message: str, code: str = "invalid") -> InvalidInput:
    return InvalidInput(message, code=code, details={"fields": {field: [message]}})


def preset_fields_check(workspace_id: int, values: dict[str, Any]) -> dict[str, Any]:
    """Validate the fields present in `values` (services are called by the API, tools and the admin alike)."""
    if "name" in values:
        name = values["name"]
        if not isinstance(name, str) or not name.strip() or len(name.strip()) > MAX_NAME:
            raise _invalid("name", f"A preset needs a name of 1 to {MAX_NAME} characters.")
        values["name"] = name.strip()
    if "instructions" in values:
        instructions = values["instructions"]
        if not isinstance(instructions, str) or len(instructions) > MAX_INSTRUCTIONS:
            raise _invalid("instructions", f"Instructions are text of at most {MAX_INSTRUCTIONS} characters.")
    if "params" in values:
        params = values["params"] if values["params"] is not None else {}
        if not isinstance(params, dict) or len(json.dumps(params)) > MAX_PARAMS_BYTES:
            raise _invalid("params", f"Model parameters are a JSON object of at most {MAX_PARAMS_BYTES} bytes.")
        unknown = sorted(set(params) - PRESET_PARAMS)
        if unknown:
            raise InvalidInput(
                f"Unsupported model parameters: {', '.join(unknown)}.",
                code="invalid_params",
                details={"fields": {"params": unknown}, "allowed": sorted(PRESET_PARAMS)},
            )
        values["params"] = params
    profile_id = values.get("model_profile_id")
    if profile_id is not None and not ModelProfile.objects.filter(pk=profile_id, workspace_id=workspace_id).exists():
        # Another workspace's profile is as unknown as a missing one: its existence is not revealed.
        raise _invalid("model_profile", "No such model profile in this workspace.", code="unknown_model_profile")
    return values


def _snapshot(preset: AssistantPreset, created_by) -> AssistantPresetVersion:
    return AssistantPresetVersion.objects.create(
        preset=preset,
        number=preset.version,
        name=preset.name,
        instructions=preset.instructions,
        params=preset.params,
        model_profile_id=preset.model_profile_id,
        created_by=created_by,
    )


def _event(preset: AssistantPreset, action: str) -> None:
    event_append(
        workspace_id=preset.workspace_id,
        kind="assistant_preset",
        data={"preset": preset.pk, "name": preset.name, "version": preset.version, "action": action},
    )


def _name_taken(name: str) -> Conflict:
    return Conflict(
        f"A preset named {name!r} already exists in this workspace.",
        code="preset_name_taken",
        details={"fields": {"name": ["taken"]}},
    )


@transaction.atomic
def preset_create(
    *,
    access: Access,
    name: str,
    instructions: str = "",
    params: dict[str, Any] | None = None,
    model_profile_id: int | None = None,
) -> AssistantPreset:
    access.require(Role.EDITOR)
    values = preset_fields_check(
        access.workspace.pk,
        {"name": name, "instructions": instructions, "params": params, "model_profile_id": model_profile_id},
    )
    try:
        with transaction.atomic():
            preset = AssistantPreset.objects.create(workspace=access.workspace, created_by=access.user, **values)
    except IntegrityError:
        raise _name_taken(values["name"]) from None
    _snapshot(preset, access.user)
    _event(preset, "created")
    return preset


def _locked(access: Access, preset_id: int) -> AssistantPreset:
    preset = (
        AssistantPreset.objects.select_for_update(of=("self",), no_key=True)
        .filter(pk=preset_id, workspace=access.workspace)
        .first()
    )
    if preset is None:
        raise NotFound(gettext_noop("Preset not found."))
    return preset


@transaction.atomic
def preset_update(*, access: Access, preset_id: int, base_version: int, **changes: Any) -> AssistantPreset:
    """Apply `changes` (any of name, instructions, params, model_profile_id) on top of `base_version`, which must
    be the current version; the result is the next version. Takes the preset's row lock."""
    access.require(Role.EDITOR)
    unknown = sorted(set(changes) - set(FIELDS))
    if unknown:
        raise InvalidInput(
            f"Unknown preset fields: {unknown}.", details={"fields": dict.fromkeys(unknown, ["unknown"])}
        )
    preset = _locked(access, preset_id)
    if base_version != preset.version:
        raise Conflict(
            f"The preset is at version {preset.version}, not {base_version}; re-read it and redo the edit. "
            "Nothing was changed.",
            code="version_conflict",
            details={"current_version": preset.version, "base_version": base_version},
        )
    values = preset_fields_check(access.workspace.pk, dict(changes))
    changed = {f: v for f, v in values.items() if getattr(preset, f) != v}
    if not changed:
        return preset
    for field, value in changed.items():
        setattr(preset, field, value)
    preset.version += 1
    try:
        with transaction.atomic():
            preset.save()
    except IntegrityError:
        raise _name_taken(preset.name) from None
    _snapshot(preset, access.user)
    _event(preset, "updated")
    return preset


@transaction.atomic
def preset_delete(*, access: Access, preset_id: int) -> None:
    """Delete a preset and its versions. Flow nodes naming it then fail with `preset_not_found` when they run."""
    access.require(Role.EDITOR)
    preset = _locked(access, preset_id)
    _event(preset, "deleted")
    preset.delete()


@transaction.atomic
def preset_admin_save(*, preset: AssistantPreset, user, created: bool) -> AssistantPreset:
    """An operator's save in the Django admin, versioned like the API's: a new preset is version 1, a change
    is the next version (under the row lock), a save that changes nothing writes nothing."""
    for field, value in preset_fields_check(preset.workspace_id, {f: getattr(preset, f) for f in FIELDS}).items():
        setattr(preset, field, value)
    if created:
        preset.version = 1
        preset.created_by = user
        preset.save()
        _snapshot(preset, user)
        _event(preset, "created")
        return preset
    current = AssistantPreset.objects.select_for_update(of=("self",), no_key=True).get(pk=preset.pk)
    if all(getattr(current, f) == getattr(preset, f) for f in FIELDS):
        return current
    preset.version = current.version + 1
    preset.save()
    _snapshot(preset, user)
    _event(preset, "updated")
    return preset


def preset_list(*, access: Access):
    return AssistantPreset.objects.filter(workspace=access.workspace).order_by("name", "pk")


def preset_get(*, access: Access, preset_id: int) -> AssistantPreset:
    preset = AssistantPreset.objects.filter(workspace=access.workspace, pk=preset_id).first()
    if preset is None:
        raise NotFound(gettext_noop("Preset not found."))
    return preset


def preset_versions(*, access: Access, preset_id: int):
    return preset_get(access=access, preset_id=preset_id).versions.order_by("-number")


def preset_version_resolve(*, workspace_id: int, preset_id: Any, version: Any = None) -> AssistantPresetVersion:
    """The version a Flow node runs: the pinned one, else the latest. Raises InvalidInput for a malformed
    reference and NotFound (`preset_not_found`, `preset_version_not_found`) for a missing one."""
    if not isinstance(preset_id, int) or isinstance(preset_id, bool):
        raise InvalidInput("params.preset is a preset id (an integer).", code="invalid_params")
    if version is not None and (not isinstance(version, int) or isinstance(version, bool) or version < 1):
        raise InvalidInput("params.preset_version is a version number (1, 2, …).", code="invalid_params")
    preset = AssistantPreset.objects.filter(pk=preset_id, workspace_id=workspace_id).first()
    if preset is None:
        raise NotFound(f"Preset {preset_id} does not exist in this workspace.", code="preset_not_found")
    found = preset.versions.select_related("model_profile__secret").filter(number=version or preset.version).first()
    if found is None:
        raise NotFound(
            f"Preset {preset_id} has no version {version}.",
            code="preset_version_not_found",
            details={"current_version": preset.version},
        )
    return found
