"""The scripted planner's short step with the workspace's files listed (agents/runtime/context.py): the file the
person's words point at is the call's source, and what it says tells them which (DESIGN §15). No database: the
state is what the runtime would send."""

import pytest

from agents.providers.base import ModelRequest
from agents.runtime.shortpath import SHORT_TOOLS
from agents.scripted.planner import MODEL_NAME, WORDS, ScriptedPlanner


def file(id: int, title: str, filename: str, age: float, uploaded: bool = True, kind: str = "image") -> dict:
    return {"id": id, "kind": kind, "title": title, "filename": filename, "description": "", "uploaded": uploaded,
            "age_seconds": age}  # fmt: skip


def step(brief: str, files: list[dict] | None, language: str = "en") -> tuple[str, list[tuple[str, dict]]]:
    state = {
        "task": {"id": 3, "title": "Quick", "brief": brief, "language": language, "kind": "lightweight"},
        "checklist": [{"position": 1, "title": "Quick", "status": "pending", "artifacts": []}],
        "new_messages": [{"id": 1, "text": brief}],
        "last_results": [],
        "step_index": 1,
        "tools": list(SHORT_TOOLS),
        "mode": "one_result",
    }
    if files is not None:
        state["workspace_files"] = files
    request = ModelRequest(model=MODEL_NAME, params={}, messages=[], tools=[], state=state)
    response = ScriptedPlanner().complete(request)
    return response.text, [(c.name, c.arguments) for c in response.tool_calls]


FILES = [
    file(7, "Poster: jazz night", "", 60, uploaded=False),
    file(5, "logo-sketch", "logo-sketch.png", 10 * 60),
    file(4, "IMG 2041", "IMG_2041.jpg", 3 * 3600),
    file(2, "brief", "brief.md", 30, kind="document"),
]


@pytest.mark.parametrize(
    ("brief", "language", "tool", "source"),
    [
        ("Turn my logo sketch into a clean vector-style logo", "en", "generate_image", 5),
        ("Transforme mon croquis en logo propre", "fr", "generate_image", 5),
        ("animate the photo IMG 2041 I uploaded", "en", "generate_video", 4),
    ],
)
def test_it_starts_the_work_from_the_file_the_person_names(brief, language, tool, source):
    text, [(name, arguments)] = step(brief, FILES, language)
    assert (name, arguments["source_artifact_id"]) == (tool, source)
    assert f"(#{source})" in text  # and it says which file it starts from


def test_it_says_so_when_no_file_fits_and_starts_from_the_words():
    text, [(name, arguments)] = step("animate my photo of the dog", [file(5, "logo-sketch", "logo-sketch.png", 600)])
    assert name == "generate_video" and "source_artifact_id" not in arguments
    assert WORDS["en"]["no_source_fits"] in text
    # an empty workspace is listed as empty: the same answer
    text, [(_, arguments)] = step("Turn my logo sketch into a clean vector-style logo", [])
    assert "source_artifact_id" not in arguments and WORDS["en"]["no_source_fits"] in text


def test_it_names_the_other_files_that_fit_as_well_when_it_cannot_ask_first():
    twins = [file(5, "sketch", "sketch.png", 300), file(6, "sketch", "sketch (1).png", 300)]
    text, [(_, arguments)] = step("turn my sketch into a logo", twins)
    assert arguments["source_artifact_id"] == 6  # the same fit and age: the later one
    assert "(#5)" in text


@pytest.mark.parametrize("files", [None, FILES])
def test_it_takes_no_source_for_a_request_from_nothing_or_when_no_files_are_listed(files):
    text, [(_, arguments)] = step("Make a poster of a cat at sunset", files)
    assert "source_artifact_id" not in arguments
    assert WORDS["en"]["no_source_fits"] not in text
