"""The words the scripted extractor reads statements with, in English and French (lower case, as typed).

Closed classes (determiners, pronouns, prepositions, markers) are listed in full for both languages. Open
classes are kept small and general: the nouns a creative studio's statements are about (to give a subject
one canonical English name, so "la couleur principale" and "the main colour" meet), and the value words that
say which *aspect* of a thing a statement sets (a colour, a position, a size, a case, a language), so "put
the logo bottom right" is about the logo's position. A word outside every list is still read: it is a
content word, kept as typed (singular).
"""


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _canonical(groups: dict[str, str]) -> dict[str, str]:
    """{"canonical": "variant variant …"} → {variant: canonical}, the canonical word included."""
    mapping: dict[str, str] = {}
    for canonical, variants in groups.items():
        mapping[canonical] = canonical
        for variant in variants.split():
            mapping[variant] = canonical
    return mapping


# --- closed classes ----------------------------------------------------------------------------------------

DETERMINERS = _words(
    """a an the some any every each all both several no another
    le la les l' un une des du de d' chaque quelques plusieurs tout toute tous toutes aucun aucune"""
)
# Possessives say whose the thing is, which sets the scope: the team's (workspace) or the speaker's (person).
OUR = _words("our ours notre nos")
MY = _words("my mine mon ma mes")
OTHER_POSSESSIVES = _words("your his her their its ton ta tes son sa ses votre vos leur leurs")
# Pointing at the work at hand ("this poster", "cette affiche"): feedback on it, not a durable statement.
DEMONSTRATIVES = _words("this that these those ce cet cette ces ceci cela ça celle-ci celui-ci celles-ci ceux-ci")
PRONOUNS = _words("it them one ones something anything everything that this ça cela ceci celle celui lui")
ADVERBS = _words(
    """very really quite rather too so pretty slightly fairly more less most least much generally usually
    mostly also still just definitely honestly actually personally overall now
    très vraiment plutôt assez trop si bien beaucoup plus moins peu généralement souvent surtout aussi
    encore franchement personnellement maintenant désormais"""
)
NEGATIONS = _words("not don't do doesn't no ne n' pas plus")
FILLERS = _words(
    """and also so ok okay btw oh well anyway then generally usually overall
    et aussi alors bon bref sinon donc d'ailleurs généralement"""
)
# Multi-word fillers that open a sentence and mean "as a rule" (they make it no more and no less durable).
OPENERS = (
    ("in", "general"),
    ("as", "a", "rule"),
    ("by", "the", "way"),
    ("en", "général"),
    ("en", "règle", "générale"),
    ("d'", "habitude"),
    ("de", "manière", "générale"),
    ("de", "façon", "générale"),
)

# Prepositions end a noun phrase's head. Those that say what or whom the thing is of, for or on keep their
# object in the subject ("fonts for titles" is about title fonts); the others (in, with, as…) carry a value
# ("titles in uppercase" sets the titles' case).
SUBJECT_PREPOSITIONS = _words("of for on onto over under above below behind about to de du des d' pour sur sous")
VALUE_PREPOSITIONS = _words("in with without at as like into by en avec sans à au aux comme par dans")
PREPOSITIONS = SUBJECT_PREPOSITIONS | VALUE_PREPOSITIONS
# A relative clause or a comparison ends the noun phrase a statement is about.
CLAUSE_BREAKS = _words("that which who whose than rather instead qui que qu' dont plutôt")

COPULAS = _words("is are est sont")
MODALS = _words("should must can could would will shall may might be doit doivent devrait devraient faut être")
SPEAKER_I = _words("i je j'")
SPEAKER_WE = _words("we on nous")

# --- markers ---------------------------------------------------------------------------------------------

# Verbs of taste after a speaker ("I prefer", "on aime"); negative ones keep the subject, the content says no.
PREFERENCE_VERBS = _words(
    """prefer like love enjoy adore hate dislike favour favor
    préfère préférons préfèrent aime aimons aiment adore adorons adorent déteste détestons détestent"""
)
# A durable rule: "always …", "never …", "toujours …", "jamais …".
RULE_MARKERS = _words("always never ever toujours jamais systematically systématiquement")
# A one-off: "this time", "just for this one", "cette fois", "pour celle-ci" — and "for this <work>".
ONE_OFF_PHRASES = (
    ("just", "this", "once"),
    ("this", "once"),
    ("this", "time"),
    ("only", "this", "time"),
    ("for", "now"),
    ("for", "this", "one"),
    ("on", "this", "one"),
    ("cette", "fois"),
    ("cette", "fois-ci"),
    ("pour", "cette", "fois"),
    ("pour", "celle-ci"),
    ("pour", "celui-ci"),
    ("pour", "celles-ci"),
    ("pour", "ceux-ci"),
    ("sur", "celle-ci"),
    ("sur", "celui-ci"),
    ("pour", "l'", "instant"),
    ("pour", "le", "moment"),
)
ONE_OFF_FOR = _words("for pour sur on")  # "for this poster", "pour cette affiche": a preposition …
ONE_OFF_THIS = _words("this these ce cet cette ces")  # … a demonstrative and the work it points at
ONE_OFF_LEADS = _words("just only juste seulement uniquement")
# Statements that judge how a value looks or works ("blue with an off-white feels softer"): with a known
# memory's value in them, they add to that memory.
EVALUATIVE_VERBS = _words(
    """feel feels look looks seem seems work works go goes pair pairs match matches read reads sound sounds
    donne donnent rend rendent va vont marche marchent fonctionne fonctionnent semble semblent paraît
    passe passent"""
)
# Words of a speaker's favourite: they make a statement a preference and are not part of its subject.
FAVOURITE = _words("favourite favorite preferred préféré préférée préférés préférées favori favorite favoris")
# Words that start an imperative politely; dropped before its verb.
POLITE = _words("please pls kindly let's let us s'il te vous plaît stp svp merci")

# Verbs that open imperatives and rules (the first word of "use serif fonts", "mets le logo …"). A first word
# followed by a determiner is read as a verb too, and French infinitives/imperatives by their ending.
VERBS = _words(
    """use put place keep add make write show include start end avoid mention set give apply choose pick leave
    align center centre try go sign capitalise capitalize display stick
    utilise utilisez utiliser mets mettez mettre met place placez placer garde gardez garder ajoute ajoutez
    ajouter fais faites faire écris écrivez écrire montre montrez montrer inclus inclure commence commencer
    évite évitez éviter choisis choisissez choisir aligne alignez aligner essaie essayez essayons essayer
    prends prenez prendre signe signez signer centre centrez centrer"""
)
# Verbs that already say which aspect the rule sets.
VERB_ASPECTS = {
    "center": "position",
    "centre": "position",
    "align": "position",
    "centrer": "position",
    "centrez": "position",
    "aligne": "position",
    "alignez": "position",
    "aligner": "position",
    "capitalise": "case",
    "capitalize": "case",
}
# French pre-nominal adjectives: the head noun comes after them ("un joli bleu").
FRENCH_PRENOMINAL = _words(
    """grand grande grands grandes petit petite petits petites beau belle beaux belles joli jolie jolis jolies
    bon bonne bons bonnes nouveau nouvelle nouveaux nouvelles vieux vieille gros grosse long longue jeune
    premier première dernier dernière seul seule même autre autres"""
)
LANGUAGE_MARKERS = {
    "fr": _words(
        """le la les l' un une des du d' est sont et je j' nous notre nos on pour avec cette cet ces mais très
        qu' c' n' aime préfère toujours jamais fois ça"""
    ),
    "en": _words(
        """the a an is are and i we our for with this these but very my like prefer always never time it's
        don't of"""
    ),
}

# --- open classes: canonical names ----------------------------------------------------------------------

# A subject's words in one canonical English form (plural and French forms map to it).
NOUNS = _canonical(
    {
        "colour": "color colours colors couleur couleurs teinte teintes hue hues",
        "font": "fonts typeface typefaces police polices typo",
        "typography": "typographie",
        "background": "backgrounds fond fonds arrière-plan",
        "title": "titles titre titres heading headings headline headlines",
        "text": "texts texte textes copy",
        "logo": "logos",
        "palette": "palettes",
        "tone": "tones ton",
        "tagline": "taglines slogan slogans accroche baseline motto devise",
        "brand": "brands brand's marque marques",
        "format": "formats",
        "layout": "layouts maquette maquettes",
        "poster": "posters affiche affiches",
        "video": "videos vidéo vidéos",
        "image": "images visuel visuels visual visuals illustration illustrations",
        "photo": "photos photographie photographies",
        "gradient": "gradients dégradé dégradés",
        "face": "faces visage visages",
        "style": "styles",
        "audience": "audiences public cible",
        "language": "languages langue langues",
        "size": "sizes taille tailles",
        "position": "positions emplacement placement",
        "shadow": "shadows ombre ombres",
        "border": "borders bordure bordures",
        "icon": "icons icône icônes",
        "button": "buttons bouton boutons",
        "name": "names nom noms",
        "mascot": "mascots mascotte mascottes",
        "signature": "signatures",
        "caption": "captions légende légendes",
        "margin": "margins marge marges",
        "animation": "animations",
        "music": "musique",
        "voice": "voices voix",
        "character": "characters personnage personnages",
        "product": "products produit produits",
        "main": "primary principal principale principaux principales dominant dominante",
        "secondary": "secondaire secondaires",
        "accent": "accents",
    }
)
# Nouns and qualifiers that name a part of the work: in "serif title fonts", "title" belongs to the subject
# while "serif" is the value.
SUBJECT_WORDS = frozenset(NOUNS.values())

# --- open classes: aspects and their values ------------------------------------------------------------

COLOURS = _canonical(
    {
        "blue": "bleu bleue bleus bleues",
        "green": "vert verte verts vertes",
        "red": "rouge rouges",
        "yellow": "jaune jaunes",
        "orange": "oranges",
        "purple": "violet violette violets violettes",
        "pink": "rose roses",
        "black": "noir noire noirs noires",
        "white": "blanc blanche blancs blanches",
        "grey": "gray gris grise grises",
        "brown": "marron brun brune bruns brunes",
        "beige": "beiges",
        "navy": "marine",
        "teal": "sarcelle",
        "turquoise": "turquoises",
        "gold": "golden doré dorée dorés",
        "silver": "argent argenté argentée",
        "cream": "crème",
        "ivory": "ivoire",
        "coral": "corail",
        "cyan": "",
        "magenta": "",
        "indigo": "",
        "burgundy": "bordeaux",
        "olive": "",
        "lavender": "lavande",
        "khaki": "kaki",
        "ochre": "ocre",
        "pastel": "pastels",
        "dark": "foncé foncée foncés foncées sombre sombres",
        "pale": "pâle pâles",
    }
)
POSITIONS = _canonical(
    {
        "top": "haut upper",
        "bottom": "bas lower",
        "left": "gauche",
        "right": "droite",
        "centre": "center centered centred centré centrée milieu middle",
        "corner": "corners coin coins angle",
    }
)
SIZES = _canonical(
    {
        "big": "bigger large larger huge grand grande grands grandes gros grosse énorme",
        "small": "smaller tiny little petit petite petits petites minuscule",
    }
)
CASES = _canonical(
    {
        "uppercase": "capitals caps majuscules majuscule capitales",
        "lowercase": "minuscules minuscule",
    }
)
LANGUAGES = _canonical(
    {
        "english": "anglais",
        "french": "français",
        "spanish": "espagnol",
        "german": "allemand",
        "italian": "italien",
    }
)
# aspect → its values; a statement whose value is one of these sets that aspect of its thing.
ASPECTS: dict[str, dict[str, str]] = {
    "colour": COLOURS,
    "position": POSITIONS,
    "size": SIZES,
    "case": CASES,
    "language": LANGUAGES,
}
