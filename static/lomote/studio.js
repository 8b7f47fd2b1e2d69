// The studio: chat with Main (messages, routes, task cards, generation progress), the task list with each task's
// detail (task_panel.js), the memory panel (memory.js) and the billing panel (billing.js) on the left; the canvas
// (canvas.js) on the right. A Flow run over a thread shows its progress and result in the chat (flow_threads.js).
// Live state arrives only through the workspace event log (live.js); an event that says a
// panel changed triggers a REST fetch of that panel.

import { langAttrs, N_, t } from "./i18n.js";
import { ApiError, workspaceApi } from "./api.js";
import { ApiKeysPanel } from "./api_keys.js";
import { BillingPanel } from "./billing.js";
import { Canvas } from "./canvas.js";
import { h, progressBar } from "./dom.js";
import { FlowThreads } from "./flow_threads.js";
import { LiveLog } from "./live.js";
import { MembersPanel } from "./members.js";
import { MemoryPanel } from "./memory.js";
import { Tabs } from "./tabs.js";
import { TaskPanel } from "./task_panel.js";

const root = document.getElementById("studio");
const chat = document.getElementById("chat");
const taskList = document.getElementById("tasks");
const connection = document.getElementById("connection");
const select = document.getElementById("workspace");
const compose = document.getElementById("compose");
const messageInput = document.getElementById("message");
const composeError = document.getElementById("compose-error");
const composeTarget = document.getElementById("compose-target");
const chatEmpty = document.getElementById("chat-empty");
// Under 1,000 px the panels are tabs; wider, every panel shows and the tabs only remember the choice.
const tabs = new Tabs(root);

// The empty chat says what one can ask for; an example goes into the message box, to send as is or to change.
const showEmptyChat = () => { chatEmpty.hidden = chat.childElementCount > 0; };
new MutationObserver(showEmptyChat).observe(chat, { childList: true });
for (const example of chatEmpty.querySelectorAll("button.example")) {
  example.addEventListener("click", () => {
    messageInput.value = example.textContent;
    messageInput.focus();
  });
}

const ROUTES = {
  new_task: N_("routed to a new task:"),
  follow_up: N_("routed as a follow-up to"),
  direct: N_("routed directly to"),
  lightweight: N_("handled as a quick job:"),
  answer: N_("answered by Main"),
  clarify: N_("Main asks which task you mean"),
};

/** Arrow keys move between a card's buttons (Tab still works); typing in the adjust field is left alone. */
function arrowsBetweenButtons(event) {
  if (!["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown"].includes(event.key)) return;
  if (event.target.tagName !== "BUTTON") return;
  const buttons = [...event.currentTarget.querySelectorAll("button:not([disabled])")];
  const at = buttons.indexOf(event.target);
  if (at < 0) return;
  const step = event.key === "ArrowLeft" || event.key === "ArrowUp" ? -1 : 1;
  buttons[(at + step + buttons.length) % buttons.length].focus();
  event.preventDefault();
}

const FINISHED = ["succeeded", "failed", "timed_out"];
// The chat after a reload shows this many of the latest messages, cards and jobs, merged by time.
const CHAT_PAGE = 50;

/** When a chat item happened, in ms: its place in the chat, live and after a reload alike. */
function at(iso) {
  const ms = Date.parse(iso || "");
  return Number.isNaN(ms) ? Date.now() : ms;
}

/** Who wrote a message: a member by name, an API key by its name — never "You" for what the viewer did not send. */
function authorLabel(message) {
  if (message.author) return message.author;
  if (message.api_key) return `${t("API key")} · ${message.api_key.name}`;
  if (message.api_request) return t("API key");
  return t("A former member");
}

// The buttons of a card's actions, when the card gives them no label of its own.
const ACTION_NAMES = { confirm: N_("Confirm"), approve: N_("Approve"), decline: N_("Decline"), keep: N_("Keep"), choose: N_("Choose") };

/** What a resolved card says about its resolution. */
function resolutionText(card) {
  const { action, label, text } = card.resolution;
  const by = card.resolved_by ? t(" by {name}", { name: card.resolved_by }) : "";
  const said = {
    choose: N_("Chose “{label}”{by}"),
    confirm: N_("Confirmed{by}"),
    approve: N_("Approved{by}"),
    decline: N_("Declined{by}"),
    adjust: N_("Asked for changes{by}: {text}"),
    answer: N_("Answered{by}: {text}"),
    iterate: N_("Asked for another version{by}: {text}"),
    keep: N_("Kept as a task{by}"),
  }[action];
  return said ? t(said, { label, by, text: text || "" }) : `${action}${by}`;
}

class Studio {
  constructor(workspaceId) {
    this.workspaceId = workspaceId;
    this.api = workspaceApi(workspaceId);
    this.userId = Number(root.dataset.userId);
    this.tasks = new Map();
    this.cards = new Map(); // card id → its element in the chat
    this.jobs = new Map(); // job id → its progress entry in the chat
    this.messages = new Set();
    this.replies = new Map(); // "turn:index" → the agent's words from that step, in the chat
    this.asked = new Map(); // inbox message id → the person's words it carries (what a reply answers)
    this.talkedTo = new Set(); // quick tasks that received a message after the one that made them
    this.askedAt = new Map(); // clarification card id → when the message it asks about was sent
    // Where the next message goes besides Main: the artifact open in the viewer (delivered to the task that made
    // it), until the person removes it from the compose box or closes the viewer. null: to Main, routed there.
    this.target = null;
    this.canvas = new Canvas({
      api: this.api, workspaceId, userId: this.userId, onError: (e) => this.error(e), onCard: (cardId) => this.revealCard(cardId),
      describeTask: (taskId) => this.taskLabel(taskId),
      onOpen: (artifact) => {
        tabs.show("canvas");
        this.setTarget({ artifact: artifact.id, title: artifact.title, kind: artifact.kind, task: artifact.created_by_task_id });
      },
      onClose: (artifactId) => { if (this.target?.artifact === artifactId) this.setTarget(null); },
    });
    this.memory = new MemoryPanel({ api: this.api, userId: this.userId, onCard: (cardId) => this.revealCard(cardId) });
    // The memory panel names people from the member list: a new member's name is learnt here.
    this.apiKeys = new ApiKeysPanel({ api: this.api, workspaceId, isOwner: () => this.members.isOwner });
    // The member list names people for the memory panel and says whether the person is an owner (API keys).
    this.members = new MembersPanel({
      api: this.api, userId: this.userId,
      onChange: (members) => {
        members.forEach((m) => this.memory.members.set(m.user_id, m.username));
        this.apiKeys.load().catch((e) => this.apiKeys.problem(e));
      },
    });
    this.flowThreads = new FlowThreads({
      api: this.api, chat, taskLabel: (taskId) => this.taskLabel(taskId), onCard: (cardId) => this.revealCard(cardId), scroll: () => this.scroll(),
    });
    this.live = null;
  }

  async start() {
    chat.replaceChildren();
    taskList.replaceChildren();
    this.setTarget(null);
    const workspace = await this.api.get("/");
    const onCard = (cardId) => this.revealCard(cardId);
    this.billing = new BillingPanel({ api: this.api, role: workspace.role, taskLabel: (id) => this.taskLabel(id), onCard });
    this.taskPanel = new TaskPanel({
      api: this.api, role: workspace.role, onCard, onToggle: () => this.renderTasks(),
      flowForm: (thread, prefix) => this.flowThreads.form(thread, prefix),
    });
    // Editors and owners run a Flow over the Main thread; its result comes back here as a message from the Flow.
    const mainFlow = document.getElementById("flow-thread-main");
    mainFlow.hidden = !["owner", "editor"].includes(workspace.role);
    const body = document.getElementById("flow-thread-main-body");
    const toggle = document.getElementById("flow-thread-main-toggle");
    body.replaceChildren(...(mainFlow.hidden ? [] : [this.flowThreads.form("main", "flow-thread-main")]));
    body.hidden = true;
    toggle.setAttribute("aria-expanded", "false");
    toggle.onclick = () => {
      body.hidden = !body.hidden;
      toggle.setAttribute("aria-expanded", String(!body.hidden));
      if (!body.hidden) body.querySelector("select")?.focus();
    };
    // Load the panels as of this seq; the socket replays everything after it, so nothing falls between
    // (a replayed event for something already shown updates it in place: messages by id, cards, jobs).
    const after = workspace.last_event_seq || 0;
    await Promise.all([this.loadChat(), this.billing.load(), this.memory.load(), this.members.load()]);
    await this.canvas.load();
    this.live = new LiveLog({
      workspaceId: this.workspaceId,
      after,
      onEvent: (event) => this.apply(event),
      onStatus: (status) => this.status(status),
    });
    this.live.connect();
  }

  stop() {
    if (this.live) this.live.stop();
  }

  status(status) {
    connection.textContent = t(status);
    connection.dataset.state = status;
    root.dataset.connection = status;
  }

  error(error) {
    composeError.textContent = error instanceof ApiError ? error.message : String(error);
    composeError.hidden = false;
  }

  // --- chat ---------------------------------------------------------------------------------------------

  /**
   * The chat as it happened: the latest messages, cards (resolved ones too) and generation jobs, fetched
   * together with the tasks that name them, then merged by creation time and rendered once.
   */
  async loadChat() {
    const [messages, cards, jobs, replies] = await Promise.all([
      this.api.get(`/messages/?limit=${CHAT_PAGE}`),
      this.api.get(`/cards/?limit=${CHAT_PAGE}`),
      this.api.get(`/jobs/?limit=${CHAT_PAGE}`),
      this.api.get(`/replies/?limit=${CHAT_PAGE}`),
      this.loadTasks(),
    ]);
    // A list with more behind its page only covers the time since its oldest item: older items of the other
    // lists would show without their context, so the chat starts where every list is complete.
    const since = Math.max(...[messages, cards, jobs, replies].map((page) => (page.next && page.results.length ? at(page.results.at(-1).created_at) : -Infinity)));
    const items = [
      ...messages.results.map((m) => ({ at: at(m.created_at), rank: 0, id: m.id, show: () => this.showMessage(m), task: m.task })),
      ...cards.results.map((c) => ({ at: at(c.created_at), rank: 1, id: c.id, show: () => this.showCard(c), task: c.task })),
      ...jobs.results.map((j) => ({ at: at(j.created_at), rank: 2, id: j.id, show: () => this.showJob(this.jobEntry(j), j.created_at), task: j.task_id })),
      ...replies.results.map((r) => ({ at: at(r.created_at), rank: 3, id: r.id, show: () => this.showReply(r), task: r.task })),
    ].filter((item) => item.at >= since);
    // A clarification card is stored just before the message that asked it: it shows after that message.
    for (const m of messages.results) if (m.route === "clarify" && m.card) this.askedAt.set(m.card, at(m.created_at));
    for (const item of items) if (item.rank === 1 && this.askedAt.has(item.id)) item.at = Math.max(item.at, this.askedAt.get(item.id));
    // Name every task the chat mentions before the first line is drawn (quick and older tasks are not in the list).
    const missing = new Set(items.map((item) => item.task).filter((id) => id && !this.tasks.has(id)));
    await Promise.all([...missing].map((id) => this.loadTask(id).catch(() => {})));
    items.sort((a, b) => a.at - b.at || a.rank - b.rank || a.id - b.id);
    chat.replaceChildren();
    for (const item of items) item.show();
    showEmptyChat(); // a chat that stays empty changes nothing the observer would see
    this.scroll();
  }

  /**
   * Put chat elements where their time says: live items almost always land at the end, but an answer that
   * arrives after a newer event (a POST's own response, a card fetched late) still takes its place.
   */
  place(key, ...elements) {
    for (const element of elements) element.dataset.at = String(key);
    let before = chat.lastElementChild;
    while (before && Number(before.dataset.at) > key) before = before.previousElementSibling;
    if (before) before.after(...elements);
    else chat.prepend(...elements);
  }

  cardSubject(card) {
    if (card.task) return this.taskName(card.task);
    return card.payload && card.payload.run ? t("Flow run #{id}", { id: card.payload.run }) : t("workspace");
  }

  /** A task named in the studio's language, for the chat (other panels use taskLabel). */
  taskName(taskId) {
    const task = this.tasks.get(taskId);
    return task ? t("task #{id} “{title}”", { id: taskId, title: task.title }) : t("task #{id}", { id: taskId });
  }

  taskLabel(taskId) {
    const task = this.tasks.get(taskId);
    return task ? t("task #{id} “{title}”", { id: taskId, title: task.title }) : t("task #{id}", { id: taskId });
  }

  showMessage(message) {
    if (this.messages.has(message.id)) return;
    this.messages.add(message.id);
    if (message.route === "flow") {
      // Not the person's words: a Flow run's result posted to Main.
      const item = this.flowThreads.result({ key: `main:${message.id}`, runId: message.flow_run, thread: "main", text: message.text });
      if (item) item.dataset.at = String(at(message.created_at));
      return;
    }
    if (message.inbox_message) this.asked.set(message.inbox_message, message.text);
    if (message.task && ["follow_up", "direct"].includes(message.route) && !this.talkedTo.has(message.task)) {
      this.talkedTo.add(message.task);
      this.renderTasks();
    }
    const route = ROUTES[message.route] ? t(ROUTES[message.route]) : message.route;
    const routeText = message.task ? `${route} ${this.taskName(message.task)}` : route;
    // The answer to Main's question (a clarification card) carries the same words again: shown once, above;
    // here only where they went.
    const chosen = message.card && message.route !== "clarify" && this.askedAt.has(message.card);
    const item = h(
      "li",
      { class: `msg person${chosen ? " chosen" : ""}`, "data-message": String(message.id) },
      h("p", { class: "who", "data-api-key": message.api_key?.id ?? null, text: authorLabel(message) }),
      chosen ? null : h("p", { class: "text", dir: "auto", text: message.text }),
      h("p", { class: "route", "data-route": message.route, "data-task": message.task ?? "", ...langAttrs() }, `→ ${routeText}`),
      // Why it went there, in the Router's own words (and the person's language).
      message.route_reason ? h("p", { class: "why", dir: "auto", text: message.route_reason }) : null,
      chosen ? h("p", { class: "why", ...langAttrs(), text: t("Your message above, where you chose on Main's question.") }) : null,
    );
    const reply = message.reply || message.refusal
      ? h("li", { class: "msg main" }, h("p", { class: "who", text: "Main" }), h("p", { class: "text", dir: "auto", text: message.reply || message.refusal }))
      : null;
    const key = at(message.created_at);
    this.place(key, ...[item, reply].filter(Boolean));
    // Its clarification card was stored (and may have arrived) just before it: the question follows the message.
    if (message.route === "clarify" && message.card) {
      this.askedAt.set(message.card, key);
      const card = this.cards.get(message.card);
      if (card) this.place(key, card);
    }
    this.scroll();
  }

  scroll() {
    chat.scrollTop = chat.scrollHeight;
  }

  /**
   * The agent's own words in a task (a question, a note, why it stopped, what it made), from REST or live from
   * its step.committed event; shown once per step, after the person's message it answers.
   */
  showReply(reply) {
    const key = `${reply.turn}:${reply.index}`;
    if (this.replies.has(key) || !(reply.text || "").trim()) return;
    const answered = (reply.answers || []).map((id) => this.asked.get(id)).find(Boolean);
    const item = h(
      "li",
      { class: "msg agent", "data-reply": key, "data-task": String(reply.task) },
      h("p", { class: "who", ...langAttrs() }, h("bdi", { text: this.taskName(reply.task) })),
      answered ? h("p", { class: "answers", ...langAttrs() }, t("↳ answering “{text}”", { text: answered.length > 80 ? `${answered.slice(0, 79)}…` : answered })) : null,
      h("p", { class: "text", dir: "auto", text: reply.text }),
    );
    this.replies.set(key, item);
    this.place(at(reply.created_at), item);
    this.scroll();
  }

  // --- where a message goes -------------------------------------------------------------------------------

  /** Show the compose box's target as a chip with a button that removes it (then the message goes to Main). */
  setTarget(target) {
    this.target = target;
    composeTarget.hidden = !target;
    composeTarget.dataset.artifact = target ? String(target.artifact) : "";
    if (!target) {
      composeTarget.replaceChildren();
      return;
    }
    // A work a task made goes to that task; one no task made goes to Main with a note of what it is about.
    const where = target.task ? t("Your message goes to its task, {task}.", { task: this.taskLabel(target.task) }) : t("Your message goes to Main, about this artifact.");
    composeTarget.replaceChildren(
      h("span", { class: "chip", id: "compose-target-chip" },
        h("span", { class: "chip-label", text: t("To: ") }),
        h("bdi", { class: "chip-title", text: target.title }),
        h("span", { class: "chip-kind", text: ` (${t(target.kind)})` }),
        h("button", {
          type: "button", class: "chip-remove", id: "compose-target-remove",
          "aria-label": t("Remove “{title}” as the target: send to Main instead", { title: target.title }),
          title: t("Send to Main instead"),
          onclick: () => {
            this.setTarget(null);
            messageInput.focus();
          },
        }, "×")),
      h("span", { class: "hint", text: ` ${where}` }),
    );
  }

  async send(text) {
    composeError.hidden = true;
    const body = { text };
    if (this.target) body.artifact = this.target.artifact;
    const message = await this.api.post("/messages/", body);
    if (message.task && !this.tasks.has(message.task)) await this.loadTask(message.task);
    this.showMessage(message);
  }

  // --- tasks --------------------------------------------------------------------------------------------

  async loadTasks() {
    const page = await this.api.get("/tasks/?limit=100");
    for (const task of page.results) this.tasks.set(task.id, task);
    this.renderTasks();
  }

  async loadTask(taskId) {
    const task = await this.api.get(`/tasks/${taskId}/`);
    this.tasks.set(task.id, task);
    this.renderTasks();
  }

  renderTasks() {
    // Quick (lightweight) tasks stay out of the list: their result is on its card in the chat and on the canvas.
    // One the person went on talking to (a message routed to it after the request that made it) joins the list,
    // as does a promoted one (task.promoted): it is a conversation now, and the place to see it is here.
    const tasks = [...this.tasks.values()].filter((t) => t.kind === "persistent" || this.talkedTo.has(t.id)).sort((a, b) => b.id - a.id);
    const opened = this.taskPanel?.taskId;
    // Rows are kept and updated in place, keyed by task: events arrive while a person clicks, and a row rebuilt
    // between the press and the release of a click would swallow it (and lose the keyboard focus).
    const rows = new Map([...taskList.children].map((li) => [Number(li.dataset.task), li]));
    const wanted = tasks.map((task) => {
      const li = rows.get(task.id) || this.taskRow(task);
      rows.delete(task.id);
      const done = (task.checklist || []).filter((i) => i.status === "done").length;
      const total = (task.checklist || []).length;
      li.dataset.status = task.status;
      const open = li.querySelector(".task-open");
      open.setAttribute("aria-expanded", String(opened === task.id));
      open.querySelector("bdi").textContent = task.title;
      const badge = li.querySelector(".badge");
      badge.className = `badge ${task.status}`;
      badge.textContent = t(task.status);
      li.querySelector(".task-stop").textContent = task.stop_reason ? t(task.stop_reason.replaceAll("_", " ")) : "";
      li.querySelector(".task-progress").textContent = total ? t("{done}/{total} done", { done, total }) : "";
      return li;
    });
    rows.forEach((li) => li.remove());
    wanted.forEach((li, index) => {
      if (taskList.children[index] !== li) taskList.insertBefore(li, taskList.children[index] || null);
    });
  }

  /** A task's row in the list: its title opens its detail; status, stop reason and progress are filled in later. */
  taskRow(task) {
    return h(
      "li",
      { class: "task", "data-task": String(task.id) },
      h("button", {
        type: "button", class: "link task-open task-title", "aria-controls": "task-detail",
        onclick: () => this.taskPanel.open(task.id).catch((e) => this.error(e)),
      }, `#${task.id} `, h("bdi")),
      h("span", { class: "badge" }),
      h("span", { class: "reason task-stop" }),
      h("span", { class: "reason task-progress" }),
    );
  }

  // --- cards --------------------------------------------------------------------------------------------

  async fetchCard(cardId) {
    this.showCard(await this.api.get(`/cards/${cardId}/`));
  }

  /** Show a card and bring it into view with the keyboard on it (a card another panel asked for). */
  async revealCard(cardId) {
    await this.fetchCard(cardId);
    tabs.show("chat");
    const heading = this.cards.get(cardId)?.querySelector(".card-title");
    heading?.scrollIntoView({ block: "center" });
    heading?.focus();
  }

  showCard(card) {
    const existing = this.cards.get(card.id);
    // The same card fetched again (its event, a reload of the list) is left as it is: rebuilding it would swallow
    // a click in progress and drop what the person was typing in its field.
    const signature = JSON.stringify(card);
    if (existing && existing.dataset.signature === signature) return;
    const element = this.renderCard(card);
    element.dataset.signature = signature;
    if (existing && card.status === "open") {
      existing.querySelectorAll("input[id]").forEach((input) => {
        const kept = element.querySelector(`#${CSS.escape(input.id)}`);
        if (kept && input.value) kept.value = input.value;
      });
    }
    // A card is re-rendered when its event arrives (possibly just after another panel focused it): the keyboard
    // stays where it was — the same control of the new element, else its heading.
    const active = existing?.contains(document.activeElement) ? document.activeElement : null;
    if (existing) {
      element.dataset.at = existing.dataset.at;
      existing.replaceWith(element);
    } else this.place(Math.max(at(card.created_at), this.askedAt.get(card.id) ?? -Infinity), element);
    this.cards.set(card.id, element);
    if (active) {
      const same = active.id ? element.querySelector(`#${CSS.escape(active.id)}`) : null;
      const action = active.dataset?.action ? element.querySelector(`[data-action="${active.dataset.action}"]`) : null;
      (same || action || element.querySelector(".card-title"))?.focus();
    }
    this.scroll();
  }

  renderCard(card) {
    const open = card.status === "open";
    const labels = Object.fromEntries((card.options || []).map((o) => [o.id, o.label]));
    const headingId = `card-${card.id}-title`;
    const children = [
      h("h2", { id: headingId, class: "card-title", tabindex: "-1", dir: "auto", text: card.title }),
      h("p", { class: "card-meta", ...langAttrs(), text: `${t("{kind} card", { kind: t(card.kind) })} · ${this.cardSubject(card)} · ${t(card.status)}` }),
      card.body ? h("p", { class: "card-body", dir: "auto", text: card.body }) : null,
      card.kind === "result" ? this.renderResult(card) : null,
    ];
    if (open) {
      const actions = h("div", { class: "card-actions", role: "group", "aria-label": t("Answer: {title}", { title: card.title }), onkeydown: arrowsBetweenButtons, ...langAttrs() });
      for (const action of card.actions || []) {
        if (action === "choose") {
          for (const option of card.options || []) {
            actions.append(h("button", { type: "button", dir: "auto", "data-action": "choose", "data-option": option.id, onclick: () => this.act(card, { action, option: option.id }) }, option.label || option.id));
          }
        } else if (action === "adjust" || action === "iterate") {
          const inputId = `card-${card.id}-${action}`;
          // The runtime's card for a task that stopped takes the request again, in the person's own words.
          const stalled = (card.payload || {}).source === "stalled";
          const input = h("input", { id: inputId, type: "text", placeholder: t(stalled ? "Say it in your own words" : "What should change?") });
          const label = t(stalled ? N_("Say it differently") : action === "adjust" ? N_("Adjust") : N_("Change"));
          // A form of its own, so Enter in the text field sends the adjustment.
          actions.append(
            h("form", { class: "adjust", onsubmit: (e) => { e.preventDefault(); this.act(card, { action, text: input.value }); } },
              h("label", { for: inputId, text: label }),
              input,
              h("button", { type: "submit", "data-action": action }, labels[action] || (stalled ? t("Send") : label))),
          );
        } else {
          const label = labels[action] || t(ACTION_NAMES[action] || action);
          actions.append(h("button", { type: "button", "data-action": action, class: action === "approve" || action === "confirm" ? "primary" : "", onclick: () => this.act(card, { action }) }, label));
        }
      }
      children.push(actions);
    } else if (card.resolution && card.resolution.action) {
      children.push(h("p", { class: "card-resolution", "data-resolution": card.resolution.action, ...langAttrs(), text: resolutionText(card) }));
    }
    children.push(h("p", { class: "error", role: "alert", hidden: true }));
    return h("li", { class: `msg task-card ${card.status}`, "data-card": String(card.id), "data-status": card.status, "aria-labelledby": headingId }, ...children);
  }

  /** A quick request's result: each artifact it made, opened on the canvas from here. */
  renderResult(card) {
    const artifacts = (card.payload && card.payload.artifacts) || [];
    return h(
      "ul",
      { class: "card-results" },
      ...artifacts.map((a) =>
        h("li", { "data-artifact": String(a.artifact) },
          h("button", { type: "button", class: "link result-open", onclick: () => this.canvas.open(a.artifact).catch((e) => this.error(e)) },
            h("bdi", { text: a.title }), ` · ${t(a.kind)} v${a.version ?? "?"}`)),
      ),
    );
  }

  async act(card, body) {
    const element = this.cards.get(card.id);
    const problem = element.querySelector(".error");
    if ((body.action === "adjust" || body.action === "iterate") && !(body.text || "").trim()) {
      problem.textContent = t("Say what should change, then press {button}.", { button: t(body.action === "adjust" ? N_("Adjust") : N_("Iterate")) });
      problem.hidden = false;
      element.querySelector(`#card-${card.id}-${body.action}`)?.focus();
      return;
    }
    const hadFocus = element.contains(document.activeElement);
    // A disabled button drops the keyboard to <body>: hold it on the card's title while the action is in flight.
    if (hadFocus) element.querySelector(".card-title")?.focus();
    try {
      for (const button of element.querySelectorAll("button")) button.disabled = true;
      const answered = await this.api.post(`/cards/${card.id}/actions/`, body);
      delete element.dataset.signature; // its buttons are disabled: the answer is always drawn afresh
      this.showCard(answered);
      // Keep the keyboard user where they were: on the (now resolved) card.
      if (hadFocus) this.cards.get(card.id)?.querySelector(".card-title")?.focus();
    } catch (error) {
      for (const button of element.querySelectorAll("button")) button.disabled = false;
      problem.textContent = error.message;
      problem.hidden = false;
    }
  }

  // --- generation progress ----------------------------------------------------------------------------

  /** A job from the REST API as its generation.* events describe it: a finished one shows its final state. */
  jobEntry(job) {
    return { job: job.id, task: job.task_id, kind: job.kind, status: job.status, progress: job.progress };
  }

  /** A generation job's progress line; `when` is when it started (its first event's time when live). */
  showJob(data, when) {
    let entry = this.jobs.get(data.job);
    if (!entry) {
      const bar = progressBar(data.progress, t("Generation {job} progress", { job: data.job }));
      const label = h("span", { class: "job-label" });
      entry = { element: h("li", { class: "msg job", "data-job": String(data.job) }, label, bar), bar, label };
      this.jobs.set(data.job, entry);
      this.place(at(when), entry.element);
      this.scroll();
    }
    const finished = FINISHED.includes(data.status);
    entry.bar.value = finished && data.status === "succeeded" ? 100 : data.progress || 0;
    entry.element.dataset.status = data.status;
    // A job no task asked for (a Flow run's, or one an integrator submitted) is named alone.
    const forWhom = data.task ? t(" for {task}", { task: this.taskLabel(data.task) }) : "";
    entry.label.textContent = `${t(data.kind || "generation")} #${data.job}${forWhom}: ${t(data.status)}${finished ? "" : ` ${data.progress || 0}%`}`;
  }

  // --- the event log ------------------------------------------------------------------------------------

  apply(event) {
    const data = event.data || {};
    const kind = event.kind;
    root.dataset.lastSeq = String(event.seq);
    if (kind === "main.message") {
      if (!this.messages.has(data.message)) this.api.get(`/messages/?limit=20`).then((page) => page.results.filter((m) => m.id === data.message).forEach((m) => this.showMessage(m)));
    } else if (kind === "task.created") {
      this.tasks.set(data.task, { ...(this.tasks.get(data.task) || {}), id: data.task, title: data.title, kind: data.kind, status: "active", stop_reason: "" });
      this.renderTasks();
      if (data.kind === "persistent") tabs.mark("tasks");
    } else if (kind === "task.promoted") {
      const task = this.tasks.get(data.task);
      if (task) { task.kind = data.kind; this.renderTasks(); } else this.loadTask(data.task);
      tabs.mark("tasks");
    } else if (kind === "task.status") {
      const task = this.tasks.get(data.task) || { id: data.task, title: "" };
      Object.assign(task, { status: data.status, stop_reason: data.stop_reason, waiting_for: data.waiting_for });
      this.tasks.set(data.task, task);
      this.renderTasks();
      if (!task.title) this.loadTask(data.task);
    } else if (kind === "step.committed") {
      if (data.text) this.showReply({ task: data.task, turn: data.turn, index: data.step, text: data.text, answers: data.consumed_messages, created_at: event.at });
    } else if (kind === "task.checklist") {
      const task = this.tasks.get(data.task);
      if (task) { task.checklist = data.checklist; this.renderTasks(); }
    } else if (kind.startsWith("card.")) {
      this.fetchCard(data.card);
      if (kind === "card.opened") tabs.mark("chat");
      if (data.kind === "quote") this.billing.apply(event);
    } else if (kind.startsWith("generation.")) {
      this.showJob(data, event.at);
      if (kind === "generation.succeeded" && data.artifact) {
        this.canvas.artifactChanged(data.artifact, { version: data.version, author: { type: "task", task: data.task } });
        tabs.mark("canvas");
      }
    } else if (kind.startsWith("billing.")) {
      this.billing.apply(event);
    } else if (kind === "artifact.created" || kind === "artifact.version_added") {
      this.canvas.artifactChanged(data.artifact, data);
      tabs.mark("canvas");
    } else if (kind === "artifact.deleted") {
      this.canvas.artifactDeleted(data.artifact, data);
    } else if (kind === "flow.node" || kind === "flow.run" || kind === "flow.stale") {
      this.canvas.flowEvent(kind, data);
      this.flowThreads.apply(kind, data);
    } else if (kind === "inbox.posted" && data.source === "flow") {
      this.flowThreads.taskResult(data).catch((e) => this.error(e));
    } else if (kind.startsWith("memory.")) {
      this.memory.apply(event);
    } else if (kind.startsWith("member.")) {
      this.members.apply(event);
    } else if (kind.startsWith("api_key.")) {
      this.apiKeys.apply(event);
    }
    if (kind.startsWith("task.") || kind.startsWith("card.") || kind.startsWith("billing.") || kind.startsWith("inbox.") || kind === "step.committed") this.taskPanel.apply(event);
  }
}

let studio = null;

async function open(workspaceId) {
  if (studio) studio.stop();
  studio = new Studio(workspaceId);
  window.lomoteStudio = studio; // for the browser tests and the console
  try {
    await studio.start();
    root.dataset.ready = "true";
  } catch (error) {
    studio.error(error);
  }
}

compose.addEventListener("submit", async (event) => {
  event.preventDefault();
  const text = messageInput.value.trim();
  if (!text) return;
  const button = document.getElementById("send");
  button.disabled = true;
  try {
    await studio.send(text);
    messageInput.value = "";
  } catch (error) {
    studio.error(error);
  } finally {
    button.disabled = false;
  }
});

messageInput.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    compose.requestSubmit();
  }
});

select.addEventListener("change", () => open(Number(select.value)));
open(Number(select.value));
