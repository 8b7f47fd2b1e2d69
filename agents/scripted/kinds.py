"""The kind of work a request asks for, and its format, read by meaning (DESIGN §15) for the scripted planner.

The understanding layer's `kind` decision (lomote/understanding, trained on banks/kind.yaml) reads a request and
answers a label — image, poster, logo, sticker, icon, social_post, story_cover, banner, video, model_3d, document,
flow, unsupported — with a confidence, or abstains ("ask") with its likely labels. This module turns a label into
what the planner does with it: the tool that makes it and the format the result takes (a social post is square,
a story cover 9:16, a banner wide, a poster portrait, a logo, sticker or icon square), and the names the planner
gives it in titles and on cards, in the person's language. No word of the request is looked up here.
"""

import functools
import re

from lomote.understanding import Decision, decide

IMAGE_LABELS = ("image", "poster", "logo", "sticker", "icon", "social_post", "story_cover", "banner")
MAKEABLE = (*IMAGE_LABELS, "video", "model_3d", "document")
UNSUPPORTED = "unsupported"
FLOW = "flow"
# The planner's choices when the decision abstains: the ranking's likely kinds, else these.
FALLBACK_CHOICES = ("image", "video", "document")
# A part of a listed request ("a poster, a flyer and a video") is a piece of its own only when read this surely;
# below it, the "and" is inside the subject ("Terre & Feu", "salt and pepper").
PART_CONFIDENCE = 0.4


# The image format each kind takes (generate_image's `format`; agents/tools/generation.py sizes it).
FORMAT_OF_LABEL = {
    "social_post": "square",
    "story_cover": "story",
    "banner": "wide",
    "poster": "portrait",  # the renderer's default, said anyway: a poster is portrait whatever it shows
    "logo": "logo",
    "sticker": "square",
    "icon": "square",
}

# label → (singular, plural), for titles ("Social post 1 of 3 — winter pottery classes") and cards.
LABEL_NAMES: dict[str, dict[str, tuple[str, str]]] = {
    "en": {
        "image": ("image", "images"),
        "poster": ("poster", "posters"),
        "logo": ("logo", "logos"),
        "sticker": ("sticker", "stickers"),
        "icon": ("icon", "icons"),
        "social_post": ("social post", "social posts"),
        "story_cover": ("story cover", "story covers"),
        "banner": ("banner", "banners"),
        "video": ("video", "videos"),
        "model_3d": ("3D model", "3D models"),
        "document": ("document", "documents"),
        "flow": ("Flow", "Flows"),
    },
    "fr": {
        "image": ("image", "images"),
        "poster": ("affiche", "affiches"),
        "logo": ("logo", "logos"),
        "sticker": ("autocollant", "autocollants"),
        "icon": ("icône", "icônes"),
        "social_post": ("publication", "publications"),
        "story_cover": ("couverture de story", "couvertures de story"),
        "banner": ("bannière", "bannières"),
        "video": ("vidéo", "vidéos"),
        "model_3d": ("modèle 3D", "modèles 3D"),
        "document": ("document", "documents"),
        "flow": ("Flow", "Flows"),
    },
    "de": {
        "image": ("Bild", "Bilder"),
        "poster": ("Plakat", "Plakate"),
        "logo": ("Logo", "Logos"),
        "sticker": ("Sticker", "Sticker"),
        "icon": ("Icon", "Icons"),
        "social_post": ("Social-Media-Post", "Social-Media-Posts"),
        "story_cover": ("Story-Cover", "Story-Cover"),
        "banner": ("Banner", "Banner"),
        "video": ("Video", "Videos"),
        "model_3d": ("3D-Modell", "3D-Modelle"),
        "document": ("Dokument", "Dokumente"),
        "flow": ("Flow", "Flows"),
    },
    "es": {
        "image": ("imagen", "imágenes"),
        "poster": ("cartel", "carteles"),
        "logo": ("logotipo", "logotipos"),
        "sticker": ("pegatina", "pegatinas"),
        "icon": ("icono", "iconos"),
        "social_post": ("publicación", "publicaciones"),
        "story_cover": ("portada de historia", "portadas de historia"),
        "banner": ("banner", "banners"),
        "video": ("vídeo", "vídeos"),
        "model_3d": ("modelo 3D", "modelos 3D"),
        "document": ("documento", "documentos"),
        "flow": ("Flow", "Flows"),
    },
    "pt": {
        "image": ("imagem", "imagens"),
        "poster": ("cartaz", "cartazes"),
        "logo": ("logótipo", "logótipos"),
        "sticker": ("autocolante", "autocolantes"),
        "icon": ("ícone", "ícones"),
        "social_post": ("publicação", "publicações"),
        "story_cover": ("capa de story", "capas de story"),
        "banner": ("banner", "banners"),
        "video": ("vídeo", "vídeos"),
        "model_3d": ("modelo 3D", "modelos 3D"),
        "document": ("documento", "documentos"),
        "flow": ("Flow", "Flows"),
    },
}
# On the card asking which kind of work: "A social post", "Une publication", "Ein Plakat", "Una pegatina".
_FEMININE = {
    "fr": frozenset({"image", "poster", "icon", "social_post", "story_cover", "banner", "video"}),
    "es": frozenset({"image", "sticker", "social_post", "story_cover"}),
    "pt": frozenset({"image", "social_post", "story_cover"}),
}
_ARTICLES = {"fr": ("Un", "Une"), "es": ("Un", "Una"), "pt": ("Um", "Uma")}
# The word between the number and the count in a series title ("Poster 2 of 3"), in any language the planner speaks.
OF_WORDS = ("of", "sur", "von", "de")


@functools.lru_cache(maxsize=1024)
def kind_read(text: str) -> Decision:
    """The kind decision for a text (cached: the planner reads the same brief and titles several times a turn)."""
    return decide("kind", text)


def label_of(text: str, *, confidence: float = 0.0) -> str | None:
    """The kind a text asks for when the decision answers (at least `confidence` sure), else None."""
    if not (text or "").strip():
        return None
    decision = kind_read(" ".join(text.split()))
    if decision.abstained or decision.confidence < confidence:
        return None
    return decision.label


def format_of(label: str | None) -> str | None:
    return FORMAT_OF_LABEL.get(label or "")


def label_name(label: str, lang: str, *, plural: bool = False) -> str:
    names = LABEL_NAMES.get(lang, LABEL_NAMES["en"])
    return names.get(label, LABEL_NAMES["en"].get(label, (label, label)))[int(plural)]


def choice(label: str, lang: str) -> str:
    """A kind as an option on a card: "A social post", "Une publication"."""
    name = label_name(label, lang)
    if lang in _ARTICLES:
        masculine, feminine = _ARTICLES[lang]
        return f"{feminine if label in _FEMININE[lang] else masculine} {name}"
    if lang == "de":  # every kind's German name is neuter or masculine
        return f"Ein {name}"
    return f"{'An' if name[:1].lower() in 'aeiou' else 'A'} {name}"


def label_chosen(answer: str, lang: str) -> str | None:
    """The kind a person chose on the planner's own card (its option text read back), else None."""
    wanted = " ".join(answer.split()).casefold().rstrip(".")
    for label in (*MAKEABLE, FLOW):
        for language in dict.fromkeys((lang, "en")):
            if choice(label, language).casefold() == wanted:
                return label
    return None


def titled_label(title: str, lang: str) -> str | None:
    """The kind named at the start of one of the planner's own titles ("Social post 2 of 3 — …"), else None."""
    head = " ".join(title.split(" — ", 1)[0].split()).casefold()
    of = "|".join(OF_WORDS)
    for language in dict.fromkeys((lang if lang in LABEL_NAMES else "en", "en", "fr")):
        for label, (singular, _plural) in LABEL_NAMES[language].items():
            if re.fullmatch(re.escape(singular.casefold()) + rf"(?: \d+(?: (?:{of}) \d+)?)?", head):
                return label
    return None


def likely_choices(decision: Decision, *, unsupported: bool = False) -> list[str]:
    """The labels a card offers when the decision abstains: its ranking's makeable kinds, else the usual three.
    For unsupported work, always three: the nearest makeable kinds, then the usual ones."""
    ranked = [label for label, _p in decision.ranking if label in MAKEABLE]
    if unsupported:
        ranked += [label for label in FALLBACK_CHOICES if label not in ranked]
    return ranked[:3] or list(FALLBACK_CHOICES)
