"""Saying "forget that …" to Main (issue 13 item 4): recognised before routing, by meaning, in five languages,
never for "don't forget"; the memory it names gets a confirmation card; the words never feed memory themselves."""

import pytest

from agents.main.forget_intent import ForgetIntent, forget_intent
from agents.main.messages import main_message_post
from agents.models import Card, MainMessage, Route
from agents.services.card_actions import card_act
from memory.models import Evidence, MemoryVersion, VersionStatus
from memory.services.memories import memory_state
from workspace.selectors import workspace_access


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("Forget that our main colour is blue", "our main colour is blue"),
        ("please forget what I said about the mascot.", "the mascot"),
        ("Can you forget my old address", "old address"),
        ("Stop remembering that I like neon.", "i like neon"),
        ("Delete the memory of the Acme tagline", "the acme tagline"),
        ("Oublie que notre couleur principale est le bleu.", "notre couleur principale est le bleu"),
        ("Oubliez ce que j'ai dit sur la mascotte", "la mascotte"),
        ("Efface le souvenir de notre ancien slogan", "notre ancien slogan"),
        ("Ne retiens plus que je préfère le néon", "je préfère le néon"),
        ("s'il te plaît, oublie notre ancienne adresse", "notre ancienne adresse"),
    ],
)
def test_it_recognises_a_request_to_forget(text, what):
    intent = forget_intent(text)
    assert intent is not None and intent.what == what


@pytest.mark.parametrize(
    "text",
    [
        "Vergiss, was ich über das Maskottchen gesagt habe",
        "Olvida lo que te conté sobre la mascota",
        "Esquece o que eu disse sobre a mascote",
    ],
)
def test_it_recognises_a_request_to_forget_in_german_spanish_and_portuguese_by_meaning(text):
    # no phrasing of ours trims these: what to forget is the whole request, which memory search reads by meaning
    assert forget_intent(text) == ForgetIntent(what=text)


@pytest.mark.parametrize(
    "text",
    [
        "Vergiss nicht, das Datum oben hinzuschreiben",
        "No olvides el precio en la esquina",
        "Make a poster that says: forget your worries",
    ],
)
def test_reminders_and_work_in_other_languages_are_left_to_the_router(text):
    assert forget_intent(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "Don't forget the deadline is Friday",
        "Do not forget to add the logo",
        "N'oublie pas le logo en bas à droite",
        "Never forget our tagline",
        "Should we forget the blue?",
        "Make 3 posters and forget about the old palette for the new series, we want a bright modern look this time "
        "with a lot of contrast and the logo in the corner and the tagline under the title in a slab serif please",
        "Forget it",
        "Make a poster for the bakery",
    ],
)
def test_it_leaves_other_messages_to_the_router(text):
    assert forget_intent(text) is None


@pytest.mark.django_db
def test_main_opens_a_confirmation_card_for_the_memory_named_and_never_remembers_the_request(workspace, alice):
    access = workspace_access(principal=alice, workspace_id=workspace.pk)
    memory = memory_state(access=access, content="Our brand's main colour is blue", kind="fact")
    evidence_before = Evidence.objects.count()

    asked = main_message_post(access=access, text="Forget that our main colour is blue.")

    assert asked.route == Route.ANSWER and asked.card_id is not None
    assert "main colour is blue" in asked.reply
    assert Evidence.objects.count() == evidence_before  # the request itself feeds no memory
    card = Card.objects.get(pk=asked.card_id)
    assert card.payload["source"] == "memory_forget"

    card_act(access=access, card_id=card.pk, action="confirm")
    assert not MemoryVersion.objects.filter(memory=memory, status=VersionStatus.ACTIVE).exists()
    again = main_message_post(access=access, text="Forget that our main colour is blue.")
    assert again.card_id is None and MainMessage.objects.filter(card__isnull=False).count() == 1


@pytest.mark.django_db
def test_main_says_when_there_is_nothing_to_forget(workspace, alice):
    access = workspace_access(principal=alice, workspace_id=workspace.pk)
    memory_state(access=access, content="Our tagline is Bake it warm", kind="fact")

    said = main_message_post(access=access, text="Oublie que notre mascotte est un renard.")

    assert said.route == Route.ANSWER and said.card_id is None
    assert said.reply.startswith("Je ne me souviens de rien")
    assert not Card.objects.exists()
