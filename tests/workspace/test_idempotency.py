"""Idempotency-Key (issue 31, workspace/services/idempotency.py): one effect per (workspace, principal, key),
the first answer to every repeat, 409 for another request under the same key, and parallel repeats that collapse
to one effect (PostgreSQL, separate connections)."""

import threading
from datetime import timedelta

import pytest
from django.db import connections
from django.urls import reverse

from lomote.kernel.exceptions import Conflict, InvalidInput
from tests.support.race import race
from tests.support.rest import issue_api_key
from workspace.models import ApiKey, IdempotentRequest, Role
from workspace.selectors import Access, workspace_access
from workspace.services import idempotency
from workspace.services.idempotency import idempotent_call, request_fingerprint
from workspace.services.workspaces import workspace_create

pytestmark = pytest.mark.postgres

TOPUP = request_fingerprint(method="POST", path="/w/1/topup/", body={"amount": 500, "memo": ""})


class Work:
    """The effect under test: counts its runs, answers (201, {"run": n}), may wait or fail on demand."""

    def __init__(self, *, seconds: float = 0.0, error: BaseException | None = None):
        self.runs = 0
        self.lock = threading.Lock()
        self.seconds = seconds
        self.error = error
        self.release = threading.Event()
        if not seconds:
            self.release.set()

    def __call__(self):
        with self.lock:
            self.runs += 1
            run = self.runs
        self.release.wait(self.seconds or 30)
        if self.error is not None:
            raise self.error
        return 201, {"run": run}


def call(access: Access, work, *, key="retry-1", fingerprint=TOPUP):
    return idempotent_call(access=access, key=key, fingerprint=fingerprint, request="POST /w/1/topup/", call=work)


@pytest.fixture
def alice_in(workspace, alice) -> Access:
    return workspace_access(principal=alice, workspace_id=workspace.pk)


# --- one request after another ----------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("key", ["", "   ", "k" * 256, "line\nbreak"], ids=["empty", "blank", "256", "newline"])
def test_it_refuses_a_bad_key_with_400_and_does_nothing(alice_in, key):
    work = Work()

    # when a request comes with a key that is empty, blank, too long or not printable
    with pytest.raises(InvalidInput) as refused:
        call(alice_in, work, key=key)

    # then 400 invalid_idempotency_key, the work never ran and no key was kept
    assert (refused.value.status, refused.value.code) == (400, "invalid_idempotency_key")
    assert work.runs == 0 and not IdempotentRequest.objects.exists()


@pytest.mark.django_db
def test_it_accepts_a_key_of_255_characters(alice_in):
    assert call(alice_in, Work(), key="k" * 255).status == 201
    assert IdempotentRequest.objects.get().key == "k" * 255


@pytest.mark.django_db
def test_it_does_the_work_once_and_gives_a_repeat_the_first_answer(alice_in, alice):
    work = Work()

    # when the same request is sent twice with one key
    first = call(alice_in, work)
    second = call(alice_in, work)

    # then the work ran once; the repeat got the same status and body, marked as replayed
    assert work.runs == 1
    assert (first.status, first.body, first.replayed) == (201, {"run": 1}, False)
    assert (second.status, second.body, second.replayed) == (201, {"run": 1}, True)
    row = IdempotentRequest.objects.get()
    assert (row.principal, row.key, row.response_status, row.response_body) == (
        f"user:{alice.pk}",
        "retry-1",
        201,
        {"run": 1},
    )
    assert row.finished_at is not None


@pytest.mark.django_db
def test_it_answers_409_when_the_key_comes_back_with_another_request(alice_in):
    work = Work()
    call(alice_in, work)
    other_body = request_fingerprint(method="POST", path="/w/1/topup/", body={"amount": 900, "memo": ""})
    other_path = request_fingerprint(method="POST", path="/w/1/messages/", body={"amount": 500, "memo": ""})

    for fingerprint in (other_body, other_path):
        # when the key comes back with another body, or on another endpoint
        with pytest.raises(Conflict) as refused:
            call(alice_in, work, fingerprint=fingerprint)

        # then 409 idempotency_key_reuse, and nothing ran or changed
        assert refused.value.code == "idempotency_key_reuse"
    assert work.runs == 1
    assert IdempotentRequest.objects.get().fingerprint == TOPUP


def test_it_reads_the_body_as_json_not_as_bytes():
    # the same fields in another order are the same request; another value or method is not
    same = request_fingerprint(method="post", path="/w/1/topup/", body={"memo": "", "amount": 500})
    assert same == TOPUP
    assert request_fingerprint(method="PUT", path="/w/1/topup/", body={"amount": 500, "memo": ""}) != TOPUP
    assert request_fingerprint(method="POST", path="/w/1/topup/", body={"amount": "500", "memo": ""}) != TOPUP


@pytest.mark.django_db
def test_it_keeps_keys_apart_per_principal_and_per_workspace(workspace, alice, bob, alice_in):
    # given alice's request made with key "retry-1"
    work = Work()
    call(alice_in, work)
    # and bob in the same workspace, an API key of it, and alice in a workspace of her own
    key, _ = issue_api_key(workspace, role=Role.EDITOR)
    own = workspace_create(user=alice, name="Alice's own")
    others = [
        workspace_access(principal=bob, workspace_id=workspace.pk),
        Access(workspace=workspace, role=Role.EDITOR, user=None, api_key=ApiKey.objects.get(pk=key.pk)),
        workspace_access(principal=alice, workspace_id=own.pk),
    ]

    # when each sends the same key (the same request)
    answers = [call(access, work) for access in others]

    # then each is a first request of its own: the work ran for each, nothing was replayed across callers
    assert work.runs == 4
    assert [a.body["run"] for a in answers] == [2, 3, 4] and not any(a.replayed for a in answers)
    assert IdempotentRequest.objects.filter(key="retry-1").count() == 4


@pytest.mark.django_db
def test_it_frees_the_key_when_the_first_request_is_refused(alice_in):
    # given a first request the service refused (it raised before committing anything)
    with pytest.raises(Conflict):
        call(alice_in, Work(error=Conflict("Not now.", code="task_cancelled")))
    assert not IdempotentRequest.objects.exists()

    # when the client sends it again with the same key
    work = Work()
    answer = call(alice_in, work)

    # then it runs, as a first request
    assert (work.runs, answer.status, answer.replayed) == (1, 201, False)


@pytest.mark.django_db
def test_it_never_runs_again_a_request_whose_outcome_is_unknown(alice_in, monkeypatch):
    # given a first request that failed in an unexpected way (it may have committed part of its work)
    monkeypatch.setattr(idempotency, "WAIT_SECONDS", 0.2)
    with pytest.raises(RuntimeError):
        call(alice_in, Work(error=RuntimeError("connection lost")))

    # when the client sends it again
    work = Work()
    with pytest.raises(Conflict) as refused:
        call(alice_in, work)

    # then the key stays taken: 409 idempotency_key_in_progress, the work is not run a second time
    assert refused.value.code == "idempotency_key_in_progress"
    assert work.runs == 0
    assert IdempotentRequest.objects.get().response_status is None


@pytest.mark.django_db
def test_it_starts_a_new_request_once_the_key_expired(alice_in):
    # given alice's key used more than a day ago
    call(alice_in, Work())
    IdempotentRequest.objects.update(created_at=IdempotentRequest.objects.get().created_at - timedelta(hours=25))

    # when she sends the same key again, even with another body
    work = Work()
    other = request_fingerprint(method="POST", path="/w/1/topup/", body={"amount": 1, "memo": ""})
    answer = call(alice_in, work, fingerprint=other)

    # then it is a new request: the work ran and the row now holds the new request and answer
    assert (work.runs, answer.replayed) == (1, False)
    row = IdempotentRequest.objects.get()
    assert (row.fingerprint, row.response_body) == (other, {"run": 1})


# --- parallel repeats (separate connections) --------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_ten_parallel_repeats_make_one_effect_and_one_answer(alice_in):
    # given work slow enough that every repeat arrives while the first still runs
    work = Work(seconds=0.5)

    # when ten requests with one key arrive at once
    answers = race([lambda: call(alice_in, work) for _ in range(10)])

    # then the work ran once; all ten got its answer; one did the work, nine were replayed
    assert not any(isinstance(a, BaseException) for a in answers), answers
    assert work.runs == 1
    assert {(a.status, a.body["run"]) for a in answers} == {(201, 1)}
    assert sorted(a.replayed for a in answers) == [False] + [True] * 9
    assert IdempotentRequest.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_repeat_that_waits_too_long_gets_409_in_progress_then_the_answer(alice_in, monkeypatch):
    # given a first request still running, and repeats that wait at most 0.3 s for it
    monkeypatch.setattr(idempotency, "WAIT_SECONDS", 0.3)
    work = Work(seconds=30)

    def first_request():
        try:
            call(alice_in, work)
        finally:
            connections.close_all()

    first = threading.Thread(target=first_request)
    first.start()
    try:
        while not IdempotentRequest.objects.exists():
            threading.Event().wait(0.01)

        # when a repeat arrives before the first has finished
        repeat = race([lambda: call(alice_in, work)])[0]

        # then it is told to come back later, and it did not run the work itself
        assert isinstance(repeat, Conflict) and repeat.code == "idempotency_key_in_progress", repeat
        assert work.runs == 1
    finally:
        work.release.set()
        first.join(10)

    # and once the first has finished, a repeat gets its answer
    assert call(alice_in, work).body == {"run": 1}
    assert work.runs == 1


@pytest.mark.django_db(transaction=True)
def test_parallel_repeats_of_a_refused_request_are_each_refused_and_nothing_is_kept(alice_in):
    # given a request the service refuses
    work = Work(seconds=0.2, error=Conflict("Not now.", code="task_cancelled"))

    # when five copies of it arrive at once
    answers = race([lambda: call(alice_in, work) for _ in range(5)])

    # then each caller gets the refusal (the key was freed and taken again), and no key stays behind
    assert all(isinstance(a, Conflict) and a.code == "task_cancelled" for a in answers), answers
    assert not IdempotentRequest.objects.exists()


# --- operators --------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_operators_see_the_keys_in_the_admin_but_cannot_change_them(alice_in, django_user_model, client):
    # given a finished request and one whose outcome is unknown
    call(alice_in, Work(), key="done-1")
    with pytest.raises(RuntimeError):
        call(alice_in, Work(error=RuntimeError("lost")), key="unknown-1")
    client.force_login(django_user_model.objects.create_superuser("root", "root@example.com", "pw-root"))

    # when an operator opens the list and a row
    listing = client.get(reverse("admin:workspace_idempotentrequest_changelist"))
    row = IdempotentRequest.objects.get(key="unknown-1")
    page = client.get(reverse("admin:workspace_idempotentrequest_change", args=[row.pk]))

    # then both keys are listed, the row is shown read-only, and none can be added
    assert listing.status_code == 200 and b"done-1" in listing.content and b"unknown-1" in listing.content
    assert page.status_code == 200 and 'name="response_status"' not in page.content.decode()
    assert client.get(reverse("admin:workspace_idempotentrequest_add")).status_code == 403
