"""Memberships: adding people, changing roles, leaving; a workspace always keeps an owner."""

import threading
from unittest import mock

import pytest
from django.urls import reverse

from lomote.kernel.exceptions import PermissionDenied
from tests.support.race import race
from tests.support.rest import assert_error, events_of, issue_api_key, key_client, snapshot
from workspace.models import Membership, Role
from workspace.selectors import workspace_access
from workspace.services import workspaces as services


def _members_url(workspace) -> str:
    return reverse("member-list", kwargs={"workspace_id": workspace.pk})


def _member_url(workspace, membership) -> str:
    return reverse("member-detail", kwargs={"workspace_id": workspace.pk, "membership_id": membership.pk})


def _membership(workspace, user) -> Membership:
    return Membership.objects.get(workspace=workspace, user=user)


def _by(user) -> dict:
    return {"type": "user", "id": user.pk, "username": user.username}


@pytest.fixture
def frank(make_user):
    """Belongs to no workspace yet."""
    return make_user("frank")


# --- adding ---------------------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("identifier", ["frank", "FRANK", "frank@example.com", "Frank@Example.COM"])
def test_it_adds_a_member_by_username_or_email(workspace, alice, frank, client_for, identifier):
    # given frank, who is in no workspace
    # when the owner adds him by username or email, in any case
    response = client_for(alice).post(_members_url(workspace), {"user": identifier, "role": "editor"}, format="json")

    # then he is an editor, and the log says who added whom
    assert response.status_code == 201, response.content
    membership = _membership(workspace, frank)
    assert membership.role == Role.EDITOR
    assert response.json()["id"] == membership.pk and response.json()["username"] == "frank"
    [event] = events_of(workspace.pk, "member.added")
    assert event.data == {"membership": membership.pk, "user": "frank", "role": "editor", "by": _by(alice)}


@pytest.mark.django_db
def test_it_adds_a_viewer_when_no_role_is_given(workspace, alice, frank, client_for):
    # when the owner adds frank without a role
    response = client_for(alice).post(_members_url(workspace), {"user": "frank"}, format="json")

    # then he is a viewer: the least privilege is the default
    assert response.status_code == 201
    assert _membership(workspace, frank).role == Role.VIEWER


@pytest.mark.django_db
def test_it_refuses_a_duplicate_member_with_409(workspace, alice, bob, client_for):
    # given bob is already an editor
    before = snapshot()

    # when the owner adds him again, as an owner this time
    response = client_for(alice).post(_members_url(workspace), {"user": "bob", "role": "owner"}, format="json")

    # then 409 already_member, and bob's role and the log are untouched
    assert_error(response, 409, "already_member")
    assert snapshot() == before
    assert _membership(workspace, bob).role == Role.EDITOR


@pytest.mark.django_db
@pytest.mark.parametrize("identifier", ["nobody", "nobody@example.com", "frank@example", "  "])
def test_it_refuses_an_unknown_user_with_400(workspace, alice, frank, client_for, identifier):
    # given no user answers to the identifier
    before = snapshot()

    # when the owner tries to add them
    response = client_for(alice).post(_members_url(workspace), {"user": identifier}, format="json")

    # then 400 on the `user` field, and nothing was created
    error = assert_error(response, 400, "invalid")
    assert set(error["details"]["fields"]) == {"user"}
    assert snapshot() == before


@pytest.mark.django_db
def test_it_refuses_an_identifier_that_names_two_people(workspace, alice, make_user, client_for):
    # given one user's username is another user's email
    make_user("grace@example.com")  # username "grace@example.com", email "grace@example.com@example.com"
    grace = make_user("grace")  # email "grace@example.com"
    assert grace.email == "grace@example.com"
    before = snapshot()

    # when the owner adds "grace@example.com"
    response = client_for(alice).post(_members_url(workspace), {"user": "grace@example.com"}, format="json")

    # then nobody is guessed at: 400, nothing created
    assert_error(response, 400, "invalid")
    assert snapshot() == before


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["admin", "", "OWNER", None, 3])
def test_it_refuses_an_unknown_role(workspace, alice, frank, client_for, role):
    # given the database before the request
    before = snapshot()

    # when the owner adds frank with a role that does not exist
    response = client_for(alice).post(_members_url(workspace), {"user": "frank", "role": role}, format="json")

    # then 400 on the `role` field, and nothing was created
    error = assert_error(response, 400, "invalid")
    assert set(error["details"]["fields"]) == {"role"}
    assert snapshot() == before


# --- roles ----------------------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["viewer", "editor"])
def test_it_keeps_the_last_owner_from_being_demoted(workspace, alice, client_for, role):
    # given alice is the only owner
    before = snapshot()

    # when she demotes herself
    response = client_for(alice).patch(_member_url(workspace, _membership(workspace, alice)), {"role": role}, "json")

    # then 409 last_owner, and she is still the owner
    assert_error(response, 409, "last_owner")
    assert snapshot() == before
    assert _membership(workspace, alice).role == Role.OWNER


@pytest.mark.django_db
def test_it_changes_a_role_and_records_it(workspace, alice, bob, client_for):
    # given bob is an editor
    # when the owner makes him a viewer
    response = client_for(alice).patch(_member_url(workspace, _membership(workspace, bob)), {"role": "viewer"}, "json")

    # then he is a viewer, and the log says so, naming who did it
    assert response.status_code == 200, response.content
    assert response.json()["role"] == "viewer"
    membership = _membership(workspace, bob)
    assert membership.role == Role.VIEWER
    [event] = events_of(workspace.pk, "member.role_changed")
    assert event.data == {"membership": membership.pk, "user": "bob", "role": "viewer", "by": _by(alice)}


@pytest.mark.django_db
def test_it_records_nothing_when_the_role_does_not_change(workspace, alice, bob, client_for):
    # given bob is an editor
    before = snapshot()

    # when the owner sets him to editor again
    response = client_for(alice).patch(_member_url(workspace, _membership(workspace, bob)), {"role": "editor"}, "json")

    # then the answer is his unchanged membership, and the log did not grow
    assert response.status_code == 200
    assert response.json()["role"] == "editor"
    assert snapshot() == before


@pytest.mark.django_db
def test_it_lets_an_owner_hand_over_and_step_down(workspace, alice, bob, client_for):
    # given alice makes bob an owner
    owner = client_for(alice)
    assert (
        owner.patch(_member_url(workspace, _membership(workspace, bob)), {"role": "owner"}, "json").status_code == 200
    )

    # when she demotes herself to editor
    response = owner.patch(_member_url(workspace, _membership(workspace, alice)), {"role": "editor"}, "json")

    # then the workspace has exactly one owner, bob, and both changes are in the log
    assert response.status_code == 200, response.content
    assert list(Membership.objects.filter(workspace=workspace, role=Role.OWNER).values_list("user", flat=True)) == [
        bob.pk
    ]
    changes = [(e.data["user"], e.data["role"]) for e in events_of(workspace.pk, "member.role_changed")]
    assert changes == [("bob", "owner"), ("alice", "editor")]
    # then alice no longer has owner powers
    assert_error(
        owner.patch(_member_url(workspace, _membership(workspace, bob)), {"role": "viewer"}, "json"),
        403,
        "role_required",
    )


@pytest.mark.django_db
def test_it_refuses_an_owner_demoted_while_her_request_waited(workspace, alice, make_user):
    # given erin and frank are owners besides alice, and erin's request has already passed its role check
    erin, frank = make_user("erin"), make_user("frank")
    Membership.objects.create(workspace=workspace, user=erin, role=Role.OWNER)
    franks = Membership.objects.create(workspace=workspace, user=frank, role=Role.OWNER)
    erins_stale_access = workspace_access(principal=erin, workspace_id=workspace.pk)
    assert erins_stale_access.role == Role.OWNER

    # when alice demotes erin first, and erin's request then goes on to demote frank and to remove him
    services.membership_update_role(
        access=workspace_access(principal=alice, workspace_id=workspace.pk),
        membership_id=_membership(workspace, erin).pk,
        role=Role.EDITOR,
    )
    before = snapshot()
    with pytest.raises(PermissionDenied) as demoting:
        services.membership_update_role(access=erins_stale_access, membership_id=franks.pk, role=Role.VIEWER)
    with pytest.raises(PermissionDenied) as removing:
        services.membership_remove(access=erins_stale_access, membership_id=franks.pk)

    # then both are refused on the role read under the lock, and frank is still an owner
    assert demoting.value.code == removing.value.code == "role_required"
    assert snapshot() == before
    assert Membership.objects.get(pk=franks.pk).role == Role.OWNER


# --- leaving and removing -------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("who", ["bob", "carol"])
def test_it_lets_a_member_leave(workspace, request, client_for, who):
    # given an editor or a viewer of the workspace
    user = request.getfixturevalue(who)
    membership = _membership(workspace, user)
    client = client_for(user)

    # when they remove their own membership
    response = client.delete(_member_url(workspace, membership))

    # then they are gone, the log says they left, and the workspace is now hidden from them
    assert response.status_code == 204, response.content
    assert not Membership.objects.filter(pk=membership.pk).exists()
    [event] = events_of(workspace.pk, "member.removed")
    assert event.data == {"membership": membership.pk, "user": who, "role": membership.role, "by": _by(user)}
    assert_error(client.get(reverse("workspace-detail", kwargs={"workspace_id": workspace.pk})), 404, "not_found")


@pytest.mark.django_db
def test_it_keeps_the_last_owner_from_leaving(workspace, alice, client_for):
    # given alice is the only owner
    before = snapshot()

    # when she removes her own membership
    response = client_for(alice).delete(_member_url(workspace, _membership(workspace, alice)))

    # then 409 last_owner, and nothing changed
    assert_error(response, 409, "last_owner")
    assert snapshot() == before


@pytest.mark.django_db
def test_it_lets_the_owner_remove_a_member(workspace, alice, bob, client_for):
    # given bob is an editor
    membership = _membership(workspace, bob)

    # when the owner removes him
    response = client_for(alice).delete(_member_url(workspace, membership))

    # then he is gone, the log names who removed him, and he can no longer reach the workspace
    assert response.status_code == 204
    assert not Membership.objects.filter(pk=membership.pk).exists()
    [event] = events_of(workspace.pk, "member.removed")
    assert event.data == {"membership": membership.pk, "user": "bob", "role": "editor", "by": _by(alice)}
    assert_error(client_for(bob).get(_members_url(workspace)), 404, "not_found")


@pytest.mark.django_db
def test_it_does_not_let_a_viewer_remove_someone_else(workspace, bob, carol, client_for):
    # given carol is a viewer
    before = snapshot()

    # when she removes bob
    response = client_for(carol).delete(_member_url(workspace, _membership(workspace, bob)))

    # then 403 role_required, and bob stays
    assert_error(response, 403, "role_required")
    assert snapshot() == before


# --- real contention (PostgreSQL row locks, two connections) ---------------------------------------------


def _race(*calls):
    """Run each call in its own thread and connection, all released together once past their role checks.

    The gate sits at the membership lock: both requests have resolved (the same, soon stale) access
    before either takes the lock, so the lock alone decides what happens.
    """
    gate = threading.Barrier(len(calls), timeout=10)
    original = services._lock_members

    def gated(workspace_id):
        gate.wait()
        return original(workspace_id)

    with mock.patch.object(services, "_lock_members", gated):
        results = race(calls, timeout=30)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results


@pytest.fixture
def two_owners(workspace, alice, bob, client_for):
    """alice and bob both own the workspace."""
    Membership.objects.filter(workspace=workspace, user=bob).update(role=Role.OWNER)
    return _membership(workspace, alice), _membership(workspace, bob)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_lets_only_one_of_two_owners_demote_the_other(workspace, alice, bob, client_for, two_owners):
    # given alice and bob are the two owners
    alices, bobs = two_owners
    seq_before = events_of(workspace.pk)[-1].seq

    # when each demotes the other at the same moment
    alice_response, bob_response = _race(
        lambda: client_for(alice).patch(_member_url(workspace, bobs), {"role": "editor"}, format="json"),
        lambda: client_for(bob).patch(_member_url(workspace, alices), {"role": "editor"}, format="json"),
    )

    # then exactly one succeeds; the other, no longer an owner once it holds the lock, is refused
    statuses = sorted([alice_response.status_code, bob_response.status_code])
    assert statuses == [200, 403], (alice_response.content, bob_response.content)
    loser = alice_response if alice_response.status_code == 403 else bob_response
    assert_error(loser, 403, "role_required")
    # then exactly one owner remains, and the log holds the one change that happened
    owners = Membership.objects.filter(workspace=workspace, role=Role.OWNER)
    assert owners.count() == 1
    changes = [e for e in events_of(workspace.pk) if e.seq > seq_before]
    assert [e.kind for e in changes] == ["member.role_changed"]
    assert changes[0].data["role"] == "editor" and changes[0].data["user"] != owners.get().user.username


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_lets_only_one_of_two_owners_leave_at_once(workspace, alice, bob, client_for, two_owners):
    # given alice and bob are the two owners
    alices, bobs = two_owners
    seq_before = events_of(workspace.pk)[-1].seq

    # when both leave at the same moment
    alice_response, bob_response = _race(
        lambda: client_for(alice).delete(_member_url(workspace, alices)),
        lambda: client_for(bob).delete(_member_url(workspace, bobs)),
    )

    # then exactly one leaves; the other is now the last owner and must stay
    statuses = sorted([alice_response.status_code, bob_response.status_code])
    assert statuses == [204, 409], (alice_response.content, bob_response.content)
    assert_error(alice_response if alice_response.status_code == 409 else bob_response, 409, "last_owner")
    assert Membership.objects.filter(workspace=workspace, role=Role.OWNER).count() == 1
    assert [e.kind for e in events_of(workspace.pk) if e.seq > seq_before] == ["member.removed"]


# --- who sees what ---------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_only_owners_see_the_members_emails(workspace, alice, bob, carol, client_for):
    emails = {"alice": "alice@example.com", "bob": "bob@example.com", "carol": "carol@example.com"}

    def seen_by(client) -> dict:
        response = client.get(_members_url(workspace))
        assert response.status_code == 200
        return {member["username"]: member["email"] for member in response.json()["results"]}

    # when the owner lists the members, then she sees every email
    assert seen_by(client_for(alice)) == emails
    # when the editor and the viewer do, then each sees only their own
    assert seen_by(client_for(bob)) == {"alice": None, "bob": "bob@example.com", "carol": None}
    assert seen_by(client_for(carol)) == {"alice": None, "bob": None, "carol": "carol@example.com"}
    # and an API key (viewer or editor: keys are never owners) sees none, nor does a member through the detail endpoint
    _, raw = issue_api_key(workspace, role=Role.VIEWER)
    assert set(seen_by(key_client(raw)).values()) == {None}
    detail = client_for(carol).get(_member_url(workspace, _membership(workspace, alice)))
    assert detail.status_code == 200 and detail.json()["email"] is None
