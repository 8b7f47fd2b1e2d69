"""Tenancy: workspaces, memberships and API keys. Every write records an event in the same transaction."""

import secrets
from dataclasses import replace

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_noop

from lomote.kernel.exceptions import Conflict, InvalidInput, NotFound
from workspace.locks import membership_qs_for_update
from workspace.models import ApiKey, Membership, Role, Workspace
from workspace.selectors import Access
from workspace.services.events import event_append


def _member_data(membership: Membership) -> dict:
    return {"membership": membership.pk, "user": membership.user.get_username(), "role": membership.role}


@transaction.atomic
def workspace_create(*, user: AbstractBaseUser, name: str) -> Workspace:
    workspace = Workspace.objects.create(name=name, created_by=user)
    Membership.objects.create(workspace=workspace, user=user, role=Role.OWNER)
    event_append(workspace_id=workspace.pk, kind="workspace.created", data={"name": name})
    return workspace


@transaction.atomic
def workspace_update(*, access: Access, name: str) -> Workspace:
    access.require(Role.OWNER)
    workspace = access.workspace
    Workspace.objects.filter(pk=workspace.pk).update(name=name)
    workspace.name = name
    event_append(workspace_id=workspace.pk, kind="workspace.updated", data={"name": name, "by": access.actor})
    return workspace


@transaction.atomic
def workspace_delete(*, access: Access) -> None:
    access.require(Role.OWNER)
    access.workspace.delete()


def _find_user(identifier: str) -> AbstractBaseUser:
    users = get_user_model().objects.filter(Q(username__iexact=identifier) | Q(email__iexact=identifier))
    matches = list(users[:2])
    if len(matches) != 1:
        raise InvalidInput(
            "No single user has that username or email.",
            details={"fields": {"user": ["No single user has that username or email."]}},
        )
    return matches[0]


@transaction.atomic
def membership_add(*, access: Access, user_identifier: str, role: str) -> Membership:
    access.require(Role.OWNER)
    user = _find_user(user_identifier)
    try:
        with transaction.atomic():  # savepoint: an IntegrityError must not break the outer transaction
            membership = Membership.objects.create(workspace=access.workspace, user=user, role=role)
    except IntegrityError:
        raise Conflict("That user is already a member.", code="already_member") from None
    event_append(
        workspace_id=access.workspace.pk, kind="member.added", data={**_member_data(membership), "by": access.actor}
    )
    return membership


def _lock_members(workspace_id: int) -> list[Membership]:
    """Lock every membership of the workspace (pk order), so owner counts cannot race."""
    return list(membership_qs_for_update().filter(workspace_id=workspace_id).select_related("user"))


def _access_under_lock(access: Access, members: list[Membership]) -> Access:
    """The caller's access re-read from the locked memberships.

    The role checked before taking the lock may be stale: an owner demoted by a transaction that committed
    while this one waited must not act as an owner afterwards.
    """
    if access.user is None:
        return access  # an API key's role is its own and never owner
    mine = next((m for m in members if m.user_id == access.user.pk), None)
    if mine is None:
        raise NotFound(gettext_noop("Workspace not found."))
    return replace(access, role=mine.role)


def _ensure_an_owner_remains(members: list[Membership], leaving: Membership) -> None:
    owners = [m for m in members if m.role == Role.OWNER and m.pk != leaving.pk]
    if leaving.role == Role.OWNER and not owners:
        raise Conflict("A workspace must keep at least one owner.", code="last_owner")


@transaction.atomic
def membership_update_role(*, access: Access, membership_id: int, role: str) -> Membership:
    access.require(Role.OWNER)
    members = _lock_members(access.workspace.pk)
    _access_under_lock(access, members).require(Role.OWNER)
    membership = next((m for m in members if m.pk == membership_id), None)
    if membership is None:
        raise NotFound(gettext_noop("Member not found."))
    if role != Role.OWNER:
        _ensure_an_owner_remains(members, membership)
    if membership.role != role:
        membership.role = role
        membership.save(update_fields=["role"])
        event_append(
            workspace_id=access.workspace.pk,
            kind="member.role_changed",
            data={**_member_data(membership), "by": access.actor},
        )
    return membership


@transaction.atomic
def membership_remove(*, access: Access, membership_id: int) -> None:
    """Owners remove anyone; any member may leave. The last owner can do neither."""
    members = _lock_members(access.workspace.pk)
    access = _access_under_lock(access, members)
    membership = next((m for m in members if m.pk == membership_id), None)
    if membership is None:
        raise NotFound(gettext_noop("Member not found."))
    is_self = access.user is not None and membership.user_id == access.user.pk
    if not is_self:
        access.require(Role.OWNER)
    _ensure_an_owner_remains(members, membership)
    data = _member_data(membership)
    membership.delete()
    event_append(workspace_id=access.workspace.pk, kind="member.removed", data={**data, "by": access.actor})


@transaction.atomic
def api_key_create(*, access: Access, name: str, role: str) -> tuple[ApiKey, str]:
    """Create a key; returns it with the raw secret, which is never stored nor shown again."""
    access.require(Role.OWNER)
    if role not in (Role.VIEWER, Role.EDITOR):
        # The same 400 the API's input validation gives: a bad value, not a missing permission.
        message = "API keys act as viewer or editor, never owner."
        raise InvalidInput(message, details={"fields": {"role": [message]}})
    prefix = secrets.token_hex(6)
    raw = f"{ApiKey.PREFIX}{prefix}_{secrets.token_urlsafe(32)}"
    key = ApiKey.objects.create(
        workspace=access.workspace,
        name=name,
        role=role,
        prefix=prefix,
        digest=ApiKey.digest_of(raw),
        created_by=access.user,
    )
    event_append(
        workspace_id=access.workspace.pk,
        kind="api_key.created",
        data={"api_key": key.pk, "name": name, "role": role, "prefix": prefix, "by": access.actor},
    )
    return key, raw


@transaction.atomic
def api_key_revoke(*, access: Access, key_id: int) -> ApiKey:
    access.require(Role.OWNER)
    key = ApiKey.objects.select_for_update(no_key=True).filter(workspace=access.workspace, pk=key_id).first()
    if key is None:
        raise NotFound(gettext_noop("API key not found."))
    if key.revoked_at is None:
        key.revoked_at = timezone.now()
        key.save(update_fields=["revoked_at"])
        event_append(
            workspace_id=access.workspace.pk,
            kind="api_key.revoked",
            data={"api_key": key.pk, "name": key.name, "by": access.actor},
        )
    return key
