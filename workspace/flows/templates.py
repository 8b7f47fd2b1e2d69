"""Flows to start from (issue 34 item 5): declared here, listed by `GET …/flow-templates/`, and made into a Flow of
the workspace by `POST …/flow-templates/{name}/use/`.

    flow_templates_list() -> list[FlowTemplate]
    flow_template_use(*, workspace_id, name, title=None, params=None, author_user=None) -> Artifact

A template is a graph built from a few params (how many posters, how long each clip, which collection): each has
a pydantic model of its own params, published as JSON Schema beside it. Using one stores a new Flow through
flow_create, so what a template makes is checked against the node types' declarations like any Flow; nothing of
a template is kept apart from the Flow it made (editing it changes that Flow only).

The product-photo template is unrolled when used: one photo, caption and square post per image of the collection,
at that moment (a photo added later needs the template used again, or a node added by hand).
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.utils.translation import gettext_lazy
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lomote.kernel.exceptions import InvalidInput, NotFound
from workspace.flows.authoring import flow_create
from workspace.flows.graph import Graph
from workspace.flows.params import MAX_ID
from workspace.models import Artifact, AssetCollectionItem
from workspace.selectors import collection_get

MAX_PHOTOS = 12  # a product-photo Flow holds three nodes per photo


class TemplateParams(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class PosterSeriesParams(TemplateParams):
    count: int = Field(3, ge=1, le=6, title="Posters", description="How many posters the series has.")


class StoryboardParams(TemplateParams):
    seconds: int = Field(5, ge=1, le=60, title="Seconds per clip", description="The length of each of the clips.")


class ProductPostsParams(TemplateParams):
    collection_id: int = Field(
        ge=1,
        le=MAX_ID,
        title="Collection",
        description=f"A collection of this workspace holding the product photos (its first {MAX_PHOTOS} images).",
    )


def _node(type_name: str, **params: Any) -> dict[str, Any]:
    return {"type": type_name, "params": params}


def _poster_series(workspace_id: int, params: PosterSeriesParams) -> Graph:
    nodes = {
        "brief": _node("text_input"),
        "title": _node("generate_text", prompt="A short poster title for: {input}"),
        "end": _node("finish"),
    }
    edges = [["brief", "title"], ["title", "end"]]
    for i in range(1, params.count + 1):
        poster = f"poster_{i}"
        prompt = f"Poster {i} of {params.count}, portrait: {{input}}"
        nodes[poster] = _node("generate_image", prompt=prompt, format="portrait")
        edges += [["brief", poster], ["title", poster], [poster, "end"]]
    return {"nodes": nodes, "edges": edges, "start": "brief"}


def _storyboard(workspace_id: int, params: StoryboardParams) -> Graph:
    nodes = {
        "brief": _node("text_input"),
        "shots": _node("generate_text", prompt="A shot list of three shots for: {input}"),
        "end": _node("finish"),
    }
    edges = [["brief", "shots"], ["shots", "end"]]
    for i in range(1, 4):
        shot, clip = f"shot_{i}", f"clip_{i}"
        nodes[shot] = _node("generate_image", prompt=f"Shot {i} of 3, a wide still: {{input}}", format="wide")
        nodes[clip] = _node(
            "generate_video",
            prompt=f"Shot {i} of 3, in motion: {{input}}",
            generation_params={"seconds": params.seconds},
        )
        edges += [["shots", shot], [shot, clip], [clip, "end"]]
    return {"nodes": nodes, "edges": edges, "start": "brief"}


def _product_posts(workspace_id: int, params: ProductPostsParams) -> Graph:
    collection = collection_get(workspace_id=workspace_id, collection_id=params.collection_id)
    photos = list(
        AssetCollectionItem.objects.filter(
            collection=collection, artifact__kind="image", artifact__deleted_at__isnull=True
        )
        .order_by("position")
        .values_list("artifact_id", flat=True)[:MAX_PHOTOS]
    )
    if not photos:
        raise InvalidInput(
            f"The collection “{collection.name}” holds no image to post.",
            code="no_product_photos",
            details={"fields": {"params.collection_id": ["No image in this collection."]}},
        )
    nodes = {
        "brief": _node("text_input", default=""),
        "end": _node("finish"),
    }
    edges = []
    for i, artifact_id in enumerate(photos, start=1):
        photo, caption, post = f"photo_{i}", f"caption_{i}", f"post_{i}"
        nodes[photo] = _node("artifact_input", artifact_id=artifact_id)
        nodes[caption] = _node("generate_text", prompt="An Instagram caption for this product photo: {input}")
        nodes[post] = _node("generate_image", prompt="A square social post for this product: {input}", format="square")
        edges += [["brief", caption], [photo, caption], ["brief", post], [photo, post], [caption, "end"], [post, "end"]]
    return {"nodes": nodes, "edges": edges, "start": "brief"}


@dataclass(frozen=True)
class FlowTemplate:
    name: str
    title: str  # lazy: said in the language of the request that reads it
    description: str
    Params: type[TemplateParams]
    build: Callable[[int, Any], Graph]

    def params_schema(self) -> dict[str, Any]:
        schema = self.Params.model_json_schema()
        schema["title"] = f"{self.title}: parameters"
        return schema


TEMPLATES: dict[str, FlowTemplate] = {
    t.name: t
    for t in (
        FlowTemplate(
            "poster-series",
            gettext_lazy("A poster series from a brief"),
            gettext_lazy(
                "The brief becomes a title, then a series of portrait posters made from the brief and the title."
            ),
            PosterSeriesParams,
            _poster_series,
        ),
        FlowTemplate(
            "storyboard",
            gettext_lazy("A storyboard to three shots and clips"),
            gettext_lazy("The brief becomes a shot list, each of its three shots a wide still, and each still a clip."),
            StoryboardParams,
            _storyboard,
        ),
        FlowTemplate(
            "product-posts",
            gettext_lazy("A caption and a square post for each product photo"),
            gettext_lazy(
                "For each image of a collection: a caption written from the photo's words, and a square social "
                "post made from the photo. The brief (optional) adds what every post should say."
            ),
            ProductPostsParams,
            _product_posts,
        ),
    )
}


def flow_templates_list() -> list[FlowTemplate]:
    return list(TEMPLATES.values())


def flow_template_get(name: str) -> FlowTemplate:
    template = TEMPLATES.get(name)
    if template is None:
        raise NotFound(f"No Flow template is called {name!r}.", code="template_not_found", details={"name": name})
    return template


def flow_template_use(
    *,
    workspace_id: int,
    name: str,
    title: str | None = None,
    params: dict[str, Any] | None = None,
    author_user: AbstractBaseUser | None = None,
) -> Artifact:
    """A new Flow of the workspace, built from the template with `params` (400 `invalid_template_params` naming
    the field; 404 for a collection the workspace does not have)."""
    template = flow_template_get(name)
    try:
        parsed = template.Params.model_validate(params or {}, strict=True)
    except ValidationError as invalid:
        errors = invalid.errors(include_url=False)
        field = ".".join(str(part) for part in errors[0]["loc"]) or "params"
        raise InvalidInput(
            f"Template {name!r}: `{field}`: {errors[0]['msg']}",
            code="invalid_template_params",
            details={"template": name, "field": field, "fields": {f"params.{field}": [errors[0]["msg"]]}},
        ) from None
    graph = template.build(workspace_id, parsed)
    return flow_create(
        workspace_id=workspace_id,
        title=title or str(template.title),
        description=str(template.description),
        tags=["template", template.name],
        graph=graph,
        author_user=author_user,
    )
