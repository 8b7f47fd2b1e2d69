"""The offline writer (issue 34 item 4): real text from a node's input, in its form and language, never its prompt.

The form is read by meaning (the understanding layer's text_form decision), so each case below asks in its own
words, in English, French, German and Spanish; the sentences it writes come from writer.yaml.
"""

import re

import pytest

from workspace.flows.writer import Facts, offline_write

BRAND = Facts(brand="Terre & Feu", tagline="Made by hand")


def _write(instructions: str, template: str, material: str, facts: Facts | None = None) -> dict:
    prompt = template.replace("{input}", material)
    return offline_write(instructions=instructions, template=template, prompt=prompt, material=material, facts=facts)


def _no_echo(out: dict, instructions: str, template: str, material: str) -> None:
    """Nothing of what the node asked is handed back: not the prompt, not the request's own words."""
    request = " ".join((instructions, template.replace("{input}", ""))).strip(" :")
    assert template.replace("{input}", material) not in out["text"]
    assert request.casefold() not in out["text"].casefold()
    assert out["text"].strip() != material.strip()


@pytest.mark.parametrize(
    ("language", "template", "material", "expected"),
    [
        (
            "en",
            "Could you write something to post under this picture of {input}",
            "winter pottery classes at Terre & Feu, every Tuesday evening. Small groups, all levels welcome.",
            ["Winter pottery classes at Terre & Feu.", "Every Tuesday evening. Small groups, all levels welcome.",
             "“Made by hand”", "#Pottery"],
        ),
        (
            "fr",
            "Rédige une légende pour la photo de {input}",
            "notre tasse mouchetée. Grès émaillé à la main, 350 ml.",
            ["Notre tasse mouchetée", "Grès émaillé à la main, 350 ml.", "« Made by hand »"],
        ),
        (
            "de",
            "Ein Text für unseren Instagram-Post über {input}",
            "die neue Winterkollektion. Handgestrickte Mützen aus Merinowolle.",
            ["Die neue Winterkollektion", "Handgestrickte Mützen aus Merinowolle.", "„Made by hand“"],
        ),
        (
            "es",
            "Escribe el texto que acompaña la foto de {input}",
            "nuestra taza moteada. Gres esmaltado a mano, 350 ml.",
            ["Nuestra taza moteada", "Gres esmaltado a mano, 350 ml.", "«Made by hand»"],
        ),
    ],
)  # fmt: skip
def test_it_writes_a_caption_from_the_input_in_its_language(language, template, material, expected):
    out = _write("", template, material, BRAND)

    assert (out["form"], out["language"], out["writer"]) == ("caption", language, "offline")
    for part in expected:
        assert part in out["text"], out["text"]
    assert "#" in out["text"].splitlines()[-1]  # hashtags close it
    _no_echo(out, "", template, material)


@pytest.mark.parametrize(
    ("language", "instructions", "material", "first_title", "with_brand"),
    [
        ("en", "Give me three headline ideas", "jazz night at the Blue Room, this Friday at 8pm",
         "1. Jazz night at the Blue Room", "2. Jazz night at the Blue Room · Terre & Feu"),
        ("fr", "Propose trois titres", "soirée jazz au Blue Room, ce vendredi à 20h", "1. Soirée jazz au Blue Room",
         "3. Terre & Feu présente : Soirée jazz au Blue Room"),
        ("de", "Drei Vorschläge für eine Überschrift", "Jazzabend im Blue Room, diesen Freitag um 20 Uhr",
         "1. Jazzabend im Blue Room", "3. Terre & Feu präsentiert: Jazzabend im Blue Room"),
        ("es", "Dame tres ideas de titular", "noche de jazz en el Blue Room, este viernes a las 20h",
         "1. Noche de jazz en el Blue Room", "3. Terre & Feu presenta: Noche de jazz en el Blue Room"),
    ],
)  # fmt: skip
def test_it_writes_as_many_titles_as_asked(language, instructions, material, first_title, with_brand):
    out = _write(instructions, "{input}", material, BRAND)

    assert (out["form"], out["language"]) == ("title", language)
    lines = out["text"].splitlines()
    assert len(lines) == 3 and lines[0] == first_title and with_brand in lines
    _no_echo(out, instructions, "{input}", material)


@pytest.mark.parametrize(
    ("language", "template", "material", "shot_word", "count"),
    [
        ("en", "Break {input} into five shots for a short film", "a morning at the harbour, fishing boats coming in",
         "Shot", 5),
        ("fr", "Découpe en plans la vidéo sur {input}", "une matinée au port, les bateaux de pêche qui rentrent",
         "Plan", 3),
        ("de", "Plane vier Kameraeinstellungen für {input}", "ein Morgen am Hafen, die Fischerboote kommen herein",
         "Einstellung", 4),
        ("es", "Haz un guion de planos para {input}", "una mañana en el puerto, los barcos de pesca llegando",
         "Plano", 3),
    ],
)  # fmt: skip
def test_it_writes_a_shot_list_with_the_shots_asked_and_closes_on_the_brand(
    language, template, material, shot_word, count
):
    out = _write("", template, material, BRAND)

    assert (out["form"], out["language"]) == ("shot_list", language)
    shots = [line for line in out["text"].splitlines() if re.match(rf"{shot_word} \d", line)]
    assert [line.split(" —")[0] for line in shots] == [f"{shot_word} {n}" for n in range(1, count + 1)]
    assert "Terre & Feu" in shots[-1] and "Made by hand" in shots[-1]
    assert material.split(",")[0].split()[-1] in out["text"]  # the input's own words: "harbour", "port", …
    _no_echo(out, "", template, material)


@pytest.mark.parametrize(
    ("language", "instructions", "heading"),
    [("en", "Sum up this thread", "Summary — "), ("fr", "Fais un résumé de l'échange", "Résumé — "),
     ("de", "Fass den Austausch kurz zusammen", "Zusammenfassung — "), ("es", "Haz un resumen del hilo", "Resumen — ")],
)  # fmt: skip
def test_it_summarises_a_conversation_from_its_first_and_latest_messages(language, instructions, heading):
    transcripts = {
        "en": "alice: We need posters for the jazz festival.\nMain: I can make images.\nbob: Make them warmer.",
        "fr": "alice : Il faut des affiches pour le festival de jazz.\nMain : Je fais des images.\nbob : Plus chaudes.",
        "de": "alice: Wir brauchen Plakate für das Jazzfestival.\nMain: Ich kann Bilder machen.\nbob: Wärmer bitte.",
        "es": "alice: Necesitamos carteles para el festival de jazz.\nMain: Puedo hacer imágenes.\nbob: Más cálidos.",
    }
    material = transcripts[language]

    out = _write(instructions, "{input}", material)

    assert (out["form"], out["language"]) == ("summary", language)
    lines = out["text"].splitlines()
    assert lines[0].startswith(heading)
    assert "alice, Main, bob" in lines[1]
    assert material.splitlines()[0].split(":", 1)[1].strip() in out["text"]  # the opening message
    assert material.splitlines()[-1].split(":", 1)[1].strip() in out["text"]  # the latest
    _no_echo(out, instructions, "{input}", material)


def test_it_names_itself_and_says_why_on_its_output():
    out = _write("", "A caption for {input}", "our speckled mug")

    assert out["writer"] == "offline" and out["model"] == "offline-scripted"
    assert "offline" in out["note"] and "no language model" in out["note"]
    assert _write("", "Une légende pour {input}", "notre tasse")["note"].startswith("Écrit par le rédacteur hors ligne")


def test_it_writes_a_description_when_the_request_names_no_form():
    # given instructions that name no form of text (read as such by meaning, not by a word list)
    out = _write("Hum.", "{input}", "A quiet street at dusk. Lamps coming on one by one.")

    # then it still writes from the input, and says the form was not read
    assert (out["form"], out["form_read"]) == ("description", "ask")
    assert "Lamps coming on one by one." in out["text"]
    assert "Hum" not in out["text"]


def test_it_is_deterministic():
    args = ("", "An Instagram caption for {input}", "Speckled mug. Stoneware mug with a speckled glaze.", BRAND)
    assert _write(*args) == _write(*args)


def test_it_leaves_out_what_the_workspace_has_not_said():
    out = _write("", "A caption for this product photo: {input}", "Speckled mug. Stoneware, 350 ml.")

    assert out["text"].splitlines()[0] == "Speckled mug."
    assert "{" not in out["text"] and "“" not in out["text"]
