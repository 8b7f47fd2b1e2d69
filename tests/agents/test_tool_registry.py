"""The tool registry: base tools always visible, domain tools on demand, one closed schema per tool (DESIGN §7)."""

import json
import typing

import pytest

from agents.tools.base import Tool, ToolArgs, ToolResult
from agents.tools.base_tools import LoadTools, SearchAssets
from agents.tools.catalog import TOOLS
from agents.tools.registry import DOMAINS, install, override, tool_get, tools_visible
from workspace.models import ArtifactKind, Role

BASE_TOOL_NAMES = {"read_task_state", "update_checklist", "read_artifact", "search_assets", "ask_user", "load_tools"}


def _tool(name: str, domain: str) -> type[Tool]:
    class Fake(Tool):
        Args = ToolArgs

        def run(self, ctx, args):
            return ToolResult(content={})

    Fake.name, Fake.description, Fake.domain = name, f"{name} (test tool)", domain
    return Fake


def test_it_registers_the_base_tools():
    # when
    visible = tools_visible(set())

    # then
    assert BASE_TOOL_NAMES <= {t.name for t in visible}
    assert all(t.domain == "base" for t in visible)
    for name in BASE_TOOL_NAMES:
        assert tool_get(name).name == name


def test_it_answers_none_for_an_unknown_tool():
    # when / then
    assert tool_get("transfer_funds") is None


def test_it_shows_domain_tools_only_once_loaded():
    # given
    with override(_tool("test_paint", "image"), _tool("test_cut", "video")):
        # when
        base_only = [t.name for t in tools_visible(set())]
        with_images = [t.name for t in tools_visible({"image"})]

    # then: base tools first, then the loaded domain's
    assert "test_paint" not in base_only and "test_cut" not in base_only
    assert with_images[: len(base_only)] == base_only
    assert "test_paint" in with_images[len(base_only) :] and "test_cut" not in with_images


def test_it_refuses_an_unknown_domain_and_a_name_taken_by_another_tool():
    # given
    read_artifact = tool_get("read_artifact")

    # when / then
    with pytest.raises(ValueError, match="domain"):
        install([_tool("test_mine", "crypto")])
    with pytest.raises(ValueError, match="twice"):
        install([_tool("read_artifact", "base")])
    install([read_artifact])  # re-installing the same class is harmless
    assert tool_get("read_artifact") is read_artifact
    assert tool_get("test_mine") is None
    with pytest.raises(ValueError, match="domain"), override(_tool("test_mine", "crypto")):
        pass


def test_it_builds_the_registry_from_the_catalog():
    # when
    everything = tools_visible(set(DOMAINS))

    # then: every catalog tool and nothing else, each under its own name
    assert sorted(t.name for t in everything) == sorted(t.name for t in TOOLS)
    assert len({t.name for t in TOOLS}) == len(TOOLS)
    assert all(tool_get(t.name) is t for t in TOOLS)


def test_it_offers_the_tools_in_a_fixed_order():
    # when: the order of the tool schemas is part of the prompt (prompt caching)
    names = [t.name for t in tools_visible(["documents", "image", "flows"])]

    # then: base tools by name, then each domain's tools by name, domains in the order they were loaded
    base = sorted(t.name for t in tools_visible([]))
    assert names == [
        *base,
        "edit_document",
        "write_document",
        "generate_image",
        "edit_flow_nodes",
        "run_flow",
    ]


def test_loading_a_domain_only_appends_to_what_was_visible():
    # given a task that loaded documents, then image
    before = [t.name for t in tools_visible(["documents", "image"])]

    # when it loads flows (and, again, documents)
    after = [t.name for t in tools_visible(["documents", "image", "flows", "documents"])]

    # then nothing before moved: the earlier list is a prefix of the new one
    assert after[: len(before)] == before and len(after) > len(before)


def test_registration_order_changes_no_byte_of_the_offered_tools():
    # given the same tools registered in two different orders
    tools = [_tool("test_zebra", "image"), _tool("test_apple", "image"), _tool("test_mango", "base")]
    with override(*tools):
        first = [t.spec().as_openai() for t in tools_visible(["image"])]
    with override(*reversed(tools)):
        second = [t.spec().as_openai() for t in tools_visible(["image"])]

    # then the offered tools are the same, in the same order
    assert json.dumps(first, sort_keys=False) == json.dumps(second, sort_keys=False)


def test_it_restores_the_registry_after_an_override():
    # given
    original = tool_get("read_artifact")
    replacement = _tool("read_artifact", "base")

    # when
    with override(replacement):
        with override(_tool("test_paint", "image")):
            inside = (tool_get("read_artifact"), tool_get("test_paint") is not None)
        between = tool_get("test_paint")

    # then
    assert inside == (replacement, True)
    assert between is None
    assert tool_get("read_artifact") is original


@pytest.mark.parametrize("name", sorted(BASE_TOOL_NAMES))
def test_it_describes_every_base_tool_with_a_closed_schema(name):
    # given
    tool = tool_get(name)

    # when
    spec = tool.spec().as_openai()

    # then
    function = spec["function"]
    assert spec["type"] == "function" and function["name"] == name
    assert len(function["description"]) > 20
    assert function["parameters"]["type"] == "object"
    assert function["parameters"]["additionalProperties"] is False
    for nested in function["parameters"].get("$defs", {}).values():
        assert nested["additionalProperties"] is False


def test_it_declares_each_base_tools_contract():
    # when
    contract = {
        name: (tool_get(name).idempotent, tool_get(name).transactional, tool_get(name).required_role)
        for name in BASE_TOOL_NAMES
    }

    # then: only planning the checklist writes, so only it needs an editor
    assert contract == {
        "read_task_state": (True, True, Role.VIEWER),
        "update_checklist": (True, True, Role.EDITOR),
        "read_artifact": (True, True, Role.VIEWER),
        "search_assets": (True, True, Role.VIEWER),
        "ask_user": (True, True, Role.VIEWER),
        "load_tools": (True, True, Role.VIEWER),
    }


def test_it_offers_every_loadable_domain_and_every_artifact_kind():
    # when
    loadable = set(typing.get_args(LoadTools.Args.model_fields["domain"].annotation))
    kinds_field = SearchAssets.Args.model_fields["kinds"].annotation  # list[Literal[...]] | None
    searchable = set(typing.get_args(typing.get_args(typing.get_args(kinds_field)[0])[0]))

    # then
    assert loadable == set(DOMAINS) - {"base"}
    assert searchable == set(ArtifactKind.values)
