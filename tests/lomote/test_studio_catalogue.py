"""The studio's own words in every language it speaks (issue 33 item 4): every key its scripts say through i18n.js
(t("…"), N_("…"), and both ends of t(cond ? "…" : "…")) has a French, German, Spanish and Portuguese phrase in
static/lomote/catalogue.js, each keeping the English's {placeholders}; and the catalogue holds no key nobody uses."""

import json
import re
from pathlib import Path

from django.conf import settings

STATIC = Path(settings.BASE_DIR) / "static" / "lomote"
LANGUAGES = ("fr", "de", "es", "pt")
STRING = r'"((?:[^"\\]|\\.)*)"'
CALL = re.compile(r"\b(?:t|N_)\(\s*" + STRING)
TERNARY = re.compile(r'\bt\(\s*[^";\n]*?\?\s*' + STRING + r"\s*:\s*" + STRING)
PLACEHOLDER = re.compile(r"\{(\w+)\}")


def _catalogue() -> dict[str, dict[str, str]]:
    text = (STATIC / "catalogue.js").read_text(encoding="utf-8")
    start = text.index("export const PHRASES = ") + len("export const PHRASES = ")
    return json.loads(text[start : text.rindex(";")])


def _keys_used() -> dict[str, str]:
    used = {}
    for script in sorted(STATIC.glob("*.js")):
        if script.name == "catalogue.js":
            continue
        text = script.read_text(encoding="utf-8")
        found = [m.group(1) for m in CALL.finditer(text)]
        found += [g for m in TERNARY.finditer(text) for g in m.groups()]
        for raw in found:
            used.setdefault(json.loads(f'"{raw}"'), script.name)
    return used


def test_the_scripts_say_their_words_through_the_catalogue():
    used = _keys_used()
    # the panels go through it (a file that stopped importing t() would show here as missing keys)
    scripts = set(used.values())
    for panel in ("studio.js", "task_panel.js", "canvas.js", "memory.js", "billing.js", "members.js", "api_keys.js"):
        assert panel in scripts, panel
    assert len(used) > 300, len(used)


def test_every_key_the_studio_uses_has_all_four_languages():
    catalogue = _catalogue()
    missing = []
    for key, script in sorted(_keys_used().items()):
        phrases = catalogue.get(key, {})
        for language in LANGUAGES:
            said = phrases.get(language, "")
            if not said.strip():
                missing.append(f"{script}: {key!r} has no {language}")
            elif set(PLACEHOLDER.findall(said)) != set(PLACEHOLDER.findall(key)):
                missing.append(f"{script}: {key!r} in {language} changes its placeholders: {said!r}")
    assert not missing, "\n".join(missing)


def test_the_catalogue_holds_only_keys_in_use():
    unused = sorted(set(_catalogue()) - set(_keys_used()))
    assert not unused, unused
