"""The languages the understanding layer is built and measured for, defined once (DESIGN §15).

agents/language.py detects which of these a person writes in; every exemplar bank and labelled set covers at
least the five of EVALUATED (Italian is detected and encoded, but not yet measured).
"""

LANGUAGES = ("en", "fr", "es", "de", "it", "pt")
EVALUATED = ("en", "fr", "de", "es", "pt")

# Words that join two requests in one sentence ("brighten it and make the text bigger"). They only cut a
# sentence into clauses for a multi-label decision; they never decide a label (each clause is read by meaning).
CLAUSE_JOINERS: dict[str, tuple[str, ...]] = {
    "en": ("and", "and also", "also", "then", "and then", "plus", "but"),
    "fr": ("et", "et aussi", "puis", "ensuite", "mais", "aussi"),
    "es": ("y", "e", "y también", "también", "luego", "después", "pero"),
    "de": ("und", "und auch", "auch", "dann", "danach", "aber"),
    "it": ("e", "ed", "anche", "poi", "ma"),
    "pt": ("e", "e também", "também", "depois", "mas"),
}
