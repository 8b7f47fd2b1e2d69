// The API keys panel: owners create a key for a script or an integration (named, viewer or editor), see its secret
// once with a copy button and a curl example filled in, list the workspace's keys with when each was last used, and
// revoke one. Other members are told who can. Reloaded on api_key.* events, so another owner's change shows here.

import { ApiError } from "./api.js";
import { h } from "./dom.js";
import { N_, t } from "./i18n.js";

const $ = (id) => document.getElementById(id);
const ROLE_NAMES = { viewer: N_("Viewer (read only)"), editor: N_("Editor (can ask for work)") };

function when(iso) {
  return iso ? new Date(iso).toLocaleString() : t("never");
}

/** One request a person can paste into a terminal to try the key: an editor's asks Main for work, a viewer's reads. */
export function curlExample(origin, workspaceId, secret, role) {
  const base = `${origin}/api/v1/workspaces/${workspaceId}`;
  if (role !== "editor") return `curl ${base}/tasks/ \\\n  -H "Authorization: Bearer ${secret}"`;
  return [
    `curl -X POST ${base}/messages/ \\`,
    `  -H "Authorization: Bearer ${secret}" \\`,
    `  -H "Content-Type: application/json" \\`,
    `  -d '{"text": "Make a poster for our spring opening"}'`,
  ].join("\n");
}

export class ApiKeysPanel {
  constructor({ api, workspaceId, isOwner }) {
    this.api = api;
    this.workspaceId = workspaceId;
    this.isOwner = isOwner; // () → bool: the members panel knows the person's role
    this.keys = [];
    this.mode = null;
  }

  async load() {
    if (!this.isOwner()) {
      this.build("read-only");
      return;
    }
    const page = await this.api.get("/api-keys/?limit=200");
    this.keys = page.results;
    this.build("owner");
    this.renderList();
  }

  apply() {
    clearTimeout(this.reloading);
    this.reloading = setTimeout(() => this.load().catch((error) => this.problem(error)), 100);
  }

  problem(error) {
    const element = $("api-keys-error");
    if (!element) return;
    let text = "";
    if (error instanceof ApiError && error.status === 403) text = t("Only owners can create or revoke API keys.");
    else if (error) text = error.message || String(error);
    element.textContent = text;
    element.hidden = !text;
  }

  build(mode) {
    if (mode === this.mode) return;
    this.mode = mode;
    const body = $("api-keys-body");
    body.dataset.mode = mode;
    if (mode !== "owner") {
      body.replaceChildren(h("p", { class: "reason", id: "api-keys-read-only", text: t("Only owners can create or revoke API keys; ask one for a key.") }));
      return;
    }
    const name = h("input", { id: "api-key-name", type: "text", maxlength: "120", autocomplete: "off", placeholder: t("e.g. Newsletter script") });
    const role = h("select", { id: "api-key-role" },
      h("option", { value: "editor", text: t(ROLE_NAMES.editor) }),
      h("option", { value: "viewer", text: t(ROLE_NAMES.viewer) }));
    body.replaceChildren(
      h("p", { class: "hint", text: t("A key lets a script call the REST API as this workspace. It is shown once: copy it somewhere safe.") }),
      h("form", { id: "api-key-create", class: "inline-form", onsubmit: (e) => { e.preventDefault(); this.create(); } },
        h("label", { for: "api-key-name", text: t("Key name") }), name,
        h("label", { for: "api-key-role", text: t("acts as") }), role,
        h("button", { type: "submit", id: "api-key-create-send" }, t("Create key"))),
      h("section", { id: "api-key-secret", class: "api-key-secret", "aria-live": "polite", hidden: true }),
      h("p", { id: "api-keys-error", class: "error", role: "alert", hidden: true }),
      h("ul", { id: "api-keys", class: "api-keys", "aria-label": t("API keys") }),
    );
  }

  renderList() {
    const list = $("api-keys");
    if (!list) return;
    if (!this.keys.length) {
      list.replaceChildren(h("li", { class: "reason", text: t("No keys yet.") }));
      return;
    }
    // Active keys first, newest first; revoked ones stay listed for the record.
    const keys = [...this.keys].sort((a, b) => (b.is_active - a.is_active) || (b.id - a.id));
    list.replaceChildren(...keys.map((key) => {
      const item = h("li", { class: "api-key", "data-key": String(key.id), "data-active": String(key.is_active) },
        h("span", { class: "api-key-name" }, h("bdi", { text: key.name })),
        h("code", { class: "api-key-prefix", text: `${key.prefix}…` }),
        h("span", { class: "badge", text: t(key.role) }),
        h("span", { class: "reason", text: key.is_active ? t("created {created} · last used {used}", { created: when(key.created_at), used: when(key.last_used_at) }) : t("revoked {when}", { when: when(key.revoked_at) }) }));
      if (key.is_active) {
        item.append(h("button", { type: "button", class: "danger", id: `api-key-${key.id}-revoke`, "aria-label": t("Revoke the key {name}", { name: key.name }), onclick: () => this.revoke(key) }, t("Revoke")));
      }
      return item;
    }));
  }

  showSecret(key) {
    const section = $("api-key-secret");
    const secret = h("input", { id: "api-key-secret-value", type: "text", readonly: true, value: key.key, "aria-label": t("The new key's secret") });
    const status = h("span", { class: "reason", role: "status", id: "api-key-copied" });
    const copy = h("button", { type: "button", id: "api-key-copy", onclick: async () => {
      try {
        await navigator.clipboard.writeText(key.key);
        status.textContent = t("Copied.");
      } catch {
        secret.select(); // no clipboard permission (plain http on another host): the text is selected to copy by hand
        status.textContent = t("Press Ctrl+C (⌘C) to copy.");
      }
    } }, t("Copy"));
    section.replaceChildren(
      h("p", {}, h("strong", { text: t("Key “{name}” created.", { name: key.name }) }), ` ${t("Copy it now: it will not be shown again.")}`),
      h("div", { class: "compose-row" }, secret, copy, status),
      h("p", { class: "hint", text: t("Try it:") }),
      h("pre", { id: "api-key-curl", class: "api-key-curl", text: curlExample(window.location.origin, this.workspaceId, key.key, key.role) }),
      h("button", { type: "button", id: "api-key-secret-done", onclick: () => { section.hidden = true; section.replaceChildren(); } }, t("I have copied it")),
    );
    section.hidden = false;
  }

  async create() {
    const input = $("api-key-name");
    const name = input.value.trim();
    if (!name) {
      this.problem(new Error(t("Give the key a name, so you know later what uses it.")));
      input.focus();
      return;
    }
    const button = $("api-key-create-send");
    button.disabled = true;
    this.problem(null);
    try {
      const key = await this.api.post("/api-keys/", { name, role: $("api-key-role").value });
      input.value = "";
      this.keys = [...this.keys.filter((k) => k.id !== key.id), key];
      this.renderList();
      this.showSecret(key);
    } catch (error) {
      this.problem(error);
    } finally {
      button.disabled = false;
    }
  }

  async revoke(key) {
    if (!window.confirm(t("Revoke the key “{name}”? Anything using it stops working at once.", { name: key.name }))) return;
    this.problem(null);
    try {
      const revoked = await this.api.del(`/api-keys/${key.id}/`);
      this.keys = this.keys.map((k) => (k.id === revoked.id ? revoked : k));
      this.renderList();
    } catch (error) {
      this.problem(error);
    }
  }
}
