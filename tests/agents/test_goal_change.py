"""Reading whether a follow-up changes what a task must deliver (agents/scripted/goal_change.py)."""

import pytest

from agents.scripted.goal_change import goal_change

POSTERS_EN = "3 retro posters for a jazz festival"
POSTERS_FR = "Trois affiches rétro pour un festival de jazz"


@pytest.mark.parametrize(
    ("message", "brief", "lang"),
    [
        ("Actually, make a video instead.", POSTERS_EN, "en"),
        ("Forget the posters, make a 10-second video for the festival", POSTERS_EN, "en"),
        ("Instead of posters, make flyers", POSTERS_EN, "en"),
        ("Make a video instead of the posters", POSTERS_EN, "en"),
        ("Replace the posters with an animated teaser", POSTERS_EN, "en"),
        ("I no longer want posters, I'd like a logo", POSTERS_EN, "en"),
        ("Switch to a 3D mascot", POSTERS_EN, "en"),
        ("Let's go with a newsletter rather than posters", POSTERS_EN, "en"),
        ("Rather a video than posters", POSTERS_EN, "en"),
        ("Turn the posters into a video instead", POSTERS_EN, "en"),
        ("We don't need posters anymore, make a short clip", POSTERS_EN, "en"),
        ("Scrap the posters. We need a brochure about the festival program.", POSTERS_EN, "en"),
        ("Change of plan: instead of a logo, make a mascot figurine", "a logo for my bakery", "en"),
        ("No more videos — I want three posters now", "a 20-second video teaser for the gallery opening", "en"),
        ("Could you do a video for the launch instead of the newsletter?", "a newsletter for the product launch", "en"),
        ("Je ne veux plus d'affiches, fais plutôt une vidéo", POSTERS_FR, "fr"),
        ("Finalement, je préfère un logo", POSTERS_FR, "fr"),
        ("Plutôt une vidéo que des affiches", POSTERS_FR, "fr"),
        ("Au lieu des affiches, fais des flyers", POSTERS_FR, "fr"),
        ("Oublie les affiches et fais une bannière pour le site", POSTERS_FR, "fr"),
        ("Remplace les affiches par une vidéo", POSTERS_FR, "fr"),
        ("Fais une vidéo à la place", POSTERS_FR, "fr"),
        ("Change de format : fais une vidéo", POSTERS_FR, "fr"),
        ("Plutôt qu'un logo, je voudrais une mascotte en 3D", "Un logo pour ma boulangerie", "fr"),
        ("En fait non, fais-moi plutôt une affiche", "Une vidéo pour l'anniversaire de Léa", "fr"),
        ("Laisse tomber la vidéo, on part sur une série de 3 affiches", "Une vidéo pour l'anniversaire de Léa", "fr"),
        ("Statt Plakaten mach lieber ein Video", "Drei Retro-Plakate für ein Jazzfestival", "de"),
        ("En lugar de carteles, haz un vídeo", "Tres carteles retro para un festival de jazz", "es"),
        ("Ya no quiero carteles, mejor un logo", "Tres carteles retro para un festival de jazz", "es"),
        ("Invece dei poster, fai un video", "Tre poster retro per un festival jazz", "it"),
        ("Em vez de cartazes, faz um vídeo", "Três cartazes retrô para um festival de jazz", "pt"),
    ],
)
def test_it_reads_another_deliverable_behind_a_replacement_cue(message, brief, lang):
    change = goal_change(message, brief=brief, lang=lang)
    assert change is not None and change.how == "deliverable"
    assert change.reason == message


@pytest.mark.parametrize(
    ("message", "brief", "lang"),
    [
        ("Make the text bigger", POSTERS_EN, "en"),
        ("add a video link on the poster", POSTERS_EN, "en"),
        ("also add a flyer", POSTERS_EN, "en"),
        ("use warmer colours", POSTERS_EN, "en"),
        ("use warmer colours instead", POSTERS_EN, "en"),
        ("Use warmer colours rather than blue", POSTERS_EN, "en"),
        ("Make the posters warmer instead of cold", POSTERS_EN, "en"),
        ("Make the posters bigger for mobile instead", POSTERS_EN, "en"),
        ("Make the text bigger instead", POSTERS_EN, "en"),
        ("Put the logo in the corner instead of the top", POSTERS_EN, "en"),
        ("Add a video instead of the photo on the poster", POSTERS_EN, "en"),
        ("Put a video on the poster rather than a photo", POSTERS_EN, "en"),
        ("Rather than a photo background, use an illustration", POSTERS_EN, "en"),
        ("Make a sticker instead of the logo on the poster", "3 retro posters with a logo for a jazz festival", "en"),
        ("Can you add a logo on the posters rather than text?", POSTERS_EN, "en"),
        ("Instead of blue, use green for the title", POSTERS_EN, "en"),
        ("Make the video 15 seconds instead of 10", "a 20-second video teaser for the gallery opening", "en"),
        ("I no longer want the text in red", POSTERS_EN, "en"),
        ("I don't want the text anymore", POSTERS_EN, "en"),
        ("Forget the captions", POSTERS_EN, "en"),
        ("Forget it, it's fine as it is", POSTERS_EN, "en"),
        ("Instead, keep the posters but make them warmer", POSTERS_EN, "en"),
        ("Write the captions in French instead", POSTERS_EN, "en"),
        ("Post it on instagram instead", POSTERS_EN, "en"),
        ("What do you think of a video instead?", POSTERS_EN, "en"),
        ("No more than 3 colours please", POSTERS_EN, "en"),
        (POSTERS_EN, POSTERS_EN, "en"),
        ("[card 4: Which palette?] The person chose: A video instead.", POSTERS_EN, "en"),
        ("ajoute un chat", POSTERS_FR, "fr"),
        ("ajoute un chat sur l'affiche", POSTERS_FR, "fr"),
        ("rends les affiches plus chaudes", POSTERS_FR, "fr"),
        ("Plutôt en bleu", POSTERS_FR, "fr"),
        ("Mets le titre en haut plutôt qu'en bas", POSTERS_FR, "fr"),
        ("Plutôt que du rouge, mets du vert sur l'affiche", POSTERS_FR, "fr"),
        ("Ajoute une vidéo au lieu de la photo", POSTERS_FR, "fr"),
        ("Finalement, mets le logo en haut", POSTERS_FR, "fr"),
        ("Finalement, ajoute une vidéo en bas de l'affiche", POSTERS_FR, "fr"),
    ],
)
def test_it_leaves_the_goal_alone_for_detail_additions_and_changes_inside_the_work(message, brief, lang):
    assert goal_change(message, brief=brief, lang=lang) is None


@pytest.mark.parametrize(
    ("message", "brief", "lang", "new_brief"),
    [
        ("Actually, make a video instead.", POSTERS_EN, "en", "Make a video for a jazz festival"),
        ("Switch to a 3D mascot", POSTERS_EN, "en", "A 3D mascot for a jazz festival"),
        (
            "Forget the posters, make a 10-second video for the festival",
            POSTERS_EN,
            "en",
            "Make a 10-second video for the festival",
        ),
        (
            "Je ne veux plus d'affiches, fais plutôt une vidéo",
            POSTERS_FR,
            "fr",
            "Fais une vidéo pour un festival de jazz",
        ),
        ("Remplace les affiches par une vidéo", POSTERS_FR, "fr", "Une vidéo pour un festival de jazz"),
    ],
)
def test_the_new_brief_is_the_persons_words_keeping_the_purpose_they_did_not_change(message, brief, lang, new_brief):
    assert goal_change(message, brief=brief, lang=lang).brief == new_brief


@pytest.mark.parametrize(
    ("message", "brief", "lang", "new_brief"),
    [
        ("Do it for the food fair instead", POSTERS_EN, "en", "3 retro posters for the food fair"),
        ("Plutôt pour la fête de la musique", POSTERS_FR, "fr", "Trois affiches rétro pour la fête de la musique"),
        ("Make them for the climbing club rather than the jazz festival", POSTERS_EN, "en", None),
    ],
)
def test_it_reads_the_same_work_for_another_purpose(message, brief, lang, new_brief):
    change = goal_change(message, brief=brief, lang=lang)
    assert change is not None and change.how == "purpose"
    assert change.brief == (new_brief or "3 retro posters for the climbing club")


@pytest.mark.parametrize(
    ("message", "lang", "new_brief"),
    [
        ("New goal: a logo for my bakery", "en", "A logo for my bakery"),
        ("OK. Change the brief to: five stickers for the climbing club", "en", "Five stickers for the climbing club"),
        ("The goal is now a 30-second teaser", "en", "A 30-second teaser"),
        ("Nouvel objectif : une vidéo de 10 secondes pour le salon", "fr", "Une vidéo de 10 secondes pour le salon"),
        ("Neues Ziel: ein Logo für meine Bäckerei", "de", "Ein Logo für meine Bäckerei"),
        ("Nuevo objetivo: un logo para mi panadería", "es", "Un logo para mi panadería"),
        ("Nuovo obiettivo: un logo per il mio forno", "it", "Un logo per il mio forno"),
    ],
)
def test_it_takes_a_restated_goal_as_the_new_brief(message, lang, new_brief):
    change = goal_change(message, brief=POSTERS_EN, lang=lang)
    assert change is not None and (change.how, change.brief) == ("restated", new_brief)


def test_a_restatement_of_the_current_brief_is_no_change():
    assert goal_change(f"New goal: {POSTERS_EN}", brief=POSTERS_EN, lang="en") is None
