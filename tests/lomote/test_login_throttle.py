"""Login throttling (issue 31): repeated wrong passwords pause logging in for that username and for that address,
each counted on its own, with a clear message; the pause ends after the cool-off; other people still log in."""

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.db.models import F
from django.test import Client

pytestmark = pytest.mark.django_db

LIMIT = 5


@pytest.fixture(autouse=True)
def throttle(settings):
    settings.AXES_FAILURE_LIMIT = LIMIT
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)


def log_in(username: str, password: str, address: str, path: str = "/accounts/login/"):
    client = Client()
    response = client.post(path, {"username": username, "password": password}, REMOTE_ADDR=address)
    return response, client


def test_it_pauses_logins_for_a_username_after_repeated_wrong_passwords(alice):
    # when 30 wrong passwords are tried for alice
    statuses = [log_in("alice", f"guess-{n}", "10.0.0.1")[0].status_code for n in range(30)]

    # then the first ones are answered by the form, and from the limit on every attempt is refused with 429
    assert statuses == [200] * (LIMIT - 1) + [429] * (30 - LIMIT + 1)
    # and even her right password does not log her in now, and the page says why and for how long
    response, client = log_in("alice", "pw-alice", "10.0.0.1")
    assert response.status_code == 429 and response["Retry-After"] == "900"
    body = response.content.decode()
    assert "Too many failed logins for this username or from this address" in body and "15 minutes" in body
    assert "_auth_user_id" not in client.session
    # and the lockout is on record, for her username
    assert AccessAttempt.objects.filter(username="alice", failures_since_start__gte=LIMIT).exists()


def test_a_locked_username_stays_locked_from_another_address_while_other_people_log_in(alice, bob):
    # given alice locked out by wrong passwords sent from one address
    for n in range(LIMIT):
        log_in("alice", f"guess-{n}", "10.0.0.1")

    # when bob logs in from another address, then he is in
    response, client = log_in("bob", "pw-bob", "10.0.0.2")
    assert response.status_code == 302 and client.session["_auth_user_id"] == str(bob.pk)
    # while alice's username is refused from that address too
    assert log_in("alice", "pw-alice", "10.0.0.2")[0].status_code == 429


def test_an_address_trying_many_usernames_is_paused(alice, bob):
    # given wrong passwords for five different (mostly unknown) usernames from one address
    for name in ("root", "admin", "alice", "carol", "eve"):
        log_in(name, "123456", "10.0.0.3")

    # when bob, with his right password, logs in from that address, then it is refused
    assert log_in("bob", "pw-bob", "10.0.0.3")[0].status_code == 429
    # and from his own address he logs in
    assert log_in("bob", "pw-bob", "10.0.0.4")[0].status_code == 302


def test_the_pause_ends_after_the_cool_off(alice):
    # given alice locked out
    for n in range(LIMIT):
        log_in("alice", f"guess-{n}", "10.0.0.1")
    assert log_in("alice", "pw-alice", "10.0.0.1")[0].status_code == 429

    # when the cool-off has passed since the last attempt
    AccessAttempt.objects.update(attempt_time=F("attempt_time") - timedelta(minutes=16))

    # then her right password logs her in, and the count starts afresh
    response, client = log_in("alice", "pw-alice", "10.0.0.1")
    assert response.status_code == 302 and client.session["_auth_user_id"] == str(alice.pk)
    assert log_in("alice", "wrong", "10.0.0.1")[0].status_code == 200


def test_the_admin_login_is_throttled_too(make_user):
    # given a staff member
    staff = make_user("root")
    staff.is_staff = staff.is_superuser = True
    staff.save(update_fields=["is_staff", "is_superuser"])

    # when wrong passwords are tried on the admin's own login form
    statuses = [log_in("root", f"guess-{n}", "10.0.0.5", "/admin/login/")[0].status_code for n in range(LIMIT + 2)]

    # then it is paused like the studio's, and the right password does not get in
    assert statuses == [200] * (LIMIT - 1) + [429] * 3
    response, client = log_in("root", "pw-root", "10.0.0.5", "/admin/login/")
    assert response.status_code == 429 and "_auth_user_id" not in client.session
