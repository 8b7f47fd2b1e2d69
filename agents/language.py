"""The language of a person's own wording (DESIGN §2), and the words of a text for lexical search.

The language is read by the understanding layer's identifier (lomote/understanding/language_id.py), learned from
the exemplar banks: a task keeps it from the person's original text, never from the Router's rephrasing of it.
The function words below are for search only: they say nothing about which work a message is about.
"""

import re

from lomote.understanding.language_id import DEFAULT_LANGUAGE, language_identify
from lomote.understanding.languages import LANGUAGES
from lomote.understanding.normalise import fold, plural_cut

SUPPORTED = LANGUAGES

_WORDS: dict[str, str] = {
    "en": """the a an and or but of to in on at for with from by about into this that these those it its is are
        was were be been am do does did have has had will would can could should shall may might must not no
        what which who whom whose when where why how there here my your our their his her we you they them me
        i he she us some any all more most very too also just please make create generate draw turn give show
        let write design paint again other day yesterday last time same one two three than then up out""",
    "fr": """le la les l un une des du de d au aux et ou mais donc ni car ce cet cette ces c qu que qui quoi
        dont où est sont était été être avoir ai as a avons avez ont fait fais faire je j tu il elle nous vous
        ils elles on me m te t se s lui leur leurs mon ma mes ton ta tes son sa ses notre nos votre vos pour
        par avec sans sur sous dans chez en y pas ne n plus moins très aussi encore peux peut pouvez veux
        voudrais crée créer génère générer dessine transforme rends réalise écris montre merci bonjour
        comment pourquoi quand quel quelle quels quelles autre fois hier dernière dernier même""",
    "es": """el la los las un una unos unas y o pero de del al a en con sin por para sobre entre es son está
        están era fue ser estar hay he ha han hace haz hacer yo tú tu él ella nosotros vosotros ellos ellas
        me te se le les lo mi mis su sus nuestro nuestra que qué quién cuál cuando cuándo como cómo dónde
        porque muy también más menos ya puedes puede quiero crea crear genera generar dibuja convierte
        escribe muestra gracias hola otro otra vez ayer última último mismo""",
    "de": """der die das den dem des ein eine einen einem einer eines und oder aber nicht kein keine mit ohne
        für von zu zum zur im in am an auf aus bei nach über unter ist sind war waren bin bist sein haben hat
        habe wird werden ich du er sie es wir ihr mich mir dich dir uns euch sich mein meine dein deine was
        wer wie wo warum wann welche welcher auch noch sehr mehr bitte mach mache machen erstelle erstellen
        generiere zeichne verwandle schreibe zeig danke hallo andere anderen mal gestern letzte letzten""",
    "it": """il lo la i gli le un uno una di del della dei delle dello al alla ai e ed o ma che chi cosa con
        senza per su tra fra in nel nella è sono era stato essere avere ho hai ha abbiamo fa fai fare io tu
        lui lei noi voi loro mi ti ci si vi mio mia miei tuo tua suo sua come dove perché quando quale
        anche ancora molto più meno puoi può voglio vorrei crea creare genera generare disegna trasforma
        scrivi mostra grazie ciao altro altra volta ieri ultima ultimo stesso""",
    "pt": """o a os as um uma uns umas e ou mas de do da dos das no na nos nas ao à em com sem por para pelo
        pela sobre é são está estão era foi ser estar há tem têm faz faça fazer eu tu você vocês ele ela nós
        eles elas me te se lhe meu minha seu sua nosso nossa que quem qual quando como onde porque muito
        também mais menos já pode posso quero cria crie criar gera gere gerar desenha transforma escreve
        mostra obrigado olá outro outra vez ontem última último mesmo""",
}


def language_detect(text: str, *, default: str = DEFAULT_LANGUAGE) -> str:
    """The language of the person's wording as a code from SUPPORTED, or `default` when it cannot tell."""
    return language_identify(text, default=default)


# --- words for search -------------------------------------------------------------------------------------


_FOLDED_TOKEN = re.compile(r"[a-z0-9]+")
# Function words of every supported language, folded: they say nothing about which work a message is about.
STOP_WORDS = frozenset(fold(word) for words in _WORDS.values() for word in words.split())


stem = plural_cut  # the name the Router and planner read it by


def words(text: str) -> list[str]:
    """Folded word tokens in order, stop words included."""
    return _FOLDED_TOKEN.findall(fold(text))


def content_terms(text: str) -> list[str]:
    """Folded, stemmed words that are not function words, in order (duplicates kept)."""
    return [stem(w) for w in words(text) if w not in STOP_WORDS and (len(w) > 1 or w.isdigit())]
