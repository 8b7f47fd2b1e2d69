"""The languages the understanding layer is built and measured for, defined once (DESIGN §15).

agents/language.py detects which of these a person writes in; every exemplar bank and labelled set covers at
least the five of EVALUATED (Italian is detected and encoded, but not yet measured).
"""

LANGUAGES = ("en", "fr", "es", "de", "it", "pt")
EVALUATED = ("en", "fr", "de", "es", "pt")

# Words that join two requests in one sentence ("brighten it and make the text bigger"). They only cut a
# sentence into clauses for a multi-label decision; they never decide a label (each clause is read by meaning).
CLAUSE_JOINERS: dict[str, tuple[str, ...]] = {
    # Not "plus": French "plus grand" is "bigger".
    "en": ("and", "and also", "also", "then", "and then", "but"),
    "fr": ("et", "et aussi", "puis", "ensuite", "aussi"),  # not "mais": Portuguese "mais" is "more"
    "es": ("y", "e", "y también", "también", "luego", "después", "pero"),
    "de": ("und", "und auch", "auch", "dann", "danach", "aber"),
    "it": ("e", "ed", "anche", "poi", "ma"),
    "pt": ("e", "e também", "também", "depois"),  # not "mas": Spanish written without accents says "mas" for "más"
}

# Number words a person counts the pieces they ask for with, one to twelve (a checklist plans at most twelve).
# Data, read by counts.py: "three Instagram posts", "trois visuels", "drei Banner", "tres historias", "três posts".
NUMBER_WORDS: dict[str, tuple[str, ...]] = {
    "en": ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"),
    "fr": ("un", "deux", "trois", "quatre", "cinq", "six", "sept", "huit", "neuf", "dix", "onze", "douze"),
    "de": ("ein", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun", "zehn", "elf", "zwölf"),
    "es": ("uno", "dos", "tres", "cuatro", "cinco", "seis", "siete", "ocho", "nueve", "diez", "once", "doce"),
    "it": ("uno", "due", "tre", "quattro", "cinque", "sei", "sette", "otto", "nove", "dieci", "undici", "dodici"),
    "pt": ("um", "dois", "três", "quatro", "cinco", "seis", "sete", "oito", "nove", "dez", "onze", "doze"),
}
# Other spellings of the same numbers (feminine, inflected): each maps to its value.
NUMBER_FORMS: dict[str, int] = {
    "one": 1, "une": 1, "eine": 1, "einen": 1, "einem": 1, "una": 1, "uma": 1, "duas": 2, "zwo": 2,
}  # fmt: skip
# Words after a number that make it a measure, not a count of pieces: "10 seconds", "3 pm", "20 cm".
UNIT_WORDS: tuple[str, ...] = tuple(
    """s sec secs second seconds seconde secondes segundo segundos sekunde sekunden min mins minute minutes minuten
    minuto minutos h hour hours heure heures stunde stunden hora horas day days jour jours tag tage tagen dia dias
    día días week weeks semaine semaines woche wochen semana semanas month months mois monat monate mes meses
    year years an ans jahr jahre año años ano anos am pm px cm mm m km kg g k x percent pourcent prozent por
    uhr fps dpi p""".split()
)

# Words asking for several pieces without saying how many ("a series of posters", "une série d'affiches",
# "mehrere Banner"): with no number, the planner asks how many on a card. They never decide the kind of work.
SERIES_WORDS: dict[str, tuple[str, ...]] = {
    "en": ("series", "set", "collection", "batch", "pack", "range", "bunch", "several", "some", "few", "multiple"),
    "fr": ("série", "ensemble", "collection", "lot", "plusieurs", "quelques", "diverses", "divers", "différentes"),
    "de": ("serie", "reihe", "set", "sammlung", "mehrere", "einige", "paar"),
    "es": ("serie", "conjunto", "colección", "lote", "varios", "varias", "algunos", "algunas"),
    "it": ("serie", "set", "collezione", "diversi", "diverse", "alcuni", "alcune"),
    "pt": ("série", "conjunto", "coleção", "lote", "vários", "várias", "alguns", "algumas"),
}
