"""A quote card says what the credits buy and why a person is asked, in words; programs keep the codes."""

import pytest

from agents.models import CardKind
from agents.services.cards import card_open_for_wait
from agents.services.quote_words import things, why_asked
from tests.support.factories import TaskFactory


def test_it_names_the_things_bought_and_counts_them():
    assert [things("image.generate", 1), things("image.generate", 3), things("3d.generate", 2)] == [
        "1 image",
        "3 images",
        "2 3D models",
    ]
    assert things("audio.generate", 2) == "2 × audio.generate"  # no noun for it: its name, never nothing


def test_it_says_why_a_person_is_asked_and_keeps_a_code_it_does_not_know():
    assert why_asked([]) == ""
    said = why_asked(["threshold", "daily_cap", "new_rule"])
    assert said.startswith(" A person approves it because it is above the workspace's limit")
    assert "today's limit" in said and said.endswith("; and new_rule.")


@pytest.mark.django_db
def test_a_quote_card_reads_as_words_and_its_payload_keeps_the_codes(workspace, alice):
    task = TaskFactory(workspace=workspace, title="Moodboard", created_by=alice)
    wait = {"type": "approval", "amount": 120, "items": 3, "per_item": 40, "operation": "image.generate"}
    card = card_open_for_wait(task, {**wait, "reasons": ["plan_budget"], "quote": None})
    assert card.kind == CardKind.QUOTE
    assert card.title == "Approve 120 credits for 3 images"
    assert card.body == (
        "3 images at 40 credits each, 120 credits in all. A person approves it because the plan's paid steps are "
        "approved together, before the first one."
    )
    assert (card.payload["operation"], card.payload["reasons"]) == ("image.generate", ["plan_budget"])
