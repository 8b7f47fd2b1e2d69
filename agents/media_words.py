"""The studio's kinds of work named in six languages, for matching words to work (not for routing).

Guide matching (agents/scripted/guide_match.py) and Main's check for a deleted artifact a message names
(agents/main/messages.py) compare the words of a text with the kinds of work an artifact or guide is about:
"affiches", "posters" and "carteles" are one kind. The Router does not read these words: it routes by meaning
(lomote/understanding).
"""

import functools

from agents.language import fold, stem, words

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
