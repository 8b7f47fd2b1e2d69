"""How memory's keyword search reads text: one folded form for stored documents and for a task's goal.

Memory sits below agents (DESIGN §1), so it has its own small reading of words instead of agents.language:
the stop words are the function classes of lomote.understanding.word_classes (articles, pronouns, auxiliaries,
prepositions, connectors, verbs of making) in its five languages, and plurals are cut as crudely as the
Router's search cuts them. Terms are matched as prefixes ("poster" finds "posters"), so the crude cut is
enough. Pure functions, no database: the index service writes `index_document`, recall reads `goal_terms`.
"""

import re

from lomote.understanding.normalise import fold, plural_cut
from lomote.understanding.word_classes import LEXICONS

# The GIN index of migration 0002 is on exactly this expression; a search must use it verbatim to be served.
FTS_INDEX = "memory_memoryindex_document_fts"
FTS_DOCUMENT = "to_tsvector('simple'::regconfig, COALESCE(document, ''))"

DOCUMENT_CHARS = 4000
MAX_GOAL_TERMS = 12
_STOP_CLASSES = ("determiner", "function", "preposition", "connector", "verb")
_TERM = re.compile(r"[a-z0-9]+")


STOP_WORDS = frozenset(
    term
    for lexicon in LEXICONS.values()
    for name in _STOP_CLASSES
    for word in lexicon.get(name, "").split()
    for term in _TERM.findall(fold(word))
)


def index_document(content: str, subject: str) -> str:
    """What the search row of a memory version holds: its content and its subject, folded."""
    return f"{fold(content)}\n{fold(subject)}"[:DOCUMENT_CHARS]


def goal_terms(goal: str) -> list[str]:
    """The distinct content words of a goal, folded and stemmed, first come first kept, at most MAX_GOAL_TERMS.

    Each is [a-z0-9]+, so nothing in a term is tsquery syntax.
    """
    terms = [
        plural_cut(word)
        for word in _TERM.findall(fold(goal[:DOCUMENT_CHARS]))
        if word not in STOP_WORDS and (len(word) > 1 or word.isdigit())
    ]
    return list(dict.fromkeys(terms))[:MAX_GOAL_TERMS]
