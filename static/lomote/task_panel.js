// A task's detail, opened from the task list: where it stands and why (a resumed task that waits says which check
// stopped it, in words, with a link to its review card), and its three separate settings (DESIGN §5): autonomy,
// the tool domains it may use, and its budget approvals. Editors and owners change them; viewers read them. The
// rule that irreversible operations ask a person first is shown, always on: no setting turns it off.
// Its recent conversation (the messages it was sent, and Flow results posted to it), with a form that runs a Flow over
// that conversation. Reloaded from REST when an event about the open task arrives (the studio routes them here).

import { ApiError } from "./api.js";
import { h } from "./dom.js";
import { N_, t } from "./i18n.js";

const AUTONOMY = [
  ["ask", N_("Ask"), N_("Asks before each paid step and before going on to the next one.")],
  ["checkpoints", N_("At checkpoints"), N_("Asks at steps marked for confirmation, and when spending needs an approval.")],
  ["auto", N_("Automatic"), N_("Goes on without asking, within the spending limits and its budget.")],
];
// The tool domains a person can allow or refuse a task (agents.models.PERMISSION_DOMAINS); base tools always run.
const DOMAINS = [
  ["image", N_("Images")],
  ["video", N_("Videos")],
  ["3d", N_("3D models")],
  ["documents", N_("Documents")],
  ["flows", N_("Flows")],
  ["assets", N_("Asset search")],
];
const STATUS = {
  active: N_("Working"),
  waiting: N_("Waiting"),
  idle: N_("Idle: nothing to do until it gets a message"),
  paused: N_("Paused"),
  done: N_("Done"),
  failed: N_("Failed"),
  cancelled: N_("Cancelled"),
};
// What a waiting task waits for (its waiting_for type), said before any stop reason.
const WAITS = {
  person: N_("it waits for a person's answer on a card"),
  approval: N_("it waits for a spending approval"),
  jobs: N_("it waits for generations to finish"),
};
const STOP_REASONS = {
  resume_review: N_("it was interrupted, and on resuming a check needs your review"),
  checkpoint: N_("it waits for your answer on a card"),
  spending_declined: N_("spending was declined"),
  no_progress: N_("it made no progress, so it stopped going on by itself"),
  insufficient_balance: N_("the balance does not cover its next step"),
};
// The resume verdicts (agents/resume.py), said as sentences; unknown ones fall back to the server's message.
const VERDICTS = {
  mission_mismatch: N_("The saved progress belongs to another task, so it was refused before anything was looked up."),
  tenant_mismatch: N_("The saved progress belongs to another workspace, so it was refused before anything was looked up."),
  subject_mismatch: N_("The saved progress acts for another person, so it was refused before anything was looked up."),
  awaiting_approval: N_("It still waits for a person to approve its spending; resuming cannot go past that."),
  mission_completed: N_("Its work was already complete: there was nothing to resume."),
  pending_state_inconsistent: N_("Its saved state and its interrupted step disagree, so a person looks before anything runs."),
  pending_contract_denied: N_("The interrupted step is outside what this task may do now, so nothing was looked up."),
  resume_step_limit: N_("It reached its step limit and cannot take another step."),
  action_still_unknown: N_("The outcome of an interrupted step cannot be checked yet. Its credits stay held and nothing new is planned until it is known."),
  action_not_found_review: N_("An interrupted step left no trace of having run, but it cannot simply run again (its goal or settings changed, or it may not run by itself). You decide."),
  action_not_found_replay: N_("An interrupted step left no trace of having run, so it ran again by itself, under the same id and on the same credits."),
  action_receipt_conflict: N_("Something different is recorded under the interrupted step's id. It stays pending until you review it."),
  goal_changed_review: N_("Its goal changed while it was interrupted, so you review the work before it goes on."),
  config_changed_review: N_("The model or the spending rules changed while it was interrupted, so you review before it goes on."),
  source_refresh_required: N_("A source it relied on changed since, so it reads that again first."),
  next_step_not_authorized: N_("Its next step is no longer allowed (its permissions or the role it acts with changed)."),
  cancelled_observed: N_("It was cancelled, so it stops here."),
  budget_exceeded: N_("Its next step would go past its approved budget."),
  next_step_proposed: N_("Everything checked out: it goes on with its next step."),
};
const OUTCOMES = {
  go: N_("It went on."),
  replay: N_("It ran the interrupted step again, then went on."),
  wait_jobs: N_("It waits for the generation it had started."),
  review: N_("It waits for your review on a card."),
  awaiting_approval: N_("It waits for a spending approval."),
  cancelled: N_("It stopped."),
};
const ROLE_NAMES = { owner: N_("an owner"), editor: N_("an editor"), viewer: N_("a viewer") };
const RECENT_MESSAGES = 10;
const SOURCES = { api_key: N_("API client"), flow: N_("Flow result") };

function when(iso) {
  return iso ? new Date(iso).toLocaleString([], { dateStyle: "short", timeStyle: "short" }) : "";
}

function credits(n) {
  return t(Math.abs(n) === 1 ? "{n} credit" : "{n} credits", { n: Number(n).toLocaleString() });
}

function problemText(error) {
  if (error instanceof ApiError && error.code === "role_required") {
    return t("Not changed: this needs {required}, and you are {yours} here.", { required: t(ROLE_NAMES[error.details.required_role] || N_("another role")), yours: t(ROLE_NAMES[error.details.your_role] || N_("not allowed")) });
  }
  if (error instanceof ApiError && error.code === "person_required") return t("Not approved: only a person signed in can approve spending.");
  return error instanceof ApiError ? error.message : String(error);
}

export function verdictSentence(verdict, message) {
  return VERDICTS[verdict] ? t(VERDICTS[verdict]) : message || t("It was checked on resuming.");
}

const ITEM_STATUS = { pending: N_("to do"), in_progress: N_("under way"), done: N_("done"), skipped: N_("skipped") };

/** The person's messages and the agent's words, merged by time (the agent answers after what it read). */
function conversation(messages, replies) {
  const said = messages.map((m) => ({ ...m, when: Date.parse(m.created_at) || 0 }));
  const answered = replies.map((r) => ({ ...r, agent: true, when: Date.parse(r.created_at) || 0 }));
  return [...said, ...answered].sort((a, b) => a.when - b.when || (a.agent ? 1 : 0) - (b.agent ? 1 : 0));
}

export class TaskPanel {
  /** api: the workspace's REST client; role: the person's role; onCard(id): shows a card in the chat, focused. */
  constructor({ api, role, onCard, onToggle, flowForm }) {
    this.api = api;
    this.flowForm = flowForm || null; // (thread, id prefix) → a form that runs a Flow over that thread
    this.runForm = null; // the open task's form, kept across re-renders (its choices stay as the person left them)
    this.role = role;
    this.onCard = onCard;
    this.onToggle = onToggle || (() => {}); // the task list marks which task is open
    this.root = document.getElementById("task-detail");
    this.root.hidden = true; // another workspace's task may have been open
    this.root.replaceChildren();
    this.taskId = null;
    this.resumes = new Map(); // task id → the latest resume check seen live (task.resume_checked)
    this.reloading = null;
    this.statusText = "";
    this.errorText = "";
  }

  get canEdit() {
    return this.role === "owner" || this.role === "editor";
  }

  async open(taskId) {
    this.taskId = taskId;
    this.runForm = this.flowForm && this.canEdit ? this.flowForm({ task: taskId }, `task-flow-${taskId}`) : null;
    this.dirty = false;
    this.statusText = "";
    this.errorText = "";
    this.root.hidden = false;
    this.root.dataset.task = String(taskId);
    await this.load();
    this.onToggle();
    this.root.querySelector("h3")?.focus();
  }

  close() {
    const taskId = this.taskId;
    this.taskId = null;
    this.root.hidden = true;
    this.root.replaceChildren();
    this.onToggle();
    document.querySelector(`#tasks [data-task='${taskId}'] .task-open`)?.focus();
  }

  /** An event of the workspace: remember resume checks; reload the open task when it is about that task. */
  apply(event) {
    const data = event.data || {};
    if (event.kind === "task.resume_checked") this.resumes.set(data.task, data);
    if (this.taskId === null) return;
    // Billing events name their task (approvals, holds, charges); a top-up or a policy change is not about one.
    if (data.task !== this.taskId) return;
    clearTimeout(this.reloading);
    this.reloading = setTimeout(() => this.load().catch((error) => this.problem(error)), 80);
  }

  async load() {
    const taskId = this.taskId;
    if (taskId === null) return;
    const base = `/tasks/${taskId}`;
    const [task, approvals, checkpoint, log, messages, replies] = await Promise.all([
      this.api.get(`${base}/`),
      this.api.get(`/billing/approvals/?task=${taskId}&limit=50`),
      this.api.get(`${base}/checkpoint/`),
      this.api.get(`${base}/log/?limit=5`),
      this.recentMessages(base),
      this.api.get(`/replies/?task=${taskId}&limit=${RECENT_MESSAGES}`),
    ]);
    const waitingCard = task.waiting_for && task.waiting_for.card ? await this.api.get(`/cards/${task.waiting_for.card}/`) : null;
    if (taskId !== this.taskId) return; // another task was opened meanwhile
    this.render({ task, approvals: approvals.results, checkpoint, log: log.results, waitingCard, messages: conversation(messages, replies.results) });
  }

  /** The task's last messages in arrival order (the inbox lists oldest first: count, then the last page). */
  async recentMessages(base) {
    const head = await this.api.get(`${base}/messages/?limit=1`);
    const page = await this.api.get(`${base}/messages/?limit=${RECENT_MESSAGES}&offset=${Math.max(0, head.count - RECENT_MESSAGES)}`);
    return page.results.filter((m) => !["withdrawn", "replaced"].includes(m.status) && m.source !== "runtime");
  }

  problem(error) {
    this.errorText = problemText(error);
    const element = this.root.querySelector(".task-detail-error");
    if (!element) return;
    element.textContent = this.errorText;
    element.hidden = false;
  }

  /** The resume check to show: the one the task waits on, else the latest seen live or in its turns' log. */
  resumeOf(task, log, waitingCard) {
    const live = this.resumes.get(task.id);
    const logged = log.map((turn) => turn.resume).find(Boolean) || null;
    const latest = [live, logged].filter(Boolean).sort((a, b) => String(b.checked_at || "").localeCompare(String(a.checked_at || "")))[0] || null;
    const waitingOn = task.waiting_for && task.waiting_for.resume;
    if (waitingOn) {
      return { verdict: waitingOn, message: latest?.verdict === waitingOn ? latest.message : "", checked_at: latest?.checked_at, outcome: "review", card: waitingCard };
    }
    return latest;
  }

  // --- rendering ----------------------------------------------------------------------------------------

  render({ task, approvals, checkpoint, log, waitingCard, messages }) {
    const focusedId = this.root.contains(document.activeElement) ? document.activeElement.id : null;
    const titleId = "task-detail-title";
    const resume = this.resumeOf(task, log, waitingCard);
    const previousForm = this.root.querySelector("#task-settings");
    this.root.dataset.status = task.status;
    this.root.dataset.autonomy = task.autonomy;
    this.root.replaceChildren(...[
      h("header", { class: "panel-head" },
        h("h3", { id: titleId, tabindex: "-1" }, `#${task.id} `, h("bdi", { text: task.title })),
        h("button", { type: "button", id: "task-detail-close", onclick: () => this.close() }, t("Close"))),
      this.renderStatus(task, waitingCard),
      resume ? this.renderResume(resume, task) : null,
      h("p", { class: "error task-detail-error", role: "alert", hidden: !this.errorText, text: this.errorText }),
      // Settings being edited are kept as the person left them; the saved ones show once they save.
      this.dirty && previousForm ? previousForm : this.renderSettings(task),
      this.renderBudget(task, approvals, checkpoint),
      this.renderChecklist(task),
      this.renderConversation(task, messages || []),
    ].filter(Boolean)); // replaceChildren would show a null as the text "null"
    if (focusedId) document.getElementById(focusedId)?.focus();
  }

  renderStatus(task, waitingCard) {
    const waiting = task.waiting_for || {};
    const known = (task.status === "waiting" && !waiting.resume && WAITS[waiting.type]) || STOP_REASONS[task.stop_reason];
    const reason = known ? t(known) : t((task.stop_reason || "").replaceAll("_", " "));
    const status = h("p", { class: "task-status", role: "status", "aria-live": "polite" },
      h("span", { class: `badge ${task.status}`, text: t(task.status) }),
      ` ${t(STATUS[task.status] || task.status)}${reason && task.status !== "active" ? t(": {reason}", { reason }) : ""}.`);
    const controls = h("div", { class: "row" });
    if (waitingCard && waitingCard.status === "open" && !(task.waiting_for && task.waiting_for.resume)) {
      controls.append(h("button", { type: "button", class: "link", "data-action": "show-waiting-card", onclick: () => this.onCard(waitingCard.id) }, t("Show the card it waits on: “{title}”", { title: waitingCard.title })));
    }
    if (this.canEdit && task.status === "paused") {
      controls.append(h("button", { type: "button", id: "task-resume", class: "primary", onclick: () => this.resume(task) }, t("Resume")));
    } else if (this.canEdit && ["active", "waiting", "idle"].includes(task.status)) {
      controls.append(h("button", { type: "button", id: "task-pause", onclick: () => this.move(task, "pause") }, t("Pause")));
    }
    return h("div", { class: "task-state" }, status, controls.childElementCount ? controls : null);
  }

  renderResume(resume, task) {
    const card = resume.card || null;
    const waiting = task.waiting_for && task.waiting_for.resume;
    const box = h("section", { class: "resume-verdict", "data-verdict": resume.verdict, "aria-labelledby": "task-resume-heading" },
      h("h4", { id: "task-resume-heading", text: t(waiting ? "Why it waits" : "When it last resumed") }),
      h("p", { class: "resume-sentence", text: verdictSentence(resume.verdict, resume.message) }),
      h("p", { class: "reason", text: [resume.checked_at ? t("Checked {when}.", { when: when(resume.checked_at) }) : "", OUTCOMES[resume.outcome] ? t(OUTCOMES[resume.outcome]) : ""].filter(Boolean).join(" ") }));
    const cardId = card ? card.id : task.waiting_for?.card;
    if (waiting && cardId) {
      box.append(h("button", { type: "button", class: "primary", id: "task-review-card", "data-card": String(cardId), onclick: () => this.onCard(cardId) },
        card ? t("Open the review card: “{title}”", { title: card.title }) : t("Open the review card")));
    }
    return box;
  }

  renderSettings(task) {
    const editable = this.canEdit && task.status !== "cancelled";
    const domains = new Set((task.permissions && task.permissions.domains) || []);
    this.dirty = false;
    const form = h("form", {
      id: "task-settings", class: "task-settings",
      onchange: () => { this.dirty = true; },
      onsubmit: (event) => { event.preventDefault(); this.save(task, form); },
    });
    const autonomy = h("fieldset", { class: "choices" },
      h("legend", { text: t("How much it does alone") }),
      ...AUTONOMY.map(([value, label, help]) => h("label", { class: "choice" },
        h("input", { type: "radio", name: "autonomy", value, checked: task.autonomy === value, "aria-describedby": `autonomy-${value}-help` }),
        h("span", {}, h("strong", { text: t(label) }), h("span", { id: `autonomy-${value}-help`, class: "reason", text: ` ${t(help)}` })))));
    const tools = h("fieldset", { class: "choices" },
      h("legend", { text: t("Tool domains it may use") }),
      ...DOMAINS.map(([value, label]) => h("label", { class: "choice" },
        h("input", { type: "checkbox", name: "domains", value, checked: domains.has(value) }), ` ${t(label)}`)));
    const rule = h("p", { class: "always-on" },
      h("label", {},
        h("input", { type: "checkbox", id: "task-irreversible-rule", checked: true, disabled: true, "aria-describedby": "task-irreversible-help" }),
        ` ${t("Irreversible operations ask a person first")}`),
      h("span", { id: "task-irreversible-help", class: "reason", text: ` ${t("Always on: deleting an artifact or forgetting a memory waits for a person's confirmation, whatever the autonomy. No setting turns it off.")}` }));
    const fields = h("fieldset", { class: "settings-fields", disabled: !editable },
      h("legend", { class: "visually-hidden", text: t("Settings") }), autonomy, tools);
    form.append(
      h("h4", { text: t("Settings") }),
      fields,
      rule,
      editable ? h("button", { type: "submit", id: "task-settings-save" }, t("Save settings"))
        : h("p", { class: "hint", text: task.status === "cancelled" ? t("A cancelled task keeps its settings.") : t("Only editors and owners change a task's settings; you are {role} here.", { role: t(ROLE_NAMES[this.role] || N_("not a member")) }) }),
      h("p", { id: "task-settings-status", class: "billing-status", role: "status", "aria-live": "polite", text: this.statusText }));
    return form;
  }

  renderBudget(task, approvals, checkpoint) {
    const budgets = approvals.filter((a) => a.kind === "budget");
    const list = budgets.length
      ? h("ul", { class: "billing-list", "aria-label": t("Budgets approved for this task") },
        ...budgets.map((a) => h("li", { "data-approval": String(a.id) },
          h("strong", { text: credits(a.amount) }),
          t(" approved by {name} {when}", { name: a.approved_by, when: when(a.created_at) }),
          h("span", { class: "reason", text: ` · ${t("{credits} left", { credits: credits(a.remaining) })}${a.scope && a.scope !== `goal:${task.goal_revision}` ? ` · ${t("for an earlier goal, no longer counts")}` : ""}` }))))
      : h("p", { class: "reason", text: t("No budget approved: each paid step is allowed by the workspace's limits or asked for.") });
    const section = h("section", { class: "task-budget", "aria-labelledby": "task-budget-heading" },
      h("h4", { id: "task-budget-heading", text: t("Budget") }),
      h("p", { class: "task-spending", text: t("Spent {spent} · held {held}.", { spent: credits(checkpoint.spent), held: credits(checkpoint.held) }) }),
      list);
    if (this.canEdit && task.status !== "cancelled") {
      const input = h("input", { id: "task-budget-amount", type: "number", min: "1", step: "1", required: true });
      section.append(h("form", { class: "inline-form", onsubmit: (event) => { event.preventDefault(); this.approveBudget(task, input); } },
        h("label", { for: "task-budget-amount", text: t("Approve a budget of (credits)") }),
        input,
        h("button", { type: "submit", id: "task-budget-approve" }, t("Approve budget"))));
    }
    return section;
  }

  /** What the task set out to make, item by item, with each item's state. */
  renderChecklist(task) {
    const items = task.checklist || [];
    if (!items.length) return null;
    return h("section", { class: "task-checklist", "aria-labelledby": "task-checklist-heading" },
      h("h4", { id: "task-checklist-heading", text: t("Checklist") }),
      h("ol", { class: "checklist" },
        ...items.map((item) => h("li", { "data-status": item.status },
          h("bdi", { text: item.title }),
          h("span", { class: `badge ${item.status}`, text: ` ${t(ITEM_STATUS[item.status] || item.status)}` })))));
  }

  renderConversation(task, messages) {
    const list = messages.length
      ? h("ol", { class: "task-messages", "aria-label": t("Recent messages of this task") },
        ...messages.map((m) => (m.agent
          ? h("li", { class: "msg agent", "data-reply": `${m.turn}:${m.index}` },
            h("p", { class: "who", text: t("The agent (step {n})", { n: m.number }) }),
            h("p", { class: "text", dir: "auto", text: m.text }))
          : h("li", { class: `msg ${m.source === "flow" ? "flow-result" : "person"}`, "data-message": String(m.id), "data-source": m.source },
            h("p", { class: "who", text: m.source === "flow" ? t("{source} (run #{run})", { source: t(SOURCES.flow), run: m.flow_run }) : m.author || (SOURCES[m.source] ? t(SOURCES[m.source]) : m.source) }),
            h("p", { class: "text", dir: "auto", text: m.text })))))
      : h("p", { class: "reason", text: t("No messages yet.") });
    const section = h("section", { class: "task-conversation", "aria-labelledby": "task-conversation-heading" },
      h("h4", { id: "task-conversation-heading", text: t("Conversation") }), list);
    if (this.runForm && task.status !== "cancelled" && !task.archived_at) {
      section.append(h("h5", { text: t("Run a Flow over this conversation") }), this.runForm);
    }
    return section;
  }

  // --- actions ------------------------------------------------------------------------------------------

  /** A 403 says the person's role now (it may have changed since the page loaded): show the task read-only. */
  async learnRole(error) {
    if (!(error instanceof ApiError) || error.code !== "role_required" || !error.details.your_role) return;
    this.role = error.details.your_role;
    this.dirty = false;
    await this.load().catch(() => {});
  }

  /** What the last action did: kept across re-renders (the event it caused reloads the detail just after). */
  status(text) {
    this.statusText = text;
    const element = document.getElementById("task-settings-status");
    if (element) element.textContent = text;
  }

  async save(task, form) {
    const autonomy = form.querySelector("input[name='autonomy']:checked")?.value;
    const domains = [...form.querySelectorAll("input[name='domains']:checked")].map((input) => input.value);
    try {
      const updated = await this.api.patch(`/tasks/${task.id}/settings/`, { autonomy, permissions: { domains } });
      this.dirty = false;
      await this.load();
      const label = AUTONOMY.find(([value]) => value === updated.autonomy)?.[1] || updated.autonomy;
      this.status(t("Saved: {autonomy}; it may use {count} tool domains. It takes effect at its next decision.", { autonomy: t(label).toLowerCase(), count: updated.permissions.domains.length }));
    } catch (error) {
      this.status(problemText(error));
      await this.learnRole(error);
    }
  }

  async approveBudget(task, input) {
    try {
      await this.api.post("/billing/approvals/", { task: task.id, budget: Number(input.value) });
      await this.load();
      this.status(t("Approved a budget of {credits}.", { credits: credits(Number(input.value)) }));
      document.getElementById("task-budget-amount")?.focus();
    } catch (error) {
      this.problem(error);
      await this.learnRole(error);
    }
  }

  async resume(task) {
    try {
      const answer = await this.api.post(`/tasks/${task.id}/resume/`);
      if (answer.resume) this.resumes.set(task.id, { ...answer.resume, task: task.id, checked_at: new Date().toISOString() });
      await this.load();
      this.root.querySelector(".resume-verdict h4")?.setAttribute("tabindex", "-1");
      this.root.querySelector(".resume-verdict h4")?.focus();
    } catch (error) {
      this.problem(error);
      await this.learnRole(error);
    }
  }

  async move(task, action) {
    try {
      await this.api.post(`/tasks/${task.id}/${action}/`);
      await this.load();
      (document.getElementById("task-resume") || document.getElementById("task-pause"))?.focus();
    } catch (error) {
      this.problem(error);
      await this.learnRole(error);
    }
  }
}
