"""What each Flow node type takes: its params as a pydantic model, and its ports (issue 34 item 2).

These declarations are the single source of three things: the JSON Schema `GET …/flow-node-types/` publishes
(the studio builds each node's form from it), the server's validation of a node's params on every create and
edit (workspace/flows/validation.py), and which wires between nodes are allowed.

Models are strict and closed: a JSON string where a number is expected, `true` for a count, or a field the type
does not know is refused, naming the field — a typo in a param name must not be stored and silently ignored.
`generation_params` stays open: it goes to the generation provider, which checks it with its own rules.

Ports: edges join nodes, not named ports, so each type has at most one input port (every wire into the node
lands there) and one output port. A port type is what flows on a wire: `text`, `image`, `video`, `3d`,
`document` or `choice` (the text a router passes down the one branch it chose). An input port lists the types
it accepts; a wire is allowed when the output's type is among them.
"""

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

NODE_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
MAX_ID = 2**63 - 1  # a database id: beyond it a lookup would fail in the database, not here
MAX_TEXT = 20_000
MAX_PROMPT = 4_000
MAX_INSTRUCTIONS = 4_000

PORT_TYPES: dict[str, tuple[str, str]] = {
    "text": ("Text", "Words: a brief, a caption, a model's answer."),
    "image": ("Image", "An image artifact (its version), with the words it was made from."),
    "video": ("Video", "A video artifact (its version), with the words it was made from."),
    "3d": ("3D model", "A 3D model artifact (its version), with the words it was made from."),
    "document": ("Document", "A document artifact's text at one version."),
    "choice": ("Choice", "A router's text, sent down the one branch it chose."),
}
TEXTUAL = ("text", "document", "choice")
MEDIA = ("image", "video", "3d")


@dataclass(frozen=True)
class Port:
    name: str
    title: str
    types: tuple[str, ...]  # an output: what it may carry; an input: what it accepts
    description: str = ""

    def describe(self, *, side: str) -> dict[str, Any]:
        key = "accepts" if side == "input" else "types"
        return {"name": self.name, "title": self.title, key: list(self.types), "description": self.description}


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class NoParams(Params):
    pass


class TextInputParams(Params):
    default: str = Field(
        "",
        max_length=MAX_TEXT,
        title="Default text",
        description="The text a run starts from when it is given none.",
    )


class ArtifactInputParams(Params):
    artifact_id: int | None = Field(
        None,
        ge=1,
        le=MAX_ID,
        title="Artifact",
        description="The artifact of this workspace (a document, an image, a video or a 3D model) whose current "
        "version the node reads when it runs; a later version marks what was made from it stale. Needed to run.",
    )


class ModelParams(Params):
    """How a text or router node calls a model (agents/services/flow_nodes.py resolves it)."""

    instructions: str = Field(
        "",
        max_length=MAX_INSTRUCTIONS,
        title="Instructions",
        description="What the assistant is told to do (leave empty with a preset: the preset's are used).",
    )
    preset: int | None = Field(
        None,
        ge=1,
        le=MAX_ID,
        title="Assistant preset",
        description="An assistant preset of this workspace by id: its instructions, model and parameters.",
    )
    preset_version: int | None = Field(
        None,
        ge=1,
        le=2**31 - 1,
        title="Preset version",
        description="Pin one version of the preset (default: its latest).",
    )
    model_profile: str | None = Field(
        None,
        min_length=1,
        max_length=100,
        title="Model profile",
        description="A model profile of this workspace by name (default: the workspace's default profile).",
    )

    def cross_errors(self) -> list[tuple[str, str]]:
        """(field, message) for combinations the fields allow one by one but not together."""
        errors = []
        if self.preset is not None and (self.instructions or self.model_profile is not None):
            errors.append(("preset", "A preset brings its own instructions and model: leave those empty."))
        if self.preset_version is not None and self.preset is None:
            errors.append(("preset_version", "A preset version needs its preset."))
        return errors


class GenerateTextParams(ModelParams):
    prompt: str = Field(
        "{input}",
        max_length=MAX_PROMPT,
        title="Prompt",
        description="What to write from; {input} stands for the text of the nodes wired into this one.",
    )


RouteId = Annotated[str, StringConstraints(pattern=NODE_ID_PATTERN)]
RouteText = Annotated[str, StringConstraints(max_length=500)]


class RouterParams(ModelParams):
    routes: dict[RouteId, RouteText] = Field(
        default_factory=dict,
        max_length=50,
        title="Routes",
        description="What each outgoing branch is for, by the id of the node it leads to. The model picks one "
        "branch from these descriptions; the others are skipped.",
        json_schema_extra={"additionalProperties": False},  # keys are node ids: nothing else is a route
    )
    default: str | None = Field(
        None,
        pattern=NODE_ID_PATTERN,
        title="Default route",
        description="The branch the offline reader takes when no route's words appear in the text.",
    )


class GenerateParams(Params):
    prompt: str = Field(
        "{input}",
        min_length=1,
        max_length=MAX_PROMPT,
        title="Prompt",
        description="What to make; {input} stands for the text of the nodes wired into this one.",
    )
    provider: str | None = Field(
        None,
        pattern=r"^[a-z0-9_]{1,64}$",
        title="Provider",
        description="The generation provider that makes it (default: the deployment's).",
    )
    generation_params: dict[str, Any] = Field(
        default_factory=dict,
        title="Provider parameters",
        description="Passed to the provider, which checks them (the built-in renderer takes width, height, "
        "palette, layout, title, subtitle, seed…).",
    )


ImageFormat = Literal["square", "portrait", "story", "wide", "logo"]


class GenerateImageParams(GenerateParams):
    format: ImageFormat | None = Field(
        None,
        title="Format",
        description="square (a social post), portrait (a poster), story (9:16), wide (a banner) or logo; "
        "width and height in the provider parameters win over it.",
    )


class VideoGenerationParams(BaseModel):
    # Open: the rest goes to the provider. `seconds` is declared because the price is per second.
    model_config = ConfigDict(extra="allow", strict=True, title="Provider parameters")

    seconds: int = Field(5, ge=1, le=60, title="Seconds", description="How long the clip is; priced per second.")


class GenerateVideoParams(GenerateParams):
    generation_params: VideoGenerationParams = Field(  # type: ignore[assignment]
        default_factory=VideoGenerationParams,
        title="Provider parameters",
        description="Passed to the provider, which checks them; `seconds` sets the clip's length and its price.",
    )
