"""A task's title from the person's words: the request's frame (politeness, "could you", "I'd like", verbs of
making, with the pronouns bound to them) and a closing "please" dropped, first letter up.

This only shapes a title; it decides nothing about where a message goes (the Router reads by meaning).
"""

import re

from agents.language import STOP_WORDS, fold


def _folded(text: str) -> frozenset[str]:
    return frozenset(fold(word) for word in text.split())


# Verbs of making: leading words of a request, never its subject.
_CREATE = _folded(
    """make create generate draw design render produce paint illustrate compose write build sketch craft imagine
    prepare shoot film record
    fais fait faire faites cree creer creez genere generer generez dessine dessiner concois concevoir realise
    realiser ecris ecrire compose composer imagine imaginer peins illustre produis produire prepare preparer
    haz hacer crea crear genera generar dibuja disena escribe pinta produce
    mach mache machen erstelle erstellen generiere zeichne entwirf gestalte schreibe male
    fai fare creare crea genera disegna scrivi dipingi realizza produci
    faz faca fazer cria crie criar gera gere gerar desenha escreve produz"""
)
# Verbs of turning one work into another: the work follows them, so they stay in the title.
_TRANSFORM_VERBS = _folded("turn convert transform transforme transformer convertis convertir convierte transforma")
_TRANSFORM_VERBS |= _folded("verwandle trasforma")
# How people frame a request before saying what they want: modal and wanting verbs, "give me" ("Could you…",
# "J'aimerais…", "Me gustaría…", "Ich möchte…", "Vorrei…", "Gostaria…").
_REQUEST_FRAME = _folded(
    """could would can will want need like love give
    pourrais pourriez pourrait peux pouvez voudrais voudrions veux voulez aimerais aimerions souhaite souhaiterais
    souhaitons donne donnez
    puedes podrias puede podria pueden quiero quisiera queria gustaria necesito dame da
    kannst konntest konnen konnten mochte mochten will brauche hatte gib
    puoi potresti potete potreste vorrei voglio fa da
    pode poderia podes quero gostaria preciso"""
)
# Pronouns bound to such a verb: after a hyphen ("Fais-moi", "Pourrais-tu", "Faça-me"), elided before an apostrophe
# ("j'aimerais"), or fused to a Spanish or Italian imperative ("hazme", "disegnami", "fammi").
_CLITICS = _folded(
    "moi toi nous vous lui leur en y t il elle on me te nos le les lo la mi ti ci vi gli ne lhe j m l d s n qu"
)
_FUSED_CLITICS = ("melo", "mela", "me", "nos", "mi", "ci", "ti", "te")
_LEADING = (
    STOP_WORDS | _CREATE | _REQUEST_FRAME | _folded("please also pls stp svp bitte por favor now maintenant hey")
) - (_TRANSFORM_VERBS)


def _leading(token: str) -> bool:
    """Politeness, a request's frame or a verb of making, with the pronouns bound to it ("Peux-tu", "Fais-moi",
    "j'aimerais", "hazme")."""
    parts = [p for p in re.split(r"[-']", fold(token).strip(".,;:!?'\"«»“”¿¡")) if p]
    if not parts:
        return False
    if len(parts) == 1:
        return parts[0] in _LEADING or _fused_clitic(parts[0])
    return all(part in _LEADING or part in _CLITICS for part in parts) and any(p not in _CLITICS for p in parts)


def _fused_clitic(word: str) -> bool:
    """A verb of making or asking with its pronoun fused on: "hazme" (haz), "disegnami" (disegna), "fammi" (fa')."""
    for suffix in _FUSED_CLITICS:
        stem = word[: -len(suffix)]
        if word.endswith(suffix) and len(stem) >= 2:
            # Italian doubles the pronoun's consonant after a short imperative: "fammi" (fa' + mi), "dammi".
            undoubled = stem[:-1] if len(stem) >= 3 and stem[-1] == suffix[0] else stem
            if stem in _CREATE or stem in _REQUEST_FRAME or undoubled in _CREATE or undoubled in _REQUEST_FRAME:
                return True
    return False


_TRAILING_POLITENESS = re.compile(
    r"[\s,;:.!?]*\b(?:please|pls|plz|thanks|thank you|merci(?: beaucoup)?|svp|stp|s[’']il (?:te|vous) pla[iî]t|"
    r"por favor|gracias|bitte|danke|per favore|grazie|obrigad[oa])[\s.!?]*$",
    re.IGNORECASE,
)


def title_from(message: str) -> str:
    """A task title from the person's words: the request's frame (politeness, "could you", "I'd like", verbs of
    making) and a closing "please" dropped, first letter up."""
    tokens = message.split()
    start = 0
    while start < len(tokens) - 1 and _leading(tokens[start]):
        start += 1
    title = _TRAILING_POLITENESS.sub("", " ".join(tokens[start:])).strip(" .!?¿¡") or message.strip()
    title = title[:1].upper() + title[1:]
    return title if len(title) <= 80 else title[:79].rsplit(" ", 1)[0] + "…"
