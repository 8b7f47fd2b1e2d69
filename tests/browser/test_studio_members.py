"""The members panel in a real browser (issue 16 item 6): members by username with their role; an owner invites by
username and changes roles with the keyboard, refusals said plainly; a non-owner sees the list read-only and sees
changes made elsewhere arrive live. Screenshots go to var/screenshots/members-*.png.
"""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import PASSWORD, log_in, shoot

pytestmark = [pytest.mark.browser, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _person(make_user, username: str):
    """A person whose password the daphne process (default hashers) can check."""
    from django.contrib.auth.hashers import PBKDF2PasswordHasher

    user = make_user(username)
    user.password = PBKDF2PasswordHasher().encode(PASSWORD, PBKDF2PasswordHasher().salt())
    user.save(update_fields=["password"])
    return user


def _log_in_as(page, studio, user) -> None:
    page.goto(f"{studio.url}/")
    page.get_by_label("Username").fill(user.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(f"{studio.url}/")
    page.locator("#studio[data-ready='true']").wait_for()
    page.locator("#connection[data-state='live']").wait_for()


def _focused(locator) -> bool:
    return locator.evaluate("element => element === document.activeElement")


def test_it_lets_an_owner_invite_by_username_and_change_a_role_at_800_px(studio, page, make_user):
    from workspace.models import Membership, Role
    from workspace.services.workspaces import membership_add

    # given alice, owner, in the studio at 800 px wide, and bob, who has an account but is not a member
    bob = _person(make_user, "bob")
    page.set_viewport_size({"width": 800, "height": 1000})
    log_in(page, studio)
    # (at 800 px the studio is tabs: members are under More)
    page.get_by_role("tab", name="More").click()
    panel = page.locator("#members-panel")
    panel.scroll_into_view_if_needed()
    expect(panel.locator(".member")).to_have_count(1)
    expect(panel.locator(".member[data-username='alice']")).to_contain_text("alice (you)")

    # when she invites someone who does not exist
    invite = page.get_by_label("Invite by username")
    invite.fill("nobody-here")
    page.keyboard.press("Enter")

    # then she is told so, in words, and the keyboard stays in the field
    error = page.locator("#members-error")
    expect(error).to_have_text(
        "Nobody has the username or email “nobody-here”. Check the spelling: they need an account first."
    )
    assert _focused(invite)

    # when she invites bob as an editor with the keyboard alone: type, Tab to the role, pick, Tab to Invite, Enter
    invite.fill("bob")
    page.keyboard.press("Tab")
    role = page.locator("#member-invite-role")
    assert _focused(role), "the role comes after the username"
    role.select_option("editor")
    page.keyboard.press("Tab")
    assert _focused(page.locator("#member-invite-send")), "Invite comes after the role"
    page.keyboard.press("Enter")

    # then bob is listed by name with his role, the error is gone, and the panel says what happened
    row = panel.locator(".member[data-username='bob']")
    expect(row).to_have_attribute("data-role", "editor")
    expect(row.get_by_label("Role of bob", exact=True)).to_have_value("editor")
    expect(error).to_be_hidden()
    expect(page.locator("#members-notice")).to_contain_text("bob joined as Editor")
    assert Membership.objects.get(workspace=studio.workspace, user=bob).role == "editor"

    # when she invites him again
    invite.fill("bob")
    page.keyboard.press("Enter")
    # then she is told he is already a member
    expect(error).to_have_text("bob is already a member of this workspace.")

    # when she makes him a viewer: the role, then its Change role button
    row.get_by_label("Role of bob", exact=True).select_option("viewer")
    change = row.get_by_role("button", name="Change role of bob")
    change.focus()
    page.keyboard.press("Enter")

    # then the list updates and the keyboard stays on the same control
    expect(row).to_have_attribute("data-role", "viewer")
    expect(page.locator("#members-notice")).to_contain_text("bob is now Viewer")
    expect(panel.get_by_role("button", name="Change role of bob")).to_be_focused()
    assert Membership.objects.get(workspace=studio.workspace, user=bob).role == "viewer"

    # when she presses Change role without choosing another role, nothing is sent and she is told so
    change.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#members-notice")).to_have_text("bob is already Viewer.")

    # when she tries to step down while the only owner
    mine = panel.locator(".member[data-username='alice']")
    mine.get_by_label("Role of alice", exact=True).select_option("editor")
    # (and, before she saves, someone joins: the live redraw keeps the role she picked)
    make_user("carol")
    membership_add(access=studio.access, user_identifier="carol", role=Role.VIEWER)
    expect(panel.locator(".member[data-username='carol']")).to_have_attribute("data-role", "viewer")
    # (carol's row can come with an earlier reload; her own event, and its notice, arrive by the log tail)
    expect(page.locator("#members-notice")).to_have_text("carol joined as Viewer (by alice).")
    expect(mine.get_by_label("Role of alice", exact=True)).to_have_value("editor")
    mine.get_by_role("button", name="Change role of alice").click()

    # then it is refused plainly and her role shows as it is, still owner
    expect(error).to_have_text("A workspace must keep at least one owner: make someone else owner first.")
    expect(page.locator("#members-notice")).to_be_hidden()  # carol's earlier "joined" is not this answer
    expect(mine.get_by_label("Role of alice", exact=True)).to_have_value("owner")
    expect(mine).to_have_attribute("data-role", "owner")
    wide = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert wide <= 0, f"the page scrolls sideways by {wide}px at 800 px"
    panel.scroll_into_view_if_needed()
    shoot(page, "members-owner-800")
    assert page.js_errors == []


def test_it_shows_a_non_owner_the_list_read_only_and_their_role_changing_live(studio, page, browser, make_user):
    from workspace.models import Membership, Role
    from workspace.services.workspaces import membership_add, membership_update_role

    # given bob, a viewer, in the studio, and alice, the owner, in hers
    bob = _person(make_user, "bob")
    member = membership_add(access=studio.access, user_identifier="bob", role=Role.VIEWER)
    _log_in_as(page, studio, bob)
    owners = browser.new_context(viewport={"width": 1400, "height": 1000})
    alices = owners.new_page()
    alices_errors: list[str] = []
    alices.on("pageerror", lambda error: alices_errors.append(str(error)))
    try:
        log_in(alices, studio)

        # then bob sees both members by name, with their roles, and no control to change them
        panel = page.locator("#members-panel")
        expect(panel.locator(".member")).to_have_count(2)
        expect(panel.locator(".member[data-username='alice'] .member-role-name")).to_have_text("Owner")
        expect(panel.locator(".member[data-username='bob'] .member-role-name")).to_have_text("Viewer")
        expect(panel.locator(".member[data-username='bob']")).to_contain_text("bob (you)")
        expect(panel.locator("select, input, button")).to_have_count(0)
        expect(panel.locator("#members-read-only")).to_have_text("Only owners can invite people or change roles.")
        panel.scroll_into_view_if_needed()
        shoot(page, "members-read-only")

        # when alice makes him an editor from her studio
        row = alices.locator("#members-panel .member[data-username='bob']")
        row.get_by_label("Role of bob", exact=True).select_option("editor")
        row.get_by_role("button", name="Change role of bob").click()

        # then bob's list changes live, and says who did it
        expect(panel.locator(".member[data-username='bob']")).to_have_attribute("data-role", "editor")
        expect(panel.locator("#members-notice")).to_have_text("bob is now Editor (by alice).")

        # when another owner's change (made elsewhere) makes him an owner
        membership_update_role(access=studio.access, membership_id=member.pk, role=Role.OWNER)

        # then bob gets the owner's controls without reloading, and alice's list follows too
        expect(page.get_by_label("Invite by username")).to_be_visible()
        expect(panel.locator(".member[data-username='bob']").get_by_label("Role of bob", exact=True)).to_have_value(
            "owner"
        )
        expect(row).to_have_attribute("data-role", "owner")
        shoot(page, "members-promoted-live")
        assert Membership.objects.get(pk=member.pk).role == "owner"
        assert page.js_errors == [] and alices_errors == []
    finally:
        owners.close()
