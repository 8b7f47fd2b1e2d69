"""A skeleton for prose the scripted planner cannot write: the brief, then headings to fill in.

Deterministic and honest: it never pretends to be the text. The headings are the brief's own when it lists
them ("a bio covering: early years, career and awards", or one line per part), else those that usually
structure that kind of text (an email: subject, greeting, message, call to action, sign-off).
"""

import re

MAX_HEADINGS = 10
MAX_HEADING = 80

# (words naming a kind of text, its usual headings per language); the first row whose word appears wins.
HEADINGS: tuple[tuple[frozenset[str], dict[str, list[str]]], ...] = (
    (
        frozenset("email mail courriel correo newsletter letter lettre carta boletín".split()),
        {
            "en": ["Subject", "Greeting", "Message", "Call to action", "Sign-off"],
            "fr": ["Objet", "Salutation", "Message", "Appel à l’action", "Formule de politesse"],
            "de": ["Betreff", "Anrede", "Nachricht", "Handlungsaufforderung", "Grußformel"],
            "es": ["Asunto", "Saludo", "Mensaje", "Llamada a la acción", "Despedida"],
            "pt": ["Assunto", "Saudação", "Mensagem", "Apelo à ação", "Despedida"],
        },
    ),
    (
        frozenset("slogan tagline headline accroche eslogan lema titular überschrift".split()),
        {
            "en": ["Candidates", "Tone", "Recommendation"],
            "fr": ["Propositions", "Ton", "Recommandation"],
            "de": ["Vorschläge", "Ton", "Empfehlung"],
            "es": ["Propuestas", "Tono", "Recomendación"],
            "pt": ["Propostas", "Tom", "Recomendação"],
        },
    ),
    (
        frozenset("caption légende leyenda bildunterschrift tweet".split()),
        {
            "en": ["Caption", "Hashtags", "Alt text"],
            "fr": ["Légende", "Hashtags", "Texte alternatif"],
            "de": ["Bildunterschrift", "Hashtags", "Alternativtext"],
            "es": ["Pie de foto", "Hashtags", "Texto alternativo"],
            "pt": ["Legenda", "Hashtags", "Texto alternativo"],
        },
    ),
    (
        frozenset("bio biography biographie biografie biografía".split()),
        {
            "en": ["Who", "Background", "Highlights", "Contact"],
            "fr": ["Qui", "Parcours", "Temps forts", "Contact"],
            "de": ["Wer", "Werdegang", "Höhepunkte", "Kontakt"],
            "es": ["Quién", "Trayectoria", "Momentos destacados", "Contacto"],
            "pt": ["Quem", "Percurso", "Destaques", "Contacto"],
        },
    ),
    (
        frozenset("press communiqué pressemitteilung comunicado announcement annonce".split()),
        {
            "en": ["Headline", "Lead paragraph", "Quote", "About", "Contact"],
            "fr": ["Titre", "Chapeau", "Citation", "À propos", "Contact"],
            "de": ["Schlagzeile", "Vorspann", "Zitat", "Über uns", "Kontakt"],
            "es": ["Titular", "Entradilla", "Cita", "Acerca de", "Contacto"],
            "pt": ["Título", "Lead", "Citação", "Sobre", "Contacto"],
        },
    ),
    (
        frozenset("summary summarise summarize résumé résume résumer zusammenfassung resumen resumir".split()),
        {
            "en": ["Key points", "Details", "Conclusion"],
            "fr": ["Points clés", "Détails", "Conclusion"],
            "de": ["Kernpunkte", "Details", "Fazit"],
            "es": ["Puntos clave", "Detalles", "Conclusión"],
            "pt": ["Pontos-chave", "Detalhes", "Conclusão"],
        },
    ),
    (
        frozenset("translation translate traduction traduis traduire übersetzung übersetze traducción traduce".split()),
        {
            "en": ["Source text", "Translation", "Notes"],
            "fr": ["Texte source", "Traduction", "Notes"],
            "de": ["Ausgangstext", "Übersetzung", "Anmerkungen"],
            "es": ["Texto original", "Traducción", "Notas"],
            "pt": ["Texto original", "Tradução", "Notas"],
        },
    ),
    (
        frozenset("script screenplay scénario scenario guion guión drehbuch skript speech discours rede".split()),
        {
            "en": ["Opening", "Development", "Closing"],
            "fr": ["Ouverture", "Développement", "Conclusion"],
            "de": ["Einstieg", "Hauptteil", "Schluss"],
            "es": ["Apertura", "Desarrollo", "Cierre"],
            "pt": ["Abertura", "Desenvolvimento", "Fecho"],
        },
    ),
    (
        frozenset("description descriptions fiche beschreibung produktbeschreibung descripción blurb".split()),
        {
            "en": ["Headline", "What it is", "Why it matters", "Details", "Call to action"],
            "fr": ["Accroche", "Ce que c’est", "Pourquoi c’est important", "Détails", "Appel à l’action"],
            "de": ["Aufhänger", "Was es ist", "Warum es wichtig ist", "Details", "Handlungsaufforderung"],
            "es": ["Gancho", "Qué es", "Por qué importa", "Detalles", "Llamada a la acción"],
            "pt": ["Chamada", "O que é", "Porque importa", "Detalhes", "Apelo à ação"],
        },
    ),
    (
        frozenset("article blog essay essai report rapport bericht informe artikel artículo aufsatz ensayo".split()),
        {
            "en": ["Introduction", "Main points", "Conclusion"],
            "fr": ["Introduction", "Points principaux", "Conclusion"],
            "de": ["Einleitung", "Hauptpunkte", "Fazit"],
            "es": ["Introducción", "Puntos principales", "Conclusión"],
            "pt": ["Introdução", "Pontos principais", "Conclusão"],
        },
    ),
)
DEFAULT_HEADINGS = {
    "en": ["Introduction", "Main points", "Conclusion"],
    "fr": ["Introduction", "Points principaux", "Conclusion"],
    "de": ["Einleitung", "Hauptpunkte", "Fazit"],
    "es": ["Introducción", "Puntos principales", "Conclusión"],
    "pt": ["Introdução", "Pontos principais", "Conclusão"],
}

WORDS = {
    "en": {
        "note": (
            "> Skeleton drafted by Lomote's scripted planner (not an LLM): headings only, no text was written. "
            "To have the text written, set a model profile (README, “Agent runtime”: `manage.py model_profile`) "
            "and ask again."
        ),
        "brief": "Brief",
        "unwritten": "_To write._",
    },
    "fr": {
        "note": (
            "> Squelette préparé par le planificateur scripté de Lomote (pas un LLM) : des titres seulement, aucun "
            "texte n’a été écrit. Pour faire écrire le texte, configurez un profil de modèle (README, « Agent "
            "runtime » : `manage.py model_profile`) puis redemandez."
        ),
        "brief": "Demande",
        "unwritten": "_À écrire._",
    },
    "de": {
        "note": (
            "> Gerüst von Lomotes geskriptetem Planer (kein LLM): nur Überschriften, es wurde kein Text geschrieben. "
            "Damit der Text geschrieben wird, richte ein Modellprofil ein (README, „Agent runtime“: "
            "`manage.py model_profile`) und frag noch einmal."
        ),
        "brief": "Anfrage",
        "unwritten": "_Zu schreiben._",
    },
    "es": {
        "note": (
            "> Esqueleto preparado por el planificador con guion de Lomote (no es un LLM): solo títulos, no se "
            "escribió ningún texto. Para que se escriba el texto, configura un perfil de modelo (README, «Agent "
            "runtime»: `manage.py model_profile`) y vuelve a pedirlo."
        ),
        "brief": "Petición",
        "unwritten": "_Por escribir._",
    },
    "pt": {
        "note": (
            "> Esqueleto preparado pelo planeador com guião do Lomote (não é um LLM): só títulos, nenhum texto foi "
            "escrito. Para o texto ser escrito, configure um perfil de modelo (README, «Agent runtime»: "
            "`manage.py model_profile`) e volte a pedir."
        ),
        "brief": "Pedido",
        "unwritten": "_Por escrever._",
    },
}

LIST_MARKER = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+(?P<text>.+?)\s*$")
# "…covering: a, b and c" / "…with sections on a, b, c" / "…comprenant a, b et c"
LISTED = re.compile(
    r"(?:\b(?P<word>covering|including|with sections? (?:on|for)|comprenant|incluant|couvrant|avec les parties|"
    r"mit den abschnitten|que incluya|incluyendo)\b\s*:?|:)\s*(?P<list>[^.!?\n]+)",
    re.IGNORECASE,
)
LIST_SPLIT = re.compile(r"\s*(?:,|;|\band\b|\bet\b|\bund\b|\by\b|&)\s*", re.IGNORECASE)


def _tidy(heading: str) -> str:
    heading = " ".join(heading.strip(" .:;-").split())
    if len(heading) > MAX_HEADING:
        heading = heading[: MAX_HEADING - 1].rsplit(" ", 1)[0] + "…"
    return heading[:1].upper() + heading[1:]


def brief_headings(brief: str) -> list[str]:
    """The parts the brief itself asks for: one per listed line, or an enumeration after a colon or "covering"."""
    lines = [m.group("text") for m in map(LIST_MARKER.match, brief.splitlines()) if m]
    if len(lines) >= 2:
        return [_tidy(line) for line in lines[:MAX_HEADINGS]]
    for match in LISTED.finditer(brief):
        parts = [_tidy(p) for p in LIST_SPLIT.split(match.group("list")) if p.strip()]
        # After a bare colon two parts may be a description ("short and warm"); three make a list.
        if len(parts) >= (2 if match.group("word") else 3):
            return parts[:MAX_HEADINGS]
    return []


def headings_for(brief: str, lang: str) -> list[str]:
    listed = brief_headings(brief)
    if listed:
        return listed
    words = set(re.findall(r"\w+", brief.lower()))
    usual = next((by_lang for keys, by_lang in HEADINGS if words & keys), DEFAULT_HEADINGS)
    return list(usual.get(lang, usual["en"]))


def skeleton(*, title: str, brief: str, lang: str) -> str:
    """The Markdown of a skeleton document: title, an honest note, the brief, and a heading per part."""
    words = WORDS.get(lang, WORDS["en"])
    lines = [f"# {title}", "", words["note"], "", f"## {words['brief']}", "", brief.strip(), ""]
    for heading in headings_for(brief, lang):
        lines += [f"## {heading}", "", words["unwritten"], ""]
    return "\n".join(lines)
