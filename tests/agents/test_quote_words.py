"""A quote card says what the credits buy and why a person is asked, in words; programs keep the codes."""

import pytest

from agents.models import CardKind
from agents.services.cards import card_open_for_wait
from agents.services.quote_words import LIMIT_KEYS, limits_of, things, why_asked
from tests.support.factories import TaskFactory


def test_it_names_the_things_bought_and_counts_them():
    assert [things("image.generate", 1), things("image.generate", 3), things("3d.generate", 2)] == [
        "1 image",
        "3 images",
        "2 3D models",
    ]
    assert things("audio.generate", 2) == "2 × audio.generate"  # no noun for it: its name, never nothing


def test_it_says_why_a_person_is_asked_and_keeps_a_code_it_does_not_know():
    # a card opened before cards kept billing's numbers: the limit, without the excess
    assert why_asked([]) == ""
    said = why_asked(["threshold", "daily_cap", "new_rule"])
    assert said.startswith(" A person approves it because it is above the workspace's limit")
    assert "today's limit" in said and said.endswith("; and new_rule.")


def test_it_names_each_limit_that_asked_and_by_how_much():
    # given billing's refusal of a 40-credit order: 25 credits per operation, 100 a day with 72 spent unasked,
    # and 15 credits left of the task's approved budget
    details = {
        "amount": 40,
        "operation": "image.generate",
        "reasons": ["threshold", "daily_cap", "budget"],
        "over_by": {"threshold": 15, "daily_cap": 12, "budget": 25},
        "quote": None,
        "task": 7,
        "no_confirm_threshold": 25,
        "daily_no_confirm_cap": 100,
        "auto_spent_today": 72,
        "budget_remaining": 15,
    }
    limits = limits_of(details)

    # when the card says why it asks
    said = why_asked(details["reasons"], limits)

    # then each limit is named with the excess, and the budget only as what did not cover it
    assert limits == {key: details[key] for key in LIMIT_KEYS}
    assert said == (
        " A person approves it because 40 credits is 15 over the 25-credit no-confirmation limit per operation; "
        "and 40 credits would pass today's 100-credit no-confirmation cap by 12 (72 credits already spent without "
        "asking today); and the task's approved budget has 15 credits left, 25 short."
    )


@pytest.mark.django_db
def test_a_quote_card_reads_as_words_and_its_payload_keeps_the_codes(workspace, alice):
    task = TaskFactory(workspace=workspace, title="Moodboard", created_by=alice)
    wait = {"type": "approval", "amount": 120, "items": 3, "per_item": 40, "operation": "image.generate"}
    limits = {"amount": 120, "no_confirm_threshold": 100, "over_by": {"plan_budget": 20}}
    card = card_open_for_wait(task, {**wait, "reasons": ["plan_budget"], "limits": limits, "quote": None})
    assert card.kind == CardKind.QUOTE
    assert card.title == "Approve 120 credits for 3 images"
    assert card.body == (
        "3 images at 40 credits each, 120 credits in all. A person approves it because the plan's 120 credits in "
        "all are 20 over the 100-credit no-confirmation limit per operation, and a plan's paid steps are approved "
        "together, before the first one."
    )
    assert (card.payload["operation"], card.payload["reasons"]) == ("image.generate", ["plan_budget"])
    assert card.payload["limits"] == limits
