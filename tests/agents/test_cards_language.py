"""What Lomote says on cards is said in the task's language (issue 33 item 4): a French, German, Spanish or
Portuguese task's cards (a resume review's finding too) carry no English phrase of ours;
the catalogues are complete and compiled as committed."""

import gettext
import json
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.db import transaction

from agents.locks import task_qs_for_update
from agents.models import ChecklistItem, Task, TaskKind
from agents.resume import MESSAGES, case_evaluate
from agents.runtime.resumption import Judged, open_review
from agents.services.cards import (
    card_open_for_wait,
    card_open_result,
    card_open_safety_net,
    card_open_to_continue,
)
from agents.services.stalls import stall_card_open

pytestmark = pytest.mark.django_db

LOCALE = Path(settings.BASE_DIR) / "locale"
LANGUAGES = ("fr", "de", "es", "pt")
PLACEHOLDER = re.compile(r"%\((\w+)\)[sd]")


def _catalogue(language: str) -> dict[str | tuple[str, str], str | tuple[str, ...]]:
    """The .po file's entries: msgid (or msgid and msgid_plural) → msgstr (or its plural forms)."""
    text = (LOCALE / language / "LC_MESSAGES" / "django.po").read_text(encoding="utf-8")
    entries = {}
    for block in text.split("\n\n")[1:]:
        fields: dict[str, str] = {}
        key = None
        for line in block.splitlines():
            if line.startswith("#") or not line.strip():
                continue
            head = re.match(r'^(msgid_plural|msgid|msgstr(?:\[\d\])?) "(.*)"$', line)
            if head:
                key, value = head.group(1), head.group(2)
                fields[key] = value
            else:
                fields[key] += re.match(r'^"(.*)"$', line).group(1)
        unescaped = {k: v.replace('\\"', '"').replace("\\\\", "\\") for k, v in fields.items()}
        if "msgid_plural" in unescaped:
            forms = tuple(v for k, v in sorted(unescaped.items()) if k.startswith("msgstr["))
            entries[(unescaped["msgid"], unescaped["msgid_plural"])] = forms
        else:
            entries[unescaped["msgid"]] = unescaped["msgstr"]
    return entries


def _english_phrases(language: str) -> set[str]:
    """Our English words, as the literal runs between placeholders (four letters or more), less the words the
    language writes the same ("image" in French, "Video" in German)."""
    catalogue = _catalogue(language)
    phrases = set()
    for key in catalogue:
        for msgid in key if isinstance(key, tuple) else (key,):
            phrases |= {run.strip(" .,;:?") for run in PLACEHOLDER.split(msgid)[::2] if len(run.strip(" .,;:?")) >= 4}
    translated = " ".join(v if isinstance(v, str) else " ".join(v) for v in catalogue.values())
    return {phrase for phrase in phrases if not re.search(rf"\b{re.escape(phrase)}\b", translated)}


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_catalogue_is_complete_and_its_compiled_file_says_the_same(language):
    entries = _catalogue(language)
    compiled = gettext.GNUTranslations((LOCALE / language / "LC_MESSAGES" / "django.mo").open("rb"))
    assert entries, language
    for key, translated in entries.items():
        if isinstance(key, tuple):
            assert all(translated), (language, key)
            assert compiled.ngettext(*key, 1) == translated[0] and compiled.ngettext(*key, 5) == translated[1]
            continue
        assert translated, f"{language}: no translation for {key!r}"
        assert compiled.gettext(key) == translated, f"{language}: the .mo is older than the .po for {key!r}"
        # every placeholder of the English is kept, so formatting never fails
        assert set(PLACEHOLDER.findall(key)) == set(PLACEHOLDER.findall(translated)), (language, key)


def _task(workspace, alice, language: str, *, kind=TaskKind.PERSISTENT) -> Task:
    task = Task.objects.create(
        workspace=workspace, title="Affiches", brief="Trois affiches", created_by=alice, language=language, kind=kind
    )
    ChecklistItem.objects.create(task=task, position=1, title="Affiche 1", needs_confirmation=True)
    return task


def _said(card) -> str:
    return " ".join([card.title, card.body, *(str(option.get("label", "")) for option in card.options)])


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_tasks_cards_speak_its_language_with_no_english_phrase_of_ours(workspace, alice, no_enqueue, language):
    # given a task in another language than English
    task = _task(workspace, alice, language)
    quick = _task(workspace, alice, language, kind=TaskKind.LIGHTWEIGHT)
    stalled = _task(workspace, alice, language)
    english = _english_phrases(language)
    approval = {
        "type": "approval",
        "amount": 120,
        "per_item": 40,
        "items": 3,
        "operation": "image.generate",
        "reasons": ["plan_budget", "daily_cap"],
        "limits": {"amount": 120, "no_confirm_threshold": 100, "daily_no_confirm_cap": 500, "auto_spent_today": 450},
    }

    # when the runtime opens each kind of card it has for it
    with transaction.atomic():
        locked = task_qs_for_update().get(pk=task.pk)
        cards = [
            card_open_for_wait(locked, approval),
            card_open_for_wait(locked, {"type": "person"}),
            card_open_safety_net(locked, locked.checklist.get()),
            card_open_to_continue(locked),
        ]
        cards.append(stall_card_open(task_qs_for_update().get(pk=stalled.pk), None, reason="no_progress"))
        quick_locked = task_qs_for_update().get(pk=quick.pk)
        cards.append(card_open_result(quick_locked, []))

    # then each says its words in the task's language: none of our English phrases is left in them
    for card in cards:
        assert card is not None
        left = sorted(phrase for phrase in english if re.search(rf"\b{re.escape(phrase)}\b", _said(card)))
        assert not left, f"{language} card {card.kind}/{card.payload.get('source')}: {left} in {_said(card)!r}"
    # and the numbers are all there, in the language's own plural
    quote = cards[0]
    assert "120" in quote.title and "40" in quote.body and "450" in quote.body


RESUME_CASES = Path(settings.BASE_DIR) / "tests" / "resume_cases"


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_resume_review_card_says_the_checks_finding_in_the_tasks_language(workspace, alice, no_enqueue, language):
    # given a task in another language, and the verdicts of a resume check that ask a person to look
    task = _task(workspace, alice, language)
    english = _english_phrases(language)
    cases = ("07_pending_in_ready", "09_pending_outside_contract", "11_lookup_unavailable", "13_no_receipt")
    for name in cases:
        resumption = case_evaluate(json.loads((RESUME_CASES / f"{name}.json").read_text()))

        # when the runtime opens its review card
        with transaction.atomic():
            locked = task_qs_for_update().get(pk=task.pk)
            card = open_review(locked, Judged(resumption, call=None, tool=None, present={}), turn=None)

        # then the finding (its first line, written in English by agents/resume.py) is said in the task's language
        finding = card.body.splitlines()[0]
        assert finding != MESSAGES[resumption.verdict], (language, name, finding)
        left = sorted(phrase for phrase in english if re.search(rf"\b{re.escape(phrase)}\b", _said(card)))
        assert not left, f"{language} {name}: {left} in {_said(card)!r}"
