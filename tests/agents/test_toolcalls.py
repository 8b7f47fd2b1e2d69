"""Checking a call against the tools offered (agents/providers/toolcalls.py), on the runtime's real tool schemas.

The schemas are pydantic's (`$defs`, `anyOf` for optional fields): the error told to the model in a repair round
must name the field that is wrong and why, not "is not valid under any of the given schemas".
"""

import pytest
from pydantic import ValidationError

from agents.providers.base import ToolCallIntent
from agents.providers.toolcalls import call_error, calls_in_text
from agents.tools.registry import tool_get, tools_offered


def _offered(*names):
    return {name: tool_get(name).spec() for name in names}


def test_every_offered_tool_schema_compiles_and_accepts_what_the_tool_accepts():
    # given every tool's full schema, then none is skipped for being uncompilable: an empty call to a tool
    # whose arguments are all optional passes, exactly as the tool's own model accepts it
    for tool in tools_offered():
        spec = tool.spec()
        try:
            tool.Args.model_validate({})
        except ValidationError:  # the tool needs arguments: nothing to compare on {}
            continue
        assert call_error(ToolCallIntent("c", spec.name, {}), {spec.name: spec}) is None, spec.name


def test_it_names_the_field_deep_inside_an_optional_list():
    # given update_checklist with a progress update whose position is a string ("5" is not a number here)
    offered = _offered("update_checklist")
    call = ToolCallIntent("c", "update_checklist", {"updates": [{"position": "1", "status": "done"}]})
    # then the error names that field and the type, not the null branch of the optional list
    error = call_error(call, offered)
    assert error["code"] == "invalid_arguments"
    assert error["details"]["problems"] == [{"field": "updates.0.position", "problem": "'1' is not of type 'integer'"}]


def test_it_refuses_unknown_fields_and_names_not_offered():
    offered = _offered("read_task_state", "update_checklist")
    extra = call_error(ToolCallIntent("c", "read_task_state", {"verbose": True}), offered)
    assert extra["details"]["problems"][0]["problem"].startswith("Additional properties are not allowed")
    missing = call_error(ToolCallIntent("c", "generate_image", {"prompt": "a cat"}), offered)
    assert missing["code"] == "tool_not_offered" and "read_task_state, update_checklist" in missing["message"]
    raw = call_error(ToolCallIntent("c", "update_checklist", '{"items": ['), offered)
    assert raw["code"] == "invalid_arguments"


@pytest.mark.parametrize(
    "text",
    [
        "Sure, I can help with that poster series.",
        'The palette: {"primary": "#d35400"}.',
        '```json\n{"title": "Poster 1", "style": "retro"}\n```',
        '{"name": "Poster 2", "size": "A3"}',  # a "name" that is no offered tool, without arguments: data
    ],
)
def test_it_reads_no_call_in_words_or_data(text):
    assert calls_in_text(text, list(_offered("read_task_state", "update_checklist").values())) is None
