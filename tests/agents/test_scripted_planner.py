"""The scripted planner: deterministic, honest, and driving work through the same tool calls as a model."""

import copy
import re

import pytest

from agents.exceptions import ModelConfigError
from agents.models import ChecklistItem, ChecklistStatus, Step, TaskStatus, ToolCall
from agents.providers.base import ModelRequest, ToolSpec
from agents.runtime.loop import turn_run
from agents.scripted.planner import (
    MODEL_NAME,
    SKELETON_EVIDENCE,
    WORDS,
    ScriptedPlanner,
    classify,
    items_from_brief,
    photo_query,
)
from agents.tools.base import Tool, ToolArgs, ToolContext, ToolResult
from tests.support import runtime as rt

BASE_TOOLS = ["read_task_state", "update_checklist", "read_artifact", "search_assets", "ask_user", "load_tools"]
DISCLOSURE = {"en": "not an LLM", "fr": "pas un LLM"}


def _state(
    *,
    brief="a series of 3 retro brand posters",
    language="en",
    checklist=(),
    new_messages=(),
    last_results=(),
    step_index=1,
    tools=BASE_TOOLS,
):
    return {
        "task": {
            "id": 7,
            "title": "Retro posters",
            "brief": brief,
            "language": language,
            "kind": "persistent",
            "status": "active",
            "goal_revision": 1,
        },
        "checklist": list(checklist),
        "new_messages": list(new_messages),
        "last_results": list(last_results),
        "step_index": step_index,
        "turn_trigger": "message",
        "tools": list(tools),
    }


def _request(**state) -> ModelRequest:
    state = _state(**state)
    return ModelRequest(
        model=MODEL_NAME,
        params={},
        messages=[{"role": "system", "content": "Lomote"}, {"role": "user", "content": state["task"]["brief"]}],
        tools=[ToolSpec(name, f"{name} tool", {"type": "object"}) for name in state["tools"]],
        state=state,
    )


def _plan(**state):
    return ScriptedPlanner().complete(_request(**state))


def _calls(response):
    return [(call.name, call.arguments) for call in response.tool_calls]


def _item(position, title, status="pending", needs_confirmation=False):
    return {"position": position, "title": title, "status": status, "needs_confirmation": needs_confirmation}


def _result(name, status="done", result=None, error=None, call_id="1:1:1"):
    return {"call_id": call_id, "name": name, "status": status, "result": result, "error": error}


POSTERS = [_item(n, f"Poster {n} of 3 — retro brand poster") for n in (1, 2, 3)]


# --- planning from the brief ------------------------------------------------------------------------------


def test_it_plans_a_counted_series_with_read_task_state_and_update_checklist():
    # given a new task with no checklist
    # when the planner takes its first step
    response = _plan(brief="a series of 3 retro brand posters")
    # then it reads the state and records one item per poster, and says what it is
    assert _calls(response) == [
        ("read_task_state", {}),
        (
            "update_checklist",
            {"items": [{"title": f"Poster {n} of 3", "needs_confirmation": False} for n in (1, 2, 3)]},
        ),
    ]
    assert "Lomote scripted planner (not an LLM)" in response.text
    assert [call.id for call in response.tool_calls] == ["scripted-1-0", "scripted-1-1"]
    assert response.model == MODEL_NAME


def test_it_plans_in_the_task_language():
    # given a French task
    response = _plan(brief="une série de 3 affiches rétro pour la marque", language="fr")
    # then the items and the text are French
    items = response.tool_calls[1].arguments["items"]
    assert [i["title"] for i in items] == [f"Affiche {n} sur 3 — marque" for n in (1, 2, 3)]
    assert "Planificateur scripté de Lomote (pas un LLM)" in response.text


@pytest.mark.parametrize(
    ("brief", "language", "titles"),
    [
        ("1. Poster\n2. Teaser video\n3. Launch article", "en", ["Poster", "Teaser video", "Launch article"]),
        ("- a logo\n- a flyer", "en", ["Logo", "Flyer"]),
        # the kind is read by meaning: a second piece of the same kind keeps the person's own words
        ("a poster, a flyer and a video teaser", "en", ["Poster", "Flyer", "Video"]),
        ("une affiche et une vidéo", "fr", ["Affiche", "Vidéo"]),
        ("Make me three posters in 4 colours", "en", [f"Poster {n} of 3" for n in (1, 2, 3)]),
        ("I want 2 logos and a 3d mascot figurine", "en", ["Logo 1 of 2", "Logo 2 of 2", "3D model"]),
        # an "and" inside one thing does not split it, and style words are not the subject
        ("make a retro poster with red and blue colors", "en", ["Poster"]),
        ("a logo for Terre & Feu", "en", ["Logo — Terre & Feu"]),
        # sizes and durations are not counts
        ("a 5-second video of my cat", "en", ["Video — cat"]),
        ("posters at 3 pm", "en", ["Poster"]),
        # no kind of work read: nothing to plan from (the planner asks which kind, see below)
        ("Help me with my brand", "en", []),
        ("", "en", []),
    ],
)
def test_it_derives_checklist_items_from_the_brief(brief, language, titles):
    assert items_from_brief(brief, language) == titles


def test_it_asks_the_person_when_there_is_nothing_to_plan_from():
    # given a task with an empty brief and only a question from the person
    response = _plan(brief="", new_messages=[{"id": 1, "text": "what can you do?"}])
    # then it asks with a choice card, saying it is not an LLM
    ((name, arguments),) = _calls(response)
    assert name == "ask_user"
    assert DISCLOSURE["en"] in arguments["question"]
    assert arguments["options"] == ["An image", "A video", "A document"]


def test_it_plans_from_the_new_messages_when_the_brief_is_empty():
    response = _plan(brief="", new_messages=[{"id": 1, "text": "a poster and a video"}])
    assert [i["title"] for i in response.tool_calls[-1].arguments["items"]] == ["Poster", "Video"]


def test_it_does_not_plan_twice_when_recording_the_plan_failed():
    # given the previous step's update_checklist failed, so there is still no checklist
    failed = _result("update_checklist", status="failed", error={"code": "invalid_arguments", "message": "too long"})
    # when the planner looks again
    response = _plan(last_results=[failed], step_index=2)
    # then it answers with the plan and the reason instead of looping
    assert response.tool_calls == []
    assert "too long" in response.text
    assert "Poster 1 of 3" in response.text


# --- progressing the checklist ----------------------------------------------------------------------------


def test_it_loads_the_domain_whose_tool_it_needs_once():
    # given a planned checklist of posters and no image tool visible
    response = _plan(checklist=POSTERS, step_index=2)
    # then it loads the image tools
    assert _calls(response) == [("load_tools", {"domain": "image"})]


def test_it_explains_what_it_cannot_do_when_no_tool_can_progress_an_item():
    # given it already loaded the image domain and still sees no image tool
    loaded = _result("load_tools", result={"loaded": "image", "tools": []})
    # when it looks again
    response = _plan(checklist=POSTERS, last_results=[loaded], step_index=3)
    # then it answers in plain text: the plan, and why nothing could be done
    assert response.tool_calls == []
    assert "Plan for “Retro posters” (0/3 done)" in response.text
    assert "Items 1, 2 and 3: no image tool (generate_image) is available to me." in response.text


def test_it_uses_a_generation_tool_only_when_it_is_visible():
    # given the image tool is visible
    response = _plan(checklist=POSTERS, tools=[*BASE_TOOLS, "generate_image"], step_index=3)
    # then it marks the items in progress first, then asks for one image per item
    calls = _calls(response)
    assert calls[0] == (
        "update_checklist",
        {
            "updates": [
                {
                    "position": n,
                    "status": "in_progress",
                    "evidence": "Requested with generate_image by the scripted planner (step 3).",
                }
                for n in (1, 2, 3)
            ]
        },
    )
    assert [name for name, _ in calls[1:]] == ["generate_image"] * 3
    assert [args["checklist_position"] for _, args in calls[1:]] == [1, 2, 3]
    assert calls[1][1]["prompt"].startswith("Poster 1 of 3 — retro brand poster")


def test_it_never_starts_an_item_in_progress_again():
    # given item 1 was started earlier (a job in flight, or an outcome still to check)
    checklist = [POSTERS[0] | {"status": "in_progress"}, *POSTERS[1:]]
    # when the image tool is visible
    response = _plan(checklist=checklist, tools=[*BASE_TOOLS, "generate_image"])
    # then only items 2 and 3 are generated
    positions = [args["checklist_position"] for name, args in _calls(response) if name == "generate_image"]
    assert positions == [2, 3]


def test_it_checks_the_state_first_after_an_unknown_outcome():
    # given the previous step's generation ended with an unknown outcome, and more work is available
    unknown = _result("generate_image", status="unknown", error={"code": "outcome_unknown"})
    # when the planner decides
    response = _plan(checklist=POSTERS, tools=[*BASE_TOOLS, "generate_image"], last_results=[unknown])
    # then it reads the task state and does nothing else
    assert _calls(response) == [("read_task_state", {})]
    assert "generate_image" in response.text and "unknown" in response.text


def test_it_marks_items_done_when_the_generation_returned_the_artifact():
    # given two synchronous generations that returned their artifacts
    in_progress = [p | {"status": "in_progress"} for p in POSTERS[:2]] + [POSTERS[2]]
    results = [
        _result("generate_image", result={"checklist_position": 1, "artifact_id": 41}),
        _result("generate_image", result={"checklist_position": 2, "artifact_id": 42}),
    ]
    # when the planner looks at them
    response = _plan(checklist=in_progress, tools=[*BASE_TOOLS, "generate_image"], last_results=results)
    # then it marks both done, with the artifacts as evidence
    assert _calls(response) == [
        (
            "update_checklist",
            {
                "updates": [
                    {"position": 1, "status": "done", "evidence": "Artifact 41 produced by generate_image."},
                    {"position": 2, "status": "done", "evidence": "Artifact 42 produced by generate_image."},
                ]
            },
        )
    ]


def test_it_marks_an_item_done_when_its_artifact_landed_between_turns():
    # given item 1 in progress with an artifact attached since (its job completed), item 2 still waiting
    checklist = [
        POSTERS[0] | {"status": "in_progress", "artifacts": [{"artifact_id": 77}]},
        POSTERS[1] | {"status": "in_progress", "artifacts": []},
    ]
    # when a new turn starts
    response = _plan(checklist=checklist)
    # then only item 1 is marked done, with its artifact as evidence
    assert _calls(response) == [
        (
            "update_checklist",
            {"updates": [{"position": 1, "status": "done", "evidence": "Artifact 77 is attached to this item."}]},
        )
    ]


def test_it_reports_a_failed_generation_and_does_not_retry_it():
    # given a generation that failed at the previous step
    checklist = [POSTERS[0] | {"status": "in_progress"}]
    failed = _result(
        "generate_image", status="failed", error={"code": "insufficient_funds", "message": "The balance is too low."}
    )
    # when the planner decides
    response = _plan(checklist=checklist, tools=[*BASE_TOOLS, "generate_image"], last_results=[failed])
    # then it answers with the failure instead of trying again
    assert response.tool_calls == []
    assert "The balance is too low." in response.text
    assert "not retrying" in response.text


def test_it_asks_when_the_person_asks_a_question_it_cannot_act_on():
    # given a finished checklist and an open question from the person (no change asked)
    done = [p | {"status": "done"} for p in POSTERS]
    response = _plan(checklist=done, new_messages=[{"id": 9, "text": "Which fonts did you use?"}])
    # then it asks, honestly
    ((name, arguments),) = _calls(response)
    assert name == "ask_user"
    assert "not an LLM" in arguments["question"] and "Which fonts did you use?" in arguments["question"]


def test_it_does_not_take_the_answer_to_a_card_whose_title_asks_for_a_question():
    # given a confirmed "Continue with: Poster 3?" card: its answer quotes the card's title, question mark included
    done = [p | {"status": "done"} for p in POSTERS]
    answer = "[card 53: Continue with: Poster 3 of 3 — coffee shop?] The person confirmed; go on."
    response = _plan(checklist=done, new_messages=[{"id": 9, "text": answer}])
    # then it does not ask what to do about a "question" (asked in a loop, it never ended)
    assert [name for name, _ in _calls(response)] == []
    assert "cannot answer free-form questions" not in response.text


def test_it_answers_in_plain_text_when_everything_is_done():
    done = [p | {"status": "done"} for p in POSTERS]
    response = _plan(checklist=done, new_messages=[{"id": 9, "text": "thanks"}])
    assert response.tool_calls == []
    assert "All 3 checklist items are done." in response.text
    assert "changed nothing" in response.text


def test_it_says_which_items_no_known_tool_can_make():
    response = _plan(brief="Help me with my brand", checklist=[_item(1, "Help me with my brand")])
    assert response.tool_calls == []
    assert "Item 1: I know no tool that could make this." in response.text


def test_it_only_calls_tools_it_was_shown():
    # given a request where only reading the state is visible
    requests = [
        _request(tools=["read_task_state"]),
        _request(tools=[], brief=""),
        _request(tools=["read_task_state"], checklist=POSTERS),
        _request(
            tools=["ask_user"],
            checklist=[p | {"status": "done"} for p in POSTERS],
            new_messages=[{"id": 1, "text": "why?"}],
        ),
    ]
    # then no call ever names a tool that was not visible
    for request in requests:
        response = ScriptedPlanner().complete(request)
        assert {c.name for c in response.tool_calls} <= set(request.state["tools"])
        assert DISCLOSURE["en"] in response.text


# --- determinism, usage, configuration --------------------------------------------------------------------


def test_it_is_deterministic_and_derives_call_ids_from_the_step():
    # given the same request twice, and once at another step
    request = _request(checklist=POSTERS, tools=[*BASE_TOOLS, "generate_image"], step_index=4)
    snapshot = copy.deepcopy(request)
    first, second = ScriptedPlanner().complete(request), ScriptedPlanner().complete(request)
    later = ScriptedPlanner().complete(_request(checklist=POSTERS, tools=[*BASE_TOOLS, "generate_image"], step_index=5))
    # then the responses are equal, the ids follow the step index, and the request is untouched
    assert first == second
    assert [c.id for c in first.tool_calls] == [f"scripted-4-{i}" for i in range(4)]
    assert [c.id for c in later.tool_calls] == [f"scripted-5-{i}" for i in range(4)]
    assert request == snapshot


def test_it_estimates_usage_from_what_a_model_would_have_read_and_written():
    # given a short and a long conversation
    short = _request()
    long = ModelRequest(
        model=MODEL_NAME,
        params={},
        messages=short.messages + [{"role": "user", "content": "x" * 4000}],
        tools=short.tools,
        state=short.state,
    )
    # then prompt tokens grow with the rendered messages (about 4 characters each), nothing is cached
    small, big = ScriptedPlanner().complete(short).usage, ScriptedPlanner().complete(long).usage
    assert big.prompt_tokens - small.prompt_tokens >= 1000
    assert small.completion_tokens > 0
    assert (small.cached_prompt_tokens, big.cached_prompt_tokens) == (0, 0)


def test_it_refuses_to_pose_as_another_model():
    with pytest.raises(ModelConfigError):
        ScriptedPlanner(model="gpt-4o")
    with pytest.raises(ModelConfigError):
        ScriptedPlanner().complete(ModelRequest(model="gpt-4o", params={}, messages=[], tools=[], state={}))


# --- whole turns --------------------------------------------------------------------------------------------


def _simulate(brief: str, *, image_tool: bool, language: str = "en", max_steps: int = 12):
    """Apply the planner's calls to an in-memory task the way the base tools would, until it answers."""
    checklist, loaded, results, texts = [], set(), [], []
    for step in range(1, max_steps + 1):
        tools = BASE_TOOLS + (["generate_image"] if image_tool and "image" in loaded else [])
        request = _request(
            brief=brief,
            language=language,
            checklist=copy.deepcopy(checklist),
            last_results=results,
            step_index=step,
            tools=tools,
        )
        response = ScriptedPlanner().complete(request)
        texts.append(response.text)
        if not response.tool_calls:
            return checklist, texts
        results = []
        for call in response.tool_calls:
            args, content = call.arguments, None
            if call.name == "update_checklist" and "items" in args:
                checklist = [_item(n, i["title"]) for n, i in enumerate(args["items"], 1)]
            elif call.name == "update_checklist":
                for update in args["updates"]:
                    checklist[update["position"] - 1]["status"] = update["status"]
            elif call.name == "load_tools":
                loaded.add(args["domain"])
            elif call.name == "generate_image":
                content = {"checklist_position": args["checklist_position"], "artifact_id": 100 + step}
            results.append(_result(call.name, result=content))
    raise AssertionError(f"the planner did not answer within {max_steps} steps")


def test_it_reaches_a_final_answer_without_any_generation_tool():
    checklist, texts = _simulate("a series of 3 retro brand posters", image_tool=False)
    assert [i["status"] for i in checklist] == ["pending"] * 3
    assert len(texts) == 3  # plan, load the image tools, explain
    assert "no image tool (generate_image)" in texts[-1]


def test_it_completes_the_checklist_when_an_image_tool_exists():
    checklist, texts = _simulate("une série de 3 affiches rétro", image_tool=True, language="fr")
    assert [i["status"] for i in checklist] == ["done"] * 3
    assert "Les 3 étapes sont faites." in texts[-1]
    assert all(DISCLOSURE["fr"] in text for text in texts)


class _GenerateImageArgs(ToolArgs):
    prompt: str
    checklist_position: int
    format: str | None = None
    title: str | None = None


class _InstantImage(Tool):
    """A stand-in image tool that produces its artifact at once (the real one is a colleague's work)."""

    name = "generate_image"
    description = "Generate an image for a checklist item (test stand-in)."
    domain = "image"
    Args = _GenerateImageArgs

    def run(self, ctx: ToolContext, args: _GenerateImageArgs) -> ToolResult:
        artifact = 1000 + args.checklist_position
        return ToolResult(
            content={"checklist_position": args.checklist_position, "artifact_id": artifact}, artifact_created=True
        )


@pytest.mark.django_db(transaction=True)
def test_it_drives_a_real_turn_offline_to_a_quote_for_the_plan(task):
    # given a task and the default lease (the scripted planner) with the real image tool
    turn = rt.start_turn(task)
    # when the runtime runs the turn
    outcome = turn_run(turn_id=turn.pk, generation=1)
    # then the planner planned (reading the built-in poster guide with the plan), loaded the image tools and asked
    # for the posters through real tool calls; the plan's total needs a person's approval, so the task waits for it
    # with nothing spent
    steps = list(Step.objects.filter(turn=turn).order_by("index"))
    names = [[c.name for c in ToolCall.objects.filter(step=s).order_by("index")] for s in steps]
    assert names == [
        ["read_task_state", "update_checklist", "read_guide"],
        ["load_tools"],
        ["update_checklist", "generate_image", "generate_image", "generate_image"],
    ]
    assert all(s.model == MODEL_NAME and "not an LLM" in s.text for s in steps)
    assert list(ChecklistItem.objects.filter(task=task).values_list("title", flat=True)) == [
        f"Poster {n} of 3" for n in (1, 2, 3)
    ]
    assert outcome == "suspended"
    task.refresh_from_db()
    assert task.waiting_for["type"] == "approval" and task.waiting_for["amount"] == 120
    assert set(ChecklistItem.objects.filter(task=task).values_list("status", flat=True)) == {"pending"}


@pytest.mark.django_db(transaction=True)
def test_it_drives_a_real_turn_to_completion_when_an_image_tool_exists(task):
    # given an image tool registered in the image domain
    from agents.tools.registry import override

    turn = rt.start_turn(task)
    # when the runtime runs the turn
    with override(_InstantImage):
        turn_run(turn_id=turn.pk, generation=1)
    # then every poster was generated once and marked done, and the task is finished
    generations = ToolCall.objects.filter(turn=turn, name="generate_image")
    assert sorted(c.input["checklist_position"] for c in generations) == [1, 2, 3]
    assert set(ChecklistItem.objects.filter(task=task).values_list("status", flat=True)) == {ChecklistStatus.DONE}
    task.refresh_from_db()
    assert task.status == TaskStatus.DONE


def test_it_plans_from_the_option_a_person_chose_on_its_card():
    from agents.providers.base import ModelRequest
    from agents.scripted.planner import ScriptedPlanner

    # given no brief, and the person's answer to the planner's own question card
    answer = "[card 7: What should I make? Describe it in one sentence] The person chose: A video."
    state = {
        "task": {"id": 1, "title": "Shop", "brief": "", "language": "en"},
        "checklist": [],
        "new_messages": [{"id": 3, "text": answer}],
        "last_results": [],
        "step_index": 1,
        "tools": ["read_task_state", "update_checklist", "ask_user", "load_tools"],
    }
    # when the planner decides
    response = ScriptedPlanner().complete(ModelRequest(model="", params={}, messages=[], tools=[], state=state))
    # then it plans the chosen thing instead of asking again
    names = [c.name for c in response.tool_calls]
    assert "ask_user" not in names and "update_checklist" in names
    plan = next(c for c in response.tool_calls if c.name == "update_checklist").arguments
    assert [item["title"] for item in plan["items"]] == ["Video"]


# --- prose: the planner cannot write it, and says so on a card (issue 10, item 6) --------------------------

PROSE_REQUESTS = [
    ("en", "Write a short product description for our new tea"),
    ("en", "Could you draft an email to our customers about the price change?"),
    ("en", "Summarise the attached quarterly report"),
    ("en", "Translate our homepage into Spanish"),
    ("en", "Please write 3 Instagram captions for the launch"),
    ("en", "I need a catchy slogan for our coffee brand"),
    ("en", "A short bio of our founder for the website"),
    ("en", "Rewrite the about-us page so it sounds friendlier"),
    ("en", "A video script for our launch"),
    ("en", "Write something warm about our bakery"),
    ("fr", "Rédige une description de notre nouveau thé"),
    ("fr", "Peux-tu écrire un article de blog sur le thé vert ?"),
    ("fr", "Traduis ce texte en anglais"),
    ("fr", "Résume ce rapport en cinq lignes"),
    ("fr", "Écris trois légendes pour nos photos Instagram"),
    ("fr", "Un courriel pour annoncer nos nouveaux horaires"),
    ("de", "Schreibe eine Produktbeschreibung für unseren Tee"),
    ("es", "Escribe una descripción de nuestro té"),
]
GENERATION_REQUESTS = [
    ("en", "Make a series of 3 retro brand posters", "image"),
    ("en", "Also turn yesterday's cat photo into a video", "video"),
    ("en", "Could you please animate the cat photo?", "video"),
    ("fr", "Transforme la photo du chat en vidéo", "video"),
    ("en", "Create a storyboard for our coffee ad", "document"),
    ("en", "A poster with a caption for the jazz festival", "image"),
    ("en", "A slogan poster for the festival", "image"),
    ("en", "Design a logo for my bakery", "image"),
    ("fr", "Fais deux affiches pour le festival de jazz", "image"),
    ("fr", "Crée un logo animé pour la boulangerie", "video"),
    ("en", "A 3d mascot figurine", "3d"),
]
SKELETON_CHOSEN = "[card 4: I cannot write it] The person chose: Create a skeleton document."
PROFILE_CHOSEN = "[card 4: I cannot write it] The person chose: I'll set a model profile."


def _planned(brief, language):
    titles = items_from_brief(brief, "fr" if language == "fr" else "en")
    return [_item(n, title) for n, title in enumerate(titles, 1)]


@pytest.mark.parametrize(("language", "brief"), PROSE_REQUESTS)
def test_it_says_at_once_that_prose_needs_a_model_profile_and_offers_a_skeleton(language, brief):
    # given a planned request for text, in the person's wording
    checklist = _planned(brief, language)
    assert classify(brief).kind == "text"
    # when the planner takes its next step
    response = _plan(brief=brief, language=language, checklist=checklist)
    # then its only call is a question card: what is needed, how to set it, and the skeleton meanwhile
    [(name, arguments)] = _calls(response)
    assert name == "ask_user"
    # (in the task's language: German and Spanish too since issue 33, no longer English there)
    assert arguments["options"] == [WORDS[language]["opt_skeleton"], WORDS[language]["opt_profile"]]
    profile = {"en": "model profile", "fr": "profil de modèle", "de": "Modellprofil", "es": "perfil de modelo"}
    assert profile[language] in arguments["question"]
    assert "manage.py model_profile" in arguments["question"]
    assert f"“{checklist[0]['title'][:40]}" in arguments["question"]


@pytest.mark.parametrize(("language", "brief", "kind"), GENERATION_REQUESTS)
def test_it_leaves_generation_requests_to_their_tools(language, brief, kind):
    # given a planned request to generate something (not to write text)
    checklist = _planned(brief, language)
    assert classify(brief).kind == kind
    # when the planner takes its next step
    response = _plan(brief=brief, language=language, checklist=checklist)
    # then it loads that kind's tools rather than asking about prose
    domain = {"image": "image", "video": "video", "3d": "3d", "document": "documents"}[kind]
    assert _calls(response) == [("load_tools", {"domain": domain})]


def test_it_records_the_skeleton_the_person_chose_and_loads_the_document_tools():
    # given the prose card answered with the skeleton
    checklist = [_item(1, "Description — tea")]
    response = _plan(brief="Write a short product description for our new tea", checklist=checklist,
                     new_messages=[{"id": 9, "text": SKELETON_CHOSEN}])  # fmt: skip
    # then it records the choice on the item (read once, kept there) and loads what writes documents
    assert _calls(response) == [
        ("update_checklist", {"updates": [{"position": 1, "status": "pending", "evidence": SKELETON_EVIDENCE}]}),
        ("load_tools", {"domain": "documents"}),
    ]


def test_it_writes_the_skeleton_as_a_document_then_skips_the_item_naming_it():
    # given an item whose skeleton was chosen, with the document tools loaded
    brief = "Write a bio of our founder covering: her early years, her career and her awards"
    item = {**_item(1, "Bio of our founder"), "evidence": SKELETON_EVIDENCE}
    tools = [*BASE_TOOLS, "write_document"]
    # when the planner goes on
    response = _plan(brief=brief, checklist=[item], tools=tools)
    # then it marks the item in progress (keeping the choice as evidence) and creates the skeleton document
    calls = _calls(response)
    assert calls[0] == (
        "update_checklist",
        {"updates": [{"position": 1, "status": "in_progress", "evidence": SKELETON_EVIDENCE}]},
    )
    name, arguments = calls[1]
    assert (name, arguments["title"], arguments["checklist_position"]) == ("write_document", "Bio of our founder", 1)
    headings = [line for line in arguments["content"].splitlines() if line.startswith("## ")]
    assert headings == ["## Brief", "## Her early years", "## Her career", "## Her awards"]
    assert "no text was written" in arguments["content"]

    # when the document exists
    started = {**item, "status": "in_progress"}
    done = _result("write_document", result={"artifact_id": 31, "checklist_position": 1, "version": 1})
    response = _plan(brief=brief, checklist=[started], tools=tools, last_results=[done])
    # then the item is skipped, not done: the skeleton is not the text, and the evidence says where it is
    [(name, arguments)] = _calls(response)
    [update] = arguments["updates"]
    assert (name, update["status"]) == ("update_checklist", "skipped")
    assert "Skeleton document 31 created" in update["evidence"] and "model profile" in update["evidence"]


def test_it_waits_on_a_confirm_card_while_the_person_sets_a_model_profile():
    checklist = [_item(1, "Slogan pour notre café")]
    response = _plan(brief="Écris un slogan pour notre café", language="fr", checklist=checklist,
                     new_messages=[{"id": 9, "text": PROFILE_CHOSEN}])  # fmt: skip
    [(name, arguments)] = _calls(response)
    assert name == "ask_user" and "options" not in arguments  # a confirm card
    assert "manage.py model_profile" in arguments["question"] and "confirmez" in arguments["question"]


def test_it_asks_again_saying_it_is_still_the_scripted_planner_after_an_answer():
    # given the person confirmed the profile was set, yet this turn still runs on the scripted planner
    checklist = [_item(1, "Description — tea")]
    confirmed = "[card 5: Set the model profile] The person confirmed; go on."
    response = _plan(brief="Write a short product description for our new tea", checklist=checklist,
                     new_messages=[{"id": 10, "text": confirmed}])  # fmt: skip
    [(name, arguments)] = _calls(response)
    assert name == "ask_user" and arguments["question"].startswith("This turn still ran on the scripted planner")
    assert arguments["options"] == ["Create a skeleton document", "I'll set a model profile"]


# --- titles come from the subject of the request (issue 10, item 8b) ---------------------------------------

SUBJECT_TITLES = [
    ("en", "Also turn yesterday's cat photo into a video", ["Video — cat"]),
    ("en", "Could you please animate yesterday's cat photo?", ["Video — cat"]),
    ("en", "Please turn the cat photo from yesterday into a 5-second video", ["Video — cat"]),
    (
        "en",
        "Create two posters for a jazz festival",
        ["Poster 1 of 2 — jazz festival", "Poster 2 of 2 — jazz festival"],
    ),
    ("en", "Can you design a logo for my bakery?", ["Logo — bakery"]),
    ("en", "Please write 3 Instagram captions for the launch", [f"Document {n} of 3 — launch" for n in (1, 2, 3)]),
    ("fr", "Transforme la photo du chat d'hier en vidéo", ["Vidéo — chat"]),
    ("fr", "Anime la photo de mon chien, s'il te plaît", ["Vidéo — chien"]),
    (
        "fr",
        "Peux-tu faire deux affiches pour le festival de jazz ?",
        [f"Affiche {n} sur 2 — festival de jazz" for n in (1, 2)],
    ),
    ("fr", "Rédige une description de notre nouveau thé", ["Document — nouveau thé"]),
]
REQUEST_WORDS = {"also", "turn", "please", "could", "you", "yesterday", "animate", "two", "write", "can", "design",
                 "transforme", "hier", "anime", "peux", "tu", "faire", "deux", "rédige", "plaît"}  # fmt: skip


@pytest.mark.parametrize(("language", "brief", "titles"), SUBJECT_TITLES)
def test_it_titles_items_from_the_subject_of_the_request(language, brief, titles):
    planned = items_from_brief(brief, language)
    assert planned == titles
    # none of the request's own verbs, counts, time or politeness words is left in a title
    assert not {w for t in planned for w in re.findall(r"[\w']+", t.lower())} & REQUEST_WORDS


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("Also turn yesterday's cat photo into a video", "cat photo"),
        ("Could you please animate yesterday's cat photo?", "cat photo"),
        ("Anime la photo de mon chien", "photo chien"),
        ("Transforme la photo du chat d'hier en vidéo", "photo chat"),
        ("Video — cat", None),
    ],
)
def test_it_finds_the_words_naming_the_photo_to_start_from(text, query):
    assert photo_query(text) == query


def test_it_starts_a_video_titled_from_its_subject_from_the_photo_the_request_names():
    # given a video item titled from the subject (the title no longer names the photo), and the photo found
    item = _item(1, "Video — cat")
    brief = "Please turn yesterday's cat photo into a 5-second video"
    found = _result("search_assets", result={"query": "cat photo", "results": [{"id": 12, "title": "Cat photo"}]})
    tools = [*BASE_TOOLS, "generate_video"]
    # when the planner starts it
    response = _plan(brief=brief, checklist=[item], tools=tools, last_results=[found])
    # then the video starts from that photo, for the length the request asked, under the subject's title
    _, (name, arguments) = _calls(response)
    assert (name, arguments["source_artifact_id"], arguments["seconds"]) == ("generate_video", 12, 5)
    assert arguments["prompt"].startswith("Video — cat. ")
