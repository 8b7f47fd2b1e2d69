"""Skeleton documents for prose the scripted planner cannot write (agents/scripted/skeleton.py)."""

import pytest

from agents.scripted.skeleton import headings_for, skeleton


@pytest.mark.parametrize(
    ("brief", "lang", "headings"),
    [
        ("Write a bio covering: early years, career and awards", "en", ["Early years", "Career", "Awards"]),
        ("An article with sections on pricing, delivery and returns", "en", ["Pricing", "Delivery", "Returns"]),
        ("Un article de blog:\n- le thé vert\n- la récolte\n- la dégustation", "fr",
         ["Le thé vert", "La récolte", "La dégustation"]),
        ("Rédige une fiche produit comprenant l'origine et le goût", "fr", ["L'origine", "Le goût"]),
    ],
)  # fmt: skip
def test_it_takes_the_headings_the_brief_lists(brief, lang, headings):
    assert headings_for(brief, lang) == headings


@pytest.mark.parametrize(
    ("brief", "lang", "first"),
    [
        ("Write a short product description for our new tea", "en", "Headline"),
        ("Draft an email to our customers about the new prices", "en", "Subject"),
        ("Écris un slogan pour notre café", "fr", "Propositions"),
        ("Write a product description: short and warm", "en", "Headline"),  # two adjectives are not a list
        ("Write something about our bakery", "en", "Introduction"),
    ],
)
def test_it_falls_back_to_the_usual_headings_of_that_kind_of_text(brief, lang, first):
    assert headings_for(brief, lang)[0] == first


def test_it_says_in_the_document_that_no_text_was_written():
    content = skeleton(title="Slogan pour notre café", brief="Écris un slogan pour notre café", lang="fr")
    assert content.startswith("# Slogan pour notre café\n")
    assert "aucun texte n’a été écrit" in content and "manage.py model_profile" in content
    assert content.count("_À écrire._") == 3
