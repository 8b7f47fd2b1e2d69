"""A Flow run over a conversation thread (seed 002, "/ai-runs"): it reads the thread's recent messages as its input,
runs through the Flow run request every run takes (pricing, holds, quote cards unchanged), names its thread in its
progress events, and posts its result back into that thread once per end — the end delivered twice included.
"""

# ruff: noqa: F811 - the Flow billing suite's fixtures are imported by name and used as arguments

import pytest
from django.db import transaction
from django.urls import reverse

from agents.models import (
    FLOW_RESULT,
    Card,
    InboxMessage,
    InboxStatus,
    MainMessage,
    Route,
    Task,
    TaskStatus,
    Turn,
    TurnStatus,
)
from agents.runtime.watchdog import watchdog_sweep
from agents.services.card_actions import card_act
from agents.services.inbox import message_post
from billing.models import Order
from billing.services.policy import spend_policy_update
from lomote.kernel import domain_events
from memory.models import Evidence
from tests.agents.test_flow_billing import owner, queue, upstream  # noqa: F401 - its fixtures, used by name
from tests.support.cards import access_of, complete
from tests.support.factories import StepFactory, TaskFactory, WorkspaceFactory
from tests.support.rest import assert_error, issue_api_key, key_client
from workspace.domain_events import FLOW_RUN_ENDED
from workspace.flows import runner
from workspace.flows.authoring import flow_create
from workspace.models import Event, FlowRun, FlowRunStatus, FlowThread, GenerationJob
from workspace.services.artifacts import artifact_create
from workspace.services.jobs import job_event_apply

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

SUMMARY = {
    "nodes": {
        "thread": {"type": "text_input"},
        "sum": {"type": "generate_text", "params": {"instructions": "Summarise"}},
        "end": {"type": "finish"},
    },
    "edges": [["thread", "sum"], ["sum", "end"]],
    "start": "thread",
}
POSTER = {
    "nodes": {
        "thread": {"type": "text_input"},
        "poster": {"type": "generate_image", "params": {"prompt": "Poster from: {input}"}},
        "end": {"type": "finish"},
    },
    "edges": [["thread", "poster"], ["poster", "end"]],
    "start": "thread",
}


@pytest.fixture
def conversation(workspace, alice, bob, no_enqueue):
    """A task whose conversation holds four messages: alice, the agent, bob, and a runtime note to the model."""
    task = TaskFactory(workspace=workspace, title="Jazz festival posters", created_by=alice, status=TaskStatus.IDLE)
    message_post(access=access_of(alice, workspace), task_id=task.pk, text="We need posters for the jazz festival.")
    # the turn that message queued answered it
    turn = Turn.objects.get(task=task)
    StepFactory(turn=turn, text="Understood: three posters, warm colours, saxophone motif.")
    Turn.objects.filter(pk=turn.pk).update(status=TurnStatus.COMPLETED)
    message_post(access=access_of(bob, workspace), task_id=task.pk, text="Add the date: 14 July, Lyon.")
    InboxMessage.objects.create(task=task, source="runtime", text="The person declined the quote.")
    return task


def _url(workspace, flow) -> str:
    return reverse("flow-thread-runs", kwargs={"workspace_id": workspace.pk, "artifact_id": flow.pk})


def _flow(workspace, graph=SUMMARY, title="Thread summary"):
    return flow_create(workspace_id=workspace.pk, title=title, graph=graph)


def _flow_results(task) -> list[InboxMessage]:
    return list(InboxMessage.objects.filter(task=task, source=FLOW_RESULT).order_by("pk"))


def test_it_runs_a_flow_over_a_task_thread_and_posts_its_result_there_once(
    workspace, alice, conversation, client_for, queue, no_enqueue
):
    # given a task conversation and a Flow that summarises its input
    flow = _flow(workspace)
    turns_before = Turn.objects.filter(task=conversation).count()

    # when alice runs the Flow over the task's last 3 messages
    response = client_for(alice).post(
        _url(workspace, flow), {"thread": {"task": conversation.pk}, "messages": 3}, format="json"
    )

    # then the run started (nothing paid) with the thread's 3 most recent messages as its transcript, oldest first;
    # the runtime's note to the model is not part of the conversation
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["status"], body["cost"], body["card"], body["thread"]) == (
        "running",
        0,
        None,
        {"task": conversation.pk},
    )
    run = FlowRun.objects.get(pk=body["id"])
    assert (run.thread, run.thread_task_id, run.started_by_id) == (FlowThread.TASK, conversation.pk, alice.pk)
    assert run.inputs == {
        "text": "alice: We need posters for the jazz festival.\n"
        "Agent: Understood: three posters, warm colours, saxophone motif.\n"
        "bob: Add the date: 14 July, Lyon."
    }

    # when its nodes run
    queue()

    # then the run is done and its result is one message from the Flow in the task's conversation
    run.refresh_from_db()
    assert (run.status, run.ends) == (FlowRunStatus.DONE, 1)
    [posted] = _flow_results(conversation)
    assert (posted.author_id, posted.status, posted.flow_run_id, posted.flow_run_end) == (
        None,
        InboxStatus.PENDING,
        run.pk,
        1,
    )
    # the offline writer's summary of the thread: its first and latest messages, and its note saying what wrote it
    assert posted.text.startswith(f"Flow “Thread summary” (run #{run.pk}):\nSummary — ")
    assert "It opens with: We need posters" in posted.text
    assert "Add the date: 14 July, Lyon." in posted.text and "offline writer" in posted.text
    event = Event.objects.get(kind="inbox.posted", data__message=posted.pk)
    assert event.data == {
        "task": conversation.pk,
        "message": posted.pk,
        "status": "pending",
        "source": FLOW_RESULT,
        "run": run.pk,
    }
    # it is listed where the task's messages are read
    listed = client_for(alice).get(
        reverse("task-message-list", kwargs={"workspace_id": workspace.pk, "task_id": conversation.pk})
    )
    assert [m["id"] for m in listed.json()["results"] if m["source"] == FLOW_RESULT] == [posted.pk]

    # when the run's end is delivered twice more (a redelivered event, a replayed reaction)
    payload = {
        "workspace_id": workspace.pk,
        "run_id": run.pk,
        "end": run.ends,
        "status": run.status,
        "thread": run.thread_ref,
        "artifact_id": flow.pk,
        "outputs": run.outputs,
        "error": run.error,
    }
    with transaction.atomic():
        domain_events.publish(FLOW_RUN_ENDED, **payload)
    with transaction.atomic():
        domain_events.publish(FLOW_RUN_ENDED, **payload)

    # then still one message and one event for it
    assert len(_flow_results(conversation)) == 1
    assert Event.objects.filter(kind="inbox.posted", data__source=FLOW_RESULT).count() == 1

    # and the result starts no agent turn by itself, not even through the watchdog, and is not memory evidence
    assert not watchdog_sweep().started
    assert Turn.objects.filter(task=conversation).count() == turns_before
    assert not Evidence.objects.filter(source_id=str(posted.pk), kind="task_message").exists()


def test_it_names_the_thread_in_every_progress_event_of_the_run(workspace, alice, conversation, client_for, queue):
    # given a run over a task thread
    flow = _flow(workspace)
    run_id = (
        client_for(alice).post(_url(workspace, flow), {"thread": {"task": conversation.pk}}, format="json").json()["id"]
    )

    # when it runs to its end
    queue()

    # then every flow.run and flow.node event of the run carries its thread
    events = Event.objects.filter(kind__in=["flow.run", "flow.node"], data__run=run_id).order_by("seq")
    assert [(e.kind, e.data.get("node"), e.data["status"]) for e in events] == [
        ("flow.run", None, "awaiting_approval"),
        ("flow.run", None, "running"),
        ("flow.node", "thread", "running"),
        ("flow.node", "thread", "done"),
        ("flow.node", "sum", "running"),
        ("flow.node", "sum", "done"),
        ("flow.node", "end", "running"),
        ("flow.node", "end", "done"),
        ("flow.run", None, "done"),
    ]
    assert {str(e.data["thread"]) for e in events} == {str({"task": conversation.pk})}


def test_it_runs_a_flow_over_the_main_thread_and_posts_a_flow_message_in_main(
    workspace, alice, bob, client_for, queue, no_enqueue
):
    # given a Main thread: a person's message Main answered, then one delivered to a task
    task = TaskFactory(workspace=workspace, title="Posters", created_by=alice, status=TaskStatus.IDLE)
    MainMessage.objects.create(
        workspace=workspace, author=alice, text="What can you make?", route=Route.ANSWER, reply="Images and videos."
    )
    MainMessage.objects.create(
        workspace=workspace, author=bob, text="Make the posters warmer.", route=Route.DIRECT, task=task
    )
    flow = _flow(workspace)
    tasks_before, inbox_before = Task.objects.count(), InboxMessage.objects.count()

    # when bob (an editor) runs the Flow over Main
    response = client_for(bob).post(_url(workspace, flow), {"thread": "main"}, format="json")

    # then the run reads Main's messages, replies included
    assert response.status_code == 201, response.content
    run = FlowRun.objects.get(pk=response.json()["id"])
    assert (run.thread, run.thread_task_id, response.json()["thread"]) == (FlowThread.MAIN, None, "main")
    assert run.inputs["text"] == "alice: What can you make?\nMain: Images and videos.\nbob: Make the posters warmer."

    # when it runs, and its end is delivered once more
    queue()
    run.refresh_from_db()
    with transaction.atomic():
        domain_events.publish(
            FLOW_RUN_ENDED,
            workspace_id=workspace.pk,
            run_id=run.pk,
            end=run.ends,
            status=run.status,
            thread="main",
            artifact_id=flow.pk,
            outputs=run.outputs,
            error=None,
        )

    # then one Main message from the Flow holds the result: no author, route flow, never routed to a task
    [posted] = MainMessage.objects.filter(route=Route.FLOW)
    assert (posted.author_id, posted.task_id, posted.flow_run_id, posted.flow_run_end) == (None, None, run.pk, 1)
    assert posted.text.startswith(f"Flow “Thread summary” (run #{run.pk}):\nSummary — ")
    assert "It opens with: What can you make?" in posted.text
    assert (Task.objects.count(), InboxMessage.objects.count()) == (tasks_before, inbox_before)
    assert Event.objects.filter(kind="main.message", data__route="flow").count() == 1
    assert not Evidence.objects.filter(source_id=str(posted.pk)).exists()
    # it is listed where Main's messages are read, as the Flow's
    listed = client_for(alice).get(reverse("main-message-list", kwargs={"workspace_id": workspace.pk})).json()
    assert [(m["route"], m["author"], m["flow_run"]) for m in listed["results"]][0] == ("flow", None, run.pk)

    # and a later run over Main reads the earlier result as part of the thread
    again = client_for(bob).post(_url(workspace, flow), {"thread": "main", "messages": 1}, format="json").json()
    assert FlowRun.objects.get(pk=again["id"]).inputs["text"].startswith(f"Flow: Flow “Thread summary” (run #{run.pk})")


def test_it_keeps_the_spending_path_and_posts_once_per_end(workspace, alice, owner, conversation, client_for, queue):
    # given a paid Flow (one image, 40 credits) and a threshold below it
    spend_policy_update(access=owner, no_confirm_threshold=10)
    flow = _flow(workspace, POSTER, title="Poster from thread")

    # when alice runs it over the task thread
    response = client_for(alice).post(_url(workspace, flow), {"thread": {"task": conversation.pk}}, format="json")

    # then, as any run, it waits on a quote card with nothing held and no job
    assert response.status_code == 202, response.content
    body = response.json()
    assert (body["status"], body["cost"], body["thread"]) == ("awaiting_approval", 40, {"task": conversation.pk})
    card = Card.objects.get(pk=body["card"]["id"])
    assert card.payload["reasons"] == ["threshold"]
    assert not Order.objects.exists() and not GenerationJob.objects.exists()

    # when alice declines
    card_act(access=owner, card_id=card.pk, action="decline")

    # then the run ended without running, and the thread is told so, once
    run = FlowRun.objects.get(pk=body["id"])
    assert (run.status, run.ends) == (FlowRunStatus.CANCELLED, 1)
    [declined] = _flow_results(conversation)
    assert declined.text == f"Flow “Poster from thread” (run #{run.pk}) did not run: its spending was declined."

    # when another run is approved, and its image job fails
    second = client_for(alice).post(_url(workspace, flow), {"thread": {"task": conversation.pk}}, format="json").json()
    card_act(access=owner, card_id=second["card"]["id"], action="approve")
    queue()
    job = GenerationJob.objects.get()
    job_event_apply(job_id=job.pk, status="failed", error={"code": "upstream_error", "message": "boom"})
    queue()

    # then the failure is posted; a retry that succeeds ends the run again and posts its new result
    run = FlowRun.objects.get(pk=second["id"])
    assert (run.status, run.ends) == (FlowRunStatus.FAILED, 1)
    retry = (
        client_for(alice)
        .post(reverse("flow-node-retry", kwargs={"workspace_id": workspace.pk, "run_id": run.pk, "node_id": "poster"}))
        .json()
    )
    if retry["card"] is not None:
        card_act(access=owner, card_id=retry["card"]["id"], action="approve")
    queue()
    complete(GenerationJob.objects.exclude(pk=job.pk).get())
    queue()
    run.refresh_from_db()
    assert (run.status, run.ends) == (FlowRunStatus.DONE, 2)
    texts = [(m.flow_run_id, m.flow_run_end, m.text.split("\n")[0]) for m in _flow_results(conversation)][1:]
    assert texts == [
        (run.pk, 1, f"Flow “Poster from thread” (run #{run.pk}) failed at poster."),
        (run.pk, 2, f"Flow “Poster from thread” (run #{run.pk}):"),
    ]
    made = _flow_results(conversation)[-1].text
    assert f"Made: artifact #{GenerationJob.objects.exclude(pk=job.pk).get().artifact_id} v1." in made


def test_it_returns_the_same_run_for_a_repeated_idempotency_key_even_after_new_messages(
    workspace, alice, conversation, client_for, queue
):
    flow = _flow(workspace)
    client = client_for(alice)
    first = client.post(
        _url(workspace, flow), {"thread": {"task": conversation.pk}}, format="json", HTTP_IDEMPOTENCY_KEY="sum-1"
    )
    message_post(access=access_of(alice, workspace), task_id=conversation.pk, text="One more thing.")
    again = client.post(
        _url(workspace, flow), {"thread": {"task": conversation.pk}}, format="json", HTTP_IDEMPOTENCY_KEY="sum-1"
    )
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["id"] == first.json()["id"] and FlowRun.objects.count() == 1
    # the same key for another thread is a different request
    other = client.post(_url(workspace, flow), {"thread": "main"}, format="json", HTTP_IDEMPOTENCY_KEY="sum-1")
    assert_error(other, 409, "idempotency_key_reuse")
    assert FlowRun.objects.count() == 1


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"thread": "other"},
        {"thread": None},
        {"thread": 5},
        {"thread": {"task": "1"}},
        {"thread": {"task": True}},
        {"thread": {"task": 0}},
        {"thread": {"task": 1, "turn": 2}},
        {"thread": {"main": True}},
        {"thread": "main", "messages": 0},
        {"thread": "main", "messages": 51},
        {"thread": "main", "messages": "5"},
        {"thread": "main", "inputs": {"text": "x"}},
    ],
)
def test_it_refuses_a_bad_body_with_400_and_creates_nothing(workspace, alice, client_for, body):
    flow = _flow(workspace)
    seq = Event.objects.filter(workspace=workspace).count()
    assert_error(client_for(alice).post(_url(workspace, flow), body, format="json"), 400, "invalid")
    assert not FlowRun.objects.exists()
    assert Event.objects.filter(workspace=workspace).count() == seq


def test_it_refuses_threads_and_flows_outside_the_workspace_and_viewers(
    workspace, alice, carol, dave, conversation, client_for, make_user
):
    flow = _flow(workspace)
    elsewhere = WorkspaceFactory(name="Other studio", created_by=make_user("erin"))
    foreign_task = TaskFactory(workspace=elsewhere, title="Their task")
    foreign_flow = _flow(elsewhere)
    document = artifact_create(workspace_id=workspace.pk, kind="document", title="Notes", content="hello")
    _, raw = issue_api_key(workspace, role="viewer", name="reader")
    seq = Event.objects.filter(workspace=workspace).count()
    client = client_for(alice)

    # another workspace's task, an unknown task, another workspace's Flow: 404, nothing learnt
    assert_error(
        client.post(_url(workspace, flow), {"thread": {"task": foreign_task.pk}}, format="json"), 404, "not_found"
    )
    assert_error(client.post(_url(workspace, flow), {"thread": {"task": 999_999}}, format="json"), 404, "not_found")
    assert_error(client.post(_url(workspace, foreign_flow), {"thread": "main"}, format="json"), 404, "not_found")
    # an artifact that is not a Flow
    assert_error(client.post(_url(workspace, document), {"thread": "main"}, format="json"), 400, "not_a_flow")
    # a viewer cannot run; an outsider learns nothing
    assert_error(client_for(carol).post(_url(workspace, flow), {"thread": "main"}, format="json"), 403, "role_required")
    assert_error(client_for(dave).post(_url(workspace, flow), {"thread": "main"}, format="json"), 404, "not_found")
    # a viewer's API key neither
    assert_error(key_client(raw).post(_url(workspace, flow), {"thread": "main"}, format="json"), 403, "role_required")
    # a cancelled task takes no more messages, so no Flow answers in it
    conversation.status = TaskStatus.CANCELLED
    conversation.save(update_fields=["status"])
    assert_error(
        client.post(_url(workspace, flow), {"thread": {"task": conversation.pk}}, format="json"), 409, "task_cancelled"
    )

    assert not FlowRun.objects.exists()
    assert Event.objects.filter(workspace=workspace).count() == seq


def test_it_leaves_runs_started_without_a_thread_as_they_were(workspace, alice, client_for, queue):
    # given the existing route, which runs a Flow on explicit inputs
    flow = _flow(workspace)
    url = reverse("artifact-flow-runs", kwargs={"workspace_id": workspace.pk, "artifact_id": flow.pk})

    # when a run starts there and ends
    response = client_for(alice).post(url, {"inputs": {"text": "jazz"}}, format="json")
    queue()

    # then it names no thread, its events neither, and nothing is posted anywhere
    assert response.status_code == 201 and response.json()["thread"] is None
    run = FlowRun.objects.get()
    assert (run.status, run.thread, run.ends) == (FlowRunStatus.DONE, "", 1)
    assert not Event.objects.filter(kind__in=["flow.run", "flow.node"], data__has_key="thread").exists()
    assert not InboxMessage.objects.filter(source=FLOW_RESULT).exists()
    assert not MainMessage.objects.filter(route=Route.FLOW).exists()


def test_it_lets_a_running_turn_end_without_starting_another_for_a_flow_result(workspace, task, tools, script):
    from agents.runtime.loop import turn_run
    from agents.services.flow_threads import flow_result_post
    from tests.agents.conftest import says

    # given a run over the task's thread, and a turn whose model call is under way when the run's result arrives
    flow = _flow(workspace)
    with transaction.atomic():
        run, _ = runner.flow_run_create(
            workspace_id=workspace.pk, artifact_id=flow.pk, inputs={"text": "x"}, thread="task", thread_task_id=task.pk
        )

    def result_arrives(index, request):
        if index == 0:
            with transaction.atomic():
                flow_result_post(
                    workspace_id=workspace.pk,
                    run_id=run.pk,
                    end=1,
                    status="done",
                    thread={"task": task.pk},
                    artifact_id=flow.pk,
                    outputs={"text": "Three posters, warm colours."},
                )

    script([says("Done for now.")], on_call=result_arrives)
    turn = tools.start_turn(task)

    # when the turn answers and its cycle ends
    assert turn_run(turn_id=turn.pk, generation=1) == "answered"

    # then no other turn was started for the Flow's result: it waits, unread, for the task's next turn
    assert Turn.objects.filter(task=task).count() == 1
    [posted] = _flow_results(task)
    assert posted.status == InboxStatus.PENDING
    assert posted.text == f"Flow “Thread summary” (run #{run.pk}):\nThree posters, warm colours."


def test_it_bounds_the_transcript_and_leaves_out_what_a_person_asked_to_forget(workspace, alice, no_enqueue):
    from agents.services.flow_threads import MESSAGE_CHARS, TRANSCRIPT_CHARS, Thread, thread_transcript
    from memory.models import EvidenceKind, ForgetRequest, ForgottenTerm
    from memory.redaction import REDACTED, text_terms
    from memory.services.forget import forget_salt

    # given a Main thread of 30 long messages, one of which names something the person had forgotten
    for n in range(30):
        text = f"Message {n}: " + "word " * 700
        if n == 28:
            text = "My sister Margaux lives in Grenoble."
        MainMessage.objects.create(workspace=workspace, author=alice, text=text, route=Route.ANSWER)
    evidence = Evidence.objects.create(
        workspace=workspace, kind=EvidenceKind.MAIN_MESSAGE, source_id="0", text="-", content_hash="0" * 64
    )
    forget = ForgetRequest.objects.create(workspace=workspace, evidence=evidence)
    for term in text_terms("Margaux", salt=forget_salt(workspace.pk)):
        ForgottenTerm.objects.create(workspace=workspace, term=term, forget=forget)

    # when the transcript of the last 20 messages is built
    text = thread_transcript(workspace_id=workspace.pk, thread=Thread.of("main"), messages=20)

    # then it keeps the most recent messages that fit, each clipped, and the forgotten one is removed
    lines = text.split("\n")
    assert len(text) <= TRANSCRIPT_CHARS
    assert lines[-1].startswith("alice: Message 29: word") and lines[-2] == f"alice: {REDACTED}"
    assert all(len(line) <= len("alice: ") + MESSAGE_CHARS for line in lines)
    assert "Margaux" not in text and "Message 9:" not in text


def test_it_posts_once_when_two_workers_deliver_the_same_end_at_the_same_time(workspace, conversation):
    import threading

    from django.db import connections

    from agents.services.flow_threads import flow_result_post

    # given a run over the task's thread that has ended once
    flow = _flow(workspace)
    with transaction.atomic():
        run, _ = runner.flow_run_create(
            workspace_id=workspace.pk,
            artifact_id=flow.pk,
            inputs={"text": "x"},
            thread="task",
            thread_task_id=conversation.pk,
        )
    payload = {
        "workspace_id": workspace.pk,
        "run_id": run.pk,
        "end": 1,
        "status": "done",
        "thread": {"task": conversation.pk},
        "artifact_id": flow.pk,
        "outputs": {"text": "Three posters."},
    }
    barrier = threading.Barrier(2)
    posted: list[object] = []

    def deliver():
        try:
            barrier.wait()
            with transaction.atomic():
                posted.append(flow_result_post(**payload))
        finally:
            connections.close_all()

    # when two workers post that end on their own connections at once
    workers = [threading.Thread(target=deliver) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=30)

    # then one message and one event exist; the other worker found it posted and wrote nothing
    assert sorted(p is None for p in posted) == [False, True]
    assert len(_flow_results(conversation)) == 1
    assert Event.objects.filter(kind="inbox.posted", data__source=FLOW_RESULT).count() == 1
