// The API keys panel: owners create a key for a script or an integration (named, viewer or editor), see its secret
// once with a copy button and a curl example filled in, list the workspace's keys with when each was last used, and
// revoke one. Other members are told who can. Reloaded on api_key.* events, so another owner's change shows here.

import { ApiError } from "./api.js";
import { h } from "./dom.js";

const $ = (id) => document.getElementById(id);
const ROLE_NAMES = { viewer: "Viewer (read only)", editor: "Editor (can ask for work)" };

function when(iso) {
  return iso ? new Date(iso).toLocaleString() : "never";
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
    if (error instanceof ApiError && error.status === 403) text = "Only owners can create or revoke API keys.";
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
      body.replaceChildren(h("p", { class: "reason", id: "api-keys-read-only", text: "Only owners can create or revoke API keys; ask one for a key." }));
      return;
    }
    const name = h("input", { id: "api-key-name", type: "text", maxlength: "120", autocomplete: "off", placeholder: "e.g. Newsletter script" });
    const role = h("select", { id: "api-key-role" },
      h("option", { value: "editor", text: ROLE_NAMES.editor }),
      h("option", { value: "viewer", text: ROLE_NAMES.viewer }));
    body.replaceChildren(
      h("p", { class: "hint", text: "A key lets a script call the REST API as this workspace. It is shown once: copy it somewhere safe." }),
      h("form", { id: "api-key-create", class: "inline-form", onsubmit: (e) => { e.preventDefault(); this.create(); } },
        h("label", { for: "api-key-name", text: "Key name" }), name,
        h("label", { for: "api-key-role", text: "acts as" }), role,
        h("button", { type: "submit", id: "api-key-create-send" }, "Create key")),
      h("section", { id: "api-key-secret", class: "api-key-secret", "aria-live": "polite", hidden: true }),
      h("p", { id: "api-keys-error", class: "error", role: "alert", hidden: true }),
      h("ul", { id: "api-keys", class: "api-keys", "aria-label": "API keys" }),
    );
  }

  renderList() {
    const list = $("api-keys");
    if (!list) return;
    if (!this.keys.length) {
      list.replaceChildren(h("li", { class: "reason", text: "No keys yet." }));
      return;
    }
    // Active keys first, newest first; revoked ones stay listed for the record.
    const keys = [...this.keys].sort((a, b) => (b.is_active - a.is_active) || (b.id - a.id));
    list.replaceChildren(...keys.map((key) => {
      const item = h("li", { class: "api-key", "data-key": String(key.id), "data-active": String(key.is_active) },
        h("span", { class: "api-key-name" }, h("bdi", { text: key.name })),
        h("code", { class: "api-key-prefix", text: `${key.prefix}…` }),
        h("span", { class: "badge", text: key.role }),
        h("span", { class: "reason", text: key.is_active ? `created ${when(key.created_at)} · last used ${when(key.last_used_at)}` : `revoked ${when(key.revoked_at)}` }));
      if (key.is_active) {
        item.append(h("button", { type: "button", class: "danger", id: `api-key-${key.id}-revoke`, "aria-label": `Revoke the key ${key.name}`, onclick: () => this.revoke(key) }, "Revoke"));
      }
      return item;
    }));
  }

  showSecret(key) {
    const section = $("api-key-secret");
    const secret = h("input", { id: "api-key-secret-value", type: "text", readonly: true, value: key.key, "aria-label": "The new key's secret" });
    const status = h("span", { class: "reason", role: "status", id: "api-key-copied" });
    const copy = h("button", { type: "button", id: "api-key-copy", onclick: async () => {
      try {
        await navigator.clipboard.writeText(key.key);
        status.textContent = "Copied.";
      } catch {
        secret.select(); // no clipboard permission (plain http on another host): the text is selected to copy by hand
        status.textContent = "Press Ctrl+C (⌘C) to copy.";
      }
    } }, "Copy");
    section.replaceChildren(
      h("p", {}, h("strong", { text: `Key “${key.name}” created.` }), " Copy it now: it will not be shown again."),
      h("div", { class: "compose-row" }, secret, copy, status),
      h("p", { class: "hint", text: "Try it:" }),
      h("pre", { id: "api-key-curl", class: "api-key-curl", text: curlExample(window.location.origin, this.workspaceId, key.key, key.role) }),
      h("button", { type: "button", id: "api-key-secret-done", onclick: () => { section.hidden = true; section.replaceChildren(); } }, "I have copied it"),
    );
    section.hidden = false;
  }

  async create() {
    const input = $("api-key-name");
    const name = input.value.trim();
    if (!name) {
      this.problem(new Error("Give the key a name, so you know later what uses it."));
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
    if (!window.confirm(`Revoke the key “${key.name}”? Anything using it stops working at once.`)) return;
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
