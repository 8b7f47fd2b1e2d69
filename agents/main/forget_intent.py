"""Saying "forget that …" to Main (DESIGN §8): the request is recognised before any routing, the memory it names
is found by what it says, and a confirmation card is opened — forgetting is never done on words alone.

What is recognised, in English and French: a message that opens with a request to forget, stop remembering or
erase a memory ("forget that our main colour is blue", "please forget what I said about the mascot", "stop
remembering my old address", "oublie que notre couleur principale est le bleu", "efface ce que j'ai dit sur la
mascotte", "ne retiens plus que …"). Not recognised: "don't forget …", "n'oublie pas …" (the opposite), and a
request to forget that is a question or sits inside a longer work request — those go to the Router as usual.
"""

import re
import unicodedata
from dataclasses import dataclass

_LEAD = r"(?:(?:please|could you|can you|s'il te plaît|s'il vous plaît|stp|svp)[\s,]+)?"
_PATTERNS = [
    # English
    r"forget (?:that |about |what i (?:said|told you) (?:about|on) |the fact that |my |our )?(?P<what>.+)",
    r"(?:stop|quit) remembering (?:that )?(?P<what>.+)",
    r"(?:erase|delete|remove) (?:the |your )?(?:memory|memories) (?:of |about |that )?(?P<what>.+)",
    r"don't remember (?:that )?(?P<what>.+) any ?more",
    # French
    r"oublie[zr]? (?:que |qu'|ce que (?:j'ai|je t'ai|on a) dit (?:sur|à propos de) |le fait que )?(?P<what>.+)",
    r"efface[zr]? (?:le souvenir |la mémoire )?(?:de |du |des |que |qu'|ce que (?:j'ai|on a) dit (?:sur|à propos de) )?"
    r"(?P<what>.+)",
    r"ne (?:retiens|retenez|garde|gardez) plus (?:en mémoire )?(?:que |qu')?(?P<what>.+)",
]
_NEGATED = re.compile(r"^(?:don'?t|do not|never|n'oublie(?:z)? pas|ne pas oublier|n'oubliez jamais|n'oublie jamais)\b")
_COMPILED = [re.compile(rf"^{_LEAD}{pattern}$", re.IGNORECASE | re.DOTALL) for pattern in _PATTERNS]
MAX_INTENT_CHARS = 400  # a forget request is a sentence or two, not a brief


@dataclass(frozen=True)
class ForgetIntent:
    what: str  # the person's description of what to forget


def forget_intent(text: str) -> ForgetIntent | None:
    """The forget request `text` makes, if it is one (module docstring)."""
    said = unicodedata.normalize("NFKC", " ".join(text.split())).strip()
    if not said or len(said) > MAX_INTENT_CHARS or said.endswith("?"):
        return None
    lowered = said.casefold().replace("’", "'")
    if _NEGATED.match(lowered):
        return None
    for pattern in _COMPILED:
        match = pattern.match(lowered)
        if match:
            what = match.group("what").strip(" .!;:,\"'«»“”")
            return ForgetIntent(what=what) if len(what) >= 3 else None
    return None
