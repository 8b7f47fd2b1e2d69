// The memory panel: what the workspace remembers, where each memory came from (a click on a source opens it),
// correct / confirm / forget, and the profile with its versions. Forgetting is irreversible, so it only asks:
// the confirmation card appears in the chat, and nothing is forgotten until a person confirms it there.
// Reloaded from REST whenever a memory.* event arrives (the studio routes them here).

import { ApiError } from "./api.js";
import { h } from "./dom.js";
import { N_, t } from "./i18n.js";

const KINDS = {
  preference: N_("preference"),
  instruction: N_("one-off instruction"),
  fact: N_("fact"),
  hypothesis: N_("hypothesis (inferred)"),
};
const ROLES = { origin: N_("stated in"), refine: N_("refined by"), confirm: N_("confirmed by"), supersedes: N_("replaces") };
const SOURCES = {
  statement: N_("a direct statement"),
  main_message: N_("a message to Main"),
  task_message: N_("a task message"),
  artifact_version: N_("a document version"),
  tool_output: N_("a tool's output"),
  web: N_("a web page"),
  agent_output: N_("the agent's own words"),
};

const $ = (id) => document.getElementById(id);

function when(iso) {
  return iso ? new Date(iso).toLocaleString() : "";
}

export class MemoryPanel {
  constructor({ api, userId, onCard }) {
    this.api = api;
    this.userId = userId;
    this.onCard = onCard; // (card id) → shows the card in the chat and brings it into view
    this.members = new Map(); // user id → username
    this.editing = null; // the memory whose correction is open
    this.reloading = null;
    $("memory-history").onchange = () => this.load();
    $("memory-source-close").onclick = () => { $("memory-source").hidden = true; };
    $("memory-state").onsubmit = (event) => { event.preventDefault(); this.state(); };
  }

  async load() {
    const history = $("memory-history").checked;
    const [page, profile, versions, members] = await Promise.all([
      this.api.get(`/memories/?limit=100${history ? "&include=superseded" : ""}`),
      this.api.get("/memory/profile/"),
      this.api.get("/memory/profile/versions/?limit=20"),
      this.members.size ? null : this.api.get("/members/?limit=200"),
    ]);
    for (const member of members ? members.results : []) this.members.set(member.user_id, member.username);
    this.renderMemories(page.results);
    this.renderProfile(profile, versions.results);
    $("memory-panel").dataset.profileVersion = String(profile.number);
  }

  /** A memory event: reload once the burst is over (a forget moves several rows at once). */
  apply(event) {
    if (event && event.kind === "memory.forgotten") {
      this.notice(t("Forgotten: what was built on it was erased and rebuilt from what remains, and the profile moved to a new version."));
    }
    clearTimeout(this.reloading);
    this.reloading = setTimeout(() => this.load().catch((error) => this.notice(error.message)), 100);
  }

  notice(text) {
    $("memory-notice").textContent = text;
    $("memory-notice").hidden = !text;
  }

  who(userId) {
    if (userId === null || userId === undefined) return t("not a person");
    if (userId === this.userId) return t("you");
    return this.members.get(userId) || t("member #{id}", { id: userId });
  }

  // --- memories -----------------------------------------------------------------------------------------

  renderMemories(memories) {
    const list = $("memories");
    if (!memories.length) {
      list.replaceChildren(h("li", { class: "memory-empty", text: t("Nothing remembered yet.") }));
      return;
    }
    list.replaceChildren(...memories.map((memory) => this.renderMemory(memory)));
  }

  renderMemory(memory) {
    const current = memory.current;
    const headingId = `memory-${memory.id}-text`;
    const item = h("li", {
      class: "memory",
      "data-memory": String(memory.id),
      "data-status": current ? "active" : "forgotten",
      "aria-labelledby": headingId,
    });
    const latest = current || memory.versions[memory.versions.length - 1] || { kind: "", number: 0 };
    item.append(
      h("p", { class: "memory-meta" },
        h("span", { class: "badge", "data-kind": latest.kind, text: KINDS[latest.kind] ? t(KINDS[latest.kind]) : latest.kind }),
        h("span", { class: "badge", text: t(memory.scope === "person" ? "yours only" : "workspace") }),
        h("span", { class: "reason", text: `v${latest.number}${memory.subject ? ` · ${memory.subject}` : ""}` })),
      h("p", { id: headingId, class: "memory-text", dir: "auto", text: current ? current.content : t("(forgotten)") }),
    );
    if (current) item.append(this.renderProvenance(current));
    if ($("memory-history").checked) {
      const earlier = memory.versions.filter((v) => !current || v.id !== current.id);
      if (earlier.length) {
        item.append(h("ol", { class: "memory-versions", "aria-label": t("Earlier versions of this memory") },
          ...earlier.map((v) => h("li", { "data-version": String(v.number), "data-status": v.status },
            h("span", { class: "reason", text: `v${v.number} · ${t(v.status)} · ${when(v.valid_from)}${v.valid_to ? ` – ${when(v.valid_to)}` : ""}` }),
            h("span", { dir: "auto", text: v.content === null ? ` ${t("(erased)")}` : ` ${v.content}` })))));
      }
    }
    if (current) item.append(this.editing === memory.id ? this.renderCorrection(memory) : this.renderActions(memory));
    item.append(h("p", { class: "error", role: "alert", hidden: true }));
    return item;
  }

  renderProvenance(version) {
    return h("ul", { class: "provenance", "aria-label": t("Where it came from") },
      ...version.derivations.map((link) => {
        const role = ROLES[link.role] ? t(ROLES[link.role]) : link.role;
        if (link.from_version) {
          return h("li", { "data-role": link.role, text: t("{role} version {number} ({status})", { role, number: link.from_version.number, status: t(link.from_version.status) }) });
        }
        const source = link.evidence;
        const kind = SOURCES[source.kind] ? t(SOURCES[source.kind]) : source.kind;
        const label = source.task_id ? t("{source} in task #{id}", { source: kind, id: source.task_id }) : kind;
        const by = ` · ${this.who(source.stated_by)} · ${when(source.created_at)}`;
        if (source.revoked || source.text === null) {
          const why = t(source.revoked ? "forgotten" : "it carries something forgotten");
          return h("li", { "data-role": link.role }, `${role} ${label} (${why})${by}`);
        }
        return h("li", { "data-role": link.role },
          `${role} `,
          h("button", { type: "button", class: "link source", "data-evidence": String(source.id), onclick: () => this.openSource(source) }, label),
          by);
      }));
  }

  renderActions(memory) {
    return h("div", { class: "card-actions", role: "group", "aria-label": t("Memory {id}", { id: memory.id }) },
      h("button", { type: "button", "data-action": "correct", onclick: () => { this.editing = memory.id; this.rerender(memory); } }, t("Correct")),
      h("button", { type: "button", "data-action": "confirm", onclick: () => this.act(memory, "confirm") }, t("Confirm")),
      h("button", { type: "button", "data-action": "forget", onclick: () => this.forget(memory) }, t("Forget…")));
  }

  renderCorrection(memory) {
    const inputId = `memory-${memory.id}-correction`;
    const input = h("textarea", { id: inputId, rows: "2", dir: "auto", maxlength: "2000" });
    input.value = memory.current.content;
    setTimeout(() => input.focus());
    return h("form", { class: "memory-correct", onsubmit: (event) => { event.preventDefault(); this.act(memory, "correct", { content: input.value }); } },
      h("label", { for: inputId, text: t("Correct to") }),
      input,
      h("div", { class: "row" },
        h("button", { type: "submit", class: "primary", "data-action": "save" }, t("Save")),
        h("button", { type: "button", "data-action": "cancel", onclick: () => { this.editing = null; this.rerender(memory); } }, t("Cancel"))));
  }

  rerender(memory) {
    const element = $("memories").querySelector(`[data-memory='${memory.id}']`);
    if (element) element.replaceWith(this.renderMemory(memory));
  }

  problem(memory, error) {
    const element = $("memories").querySelector(`[data-memory='${memory.id}'] .error`);
    if (!element) return;
    element.textContent = error instanceof ApiError ? error.message : String(error);
    element.hidden = false;
  }

  async act(memory, action, body) {
    try {
      const updated = await this.api.post(`/memories/${memory.id}/${action}/`, body);
      this.editing = null;
      this.rerender(updated);
      this.apply(); // the profile may have moved
    } catch (error) {
      this.problem(memory, error);
    }
  }

  async forget(memory) {
    try {
      const asked = await this.api.post("/memories/forget/", { memory: memory.id });
      const element = $("memories").querySelector(`[data-memory='${memory.id}']`);
      if (asked.card) {
        if (element) element.dataset.forget = "asked";
        this.notice(t("Nothing is forgotten yet: confirm “{title}” on the card in the chat. It cannot be undone.", { title: t("Forget this for good?") }));
        await this.onCard(asked.card);
      } else {
        this.notice(t("This was already forgotten ({status}).", { status: t(asked.status) }));
      }
    } catch (error) {
      this.problem(memory, error);
    }
  }

  async state() {
    const content = $("memory-content").value.trim();
    if (!content) return;
    try {
      await this.api.post("/memories/", { content, kind: $("memory-kind").value });
      $("memory-content").value = "";
      this.notice("");
      await this.load();
    } catch (error) {
      this.notice(error.message);
    }
  }

  // --- sources ------------------------------------------------------------------------------------------

  /** Open the message a memory came from: in the chat when it is there, else its text here. */
  async openSource(source) {
    if (source.kind === "main_message") {
      const message = document.querySelector(`#chat [data-message='${source.source_id}']`);
      if (message) {
        message.scrollIntoView({ block: "center" });
        message.classList.add("highlight");
        setTimeout(() => message.classList.remove("highlight"), 2000);
        return;
      }
    }
    let title = t("From {source}, {who}, {when}", { source: SOURCES[source.kind] ? t(SOURCES[source.kind]) : source.kind, who: this.who(source.stated_by), when: when(source.created_at) });
    let text = source.text;
    if (source.kind === "task_message" && source.task_id) {
      try {
        const page = await this.api.get(`/tasks/${source.task_id}/messages/?limit=500`);
        const message = page.results.find((m) => String(m.id) === source.source_id);
        if (message) {
          title = t("Message #{id} in task #{task}, {who}, {when}", { id: message.id, task: source.task_id, who: message.author || t("an API key"), when: when(message.created_at) });
          text = message.text;
        }
      } catch {
        // the task is gone or out of reach: memory's own copy of the words is shown instead
      }
    }
    $("memory-source-title").textContent = title;
    $("memory-source-text").textContent = text || "";
    $("memory-source").hidden = false;
    $("memory-source").dataset.evidence = String(source.id);
    $("memory-source-close").focus();
  }

  // --- profile ------------------------------------------------------------------------------------------

  renderProfile(profile, versions) {
    $("profile-version").textContent = profile.number ? t("version {number}", { number: profile.number }) : t("none yet");
    $("profile").replaceChildren(...profile.entries.map((entry) =>
      h("li", { dir: "auto", "data-memory": entry.memory === null ? "" : String(entry.memory), text: entry.text === null ? t("(erased)") : entry.text })));
    $("profile-versions").replaceChildren(...versions.map((version) =>
      h("li", { "data-number": String(version.number) },
        h("span", { class: "reason", text: `v${version.number} · ${version.reason || "—"} · ${when(version.created_at)}` }),
        h("ul", {}, ...version.entries.map((entry) => h("li", { dir: "auto", text: entry.text === null ? t("(erased)") : entry.text }))))));
  }
}
