// Flows run over a conversation thread (POST …/flows/<id>/runs/): the form that starts one over Main or over a
// task's conversation, the run's live progress in the chat (its flow.run / flow.node events name the thread), and
// its result, a message from the Flow posted in that thread when the run ends (a Main message with route `flow`,
// or a task message with source `flow`).

import { ApiError } from "./api.js";
import { h, progressBar } from "./dom.js";
import { N_, t } from "./i18n.js";

const DEFAULT_MESSAGES = 20;
const MAX_MESSAGES = 50;
const ENDED = ["done", "failed", "cancelled"];
const RUN_STATUS = {
  awaiting_approval: N_("waits for a spending approval (see its quote card)"),
  running: N_("running"),
  done: N_("done"),
  failed: N_("failed"),
  cancelled: N_("did not run"),
};

function threadKey(thread) {
  return thread === "main" ? "main" : `task:${thread.task}`;
}

export class FlowThreads {
  /** api: the workspace's REST client; chat: the chat list; taskLabel(id): how the studio names a task. */
  constructor({ api, chat, taskLabel, onCard, scroll }) {
    this.api = api;
    this.chat = chat;
    this.taskLabel = taskLabel;
    this.onCard = onCard || (() => {});
    this.scroll = scroll || (() => {});
    this.runs = new Map(); // run id → {element, nodes: Map(node id → status), thread, status}
    this.titles = new Map(); // Flow artifact id → its title (a promise while it loads)
    this.results = new Set(); // ids of result messages already shown ("main:<id>", "task:<id>")
  }

  where(thread) {
    return thread === "main" ? t("in Main") : t("in {task}", { task: this.taskLabel(thread.task) });
  }

  title(artifactId) {
    if (!this.titles.has(artifactId)) {
      this.titles.set(artifactId, this.api.get(`/artifacts/${artifactId}/`).then((a) => a.title).catch(() => `#${artifactId}`));
    }
    return this.titles.get(artifactId);
  }

  // --- starting a run -------------------------------------------------------------------------------------

  /** A form that runs a chosen Flow over `thread` ("main" or {task: id}); ids are made unique by `prefix`. */
  form(thread, prefix) {
    const select = h("select", { id: `${prefix}-flow` }, h("option", { value: "", text: t("Loading Flows…") }));
    const count = h("input", { id: `${prefix}-messages`, type: "number", min: "1", max: String(MAX_MESSAGES), step: "1", value: String(DEFAULT_MESSAGES) });
    const status = h("p", { id: `${prefix}-status`, class: "billing-status", role: "status", "aria-live": "polite" });
    const button = h("button", { type: "submit", id: `${prefix}-run` }, t("Run the Flow"));
    const form = h("form", {
      class: "inline-form flow-thread-form",
      "data-thread": threadKey(thread),
      onsubmit: (event) => { event.preventDefault(); this.start(thread, select, count, status, button); },
    },
    h("label", { for: `${prefix}-flow`, text: "Flow" }), select,
    h("label", { for: `${prefix}-messages`, text: t("over the last") }), count,
    h("span", { text: t("messages") }), button, status);
    this.api.get("/artifacts/?kind=flow&limit=100").then((page) => {
      const flows = page.results || [];
      select.replaceChildren(...(flows.length ? flows.map((f) => h("option", { value: String(f.id), text: f.title })) : [h("option", { value: "", text: t("No Flow in this workspace yet") })]));
      button.disabled = flows.length === 0;
    }).catch((error) => { status.textContent = error.message; });
    return form;
  }

  async start(thread, select, count, status, button) {
    if (!select.value) return;
    button.disabled = true;
    status.textContent = "";
    try {
      const run = await this.api.post(`/flows/${select.value}/runs/`, { thread, messages: Number(count.value) || DEFAULT_MESSAGES });
      this.show({ run: run.id, artifact: run.artifact_id, status: run.status, thread: run.thread });
      for (const node of run.nodes || []) this.node({ run: run.id, node: node.node_id, status: node.status }, false);
      status.textContent = run.status === "awaiting_approval"
        ? t("Run #{id} waits for a spending approval of {cost} credits: see its quote card in the chat.", { id: run.id, cost: run.cost })
        : t("Run #{id} started: its steps, then its result, show in the chat.", { id: run.id });
      if (run.card && run.card.status === "open") this.onCard(run.card.id);
    } catch (error) {
      status.textContent = error instanceof ApiError ? error.message : String(error);
    } finally {
      button.disabled = false;
    }
  }

  // --- live progress --------------------------------------------------------------------------------------

  /** A flow.run or flow.node event: only runs over a thread are shown in the chat. */
  apply(kind, data) {
    if (!data.thread) return;
    if (kind === "flow.run") this.show(data);
    else if (kind === "flow.node") this.node(data, true);
  }

  entry(data) {
    let run = this.runs.get(data.run);
    if (run) return run;
    const label = h("p", { class: "who" });
    const status = h("p", { class: "flow-run-status", role: "status" });
    const bar = progressBar(0, t("Flow run {id} progress", { id: data.run }));
    const nodes = h("ol", { class: "flow-run-nodes", "aria-label": t("Steps of Flow run {id}", { id: data.run }) });
    const element = h("li", { class: "msg flow-run", "data-run": String(data.run), "data-thread": threadKey(data.thread) }, label, status, bar, nodes);
    run = { element, label, status, bar, nodes, nodeStatus: new Map(), thread: data.thread, runStatus: null, fetched: false };
    this.runs.set(data.run, run);
    this.chat.append(element);
    this.scroll();
    label.textContent = `${t("Flow run #{id}", { id: data.run })} ${this.where(data.thread)}`;
    if (data.artifact) this.title(data.artifact).then((title) => { label.textContent = `${t("Flow “{title}” · run #{id}", { title, id: data.run })} ${this.where(data.thread)}`; });
    // The run's nodes, for the ones no event has named yet (events are newer than this answer).
    this.api.get(`/flow-runs/${data.run}/`).then((detail) => {
      for (const node of detail.nodes || []) if (!run.nodeStatus.has(node.node_id)) this.node({ run: data.run, node: node.node_id, status: node.status }, false);
      if (!run.runStatus) this.show({ ...data, status: detail.status });
    }).catch(() => {});
    return run;
  }

  show(data) {
    const run = this.entry(data);
    if (data.status) run.runStatus = data.status;
    run.element.dataset.status = run.runStatus || "";
    this.render(run, data.run);
  }

  node(data, live) {
    const run = this.entry(data);
    if (!live && run.nodeStatus.has(data.node)) return;
    run.nodeStatus.set(data.node, data.status);
    let item = run.nodes.querySelector(`[data-node="${CSS.escape(data.node)}"]`);
    if (!item) {
      item = h("li", { "data-node": data.node }, h("bdi", { text: data.node }), " ", h("span", { class: "badge" }));
      run.nodes.append(item);
    }
    const badge = item.querySelector(".badge");
    badge.textContent = t(data.status);
    badge.dataset.nodeStatus = data.status;
    item.dataset.nodeStatus = data.status;
    this.render(run, data.run);
  }

  render(run, runId) {
    const statuses = [...run.nodeStatus.values()];
    const settled = statuses.filter((s) => ["done", "failed", "skipped", "stale"].includes(s)).length;
    const ended = ENDED.includes(run.runStatus);
    run.bar.value = statuses.length ? Math.round((100 * settled) / statuses.length) : 0;
    run.bar.hidden = ended;
    const nodes = statuses.length ? ` · ${t("{settled}/{total} steps", { settled, total: statuses.length })}` : "";
    run.status.textContent = `${t("Run #{id}:", { id: runId })} ${RUN_STATUS[run.runStatus] ? t(RUN_STATUS[run.runStatus]) : run.runStatus || t("starting")}${ended ? "" : nodes}`;
  }

  // --- results --------------------------------------------------------------------------------------------

  /** A Flow's result in a thread, as a message from the Flow (a Main message with route `flow`, or a task message). */
  result({ key, runId, thread, text }) {
    if (this.results.has(key)) return null;
    this.results.add(key);
    const item = h("li", { class: "msg flow-result", "data-result": key, "data-run": String(runId || ""), "data-thread": threadKey(thread) },
      h("p", { class: "who", text: `${t("Flow result")} ${this.where(thread)}` }),
      h("p", { class: "text", dir: "auto", text }));
    const run = runId ? this.runs.get(runId) : null;
    if (run) run.element.after(item);
    else this.chat.append(item);
    this.scroll();
    return item;
  }

  /** inbox.posted with source `flow`: fetch the task's message and show it in the chat. */
  async taskResult(data) {
    if (this.results.has(`task:${data.message}`)) return;
    const base = `/tasks/${data.task}/messages/`;
    const head = await this.api.get(`${base}?limit=1`);
    const page = await this.api.get(`${base}?limit=10&offset=${Math.max(0, head.count - 10)}`);
    const message = page.results.find((m) => m.id === data.message);
    if (message) this.result({ key: `task:${message.id}`, runId: message.flow_run, thread: { task: data.task }, text: message.text });
  }
}
