"""What a business is, where and for whom, read by meaning (the extractor's shape 6, the understanding layer's
`memory_about` decision): a stated name becomes a workspace fact in any of the five languages, a new name
supersedes it, and requests for work or changes to it make no memory."""

import pytest

from lomote.understanding.evaluation import evaluate, split_accuracy
from memory.extraction.scripted import scripted_extract
from memory.models import MemoryVersion, VersionStatus
from memory.services.memories import Action
from tests.memory.statements import active, assert_memory_consistent, said

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "text",
    [
        "I run a small ceramics studio called Terre & Feu",
        "Nous sommes une petite boulangerie à Lyon appelée Le Fournil",
        "Ich habe ein kleines Keramikstudio namens Erdfeuer",
        "Tengo un pequeño estudio de cerámica llamado Tierra y Fuego",
        "Tenho um pequeno estúdio de cerâmica chamado Terra e Fogo",
    ],
)
def test_a_stated_business_name_becomes_a_workspace_fact_in_five_languages(text):
    assert scripted_extract(text) == [
        {"content": text, "subject": "business name", "kind": "fact", "scope": "workspace"}
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Could you make me three Instagram posts announcing our winter pottery classes?",
        "The second post is too dark, brighten it and make the text bigger",
        "Escribe un poema corto sobre el mar",
        "Mach ein Plakat für den Tag der offenen Tür von Erdfeuer",
    ],
)
def test_requests_and_changes_make_no_memory(text):
    assert scripted_extract(text) == []


def test_a_new_name_supersedes_the_old_one(workspace, alice):
    # given a studio name the person stated
    _, [first] = said(workspace, alice, "I run a small ceramics studio called Terre & Feu")

    # when they say it has a new name
    _, [second] = said(workspace, alice, "It's now called Feu Sacré.")

    # then one memory holds both, the new name current and the old one superseded
    assert (first.action, second.action) == (Action.ORIGIN, Action.REFINE)
    assert first.memory_id == second.memory_id
    old, new = MemoryVersion.objects.filter(memory_id=first.memory_id).order_by("number")
    assert (old.status, new.status) == (VersionStatus.SUPERSEDED, VersionStatus.ACTIVE)
    assert [v.content for v in active(workspace)] == ["It's now called Feu Sacré"]
    assert_memory_consistent(workspace)


def test_it_reads_business_statements_right_on_at_least_95_percent_of_held_out_cases():
    report = evaluate("memory_about")
    assert split_accuracy(report, "heldout") >= 0.95, report.misses
