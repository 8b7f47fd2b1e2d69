"""The scripted extractor: what it recognises in English and French, the subjects it reads, what it leaves."""

import pytest

from memory.extraction.candidate import candidate_check
from memory.extraction.scripted import scripted_extract, statement_subject, values_of


def read(text: str, existing=()) -> list[tuple[str, str, str]]:
    return [(c["subject"], c["kind"], c["scope"]) for c in scripted_extract(text, existing)]


@pytest.mark.parametrize(
    ("text", "subject", "kind", "scope"),
    [
        # naming: the noun phrase before is/est, in one canonical form across both languages
        ("Our brand's main colour is blue.", "brand main colour", "fact", "workspace"),
        ("Notre couleur principale est le bleu.", "brand main colour", "fact", "workspace"),
        ("La couleur principale de notre marque est le vert.", "brand main colour", "fact", "workspace"),
        ("Our tagline is 'Made to last'.", "brand tagline", "fact", "workspace"),
        ("Notre slogan est « Fait pour durer ».", "brand tagline", "fact", "workspace"),
        ("Notre ton est décontracté.", "brand tone", "fact", "workspace"),
        ("Our logo is a fox.", "brand logo", "fact", "workspace"),
        ("My favourite colour is green.", "colour", "preference", "person"),
        # taste: the object of prefer / like / aime / préfère
        ("I prefer serif fonts.", "font", "preference", "person"),
        ("Je préfère les polices sans empattement.", "font", "preference", "person"),
        ("We love warm palettes over cold ones.", "palette", "preference", "workspace"),
        ("En général, j'aime les palettes peu saturées.", "palette", "preference", "person"),
        ("On préfère un fond blanc.", "background colour", "preference", "workspace"),
        ("I prefer titles in uppercase.", "title case", "preference", "person"),
        ("I don't like gradients.", "gradient", "preference", "person"),
        # rules: the thing after always / never, with the aspect its value sets
        ("Always put the logo bottom right.", "logo position", "preference", "workspace"),
        ("Mets toujours le logo en bas à droite.", "logo position", "preference", "workspace"),
        ("N'utilise jamais de dégradés.", "gradient", "preference", "workspace"),
        ("Always use serif fonts for titles.", "title font", "preference", "workspace"),
        ("Always write in English.", "language", "preference", "workspace"),
        ("The logo should always be bottom right.", "logo position", "preference", "workspace"),
        # one-offs
        ("Cette fois, essayons un rouge très saturé.", "colour", "instruction", "workspace"),
        ("This time, use sans-serif fonts.", "font", "instruction", "workspace"),
        ("Just for this one, use a black background.", "background colour", "instruction", "workspace"),
        ("Pour cette affiche, mets le titre en bas.", "title position", "instruction", "workspace"),
    ],
)
def test_it_reads_explicit_statements(text, subject, kind, scope):
    assert read(text) == [(subject, kind, scope)]


@pytest.mark.parametrize(
    "text",
    [
        "Make 3 retro posters for our jazz festival.",
        "I'd like a poster with our logo.",
        "Can you make it warmer?",
        "Is our main colour blue?",
        "I like it!",
        "J'aime bien celle-ci.",
        "I love this poster.",
        "Blue with an off-white feels softer.",  # an addition, but to no known memory
        "",
    ],
)
def test_it_leaves_requests_questions_and_feedback_alone(text):
    assert read(text) == []


def test_it_reads_each_sentence_and_keeps_the_words_as_typed():
    # when
    found = scripted_extract("Make a poster. Our main colour is blue, and our secondary colour is orange!")

    # then
    assert found == [
        {"content": "Our main colour is blue", "subject": "brand main colour", "kind": "fact", "scope": "workspace"},
        {
            "content": "our secondary colour is orange",
            "subject": "brand secondary colour",
            "kind": "fact",
            "scope": "workspace",
        },
    ]


def test_it_reads_an_addition_to_a_known_value_as_adding_to_that_memory():
    # given
    existing = [{"subject": "brand main colour", "content": "Our brand's main colour is blue", "kind": "fact"}]

    # when
    english = scripted_extract("Blue with an off-white feels softer.", existing)
    french = scripted_extract("Le bleu associé à un blanc cassé, ça donne un ensemble plus doux.", existing)
    request = scripted_extract("Make it blue with an off-white.", existing)

    # then
    assert english == [
        {
            "content": "Blue with an off-white feels softer",
            "subject": "brand main colour",
            "kind": "preference",
            "scope": "workspace",
            "adds": True,
        }
    ]
    assert [c["subject"] for c in french] == ["brand main colour"] and french[0]["adds"]
    assert request == []


def test_it_knows_what_an_earlier_sentence_of_the_same_message_stated():
    found = scripted_extract("Our brand's main colour is blue. Blue with an off-white feels softer.")

    assert [(c["subject"], c.get("adds", False)) for c in found] == [
        ("brand main colour", False),
        ("brand main colour", True),
    ]


def test_it_reads_the_value_of_a_memory_in_canonical_words():
    assert values_of("Notre couleur principale est le bleu") == {"blue"}
    assert values_of("Our brand's main colour is blue; blue with an off-white feels softer") == {"blue"}


def test_a_statement_it_cannot_read_gets_its_content_words_as_subject():
    assert statement_subject("Our brand's main colour is blue") == "brand main colour"
    assert statement_subject("Jazz at the studio on Fridays") == "friday jazz studio"


def test_a_candidate_is_checked_on_its_own_and_says_why_it_is_refused():
    good, _ = candidate_check({"content": "x", "subject": " Brand  Main Colour ", "kind": "Preference"})
    _, junk = candidate_check("just a string")
    _, no_kind = candidate_check({"content": "x", "subject": "y", "kind": "wish"})
    _, empty = candidate_check({"content": "  ", "subject": "y", "kind": "fact"})

    assert good is not None and good.subject == "brand main colour" and good.kind == "preference"
    assert "valid dictionary" in junk
    assert no_kind.startswith("kind:")
    assert empty.startswith("content:")
