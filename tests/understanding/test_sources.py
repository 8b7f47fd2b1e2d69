"""Which file a request starts from (DESIGN §15): the source and source_time decisions on held-out cases, and the
ranking of the workspace's files by meaning, kind and recency. Pure: no database (the real encoder)."""

import difflib

import pytest

from lomote.understanding.banks import SPLITS, bank_load, cases_load
from lomote.understanding.evaluation import evaluate, split_accuracy
from lomote.understanding.languages import EVALUATED
from lomote.understanding.normalise import fold
from lomote.understanding.sources import MARGIN, Candidate, recency, source_read, sources_rank

HOUR, DAY = 3600.0, 86400.0


@pytest.fixture(scope="module")
def reports():
    return {name: evaluate(name) for name in ("source", "source_time")}


@pytest.mark.parametrize("name", ["source", "source_time"])
def test_it_reads_sources_right_on_at_least_95_percent_of_held_out_cases(reports, name):
    report = reports[name]
    print(f"\n{name}: held-out {split_accuracy(report, 'heldout'):.1%}, train {split_accuracy(report, 'train'):.1%}")
    assert split_accuracy(report, "heldout") >= 0.95, report.misses
    for language in EVALUATED:
        right, total = report.by_split_language[("heldout", language)]
        assert right / total >= 0.75, (language, right, total)


@pytest.mark.parametrize("name", ["source", "source_time"])
def test_it_measures_sources_in_five_languages_with_30_percent_held_out_and_no_copy_in_the_bank(name):
    cases = cases_load(name)
    assert {case.language for case in cases} >= set(EVALUATED)
    assert {case.split for case in cases} == set(SPLITS)
    assert sum(case.split == "heldout" for case in cases) / len(cases) >= 0.3
    bank = [fold(text) for text in bank_load(name).texts]
    held_out = [fold(case.text) for case in cases if case.split == "heldout"]
    assert not [text for text in held_out if difflib.get_close_matches(text, bank, n=1, cutoff=0.9)]


def files(*specs: tuple) -> list[Candidate]:
    return [
        Candidate(id=i, kind=kind, title=title, filename=filename, age_seconds=age, uploaded=True)
        for i, (kind, title, filename, age) in enumerate(specs, 1)
    ]


WORKSPACE = files(
    ("image", "logo-sketch", "logo-sketch.png", 10 * 60),
    ("image", "Cat photo", "cat.png", 26 * HOUR),
    ("image", "IMG 2041", "IMG_2041.jpg", 2 * 60),
    ("document", "Brief", "brief.md", 30),
    ("image", "Dog photo", "dog.jpg", 5 * DAY),
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Turn my logo sketch into a clean vector-style logo", 1),
        ("Transforme mon croquis en logo propre", 1),
        ("ce croquis, fais-en un logo", 1),
        ("mi boceto, hazlo un logo limpio", 1),
        ("meine Skizze als sauberes Logo", 1),
        ("o meu esboço num logótipo limpo", 1),
        ("animate yesterday's cat photo", 2),
        ("anime la photo du chien", 5),
    ],
)
def test_it_resolves_a_reference_to_the_file_it_means(text, expected):
    reading = source_read(text, WORKSPACE)
    assert reading.chosen is not None and reading.chosen.id == expected, reading.ranked


def test_it_prefers_the_newest_photo_when_the_person_says_they_just_uploaded_it():
    # given two photos with equally uninformative names, one uploaded two minutes ago, one yesterday
    older, newer = files(("image", "IMG 1001", "IMG_1001.jpg", DAY), ("image", "IMG 1002", "IMG_1002.jpg", 120))
    # when the person says "just uploaded", the newer wins; when they say "yesterday", the older does
    assert source_read("animate the photo I just uploaded", [older, newer]).chosen == newer
    assert source_read("anime la photo d'hier", [older, newer]).chosen == older


def test_it_weighs_time_only_as_the_person_said_it():
    assert recency(60, "latest") > recency(3 * HOUR, "latest") > recency(DAY, "latest")
    assert recency(26 * HOUR, "yesterday") == 1.0 > recency(5 * 60, "yesterday")
    assert recency(5 * DAY, "yesterday") < 0.2
    assert recency(0, "unspecified") > recency(DAY, "unspecified") > 0.5  # a mild preference for the newer


def test_it_never_ranks_a_file_of_a_kind_the_reference_cannot_be():
    # "my photo" is never the brief, however recent; "the document I sent" is never an image
    assert 4 not in [c.id for c, _ in sources_rank("animate my photo", "photo", "latest", WORKSPACE)]
    assert [c.id for c, _ in sources_rank("summarise the document I sent", "document", "latest", WORKSPACE)] == [4]


def test_it_asks_instead_of_guessing_between_two_files_that_fit_as_well():
    # given two sketches named alike, added at the same time
    twins = files(("image", "sketch", "sketch.png", 300), ("image", "sketch", "sketch (1).png", 300))
    reading = source_read("turn my sketch into a logo", twins)
    # then the reading is a question with both as choices, not a pick
    assert reading.ambiguous and reading.chosen is None
    assert {c.id for c in reading.choices} == {1, 2}
    assert reading.ranked[0][1] - reading.ranked[1][1] < MARGIN


@pytest.mark.parametrize(
    "text",
    ["make a logo for my bakery", "draw a sketch of a fox", "une affiche pour la soirée jazz", "mach es heller"],
)
def test_it_names_no_source_when_the_request_starts_from_nothing(text):
    reading = source_read(text, WORKSPACE)
    assert (reading.reference, reading.chosen, reading.ranked) == ("none", None, ())


def test_it_finds_nothing_to_start_from_in_an_empty_workspace():
    reading = source_read("Turn my logo sketch into a clean vector-style logo", [])
    assert reading.reference == "sketch" and reading.chosen is None and not reading.ambiguous


def test_it_counts_just_uploaded_from_the_person_s_newest_upload_not_from_a_task_s_result():
    # given a photo the person uploaded twenty minutes ago, an older one, and a result a task made a minute ago
    upload, older = files(("image", "IMG 2041", "IMG_2041.jpg", 20 * 60), ("image", "IMG 1990", "IMG_1990.jpg", DAY))
    made = Candidate(id=9, kind="image", title="Poster: jazz night", age_seconds=60, uploaded=False)
    # when they say "the photo I just uploaded", their newest upload is meant: the task's result was not uploaded
    assert source_read("animate the photo I just uploaded", [made, older, upload]).chosen == upload


def test_it_starts_from_nothing_when_no_file_fits_the_words():
    # given only a logo sketch, when the person asks to animate their photo of a dog, then no file is taken
    only_sketch = files(("image", "logo-sketch", "logo-sketch.png", 10 * 60))
    reading = source_read("animate my photo of the dog", only_sketch)
    assert reading.reference == "photo" and reading.ranked == () and reading.chosen is None
    # while an image they just uploaded is "the photo I just uploaded", whatever its name
    assert source_read("animate the photo I just uploaded", only_sketch).chosen == only_sketch[0]


def test_it_takes_the_file_whose_name_the_person_writes_over_a_newer_one():
    named, newer = files(("image", "IMG 2041", "IMG_2041.jpg", 3 * DAY), ("image", "IMG 1001", "IMG_1001.jpg", 60))
    assert source_read("animate IMG_2041", [named, newer]).chosen == named
    assert source_read("fais une vidéo de la photo IMG_2041.jpg", [named, newer]).chosen == named
