"""The scripted planner reads the messages sent to a planned task (issue 15, item 3): ModelRequest in, ModelResponse
out, with paraphrases in English and French. The whole flow through the runtime is in test_scripted_follow_ups_flow.
"""

import pytest

from agents.scripted.planner import (
    CHOOSE_MARK,
    REQUEST_PREFIX,
    REVISION_PREFIX,
    classify,
    items_from_brief,
    kind_word,
    series_noun,
)
from agents.scripted.task_requests import (
    Item,
    add_request,
    animate_phrases,
    change_requested,
    is_acknowledgement,
    item_references,
    seconds_wanted,
)
from tests.agents.test_scripted_planner import BASE_TOOLS, _calls, _item, _plan, _result

BRIEF = {"en": "Make a series of 3 retro brand posters", "fr": "Fais une série de 3 affiches rétro pour la marque"}


def _made(position, title, artifact, kind_title=None):
    return _item(position, kind_title or title, "done") | {
        "artifacts": [{"job": artifact, "status": "succeeded", "artifact": artifact, "version": 1}]
    }


POSTERS = {
    "en": [_made(n, f"Poster {n} of 3 — brand", 40 + n) for n in (1, 2, 3)],
    "fr": [_made(n, f"Affiche {n} sur 3 — marque", 40 + n) for n in (1, 2, 3)],
}
# A checklist of two kinds: an index counts among the items of the kind the message names.
MIXED = [
    _made(1, "Video — cat", 51),
    _made(2, "Poster 1 of 2 — jazz festival", 52),
    _made(3, "Poster 2 of 2 — jazz festival", 53),
]


def _says(message, *, language="en", checklist=None, tools=BASE_TOOLS, brief=None, last_results=()):
    return _plan(
        brief=brief if brief is not None else BRIEF[language],
        language=language,
        checklist=checklist if checklist is not None else POSTERS[language],
        new_messages=[{"id": 1, "text": message}],
        tools=tools,
        last_results=last_results,
    )


def _reopened(response) -> list[int]:
    updates = [u for name, args in _calls(response) if name == "update_checklist" for u in args.get("updates", [])]
    return sorted(u["position"] for u in updates if u["evidence"].startswith(REVISION_PREFIX))


def _added(response) -> list[str]:
    return [i["title"] for name, args in _calls(response) if name == "update_checklist" for i in args.get("items", [])]


# --- a revision names its items ---------------------------------------------------------------------------

REFERENCES = [
    ("en", "Make poster 2 warmer", [2]),
    ("en", "Could you make the second poster a bit brighter?", [2]),
    ("en", "The last one is too dark, make it brighter", [3]),
    ("en", "Make the first two bolder", [1, 2]),
    ("en", "Make the last two warmer", [2, 3]),
    ("en", "Make all of them warmer", [1, 2, 3]),
    ("en", "Posters 1 and 3 need more contrast", [1, 3]),
    ("en", "Redo items 2-3 with a darker background", [2, 3]),
    ("en", "Move the text on poster #1", [1]),
    ("en", "Make the posters from last week warmer and move the text", [1, 2, 3]),
    ("en", "Make them warmer", [1, 2, 3]),
    ("en", "I'd like poster 3 in blue", [3]),
    ("en", "Poster 3 is too dark", [3]),
    ("en", "The colours are a bit dull", [1, 2, 3]),
    ("en", "Regenerate the last one", [3]),
    ("fr", "Rends l'affiche 2 plus chaude", [2]),
    ("fr", "La dernière est trop sombre, éclaircis-la", [3]),
    ("fr", "Rends les deux premières plus chaudes", [1, 2]),
    ("fr", "Toutes plus chaudes, s'il te plaît", [1, 2, 3]),
    ("fr", "Déplace le texte de l'avant-dernière", [2]),
    ("fr", "Peux-tu changer le fond de la deuxième affiche ?", [2]),
    ("fr", "Rends les affiches de la semaine dernière plus chaudes", [1, 2, 3]),
    ("fr", "Tu peux refaire la 2 ?", [2]),
    ("fr", "Fais-en une autre version plus chaude", [1, 2, 3]),
    ("fr", "La troisième en bleu", [3]),
]


@pytest.mark.parametrize(("language", "message", "positions"), REFERENCES)
def test_it_reopens_only_the_items_a_revision_names(language, message, positions):
    # given three finished posters
    # when the person asks for a change naming some of them
    response = _says(message, language=language)
    # then exactly those are reopened, with the change as their evidence, and nothing else is called
    assert _reopened(response) == positions
    assert [name for name, _ in _calls(response)] == ["update_checklist"]
    assert {u["evidence"] for u in _calls(response)[0][1]["updates"]} == {REVISION_PREFIX + message}


@pytest.mark.parametrize(
    ("message", "positions"),
    [
        ("Make poster 2 warmer", [3]),  # the second poster, not the second item
        ("Make the last poster warmer", [3]),
        ("Make the posters warmer", [2, 3]),  # the posters only, not the video
        ("Make the video longer", [1]),
        ("Make it longer", [1]),  # only the video has a length
        ("Make the video 8 seconds", [1]),
    ],
)
def test_it_counts_an_index_among_the_items_of_the_kind_named(message, positions):
    assert _reopened(_says(message, checklist=MIXED)) == positions


def test_it_says_so_when_a_revision_names_an_item_that_does_not_exist():
    # when the person names poster 7 of three
    response = _says("Make poster 7 warmer")
    # then nothing is reopened and the answer lists what there is
    assert _calls(response) == []
    assert "no poster 7" in response.text and "Poster 3 of 3" in response.text


def test_it_says_so_when_the_item_named_is_not_made_yet():
    checklist = [*POSTERS["en"][:2], _item(3, "Poster 3 of 3 — brand", "in_progress")]
    response = _says("Make the last one warmer", checklist=checklist)
    assert _reopened(response) == []
    assert "Item 3: nothing is made yet" in response.text


def test_it_makes_the_new_version_of_only_the_reopened_item():
    # given poster 2 reopened with the change, the image tool visible
    checklist = [*POSTERS["en"]]
    checklist[1] = checklist[1] | {"status": "pending", "evidence": REVISION_PREFIX + "Make poster 2 warmer"}
    response = _plan(brief=BRIEF["en"], checklist=checklist, tools=[*BASE_TOOLS, "generate_image"])
    # then one generation, a new version of its artifact, asked with the change
    [(name, arguments)] = [c for c in _calls(response) if c[0] == "generate_image"]
    assert (arguments["checklist_position"], arguments["artifact_id"]) == (2, 42)
    assert "Make poster 2 warmer" in arguments["prompt"]


@pytest.mark.parametrize(
    ("language", "message"),
    [
        ("en", "Could you warm up the colours on those posters?"),
        ("en", "Can you make them pop more?"),
        ("en", "Would it be possible to move the logo a little higher?"),
        ("fr", "Pourrais-tu réchauffer les couleurs de ces affiches ?"),
        ("fr", "Tu peux mettre plus de rouge ?"),
    ],
)
def test_it_takes_a_question_about_finished_work_as_a_revision(language, message):
    response = _says(message, language=language)
    assert _reopened(response) == [1, 2, 3]
    assert "ask_user" not in [name for name, _ in _calls(response)]


# --- more of the same -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "message", "titles"),
    [
        ("en", "Add two more posters", ["Poster 4 — brand", "Poster 5 — brand"]),
        ("en", "Could you add 2 more?", ["Poster 4 — brand", "Poster 5 — brand"]),
        ("en", "One more please", ["Poster 4 — brand"]),
        ("en", "Another poster, please", ["Poster 4 — brand"]),
        ("en", "I need another one", ["Poster 4 — brand"]),
        ("en", "Add three more posters for the jazz night", [f"Poster {n} — jazz night" for n in (4, 5, 6)]),
        ("fr", "ajoute deux affiches", ["Affiche 4 — marque", "Affiche 5 — marque"]),
        ("fr", "Deux affiches de plus, merci", ["Affiche 4 — marque", "Affiche 5 — marque"]),
        ("fr", "Encore une affiche", ["Affiche 4 — marque"]),
        ("fr", "Une autre, s'il te plaît", ["Affiche 4 — marque"]),
        ("fr", "Fais-en deux autres", ["Affiche 4 — marque", "Affiche 5 — marque"]),
    ],
)
def test_it_adds_the_items_asked_for(language, message, titles):
    # when the person asks for more
    response = _says(message, language=language)
    # then the new items are planned after the finished ones; nothing is reopened
    assert _added(response) == titles
    assert _reopened(response) == []


def test_it_asks_how_many_more_when_the_message_does_not_say_then_adds_that_many():
    # when the person asks for "more posters"
    response = _says("More posters please")
    # then a choice card asks how many
    [(name, arguments)] = _calls(response)
    assert (name, arguments["options"]) == ("ask_user", ["1", "2", "3", "Other number"])
    # when they choose 2 on it
    answer = f"[card 8: {arguments['question']}] The person chose: 2."
    response = _says(answer)
    assert _added(response) == ["Poster 4 — brand", "Poster 5 — brand"]


def test_it_keeps_the_evidence_of_pending_items_when_it_adds_items():
    # given item 3 reopened for a change (pending, with its change as evidence)
    checklist = [*POSTERS["en"][:2], POSTERS["en"][2] | {"status": "pending", "evidence": REVISION_PREFIX + "warmer"}]
    # when two more are asked for
    response = _says("Add two more posters", checklist=checklist)
    # then the pending item is listed again first (update_checklist replaces pending items), its evidence restored
    calls = _calls(response)
    assert _added(response) == ["Poster 3 of 3 — brand", "Poster 4 — brand", "Poster 5 — brand"]
    assert calls[1][1]["updates"] == [{"position": 3, "status": "pending", "evidence": REVISION_PREFIX + "warmer"}]


# --- thanks ----------------------------------------------------------------------------------------------------

THANKS = [
    ("en", "Thanks, nothing more to do"),
    ("en", "ok great"),
    ("en", "Perfect, thank you!"),
    ("en", "Looks good, that's all"),
    ("en", "I love poster 2"),
    ("en", "Don't change anything, it's perfect"),
    ("fr", "merci c'est parfait"),
    ("fr", "Super, rien de plus"),
    ("fr", "C'est tout, merci beaucoup"),
    ("fr", "Parfait, n'y touche pas"),
]


@pytest.mark.parametrize(("language", "message"), THANKS)
def test_it_answers_thanks_with_a_word_and_does_nothing(language, message):
    response = _says(message, language=language)
    assert response.tool_calls == []
    assert ("changed nothing" if language == "en" else "rien changé") in response.text
    assert ("All 3 checklist items are done." if language == "en" else "Les 3 étapes sont faites.") in response.text


@pytest.mark.parametrize(
    "message",
    ["Thanks! Now make poster 2 warmer", "Great, add one more", "Thanks, but I don't like the colours?"],
)
def test_it_does_not_take_a_request_after_thanks_for_thanks(message):
    response = _says(message)
    assert response.tool_calls != [] or "changed nothing" not in response.text


# --- a series without a number ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "brief", "noun", "options"),
    [
        ("en", "Make a series of retro brand posters", "posters", ["3", "5", "Other number"]),
        ("en", "I'd like some posters for my coffee shop", "posters", ["3", "5", "Other number"]),
        ("en", "Create a set of icons for our app", "icons", ["3", "5", "Other number"]),
        ("fr", "Fais une série d'affiches rétro", "affiches", ["3", "5", "Autre nombre"]),
        ("fr", "Je voudrais plusieurs logos pour la boulangerie", "logos", ["3", "5", "Autre nombre"]),
    ],
)
def test_it_asks_how_many_for_a_series_without_a_number(language, brief, noun, options):
    # given a new task whose brief asks for a series and says no number
    assert series_noun(brief, language) == noun
    response = _plan(brief=brief, language=language, new_messages=[{"id": 1, "text": brief}])
    # then it asks how many on a choice card, and plans nothing yet
    [(name, arguments)] = _calls(response)
    assert (name, arguments["options"]) == ("ask_user", options)
    assert noun in arguments["question"]


@pytest.mark.parametrize(
    ("answer", "count"),
    [
        ("[card 3: How many posters should I make?] The person chose: 5.", 5),
        ("[card 3: How many posters should I make?] The person chose: 3.", 3),
        ("[card 4: How many posters should I make? Type the number (at most 12).] The person answered: 7", 7),
        ("[card 4: How many posters should I make? Type the number (at most 12).] The person answered: 40", 12),
    ],
)
def test_it_plans_as_many_as_the_person_answered(answer, count):
    brief = "Make a series of retro brand posters"
    response = _plan(brief=brief, new_messages=[{"id": 2, "text": answer}])
    titles = _added(response)
    assert titles == [f"Poster {n} of {count} — brand" for n in range(1, count + 1)]


def test_it_asks_to_type_the_number_when_the_person_chose_another():
    answer = "[card 3: How many posters should I make?] The person chose: Other number."
    response = _plan(brief="Make a series of retro brand posters", new_messages=[{"id": 2, "text": answer}])
    [(name, arguments)] = _calls(response)
    assert name == "ask_user" and "options" not in arguments and "Type the number" in arguments["question"]


def test_it_says_its_default_aloud_when_it_cannot_ask():
    tools = [t for t in BASE_TOOLS if t != "ask_user"]
    response = _plan(brief="Fais une série d'affiches rétro", language="fr", tools=tools)
    assert len(_added(response)) == 3
    assert "Vous n’avez pas dit combien : j’en fais 3" in response.text


@pytest.mark.parametrize(
    ("language", "brief"),
    [
        ("en", "Make a series of 3 retro brand posters"),
        ("en", "A poster for the jazz festival"),
        ("en", "Write lyrics for our song"),
        ("en", "A poster, a flyer and a video"),
        ("fr", "Fais deux affiches pour le festival"),
        ("fr", "Une affiche pour la fête de la musique"),
    ],
)
def test_it_does_not_ask_how_many_when_the_brief_says_or_asks_for_one(language, brief):
    assert series_noun(brief, language) is None


# --- video words ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "brief"),
    [
        ("en", "Animate the photo of my cat"),
        ("en", "Bring my cat photo to life"),
        ("en", "Make it move"),
        ("en", "A short clip of the cat photo"),
        ("en", "Turn the cat photo into an animation"),
        ("fr", "Anime la photo de mon chat"),
        ("fr", "Fais une vidéo de la photo du chat"),
        ("fr", "Donne vie à la photo de mon chat"),
        ("fr", "Fais-la bouger"),
        ("fr", "Une petite animation avec la photo du chat"),
    ],
)
def test_it_reads_animation_words_as_video(language, brief):
    assert classify(brief).kind == "video"
    # one item, titled with the person's own word for it ("Clip — cat") or the kind's ("Video — cat")
    [title] = items_from_brief(brief, language)
    assert classify(title).kind == "video"


def test_it_adds_new_work_of_another_kind_to_a_task():
    # "a 10-second video" is new work; "the video 10 seconds" would be a change to the one made
    response = _says("Make a 10-second video of the dog", checklist=MIXED)
    assert _added(response) == ["Video — dog"] and _reopened(response) == []
    response = _says("I'd also like a logo for the festival")
    assert _added(response) == ["Logo — festival"] and _reopened(response) == []


def test_it_says_bring_to_life_and_make_it_move_as_animate():
    assert animate_phrases("Bring my cat photo to life") == "animate my cat photo"
    assert animate_phrases("Make it move") == "animate it"
    assert animate_phrases("donne vie à la photo de mon chat") == "anime la photo de mon chat"
    # moving something somewhere is a change, not an animation
    assert animate_phrases("Make the logo move to the left") == "Make the logo move to the left"


@pytest.mark.parametrize(
    ("language", "message", "source"),
    [
        ("en", "Animate poster 2", 42),
        ("en", "Bring the last one to life", 43),
        ("en", "Make it move", 43),
        ("fr", "Anime l'affiche 2", 42),
        ("fr", "Fais-la bouger", 43),
    ],
)
def test_it_adds_a_video_starting_from_the_image_a_message_names(language, message, source):
    # when the person asks, in a task of finished posters, to animate one of them
    response = _says(message, language=language)
    # then a video item is added, marked with the poster's artifact as its source, and no poster is reopened
    [title] = _added(response)
    assert title.startswith("Video" if language == "en" else "Vidéo") and _reopened(response) == []
    [update] = next(args for name, args in _calls(response) if "updates" in args)["updates"]
    assert update["evidence"] == f"{REQUEST_PREFIX}{message} [from artifact {source}]"
    # and once the video tool is there, it is generated from that image
    checklist = [*POSTERS[language], _item(4, title) | {"evidence": update["evidence"]}]
    response = _plan(
        brief=BRIEF[language], language=language, checklist=checklist, tools=[*BASE_TOOLS, "generate_video"]
    )
    [arguments] = [args for name, args in _calls(response) if name == "generate_video"]
    assert (arguments["checklist_position"], arguments["source_artifact_id"]) == (4, source)


def test_it_looks_up_the_photo_a_message_added_to_the_task_names():
    item = _item(4, "Video — cat") | {"evidence": REQUEST_PREFIX + "Also animate the photo of my cat"}
    checklist = [*POSTERS["en"], item]
    tools = [*BASE_TOOLS, "generate_video"]
    response = _plan(brief=BRIEF["en"], checklist=checklist, tools=tools)
    assert _calls(response) == [("search_assets", {"query": "photo cat", "kinds": ["image"]})]
    found = _result("search_assets", result={"query": "photo cat", "results": [{"id": 9, "kind": "image"}]})
    response = _plan(brief=BRIEF["en"], checklist=checklist, tools=tools, last_results=[found])
    [arguments] = [args for name, args in _calls(response) if name == "generate_video"]
    assert arguments["source_artifact_id"] == 9
    # the prompt is the request that added it, not the posters' brief
    assert "animate the photo of my cat" in arguments["prompt"] and "posters" not in arguments["prompt"]


def test_it_asks_which_image_when_the_photo_is_not_found():
    # given a video of "the photo of my dog", and a search that found nothing
    item = _item(1, "Video — dog")
    brief = "Animate the photo of my dog"
    tools = [*BASE_TOOLS, "generate_video"]
    nothing = _result("search_assets", result={"query": "photo dog", "results": []})
    response = _plan(brief=brief, checklist=[item], tools=tools, last_results=[nothing])
    # then nothing is generated: the item waits for a choice, and the recent images are listed
    calls = _calls(response)
    assert [name for name, _ in calls] == ["update_checklist", "search_assets"]
    assert calls[0][1]["updates"][0]["evidence"].endswith(CHOOSE_MARK)
    assert calls[1][1] == {"query": "", "kinds": ["image"], "limit": 5}
    # when the recent images are back
    waiting = item | {"evidence": calls[0][1]["updates"][0]["evidence"]}
    recent = _result("search_assets", result={"query": "", "results": [{"id": 5, "kind": "image", "title": "Cat"}]})
    response = _plan(brief=brief, checklist=[waiting], tools=tools, last_results=[recent])
    # then the person is asked which one, on a choice card
    [(name, arguments)] = _calls(response)
    assert name == "ask_user" and arguments["options"] == ["Cat (#5)", "None of these"]
    assert "photo dog" in arguments["question"]
    # when they choose it, the video starts from it
    answer = f"[card 6: {arguments['question'][:60]}] The person chose: Cat (#5)."
    response = _plan(brief=brief, checklist=[waiting], tools=tools, new_messages=[{"id": 7, "text": answer}])
    [update] = _calls(response)[0][1]["updates"]
    assert update["evidence"].endswith("[from artifact 5]")
    chosen = item | {"evidence": update["evidence"]}
    response = _plan(brief=brief, checklist=[chosen], tools=tools)
    [arguments] = [args for name, args in _calls(response) if name == "generate_video"]
    assert arguments["source_artifact_id"] == 5


def test_it_reads_a_video_before_revising_it_and_keeps_its_source_and_length():
    # given the cat video reopened for "make it longer"
    video = _made(1, "Video — cat", 70) | {"status": "pending", "evidence": REVISION_PREFIX + "Make it longer"}
    brief = "Turn yesterday's cat photo into a 5-second video"
    tools = [*BASE_TOOLS, "generate_video"]
    # when the planner goes on, it first reads the video
    response = _plan(brief=brief, checklist=[video], tools=tools)
    assert _calls(response) == [("read_artifact", {"artifact_id": 70})]
    # then, with what it read, asks for a new version from the same photo, twice as long
    read = _result(
        "read_artifact",
        result={"artifact": {"id": 70}, "meta": {}, "generation": {"params": {"seconds": 5, "source_artifact_id": 12}}},
    )
    response = _plan(brief=brief, checklist=[video], tools=tools, last_results=[read])
    [arguments] = [args for name, args in _calls(response) if name == "generate_video"]
    assert (arguments["artifact_id"], arguments["source_artifact_id"], arguments["seconds"]) == (70, 12, 10)


# --- the readings themselves -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "current", "seconds"),
    [
        ("make it longer", 5, 10),
        ("rends-la plus longue", 8, 16),
        ("make it 12 seconds", 5, 12),
        ("a bit shorter please", 8, 4),
        ("raccourcis-la", 6, 3),
        ("make it warmer", 7, 7),
        ("make it longer", 40, 60),
    ],
)
def test_it_reads_the_length_a_video_revision_asks_for(text, current, seconds):
    assert seconds_wanted(text, current) == seconds


def test_it_tells_changes_additions_and_thanks_apart():
    assert change_requested("Make it pop more", kind_word)
    assert not change_requested("I don't need more", kind_word)
    assert not change_requested("Thanks, nothing more to do", kind_word)
    assert add_request("Add more contrast", kind_word) is None
    assert add_request("ajoute un chat sur l'affiche", kind_word) is None  # the count is the cat's
    assert add_request("deux affiches de plus", kind_word).count == 2
    assert not is_acknowledgement("Thanks, but can you change it?")
    assert not is_acknowledgement("I don't like it")


@pytest.mark.parametrize(
    "message",
    [
        "Make the bakery logo rounder and friendlier",
        "Could you make the mascot a bit cuddlier?",
        "make them slightly crisper",
        "Get the teapot much shinier",
    ],
)
def test_it_takes_any_comparative_said_of_existing_work_for_a_change(message):
    assert change_requested(message, kind_word)


@pytest.mark.parametrize(
    "message",
    [
        "Make a logo for my sister's bakery",
        "Make the poster for my sister",
        "Make the flyer under the logo",
        "Make another banner",
    ],
)
def test_it_does_not_take_new_work_or_a_noun_ending_in_er_for_a_comparative(message):
    assert not change_requested(message, kind_word)


def test_it_reads_item_references_without_taking_time_phrases_for_them():
    items = [Item(n, f"Poster {n} of 3", "image", "done") for n in (1, 2, 3)]
    assert item_references("from last week", items, kind_word) is None
    assert item_references("la dernière fois", items, kind_word) is None
    assert item_references("the second-to-last", items, kind_word).positions == [2]
    assert item_references("the video, 10 seconds long", items, kind_word) is None
