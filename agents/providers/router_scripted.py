"""Lomote's scripted Router: the default offline routing model. Deterministic rules, not an LLM — and it says so.

It answers the Router's request (agents/main/router.py) like a model would, with one `route_message`
tool call, reading only what a model is given: the message, its language, the bounded task index, the last
few messages to Main and, in the duplicate phase, the closest in-progress tasks. Same request, same decision.

It first READS the message (`read_message`): what it asks for, in six languages — thanks or a greeting; a
question about what Lomote can do, or about how work is going; a polite request ("could you…", "tu peux…",
"would it be possible…"); a change to existing work (a verb of changing, a comparative, "two more", "too
small", "make it smile"); a new work (a verb of making, "I'd like…", or just "three posters for…", "logo
for my bakery"); a new work made from an existing one ("animate the photo", "turn … into a video", "fais une
vidéo à partir de…", "a clip of my cat photo"); a reference back ("those", "the other day", "them", "the
same", "the posters" when posters exist). The kinds of work (poster, photo,
video, logo, storyboard…) are read through one small lexicon of the studio's media in six languages, so
"affiches", "posters" and "carteles" are one kind; other words must match the index, whose `similarity` (the
index's own measure, lexical or semantic) also ranks the entries.

Then it DECIDES:
1. thanks, greetings → `answer` (a short reply: nothing runs);
2. questions about what Lomote can do → `answer`; about how work is going → `answer` from the index; any
   other question about work the index shows ("why teal on the posters?") → `follow_up`; else `answer`;
3. a new work made from an existing one → `new_task`, marked as referring to existing work;
4. a change to, or a reference to, existing work → the entry it names: the best match by kind of work and
   words, keeping only the entries close to the best; among those, live tasks before archived ones and work
   in progress before finished work, then the task the conversation was about; one left → `follow_up`,
   several → `clarify`. A message that names nothing ("make them warmer") goes to the task the conversation
   was about, or to the only task there is; otherwise the person chooses. With no task at all, nothing is
   asked: it becomes a new task (rule 5);
5. a request to make something: one item → `lightweight`; a series, a count, plural works → `new_task`;
6. a fragment that names work the index shows ("the slogan in French") → as rule 4; anything else →
   `answer`, saying what it can do (never a task made of "ok, d'accord").
Never `clarify` with nothing to choose from. In the duplicate phase (a new task looks like in-progress
ones): a request naming a subject none of them has is a new goal; otherwise continue the closest when it is
very close and alone, else ask.

When the index leaves two or more candidates close (the decision would be `clarify`) and the request offers
the `open_task` tool, it READS before deciding, as a model would: it opens every candidate through that tool
(one call each, answered by the runtime in the next request's tool messages) and compares the message with
what each task holds — brief, checklist items, artifacts and their descriptions, the person's latest messages.
Words and kinds of work of the message that some candidates hold and others do not (weighted by how rare they
are among the candidates) choose one when it clearly leads. When no word tells them apart (the message and the
details in different languages, or in other words), meaning may: the offline multilingual sentence encoder
(workspace search's) compares the message with each detail line the index did not show, and a candidate whose
closest line is clearly closer than every other candidate's is chosen. Otherwise it still asks.
"""

import functools
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from agents.language import STOP_WORDS, content_terms, fold, stem, words
from agents.providers.base import ModelRequest, ModelResponse, ToolCallIntent, Usage
from workspace.search import EmbeddingFailed, offline_embedder

MODEL_NAME = "lomote-scripted-router-2"

LEAD = 1.5  # the best entry must beat the next by this factor, or by MARGIN, to be chosen without asking
MARGIN = 1.0  # one distinguishing word in a title is worth about this much
KIND_WEIGHT = 2.0  # a kind of work the message names (poster, video…) counts twice an ordinary word
SIMILARITY_WEIGHT = 2.0
SIMILAR = 0.35  # an index similarity from which an entry matches even without a shared word
CLARIFY_MAX = 3
SURE_DUPLICATE = 0.8  # cosine from which the duplicate phase continues the task without asking
CLOSE_DUPLICATES = 0.05  # two duplicates within this cosine are both plausible
IN_PROGRESS = {"idle", "active", "waiting", "paused"}
CLOSED = {"archived", "cancelled"}


def _folded(text: str) -> frozenset[str]:
    return frozenset(fold(word) for word in text.split())


# --- the studio's kinds of work, in six languages (folded, singular) ----------------------------------------

_KINDS = {
    "poster": "poster posters affiche affiches afiche cartel carteles plakat plakate manifesto manifesti cartaz "
    "cartazes",
    "image": "image images picture pictures pic pics photo photos photograph photographs photographie foto fotos "
    "imagen imagenes bild bilder immagine immagini imagem imagens visuel visuels visual visuals illustration "
    "illustrations drawing drawings dessin dessins painting paintings peinture peintures watercolour "
    "watercolor aquarelle sketch croquis artwork portrait",
    "video": "video videos clip clips animation animations film films movie movies teaser reel gif animacion "
    "animazione animacao filmchen",
    "logo": "logo logos logotype logotipo",
    "storyboard": "storyboard storyboards scenarimage",
    "banner": "banner banners banniere bannieres bandeau banderole",
    "flyer": "flyer flyers prospectus tract tracts leaflet folleto volantino panfleto",
    "document": "document documents doc newsletter newsletters article articles script scripts brochure",
    "model3d": "3d mesh gltf glb figurine sculpture",
    "sticker": "sticker stickers autocollant autocollants",
    "menu": "menu menus",
}
MEDIA: dict[str, str] = {}
for _kind, _names in _KINDS.items():
    for _name in _names.split():
        MEDIA[fold(_name)] = _kind
        MEDIA[stem(fold(_name))] = _kind


def _one_typo(a: str, b: str) -> bool:
    """Two adjacent letters swapped, or one letter missing or doubled (not a different letter: "posted" is
    not "poster")."""
    if a == b:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
    short, long_ = sorted((a, b), key=len)
    if len(long_) - len(short) != 1:
        return False
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


@functools.lru_cache(maxsize=8192)
def media_kind(word: str) -> str | None:
    """The kind of work a folded word names ("affiches" → poster, "clip" → video), typos of one letter
    included for words of five letters or more; None for any other word. Remembered per word: the typo scan
    runs over the whole lexicon, and the planner reads the same guide list at every step of every turn."""
    kind = MEDIA.get(word) or MEDIA.get(stem(word))
    if kind or len(word) < 5 or word.isdigit():
        return kind
    for name, named in MEDIA.items():
        if abs(len(name) - len(word)) <= 1 and _one_typo(word, name):
            return named
    return None


def kinds_in(text: str) -> set[str]:
    return {kind for word in words(text) if (kind := media_kind(word))}


# --- what the words say -------------------------------------------------------------------------------------

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
# Verbs that change existing work.
_EDIT_VERBS = _folded(
    """change changing edit modify update adjust tweak fix correct move shift swap replace remove erase add put
    insert include use redo rework revise retouch improve enhance crop resize rotate flip recolor recolour warm
    cool brighten darken lighten soften sharpen saturate desaturate lengthen shorten extend trim speed slow
    enlarge increase decrease reduce boost tone continue resume finish complete retry restart give apply
    align center centre zoom mute try simplify translate rename loop mirror invert lose drop bump shrink
    grow widen narrow space tighten lift raise lower nudge fade blur clean polish refine rewrite reword rephrase
    change changer changez modifie modifier modifiez retouche retoucher ajuste ajuster corrige corriger deplace
    deplacer decale decaler remplace remplacer enleve enlever retire retirer supprime efface ajoute ajouter
    ajoutez rajoute mets mettre mettez utilise utiliser utilisez refais refaire reprends reprendre continue
    continuer termine terminer finis finir acheve rends rendre rendez rallonge rallonger allonge allonger
    raccourcis raccourcir accelere accelerer ralentis ralentir eclaircis eclaircir assombris assombrir
    rechauffe rechauffer refroidis refroidir agrandis agrandir retrecis reduis reduire augmente augmenter
    ameliore ameliorer recadre recadrer tourne essaie essaye applique appliquer aligne centre passe donne
    grossis grossir noircis blanchis rougis jaunis verdis bleuis adoucis adoucir epaissis amincis elargis
    elargir arrondis durcis allege alleger fonce foncer coupe couper simplifie traduis renomme inverse inverser
    baisse remonte descends monte resserre espace aere estompe floute nettoie peaufine affine reformule reecris
    attenue
    cambia cambiar modifica mueve ajusta corrige rehaz reemplaza quita anade pon usa alarga acorta
    andere aendere bearbeite verschiebe korrigiere ersetze entferne fuege hinzu verlaengere kuerze
    sposta correggi rifai sostituisci rimuovi rendi aggiungi metti usa allunga accorcia
    muda mude altera altere mova ajusta refaz troca tira deixa adiciona coloca usa alonga encurta"""
)
# Words that make a change without a verb of changing ("warmer", "two more", "too small", "plus chaud").
_MODIFIERS = _folded(
    """warmer cooler colder brighter darker lighter bigger smaller larger longer shorter slower faster bolder
    softer sharper cleaner simpler louder quieter wider narrower taller thicker thinner higher lower stronger
    calmer punchier richer deeper fluffier cuter more less fewer too again instead needs should lacks missing
    devrait devraient manque manquent faudrait
    plus moins trop davantage encore plutot
    mas menos demasiado
    mehr weniger zu waermer heller dunkler groesser kleiner laenger kuerzer
    piu meno troppo
    mais menos demais"""
)
# A change of length or speed: only work that lasts can take it.
_TIMED = _folded(
    """longer shorter slower faster lengthen shorten speed slow extend trim seconds second sec long
    longue long longues rallonge rallonger allonge allonger raccourcis raccourcir accelere ralentis ralentir
    lente lent rapide secondes duree"""
)
_NEW = _folded("new another different fresh separate nouveau nouvelle nouvelles nouveaux nuevo nueva neue nuovo novo")
# "I'd like / I need / je voudrais / il me faut": the object is something to make.
_WANT = re.compile(
    r"\b(?:(?:i|we)(?: d| would)? (?:like|love|want|need)|(?:can|could|may) (?:i|we) (?:get|have)|"
    r"je (?:voudrais|veux|souhaite|souhaiterais|cherche)|j aimerais|j ai besoin|j aurais besoin|il me faut|"
    r"il nous faut|(?:je pourrais|pourrais je|puis je|est ce que je peux|je peux) (?:avoir|obtenir)|"
    r"on (?:voudrait|veut)|nous (?:voudrions|voulons)|quisiera|quiero|necesito|ich (?:moechte|brauche|will)|"
    r"vorrei|voglio|gostaria|quero|preciso)\b"
)
# A polite request: what follows is to be done, not answered.
_REQUEST = re.compile(
    r"\b(?:(?:can|could|would|will) (?:you|u|ya)|would you mind|(?:is|would) it (?:be )?possible|"
    r"i was wondering if|i wonder if|(?:can|could|should) (?:the|these|those|it|they|this|that)\b|"
    r"(?:peux|pourrais|pouvez|pourriez|voudrais|voudriez) (?:tu|vous)|(?:tu|vous) (?:peux|pourrais|pouvez|pourriez)|"
    r"est ce que (?:tu|vous) (?:peux|pourrais|pouvez|pourriez)|(?:serait|est) il possible|"
    r"ca (?:te|vous) (?:derangerait|derange)|je me demandais si|tu veux bien|vous voulez bien|"
    r"puedes|podrias|kannst du|koenntest du|koennten sie|puoi|potresti|pode|poderia)\b"
)
# What Lomote can do, not work to do.
_CAPABILITY = re.compile(
    r"\b(?:sais|savez|know how|able to|capable|support|supports|supported|do you (?:do|make|render|handle)|"
    r"can you do|what can you|que peux tu|que pouvez vous|que sais tu|what do you|"
    r"qu est ce que (?:tu|vous) (?:peux|pouvez|sais|savez|fais|faites))\b"
)
_QUESTION_START = _folded(
    """what which how why when where who whose is are does do did can could will would should may
    quel quelle quels quelles comment pourquoi quand qui combien que quoi est
    que cual como cuando donde quien cuanto
    was welche welcher wie wo warum wann wer
    cosa come dove perche quando quale chi quanto
    qual quais onde quem quanto"""
)
_WH = _folded(
    """what which how why when where who whose quel quelle quels quelles comment pourquoi quand qui combien que
    quoi ou cual como cuando donde quien was welche wie wo warum wann wer cosa come dove perche quale chi qual
    quais onde quem"""
)
# Questions about how work is going: words, and beginnings of words.
_STATUS_WORDS = _folded(
    """status progress going coming ready done finished completed complete eta avance avancent avancement
    fini finie finis finies pret prete prets pretes etat listo lista listos terminado fertig pronto pronta news
    nouvelles"""
)
_STATUS_PREFIXES = ("progress", "avancement", "termine", "terminad", "finito", "finita", "acabad")
_STATUS_PHRASE = re.compile(r"\b(?:ou en (?:est|sont|es|etes)|where (?:are|is) we|how far|any updates?)\b")
_ACK = _folded(
    """thanks thank thx ty tks tnx merci mercii cheers perfect parfait parfaite parfaits parfaites great super nickel
    top cool nice awesome excellent genial geniale bravo ok okay oki okey good bien fine love adore impeccable
    magnifique magnifiques beautiful beau belle belles beaux wonderful gorgeous splendid brilliant amazing lovely
    superbe sublime chouette formidable gracias danke grazie obrigado obrigada perfecto perfekt perfetto
    exactly exactement yes oui yep ouais accord entendu infiniment parfaitement marche"""
)
_GREETING = _folded("hello hi hey hiya bonjour salut coucou bonsoir hola hallo ciao ola morning evening")
# Words that may sit in a thank-you without asking for anything.
_FILLER = _folded(
    """so very much really lot lots beaucoup tres vraiment trop all tout tous toute rien nothing more else now
    maintenant for pour moment instant today aujourd hui job work travail look looks looked it is that this s
    you u vous toi te lot again encore indeed re ll ve d m t far ici jusqu there"""
)
_CLOSING = re.compile(
    r"\b(?:nothing (?:more|else)(?: to do)?|no more|that s (?:all|it)|thats (?:all|it)|all good|for now|"
    r"rien (?:de plus|d autre)|pas plus|c est tout|ca ira|ca me va|ca me plait|pour l instant|pour le moment|"
    r"c est bon|looks? (?:good|great|perfect)|(?:well|nicely) done|(?:good|great) job|bien joue|beau travail|"
    r"rien a faire|all done)\b"
)
_CONTRAST = _folded("but however though although except mais sauf cependant pourtant juste sino aber pero ma porem")
# Phrases that point back at earlier work, folded; matched on word boundaries.
_BACK = re.compile(
    r"\b(?:other day|last (?:time|week|month|one)|the other time|earlier|previous|from before|the one from|"
    r"those|these|that one|yesterday|same|meme|memes|l autre (?:fois|jour)|la derniere|le dernier|"
    r"les derniers|la derniere fois|"
    r"tout a l heure|precedent|precedente|hier|avant hier|du mois dernier|la semaine derniere|ces|cette|"
    r"celle de|celui de|ceux de|celles de|la otra vez|la ultima vez|el otro dia|de antes|ayer|letztes mal|"
    r"neulich|gestern|vorhin|l altra volta|l ultima volta|l altro giorno|ieri|outro dia|da ultima vez|ontem)\b"
)
_DEFINITE = _folded(
    """the this that these those my our your his her their le la les l ce cet cette ces mon ma mes ton ta tes
    notre nos votre vos du au aux el los las este esta estos mi mis der die das den dem des il lo gli i questo
    questa o os as meu minha"""
)
_INDEFINITE = _folded("a an one some any un une des quelques plusieurs uno una unos unas ein eine einen")
_ARTICLES = _folded("a an the un une una ein eine")  # "le", "la" also stand for "it" before a verb
_ALL = _folded("all both tous toutes todos todas alle tutti tutte")
_OBJECT_PRONOUNS = _folded("it them him her le la les l lui leur lo los las ihn sie es li")
_COUNTS = _folded(
    """two three four five six seven eight nine ten eleven twelve twenty deux trois quatre cinq six sept huit neuf
    dix douze vingt dos tres cuatro cinco seis siete ocho nueve diez zwei drei vier fuenf sechs sieben acht neun
    zehn due tre quattro cinque sei sette otto nove dieci dois duas quatro cinco seis sete oito nove dez
    several few couple multiple quelques plusieurs varios varias mehrere diversi alcuni alguns"""
)
_SERIES = _folded(
    """series serie set collection campaign variations variants storyboard kit pack album book deck
    presentation sequence moodboard episodes identity branding
    ensemble campagne declinaison declinaisons variantes episodes identite charte
    conjunto campana coleccion reihe kampagne sammlung varianten campagna collezione campanha colecao"""
)
_DURATION = re.compile(r"#[\s-]*(s|secs?|seconds?|secondes?|segundos?|sekunden|secondi|min|minutes?)\b")
# "Turn X into a video", "transforme X en vidéo", "animate X", "bring X to life": a new work from another.
_TRANSFORM_VERBS = _folded("turn convert transform transforme transformer convertis convertir convierte transforma")
_TRANSFORM_VERBS |= _folded("verwandle trasforma")
_INTO = _folded("into en in em zu")
_ANIMATE = re.compile(
    r"\b(?:animate|animer|animez|anima|animiere|bring (?:\w+ ){1,5}to life|donne(?:r|z)? vie|"
    r"anime (?:la|le|les|l|ma|mon|mes|ce|cette|ces|cet|notre|nos)|(?:fais|faire|faites) bouger|"
    r"mets? en mouvement|set (?:\w+ ){0,4}in motion|make (?:\w+ ){1,5}move)\b"
)
_SOURCE = re.compile(r"\b(?:from|out of|using|based on|a partir d(?:e|es|u)?|avec|depuis|desde|aus|da|com)\b")
# Where a placed thing goes ("put my logo ON THE POSTERS"): the work after it is the target.
_PLACE_INTO = _folded("on onto to into in sur dans au aux")
_PLACE_VERBS = _folded(
    "use put add place insert include apply mets mettre ajoute ajouter rajoute utilise utiliser place insere applique"
)
# Words of the requests themselves, never a subject to look for in the index.
_CUE_WORDS = (
    _CREATE
    | _EDIT_VERBS
    | _MODIFIERS
    | _TIMED
    | _NEW
    | _ACK
    | _GREETING
    | _FILLER
    | _CONTRAST
    | _QUESTION_START
    | _COUNTS
    | _SERIES
    | _folded(
        """please pls plz svp stp merci also actually now then just bit little slightly version same style
        possible wondering wonder mind like want need love would voudrais aimerais veux besoin faut souhaite
        petit petite peu un une really again ones one last first second third dernier derniere premier
        premiere autre other day days time times fois jour jours week semaine month mois yesterday hier
        earlier before avant dia vez ayer gestern ieri ontem neulich please por favor bitte prego
        moi me lui leur them it they elle elles ils le la les eux ca cela ceci make"""
    )
)
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

_REPLIES = {
    "status": {
        "en": "“{title}” (task #{id}) is {state}.",
        "fr": "« {title} » (tâche n° {id}) : {state}.",
        "es": "«{title}» (tarea n.º {id}): {state}.",
        "de": "„{title}“ (Aufgabe #{id}): {state}.",
        "it": "«{title}» (attività n. {id}): {state}.",
        "pt": "«{title}» (tarefa n.º {id}): {state}.",
    },
    "status_none": {
        "en": "I see no task about that yet. Tell me what to make and I will start one.",
        "fr": "Je ne vois encore aucune tâche à ce sujet. Dites-moi quoi créer et je la lance.",
        "es": "Aún no veo ninguna tarea sobre eso. Dime qué hacer y la empiezo.",
        "de": "Dazu sehe ich noch keine Aufgabe. Sag mir, was ich machen soll, und ich lege los.",
        "it": "Non vedo ancora attività su questo. Dimmi cosa creare e la avvio.",
        "pt": "Ainda não vejo nenhuma tarefa sobre isso. Diga-me o que fazer e eu começo.",
    },
    "cannot": {
        "en": "I am Lomote's scripted router (offline, not a language model): I start and route work — images, "
        "posters, short videos, 3D models, documents, and series of them — change what your tasks made and "
        "report on them, but I cannot answer open questions.",
        "fr": "Je suis le routeur scripté de Lomote (hors ligne, pas un modèle de langage) : je lance et oriente "
        "le travail — images, affiches, courtes vidéos, modèles 3D, documents, et des séries de ceux-ci —, je "
        "modifie ce que vos tâches ont produit et j'en rends compte, mais je ne sais pas répondre aux questions "
        "ouvertes.",
        "es": "Soy el enrutador programado de Lomote (sin conexión, no un modelo de lenguaje): inicio y dirijo el "
        "trabajo e informo de tus tareas, pero no respondo preguntas abiertas.",
        "de": "Ich bin Lomotes geskripteter Router (offline, kein Sprachmodell): Ich starte und verteile Arbeit "
        "und berichte über deine Aufgaben, beantworte aber keine offenen Fragen.",
        "it": "Sono il router programmato di Lomote (offline, non un modello linguistico): avvio e indirizzo il "
        "lavoro e riferisco sulle tue attività, ma non rispondo a domande aperte.",
        "pt": "Sou o roteador programado do Lomote (offline, não um modelo de linguagem): inicio e encaminho o "
        "trabalho e informo sobre as suas tarefas, mas não respondo a perguntas abertas.",
    },
    "thanks": {
        "en": "You're welcome. Nothing more will run; I'm here when you need something else.",
        "fr": "Avec plaisir. Rien d'autre ne sera lancé ; je suis là quand vous aurez besoin d'autre chose.",
        "es": "De nada. No se ejecutará nada más; aquí estoy cuando necesites algo.",
        "de": "Gern geschehen. Es läuft nichts weiter; ich bin da, wenn du etwas brauchst.",
        "it": "Prego. Non verrà avviato altro; sono qui quando ti serve qualcosa.",
        "pt": "De nada. Nada mais será executado; estou aqui quando precisar de algo.",
    },
    "unclear": {
        "en": "I'm not sure what you would like me to do. Tell me what to make, or which work to change.",
        "fr": "Je ne vois pas bien ce que vous voulez que je fasse. Dites-moi quoi créer, ou quel travail modifier.",
        "es": "No sé bien qué quieres que haga. Dime qué crear o qué trabajo cambiar.",
        "de": "Ich weiß nicht genau, was ich tun soll. Sag mir, was ich machen oder welche Arbeit ich ändern soll.",
        "it": "Non ho capito cosa vuoi che faccia. Dimmi cosa creare o quale lavoro modificare.",
        "pt": "Não percebi o que quer que eu faça. Diga-me o que criar ou que trabalho alterar.",
    },
    "hello": {
        "en": "Hello! Tell me what you would like to make, or what to change in your work.",
        "fr": "Bonjour ! Dites-moi ce que vous voulez créer, ou ce qu'il faut changer dans votre travail.",
        "es": "¡Hola! Dime qué quieres crear o qué cambiar en tu trabajo.",
        "de": "Hallo! Sag mir, was du machen möchtest oder was an deiner Arbeit geändert werden soll.",
        "it": "Ciao! Dimmi cosa vuoi creare o cosa cambiare nel tuo lavoro.",
        "pt": "Olá! Diga-me o que quer criar ou o que mudar no seu trabalho.",
    },
}


def _reply(key: str, language: str, **values: Any) -> str:
    texts = _REPLIES[key]
    return texts.get(language, texts["en"]).format(**values)


# --- reading the message ------------------------------------------------------------------------------------


@dataclass
class Reading:
    """What a message asks, read from its words (no index involved)."""

    tokens: list[str]
    question: bool = False
    wh: bool = False
    request: bool = False  # a polite request, or a wish ("I'd like"): something is to be done
    capability: bool = False
    status: bool = False
    ack: bool = False
    greeting: bool = False
    creates: bool = False
    edit_verb: bool = False
    modifier: bool = False
    timed: bool = False
    new: bool = False
    back: bool = False
    transform: bool = False
    definite_kinds: set[str] = field(default_factory=set)
    indefinite_kinds: set[str] = field(default_factory=set)
    kinds: dict[str, float] = field(default_factory=dict)  # kind of work named → how much it says the target
    topic: list[str] = field(default_factory=list)  # content words that may name a task's subject
    definite_words: set[str] = field(default_factory=set)  # topic words said with "the", "my", "ces"…
    definite_series: bool = False  # "the juice bar series", "la série d'affiches"
    indefinite_topic: bool = False  # "a cat on a skateboard": something described to be made
    bare_kinds: set[str] = field(default_factory=set)  # works named without an article: "logo for my bakery"
    acknowledges: bool = False  # a word of thanks or approval, maybe among other words
    several: bool = False  # a series, a count or plural works

    @property
    def edits(self) -> bool:
        return self.edit_verb or self.modifier


def _determiner_before(tokens: list[str], index: int) -> str:
    """'definite', 'indefinite' or '' for the word at `index`, from the nearest determiner up to three words
    back ("the retro posters", "trois affiches", "une affiche")."""
    for back in range(1, 4):
        if index - back < 0:
            return ""
        word = tokens[index - back]
        if word in _INDEFINITE or word in _COUNTS or (word.isdigit() and word != "3d"):
            return "indefinite"
        if word in _DEFINITE:
            return "definite"
    return ""


def _ack_only(folded: str, tokens: list[str]) -> bool:
    """Thanks or approval with nothing asked: every word is one of thanks, filler, the work praised, or a
    function word — once closing phrases ("nothing more", "c'est tout") are taken out."""
    rest = words(_CLOSING.sub(" ", folded))
    if any(t in _CONTRAST for t in tokens):
        return False
    return all(
        t in _ACK or t in _GREETING or t in _FILLER or t in STOP_WORDS or t in _STATUS_WORDS or media_kind(t)
        for t in rest
    )


def read_message(message: str, language: str = "en") -> Reading:
    folded = fold(message)
    tokens = words(message)
    text = " ".join(tokens)
    token_set = set(tokens)
    stripped = message.strip()
    reading = Reading(tokens=tokens)
    first = tokens[0] if tokens else ""
    inverted = re.search(r"\b\w+-(?:tu|vous|il|elle|ils|elles|on)\b", message.lower()) is not None
    reading.question = stripped.endswith("?") or stripped.startswith("¿") or first in _QUESTION_START or inverted
    reading.wh = reading.question and (any(t in _WH for t in tokens[:3]) or text.startswith("qu est ce"))
    wants = bool(_WANT.search(text))
    reading.request = (bool(_REQUEST.search(text)) or wants) and not reading.wh
    reading.capability = reading.question and bool(_CAPABILITY.search(text))
    reading.request = reading.request and not reading.capability
    reading.status = (
        bool(_STATUS_PHRASE.search(text))
        or bool(token_set & _STATUS_WORDS)
        or any(t.startswith(_STATUS_PREFIXES) for t in tokens)
    )
    reading.creates = bool(token_set & _CREATE) or wants
    # A verb of changing right after an article is a noun ("a set of", "a quick fix"): not a change.
    reading.edit_verb = any(
        t in _EDIT_VERBS and (i == 0 or tokens[i - 1] not in _ARTICLES) for i, t in enumerate(tokens)
    )
    reading.modifier = bool(token_set & _MODIFIERS) or bool(re.search(r"\b\w+er (?:than|que)\b", text))
    # "Make it smile", "fais-le sourire", "make them pop": making something already there do or be otherwise.
    reading.modifier = reading.modifier or any(
        t in _CREATE and nxt in _OBJECT_PRONOUNS for t, nxt in zip(tokens, tokens[1:], strict=False)
    )
    reading.timed = bool(token_set & _TIMED)
    reading.new = bool(token_set & _NEW) and not re.search(r"\bl autre (?:fois|jour)\b", text)
    reading.back = bool(_BACK.search(text))
    greeting = bool(token_set & _GREETING)
    acknowledges = bool(token_set & _ACK) or bool(_CLOSING.search(text))
    reading.acknowledges = acknowledges
    if (acknowledges or greeting) and _ack_only(folded, tokens):
        reading.ack, reading.greeting = acknowledges, greeting and not acknowledges
    # "Turn X into a video", "animate X", "a video from the photo": a new work made from an existing one.
    transform = bool(token_set & _TRANSFORM_VERBS) and any(
        t in _INTO and any(media_kind(n) for n in tokens[i + 1 : i + 5]) for i, t in enumerate(tokens)
    )
    reading.transform = transform or bool(_ANIMATE.search(text))

    target_at = max((i for i, t in enumerate(tokens) if t in _PLACE_INTO), default=-1)
    placing = bool(token_set & _PLACE_VERBS) and target_at >= 0
    if placing and not any(media_kind(t) for t in tokens[target_at + 1 : target_at + 4]):
        placing = False
    if language != "fr" and placing and tokens[target_at] in ("au", "aux"):
        placing = False
    for i, token in enumerate(tokens):
        kind = media_kind(token)
        if kind is None:
            continue
        weight = 0.25 if placing and i < target_at else 1.0  # the logo put ON the posters is not the target
        reading.kinds[kind] = max(reading.kinds.get(kind, 0.0), weight)
        determiner = _determiner_before(tokens, i)
        if determiner == "definite":
            reading.definite_kinds.add(kind)
        elif determiner == "indefinite":
            reading.indefinite_kinds.add(kind)
        if token.endswith(("s", "x")) and not token.endswith("ss") and stem(token) != token:
            reading.several = True  # plural works: "posters", "affiches"
    # "A video from the photo", "une animation avec la photo du chat": a video made of existing work.
    creating = reading.creates or bool(reading.indefinite_kinds)
    sources = set(reading.kinds) - {"video"}
    from_source = bool(reading.definite_kinds - {"video"}) or bool(_SOURCE.search(text))
    if creating and sources and from_source and "video" in reading.kinds and "video" not in reading.definite_kinds:
        reading.transform = True
    numbers = [t for t in tokens if t.isdigit() and t != "3d"]
    # A number after a work is its number ("poster 2"), after "the"/"all" it counts existing ones ("all three").
    counts = [
        t
        for i, t in enumerate(tokens)
        if (t in _COUNTS or (t.isdigit() and t != "3d" and int(t) > 1))
        and not (i and (media_kind(tokens[i - 1]) or tokens[i - 1] in _DEFINITE or tokens[i - 1] in _ALL))
    ]
    counted = any(not t.isdigit() or not _DURATION.search(folded.replace(t, "#", 1)) for t in counts)
    conjoined = len(reading.kinds) > 1 and bool(token_set & _folded("and et y und e"))
    reading.several = reading.several or counted or conjoined or bool(token_set & _SERIES)
    reading.topic = [
        t
        for t in content_terms(message)
        if t not in _CUE_WORDS and not media_kind(t) and not t.isdigit() and len(t) > 2
    ]
    topics = set(reading.topic)
    # A work named with no article at all ("logo for my bakery", "vidéo de mon chien") is one to make.
    reading.bare_kinds = {
        media_kind(t) for i, t in enumerate(tokens) if media_kind(t) and not _determiner_before(tokens, i)
    } - reading.definite_kinds
    reading.indefinite_topic = any(
        stem(token) in topics and _determiner_before(tokens, i) == "indefinite" for i, token in enumerate(tokens)
    ) and not (reading.edits or reading.back)
    for i, token in enumerate(tokens):
        if (stem(token) in topics or token in _SERIES) and any(t in _DEFINITE for t in tokens[max(0, i - 3) : i]):
            if token in _SERIES:
                reading.definite_series = True
            else:
                reading.definite_words.add(stem(token))
    # "Can you make videos?", "what can you make?": asks what Lomote can do, names nothing to make.
    bare = not (reading.topic or reading.definite_kinds or reading.indefinite_kinds or numbers)
    if reading.question and reading.creates and bare and not reading.edits:
        if reading.wh or (reading.request and reading.kinds):
            reading.capability = True
            reading.request = False
    return reading


# --- matching the index -------------------------------------------------------------------------------------


def _entry_terms(entry: dict[str, Any]) -> tuple[dict[str, float], dict[str, float]]:
    """The entry's words and its kinds of work, each with the weight of the best field it appears in: the
    title (3), its artifacts' titles (2), the goal and summary (1)."""
    terms: dict[str, float] = {}
    kinds: dict[str, float] = {}
    fields = [
        (f"{entry.get('goal', '')} {entry.get('summary', '')}", 1.0),
        (" ".join(str(title) for _, title in entry.get("artifacts", [])), 2.0),
        (str(entry.get("title", "")), 3.0),
    ]
    for text, weight in fields:
        for term in content_terms(text):
            terms[term] = max(terms.get(term, 0.0), weight)
        for kind in kinds_in(text):
            kinds[kind] = max(kinds.get(kind, 0.0), weight)
    return terms, kinds


@dataclass
class Match:
    entry: dict[str, Any]
    score: float  # words and kinds of work in common, plus the index's similarity
    named: bool  # shares a word or a kind with the message, or the index finds it similar

    @property
    def id(self) -> int:
        return int(self.entry["id"])

    @property
    def status(self) -> str:
        return str(self.entry.get("status", ""))


def _idf(entries: list[tuple[dict[str, float], dict[str, float]]]) -> dict[str, float]:
    frequency: dict[str, int] = {}
    for terms, _ in entries:
        for term in terms:
            frequency[term] = frequency.get(term, 0) + 1
    n = len(entries)
    return {term: math.log((n + 1) / (count + 0.5)) + 0.1 for term, count in frequency.items()}


def match_entries(reading: Reading, index: list[dict[str, Any]]) -> list[Match]:
    """Every entry with its score, best first; ties go to the most recent activity, then the highest id."""
    described = [_entry_terms(entry) for entry in index]
    idf = _idf(described)
    matches = []
    for entry, (terms, kinds) in zip(index, described, strict=True):
        words_score = sum(terms[t] * idf.get(t, 0.0) for t in set(reading.topic) if t in terms)
        kinds_score = sum(KIND_WEIGHT * kinds[k] * w for k, w in reading.kinds.items() if k in kinds)
        similarity = max(float(entry.get("similarity", 0.0)), 0.0)
        named = words_score > 0 or kinds_score > 0 or similarity >= SIMILAR
        matches.append(Match(entry, words_score + kinds_score + SIMILARITY_WEIGHT * similarity, named))
    matches.sort(key=lambda m: (-m.score, _inverse(m.entry.get("last_activity", "")), -m.id))
    return matches


def _inverse(text: str) -> tuple[int, ...]:
    return tuple(-ord(ch) for ch in text)


def _close_to_best(matches: list[Match]) -> list[Match]:
    best = matches[0].score
    return [m for m in matches if m.score >= best - MARGIN and m.score * LEAD >= best]


def _narrow(group: list[Match], recent: list[dict[str, Any]]) -> list[Match]:
    """Among equally good entries: live before archived or cancelled, work in progress before finished work,
    then the task the conversation was last about."""
    live = [m for m in group if m.status not in CLOSED]
    group = live or group
    working = [m for m in group if m.status in IN_PROGRESS]
    if working and len(working) < len(group):
        group = working
    if len(group) > 1:
        last = _last_task(recent)
        chosen = [m for m in group if m.id == last]
        group = chosen or group
    return group


def _last_task(recent: list[dict[str, Any]]) -> int | None:
    for said in reversed(recent):
        if said.get("task"):
            return int(said["task"])
    return None


# --- the decision -------------------------------------------------------------------------------------------


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


def _title(message: str) -> str:
    """A task title from the person's words: the request's frame (politeness, "could you", "I'd like", verbs of
    making) and a closing "please" dropped, first letter up."""
    tokens = message.split()
    start = 0
    while start < len(tokens) - 1 and _leading(tokens[start]):
        start += 1
    title = _TRAILING_POLITENESS.sub("", " ".join(tokens[start:])).strip(" .!?¿¡") or message.strip()
    title = title[:1].upper() + title[1:]
    return title if len(title) <= 80 else title[:79].rsplit(" ", 1)[0] + "…"


LOOKUP_TOOL = "open_task"


def _looked_up(messages: list[dict[str, Any]]) -> tuple[set[int], dict[int, dict[str, Any]]]:
    """What this conversation already asked `open_task` for, and the details its answers carried, by task id."""
    asked: set[int] = set()
    opened: dict[int, dict[str, Any]] = {}
    for message in messages:
        for call in message.get("tool_calls") or []:
            function = call.get("function", {})
            if function.get("name") == LOOKUP_TOOL:
                try:
                    asked.add(int(json.loads(function.get("arguments") or "{}")["task"]))
                except (ValueError, TypeError, KeyError):
                    continue
        if message.get("role") == "tool":
            try:
                result = json.loads(message.get("content") or "")
            except ValueError:
                continue
            details = result.get("task") if isinstance(result, dict) else None
            if isinstance(details, dict) and isinstance(details.get("id"), int):
                opened[details["id"]] = details
    return asked, opened


def _details_text(details: dict[str, Any]) -> str:
    """Everything an opened task holds that a message may refer to."""
    parts = [str(details.get(key, "")) for key in ("title", "brief", "summary")]
    parts += [str(item.get("title", "")) for item in details.get("checklist", [])]
    for artifact in details.get("artifacts", []):
        parts += [str(artifact.get(key, "")) for key in ("kind", "title", "description")]
    parts += [str(text) for text in details.get("recent_messages", [])]
    return "\n".join(parts)


def decide_from_details(
    reading: Reading, candidates: list[int], opened: dict[int, dict[str, Any]]
) -> tuple[int, list[str]] | None:
    """The one candidate the message points at by what the opened tasks hold, and the words that chose it; None
    when the details do not tell them apart. Only what distinguishes counts: a word or kind every candidate holds
    says nothing, one that few hold says much (idf over the candidates)."""
    said = {term: 1.0 for term in reading.topic} | {f"kind:{k}": KIND_WEIGHT * w for k, w in reading.kinds.items()}
    if not said or len(candidates) < 2 or any(c not in opened for c in candidates):
        return None
    held = {}
    for task_id in candidates:
        text = _details_text(opened[task_id])
        held[task_id] = set(content_terms(text)) | {f"kind:{k}" for k in kinds_in(text)}
    n = len(candidates)
    scores: dict[int, float] = {}
    reasons: dict[int, list[str]] = {}
    for term, weight in said.items():
        holders = [t for t in candidates if term in held[t]]
        if not holders or len(holders) == n:
            continue
        rarity = math.log((n + 1) / (len(holders) + 0.5))
        for task_id in holders:
            scores[task_id] = scores.get(task_id, 0.0) + weight * rarity
            reasons.setdefault(task_id, []).append(term)
    ranked = sorted(scores.items(), key=lambda item: -item[1])
    if not ranked:
        return _closest_in_meaning(reading, candidates, opened)
    best_id, best = ranked[0]
    second = ranked[1][1] if len(ranked) > 1 else 0.0
    if second and (best < LEAD * second or best - second < MARGIN * 0.5):
        return None
    return best_id, reasons[best_id]


MEANING_LEAD = 0.15  # on search's common scale: how much closer the chosen task's closest line must be


def _detail_lines(details: dict[str, Any]) -> list[str]:
    """The details the index did not show, one line each: checklist items, artifacts, the person's messages."""
    lines = [str(item.get("title", "")) for item in details.get("checklist", [])]
    lines += [f"{a.get('title', '')}: {a.get('description', '')}" for a in details.get("artifacts", [])]
    lines += [str(text) for text in details.get("recent_messages", [])]
    return [line for line in lines if line.strip()]


def _closest_in_meaning(
    reading: Reading, candidates: list[int], opened: dict[int, dict[str, Any]]
) -> tuple[int, list[str]] | None:
    embedder = offline_embedder()
    lines = {task_id: _detail_lines(opened[task_id]) for task_id in candidates}
    if embedder is None or not all(lines.values()):
        return None
    texts = [" ".join(reading.tokens)] + [line for task_id in candidates for line in lines[task_id]]
    try:
        vectors = embedder.embed(texts)
    except EmbeddingFailed:
        return None
    scores = embedder.score(vectors[1:] @ vectors[0])
    best_line: dict[int, tuple[float, str]] = {}
    at = 0
    for task_id in candidates:
        mine = scores[at : at + len(lines[task_id])]
        top = int(mine.argmax())
        best_line[task_id] = (float(mine[top]), lines[task_id][top])
        at += len(lines[task_id])
    ranked = sorted(best_line.items(), key=lambda item: -item[1][0])
    (best_id, (best, line)), (_, (second, _)) = ranked[0], ranked[1]
    if best < embedder.related or best - second < MEANING_LEAD:
        return None
    return best_id, [f"meaning of “{line[:60]}”"]


class ScriptedRouter:
    """The offline Router. Reads `request.state` and the answers of its own look-ups in `request.messages`;
    answers with `open_task` calls (once, when candidates stay close) or one `route_message` call."""

    kind = "scripted_router"

    def complete(self, request: ModelRequest) -> ModelResponse:
        state = request.state
        message = state.get("message", "")
        if state.get("phase") == "duplicates":
            decision = self._duplicates(message, state.get("duplicates", []), state.get("index", []))
        else:
            decision = route(
                message,
                state.get("index", []),
                language=state.get("language", "en"),
                recent=state.get("recent", []),
            )
        candidates = [int(c) for c in decision.get("candidates", [])] if decision["route"] == "clarify" else []
        if len(candidates) >= 2:
            asked, opened = _looked_up(request.messages)
            offered = any(tool.name == LOOKUP_TOOL for tool in request.tools)
            left = int(state.get("lookups_left", 0))
            # One round of look-ups, only when every candidate can be opened: a choice among some is no choice.
            if offered and not asked & set(candidates) and len(candidates) <= left:
                calls = [ToolCallIntent(id=f"open-{c}", name=LOOKUP_TOOL, arguments={"task": c}) for c in candidates]
                return ModelResponse(text="", tool_calls=calls, usage=Usage(), model=MODEL_NAME)
            chosen = decide_from_details(read_message(message, state.get("language", "en")), candidates, opened)
            if chosen is not None:
                task_id, terms = chosen
                decision = {
                    "route": "follow_up",
                    "task": task_id,
                    "refers_to_existing": True,
                    "reason": "its details hold what the message names: " + ", ".join(terms[:4]),
                }
        return ModelResponse(
            text="",
            tool_calls=[ToolCallIntent(id="route-1", name="route_message", arguments=decision)],
            usage=Usage(),
            model=MODEL_NAME,
        )

    def _duplicates(
        self, message: str, duplicates: list[dict[str, Any]], index: list[dict[str, Any]]
    ) -> dict[str, Any]:
        if not duplicates:
            return {"route": "new_task", "reason": "no duplicate"}
        # A subject none of the similar tasks has ("posters for a bakery called Miel" beside the café's
        # posters) makes it another goal, however alike the rest of the words are.
        entries = {int(e["id"]): e for e in index}
        reading = read_message(message)
        for duplicate in duplicates:
            entry = entries.get(int(duplicate["id"]), {"title": duplicate.get("title", "")})
            terms, _ = _entry_terms(entry)
            if all(t in terms for t in reading.topic):
                break
        else:
            if reading.topic:
                return {"route": "new_task", "title": _title(message), "reason": "a subject no similar task has"}
        ranked = sorted(duplicates, key=lambda d: -float(d.get("similarity", 0.0)))
        best = ranked[0]
        close = [d for d in ranked if float(d.get("similarity", 0.0)) >= float(best["similarity"]) - CLOSE_DUPLICATES]
        if len(close) == 1 and float(best["similarity"]) >= SURE_DUPLICATE:
            return {"route": "follow_up", "task": best["id"], "reason": "same goal as an in-progress task"}
        return {
            "route": "clarify",
            "candidates": [d["id"] for d in ranked[:CLARIFY_MAX]],
            "reason": "looks like in-progress work",
        }


def route(
    message: str, index: list[dict[str, Any]], *, language: str = "en", recent: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The scripted decision for one message (the arguments of a route_message call)."""
    recent = recent or []
    reading = read_message(message, language)
    matches = match_entries(reading, index)
    named = [m for m in matches if m.named]

    if reading.ack or reading.greeting:
        return {
            "route": "answer",
            "reply": _reply("hello" if reading.greeting else "thanks", language),
            "reason": "thanks",
        }

    if reading.question and not reading.request:
        return _question(reading, matches, named, language, message, recent)

    if reading.transform:
        return {
            "route": "new_task",
            "title": _title(message),
            "refers_to_existing": True,
            "reason": "a new work made from an existing one",
        }

    creating = reading.creates or bool(reading.indefinite_kinds) or (reading.several and not reading.definite_kinds)
    if reading.new and not reading.edit_verb and creating:
        return _create(message, reading, "a new work")
    names_existing = bool(named) and (
        bool(reading.definite_kinds & _named_kinds(named))
        or reading.definite_series
        or any(_names_in_title(word, named) for word in reading.definite_words)
    )
    if reading.edits or reading.back or (names_existing and not reading.indefinite_kinds):
        decision = _existing(reading, matches, named, recent)
        if decision is not None:
            return decision
    if creating or reading.indefinite_topic or reading.bare_kinds:
        return _create(message, reading, "a request to make something")
    # No verb, no kind of work made new: a fragment about work the index shows ("the slogan in French").
    if named or reading.definite_words or reading.definite_kinds:
        decision = _existing(reading, matches, named, recent)
        if decision is not None:
            return decision
    if reading.acknowledges:
        return {"route": "answer", "reply": _reply("thanks", language), "reason": "thanks"}
    return {"route": "answer", "reply": _reply("unclear", language), "reason": "asks nothing I can see"}


def _names_in_title(word: str, named: list[Match]) -> bool:
    """Whether a word said with "the" is in the title of a named task or of its work ("the cat" → "Ginger cat")."""
    for match in named:
        terms, _ = _entry_terms(match.entry)
        if terms.get(word, 0.0) >= 2.0:
            return True
    return False


def _named_kinds(named: list[Match]) -> set[str]:
    kinds: set[str] = set()
    for match in named:
        kinds |= set(_entry_terms(match.entry)[1])
    return kinds


def _create(message: str, reading: Reading, reason: str) -> dict[str, Any]:
    return {
        "route": "new_task" if reading.several or reading.transform else "lightweight",
        "title": _title(message),
        "reason": reason,
    }


def _existing(
    reading: Reading, matches: list[Match], named: list[Match], recent: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """The task a change or a reference is about, or a clarification; None when there is nothing to choose."""
    if named:
        group = _narrow(_close_to_best(named), recent)
        if len(group) == 1:
            return {
                "route": "follow_up",
                "task": group[0].id,
                "refers_to_existing": True,
                "reason": f"names this task's work (score {group[0].score:.1f})",
            }
        return {
            "route": "clarify",
            "candidates": [m.id for m in group[:CLARIFY_MAX]],
            "reason": "several tasks fit equally",
        }
    plausible = [m for m in matches if m.status not in CLOSED]
    if not plausible:
        return None
    if reading.kinds and not reading.edits and not set(reading.kinds) & _named_kinds(plausible):
        return None  # it names a kind of work none of these tasks made: something else
    last = _last_task(recent)
    pick = [m for m in plausible if m.id == last]
    if not pick and len(plausible) == 1:
        pick = plausible
    if not pick and reading.timed:
        lasting = [m for m in plausible if "video" in _entry_terms(m.entry)[1]]
        pick = lasting if len(lasting) == 1 else []
    if pick:
        return {
            "route": "follow_up",
            "task": pick[0].id,
            "refers_to_existing": True,
            "reason": "the only task it can be about" if pick == plausible else "the task the conversation is about",
        }
    by_recency = sorted(plausible, key=lambda m: (_inverse(m.entry.get("last_activity", "")), -m.id))
    return {
        "route": "clarify",
        "candidates": [m.id for m in by_recency[:CLARIFY_MAX]],
        "reason": "names no task, and several are possible",
    }


def _question(
    reading: Reading,
    matches: list[Match],
    named: list[Match],
    language: str,
    message: str,
    recent: list[dict[str, Any]],
) -> dict[str, Any]:
    if reading.capability:
        return {"route": "answer", "reply": _reply("cannot", language), "reason": "a question about Lomote"}
    if reading.status and not reading.edits:
        group = _narrow(_close_to_best(named), recent) if named else []
        if not group and len([m for m in matches if m.status not in CLOSED]) == 1 and not reading.topic:
            group = [m for m in matches if m.status not in CLOSED]
        if not group:
            return {"route": "answer", "reply": _reply("status_none", language), "reason": "status of nothing"}
        replies = []
        for match in group[:CLARIFY_MAX]:
            state = match.entry.get("state") or match.status
            replies.append(_reply("status", language, title=match.entry["title"], id=match.id, state=state))
        return {"route": "answer", "reply": " ".join(replies), "reason": "a question about how work is going"}
    if (reading.edits or reading.creates or reading.indefinite_kinds) and not reading.wh:
        # "Is it possible…" without the usual words of a request still asks for something to be done.
        decision = _existing(reading, matches, named, recent) if named or reading.edits else None
        if decision is not None:
            return decision
        if reading.creates and not (reading.topic or reading.indefinite_kinds or reading.several):
            return {"route": "answer", "reply": _reply("cannot", language), "reason": "a question about Lomote"}
        return _create(message, reading, "a request to make something")
    if named and (reading.definite_kinds or reading.topic):
        group = _narrow(_close_to_best(named), recent)
        if len(group) == 1:
            return {
                "route": "follow_up",
                "task": group[0].id,
                "refers_to_existing": True,
                "reason": "a question about this task's work",
            }
    return {"route": "answer", "reply": _reply("cannot", language), "reason": "an open question"}
