// The studio's own words in the person's language. The page says which (<html lang>): the server chose it from the
// language picked in the top bar (the django_language cookie) or else from the browser's (Accept-Language), so the
// template's words (Django's {% translate %}) and these agree. The server says a task's content (cards, reasons,
// the agent's words) in the task's language; what the studio adds around it — panels, routes, card controls,
// resolutions — comes from the catalogue in catalogue.js. A key is the English text; a language without a phrase
// shows the English one (tests/lomote/test_studio_catalogue.py checks that every key used here has all four). Elements in
// another language than the page's carry a `lang` attribute (langAttrs), so a screen reader reads them right.

import { PHRASES } from "./catalogue.js";

const COOKIE = "django_language"; // settings.LANGUAGE_COOKIE_NAME
export const SUPPORTED = ["en", "fr", "de", "es", "pt"];

// What the server sends as raw values and the studio shows in words (statuses, kinds, reasons): keys for t().
export const SAID_AS_VALUES = [
  N_("active"), N_("waiting"), N_("idle"), N_("paused"), N_("done"), N_("failed"), N_("cancelled"),
  N_("submitting"), N_("submitted"), N_("queued"), N_("running"), N_("succeeded"), N_("timed_out"),
  N_("connecting"), N_("live"), N_("reconnecting"), N_("offline"),
  N_("image"), N_("video"), N_("3d"), N_("document"), N_("asset_collection"), N_("flow"), N_("text"), N_("generation"),
  N_("pending"), N_("skipped"), N_("stale"), N_("superseded"), N_("forgotten"),
  N_("editor"), N_("viewer"), N_("owner"),
  N_("checkpoint"), N_("no progress"), N_("resume review"), N_("spending declined"), N_("insufficient balance"),
  N_("goal changed"), N_("checklist complete"), N_("paused by person"), N_("cancelled by person"), N_("step cap"),
  N_("token cap"), N_("attempt cap"), N_("stalled"), N_("answered"),
  N_("open"), N_("resolved"), N_("expired"), N_("quote"), N_("choice"), N_("confirm"), N_("result"), N_("clarify"),
  N_("image generation"), N_("video generation"), N_("3d generation"), N_("flow run"),
];

/** Marks an English text as a key of the catalogue without saying it yet (like gettext_noop). */
export function N_(key) {
  return key;
}

function chosen() {
  const wanted = [document.documentElement.lang, ...(navigator.languages || [navigator.language])].filter(Boolean);
  for (const tag of wanted) {
    const base = String(tag).toLowerCase().split("-")[0];
    if (SUPPORTED.includes(base)) return base;
  }
  return "en";
}

let current = chosen();

/** The studio's language now (two letters). */
export function language() {
  return current;
}

/** Choose the studio's language, as the top bar's picker does (a cookie the server reads on the next page);
 * null goes back to the browser's own. What is already on the page changes on its next render or reload. */
export function setLanguage(tag) {
  const wanted = tag && SUPPORTED.includes(tag) ? tag : null;
  const age = wanted ? 365 * 24 * 3600 : 0;
  document.cookie = `${COOKIE}=${wanted || ""}; path=/; max-age=${age}; samesite=lax`;
  current = wanted || (navigator.languages || [navigator.language]).map((tag) => String(tag).slice(0, 2)).find((base) => SUPPORTED.includes(base)) || "en";
}

/** `key` (the English text) in the studio's language, with its {placeholders} filled. */
export function t(key, values = {}) {
  const said = (PHRASES[key] || {})[current] ?? key;
  return said.replace(/\{(\w+)\}/g, (whole, name) => (name in values ? String(values[name]) : whole));
}

/** The `lang` attribute for an element the studio writes in its own language, when it is not the page's. */
export function langAttrs() {
  return current === (document.documentElement.lang || "en").slice(0, 2) ? {} : { lang: current };
}
