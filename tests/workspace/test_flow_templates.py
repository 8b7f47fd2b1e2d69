"""Flow templates (issue 34 item 5): listed, used to make a Flow of the workspace, each valid against the node types."""

import pytest
from django.core.files.base import ContentFile
from django.db import transaction
from django.urls import reverse

from agents.services.flow_runs import flow_run_request
from billing.services.policy import spend_policy_update
from billing.services.wallets import wallet_topup
from tests.support.factories import ArtifactFactory
from tests.support.media_samples import png_bytes
from tests.support.openapi import assert_conforms
from tests.support.rest import assert_error
from workspace.flows import runner
from workspace.flows.graph import graph_load
from workspace.flows.templates import TEMPLATES
from workspace.flows.validation import graph_validate
from workspace.models import Artifact, FlowNodeRun, FlowRunStatus, GenerationJob
from workspace.selectors import workspace_access
from workspace.services.collections import collection_create
from workspace.services.workspaces import workspace_create
from workspace.tasks import generation_work

pytestmark = pytest.mark.django_db


def _list(client, workspace):
    return client.get(reverse("flow-template-list", kwargs={"workspace_id": workspace.pk}))


def _use(client, workspace, name, body=None, **headers):
    url = reverse("flow-template-use", kwargs={"workspace_id": workspace.pk, "name": name})
    return client.post(url, body or {}, format="json", **headers)


def _graph(flow_id):
    return graph_load(Artifact.objects.get(pk=flow_id).versions.get(number=1).content)


def _photo(workspace, title, description=""):
    return ArtifactFactory(
        workspace=workspace,
        kind="image",
        title=title,
        description=description,
        file=ContentFile(png_bytes(), name="photo.png"),
    )


@pytest.fixture
def products(workspace):
    """A collection of two product photos and a note (the note is no photo to post)."""
    mug = _photo(workspace, "Speckled mug", "Stoneware mug with a speckled glaze, 350 ml")
    vase = _photo(workspace, "Blue vase", "Hand-thrown vase in a deep blue glaze")
    note = ArtifactFactory(workspace=workspace, title="Price list", content="Mug 24 €")
    return collection_create(workspace_id=workspace.pk, name="Spring shop", artifact_ids=[mug.pk, note.pk, vase.pk])


def test_it_lists_the_templates_with_the_params_each_takes(workspace, carol, client_for):
    response = _list(client_for(carol), workspace)

    assert response.status_code == 200, response.content
    assert_conforms(response)
    listed = {t["name"]: t for t in response.json()}
    assert set(listed) == {"poster-series", "storyboard", "product-posts"}
    assert listed["poster-series"]["params_schema"]["properties"]["count"]["maximum"] == 6
    assert listed["product-posts"]["params_schema"]["required"] == ["collection_id"]
    assert all(t["title"] and t["description"] for t in listed.values())


def test_it_makes_a_poster_series_flow_with_as_many_posters_as_asked(workspace, alice, client_for):
    response = _use(client_for(alice), workspace, "poster-series", {"params": {"count": 4}, "title": "Jazz posters"})

    assert response.status_code == 201, response.content
    assert_conforms(response)
    assert (response.json()["kind"], response.json()["title"]) == ("flow", "Jazz posters")
    graph = _graph(response.json()["id"])
    posters = sorted(n for n, node in graph["nodes"].items() if node["type"] == "generate_image")
    assert posters == ["poster_1", "poster_2", "poster_3", "poster_4"]
    assert {graph["nodes"][p]["params"]["format"] for p in posters} == {"portrait"}
    assert graph["start"] == "brief" and ["title", "poster_2"] in graph["edges"]


def test_it_makes_a_storyboard_of_three_shots_each_animated(workspace, alice, client_for):
    response = _use(client_for(alice), workspace, "storyboard", {"params": {"seconds": 8}})

    graph = _graph(response.json()["id"])
    for i in (1, 2, 3):
        assert graph["nodes"][f"shot_{i}"]["type"] == "generate_image"
        assert graph["nodes"][f"clip_{i}"]["params"]["generation_params"] == {"seconds": 8}
        assert [f"shot_{i}", f"clip_{i}"] in graph["edges"]
    assert graph["nodes"]["shots"]["type"] == "generate_text"


def test_it_makes_a_caption_and_a_square_post_for_each_photo_of_a_collection(workspace, alice, client_for, products):
    response = _use(client_for(alice), workspace, "product-posts", {"params": {"collection_id": products.pk}})

    assert response.status_code == 201, response.content
    graph = _graph(response.json()["id"])
    photos = {
        n: node["params"]["artifact_id"] for n, node in graph["nodes"].items() if node["type"] == "artifact_input"
    }
    mug, vase = (Artifact.objects.get(title=t).pk for t in ("Speckled mug", "Blue vase"))
    assert photos == {"photo_1": mug, "photo_2": vase}  # in the collection's order, the note left out
    assert graph["nodes"]["post_2"]["params"]["format"] == "square"
    assert ["photo_2", "caption_2"] in graph["edges"] and ["photo_2", "post_2"] in graph["edges"]


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_every_template_makes_a_flow_its_node_types_accept(workspace, alice, client_for, products, name):
    params = {"collection_id": products.pk} if name == "product-posts" else {}

    response = _use(client_for(alice), workspace, name, {"params": params})

    # made through flow_create, and valid again when checked node by node and wire by wire
    assert response.status_code == 201, response.content
    graph_validate(workspace_id=workspace.pk, graph=_graph(response.json()["id"]))


@pytest.mark.parametrize(
    ("name", "params", "field"),
    [
        ("poster-series", {"count": 0}, "count"),
        ("poster-series", {"count": 7}, "count"),
        ("poster-series", {"count": "3"}, "count"),
        ("poster-series", {"colour": "red"}, "colour"),
        ("storyboard", {"seconds": 90}, "seconds"),
        ("product-posts", {}, "collection_id"),
        ("product-posts", {"collection_id": 10**30}, "collection_id"),
    ],
)
def test_it_refuses_params_a_template_does_not_take_naming_the_field(workspace, alice, client_for, name, params, field):
    error = assert_error(_use(client_for(alice), workspace, name, {"params": params}), 400, "invalid_template_params")

    assert (error["details"]["template"], error["details"]["field"]) == (name, field)
    assert not Artifact.objects.filter(kind="flow").exists()


def test_it_refuses_unknown_body_fields_and_unknown_templates(workspace, alice, client_for):
    client = client_for(alice)

    assert_error(_use(client, workspace, "poster-series", {"colour": "red"}), 400, "invalid")
    assert_error(_use(client, workspace, "mood-board"), 404, "template_not_found")
    assert not Artifact.objects.filter(kind="flow").exists()


def test_it_answers_another_workspaces_collection_as_a_missing_one(workspace, alice, dave, client_for):
    theirs = workspace_create(user=dave, name="Dave's")
    photo = _photo(theirs, "Dave's lamp")
    foreign = collection_create(workspace_id=theirs.pk, name="Dave's shop", artifact_ids=[photo.pk])

    answers = [
        _use(client_for(alice), workspace, "product-posts", {"params": {"collection_id": cid}})
        for cid in (foreign.pk, 10**12)
    ]

    errors = [assert_error(response, 404, "not_found") for response in answers]
    assert errors[0] == errors[1]
    assert not Artifact.objects.filter(kind="flow").exists()


def test_it_refuses_a_collection_without_photos(workspace, alice, client_for):
    note = ArtifactFactory(workspace=workspace, title="Notes", content="x")
    empty = collection_create(workspace_id=workspace.pk, name="Words", artifact_ids=[note.pk])

    response = _use(client_for(alice), workspace, "product-posts", {"params": {"collection_id": empty.pk}})

    assert_error(response, 400, "no_product_photos")


def test_a_viewer_cannot_use_a_template(workspace, carol, client_for):
    assert_error(_use(client_for(carol), workspace, "storyboard"), 403, "role_required")


def test_a_repeated_request_with_its_idempotency_key_makes_one_flow(workspace, alice, client_for):
    client = client_for(alice)

    first = _use(client, workspace, "storyboard", HTTP_IDEMPOTENCY_KEY="new-flow-1")
    again = _use(client, workspace, "storyboard", HTTP_IDEMPOTENCY_KEY="new-flow-1")

    assert (first.status_code, again.status_code) == (201, 201)
    assert first.json()["id"] == again.json()["id"] and again["Idempotent-Replayed"] == "true"
    assert Artifact.objects.filter(kind="flow").count() == 1


@pytest.fixture
def queue(monkeypatch):
    sent: list[tuple[str, int]] = []
    monkeypatch.setattr(runner, "_enqueue", lambda function, node_id: sent.append((function, node_id)))

    def drain():
        while sent:
            function, node_id = sent.pop(0)
            getattr(runner, function)(node_id)

    return drain


@pytest.mark.django_db(transaction=True)
def test_the_product_flow_runs_offline_captioning_each_photo_and_posting_it_square(
    workspace, alice, client_for, products, queue, settings
):
    # given the product Flow made from the template, in a funded workspace with no model configured
    settings.LOMOTE_DEFAULT_GENERATION_PROVIDER = "procedural"
    access = workspace_access(principal=alice, workspace_id=workspace.pk)
    wallet_topup(access=access, amount=500)
    spend_policy_update(access=access, no_confirm_threshold=500)
    flow_id = _use(client_for(alice), workspace, "product-posts", {"params": {"collection_id": products.pk}}).json()[
        "id"
    ]

    # when it runs and the renderer makes the posts
    with transaction.atomic():
        run = flow_run_request(
            workspace_id=workspace.pk, artifact_id=flow_id, inputs={"text": ""}, started_by=alice
        ).run
    queue()
    for job in GenerationJob.objects.filter(workspace=workspace).order_by("pk"):
        assert generation_work(job.pk) == "succeeded"
    queue()

    # then each caption is written from its photo by the offline writer, and each post is square, made from it
    run.refresh_from_db()
    assert run.status == FlowRunStatus.DONE, run.error
    nodes = {n.node_id: n for n in FlowNodeRun.objects.filter(run=run)}
    mug = Artifact.objects.get(title="Speckled mug")
    caption = nodes["caption_1"].output
    assert caption["writer"] == "offline" and caption["form"] == "caption"
    assert "mug" in caption["text"].lower() and "instagram caption" not in caption["text"].lower()
    job = GenerationJob.objects.get(pk=nodes["post_1"].job_id)
    assert job.params["source_artifact_id"] == mug.pk
    assert (job.params["width"], job.params["height"]) == (1024, 1024)
    assert nodes["post_1"].consumed == {str(mug.pk): 1}
