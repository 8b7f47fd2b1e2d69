// The Flow editor: a canvas of nodes (positioned DOM elements with an input and an output port) and wires (SVG
// paths), hand-written rather than vendored (README "The Flow editor"): every node is real HTML — its form, its
// buttons, its run status — so the keyboard, screen readers and the axe scan reach it like the rest of the studio.
//
// Every change is one `flow/edits` request on the version the page shows (the server checks each node against that
// base: a 409 node_conflict is shown on the node, both sides). A node whose form has unsaved changes keeps the
// version it was read at, so a live refresh (another person's or the agent's edit) never lets a save overwrite
// what it did not see. Positions are the page's own (localStorage): the graph stores no layout.

import { ApiError, fetchText } from "./api.js";
import { h } from "./dom.js";
import { N_, t } from "./i18n.js";

const SVG = "http://www.w3.org/2000/svg";
const NODE_WIDTH = 230;
const COLUMN_GAP = 36;
const ROW_GAP = 24;
// What a new node of a type is called (then _2, _3… when taken).
const ID_STEM = {
  text_input: "input", artifact_input: "artifact", generate_text: "text", generate_image: "image",
  generate_video: "video", generate_3d: "model3d", router: "router", finish: "end",
};
const INPUT_TYPES = ["text_input", "artifact_input"]; // what a run may start at
const STATUSES = ["pending", "running", "done", "failed", "skipped", "stale", "cancelled"];
// A run's and a node's statuses are said through t(); these are the ones SAID_AS_VALUES (i18n.js) does not hold.
N_("awaiting_approval"); N_("re-running");

const viewerBody = () => document.getElementById("viewer-body");

/** The non-null branch of a nullable field (`anyOf: [X, {type: null}]`), and whether null is allowed. */
function unwrap(schema) {
  if (!schema.anyOf) return { field: schema, nullable: false };
  const field = schema.anyOf.find((s) => s.type !== "null") || {};
  return { field: { ...field, title: schema.title, description: schema.description, default: schema.default }, nullable: schema.anyOf.some((s) => s.type === "null") };
}

function safeId(text) {
  return String(text).replace(/[^A-Za-z0-9_-]/g, "_");
}

export class FlowEditor {
  constructor(canvas) {
    this.canvas = canvas; // the host: api, view, myVersions, runs, fileUrl, renderVersions, open
    this.types = null; // name → node type (flow-node-types)
    this.portTitles = {};
  }

  get api() { return this.canvas.api; }
  get view() { return this.canvas.view; }

  async loadTypes() {
    if (this.types) return;
    const described = await this.api.get("/flow-node-types/");
    this.types = new Map(described.node_types.map((type) => [type.name, type]));
    this.portTitles = Object.fromEntries(described.port_types.map((p) => [p.name, p.title]));
  }

  positionsKey() { return `lomote-flow-layout-${this.view.artifact.id}`; }

  loadPositions() {
    try { return JSON.parse(localStorage.getItem(this.positionsKey()) || "{}"); } catch { return {}; }
  }

  savePositions() {
    localStorage.setItem(this.positionsKey(), JSON.stringify(this.view.positions));
  }

  // --- reading and drawing -----------------------------------------------------------------------------

  /** Read the latest version and draw it. `live`: another writer's edit — unsaved node forms are kept. */
  async open({ live = false } = {}) {
    await this.loadTypes();
    const view = this.view;
    const artifact = (view.artifact = await this.api.get(`/artifacts/${view.artifact.id}/`));
    const text = await fetchText(this.canvas.fileUrl(artifact.id, artifact.current_version));
    const graph = text.trim() ? JSON.parse(text) : { nodes: {}, edges: [], start: null };
    if (!live) view.dirty = new Map();
    view.dirty = view.dirty || new Map(); // node id → {base, params}: a form edited and not saved yet
    view.positions = view.positions || this.loadPositions();
    Object.assign(view, { base: artifact.current_version, number: artifact.current_version, graph, seenVersion: Math.max(view.seenVersion, artifact.current_version) });
    const focused = document.activeElement && viewerBody().contains(document.activeElement) ? document.activeElement.id : null;
    this.render();
    if (focused) document.getElementById(focused)?.focus();
    this.canvas.renderVersions();
  }

  render() {
    const { graph } = this.view;
    const ids = Object.keys(graph.nodes || {});
    const runInput = h("input", { id: "flow-input", type: "text", value: "" });
    const board = h("div", { id: "flow-board", class: "flow-board", role: "group", "aria-label": t("Flow canvas: nodes and wires") },
      document.createElementNS(SVG, "svg"),
      ...ids.map((id) => this.renderNode(id, graph.nodes[id])));
    board.firstChild.setAttribute("class", "flow-wires");
    board.firstChild.setAttribute("aria-hidden", "true");
    viewerBody().replaceChildren(...[
      this.renderToolbar(),
      h("p", { class: "flow-meta", text: t("Version {number} · start: {start}", { number: this.view.base, start: graph.start || t("none") }) }),
      h("div", { id: "flow-problem", class: "conflict", role: "alert", hidden: true }),
      h("p", { id: "flow-edit-status", class: "hint", role: "status", "aria-live": "polite" }),
      ids.length ? null : h("p", { class: "hint", id: "flow-empty", text: t("An empty canvas: add a Text input node to start from, then the nodes it feeds.") }),
      board,
      this.renderWires(),
      h("form", { class: "inline-form", onsubmit: (e) => { e.preventDefault(); this.runFlow(runInput.value); } },
        h("label", { for: "flow-input", text: t("Input text") }), runInput, h("button", { type: "submit", id: "flow-run", class: "primary" }, t("Run the Flow"))),
      h("p", { id: "flow-run-status", role: "status", "aria-live": "polite" }),
      h("button", { type: "button", id: "flow-rerun", hidden: true, onclick: () => this.rerunStale() }, t("Re-run the stale nodes")),
    ].filter(Boolean));
    this.layout();
    const seen = this.view.run && this.canvas.runs.get(this.view.run);
    if (seen) {
      for (const [nodeId, known] of seen.nodes) this.nodeStatus(nodeId, known.status, known.detail);
      if (seen.status) document.getElementById("flow-run-status").textContent = t("Run #{id}: {status}", { id: this.view.run, status: t(seen.status) }) + waitingClause(seen);
      this.showRerun(seen);
      for (const [nodeId, output] of seen.outputs || []) this.showOutput(nodeId, output);
    }
  }

  renderToolbar() {
    const { artifact } = this.view;
    const title = h("input", { id: "flow-title", type: "text", value: artifact.title, maxlength: "200" });
    const typeSelect = h("select", { id: "flow-add-type" },
      ...[...this.types.values()].map((type) => h("option", { value: type.name, text: type.price.paid ? t("{title} ({credits} credits)", { title: type.title, credits: type.price.credits_default }) : type.title })));
    const ids = Object.keys(this.view.graph.nodes || {});
    const from = h("select", { id: "flow-connect-from" }, ...ids.map((id) => h("option", { value: id, text: id })));
    const to = h("select", { id: "flow-connect-to" }, ...ids.map((id) => h("option", { value: id, text: id })));
    // Offered first: a node that gives something and feeds nothing yet, into one that takes and has no input yet.
    const { nodes, edges = [] } = this.view.graph;
    const gives = ids.filter((id) => this.types.get(nodes[id].type)?.outputs.length && !edges.some(([a]) => a === id));
    const takes = ids.filter((id) => this.types.get(nodes[id].type)?.inputs.length && !edges.some(([, b]) => b === id));
    if (gives.length) from.value = gives[0];
    const target = takes.find((id) => id !== from.value);
    if (target) to.value = target;
    const undo = this.view.undo;
    return h("div", { class: "flow-toolbar" },
      h("form", { class: "inline-form", onsubmit: (e) => { e.preventDefault(); this.rename(title.value); } },
        h("label", { for: "flow-title", text: t("Flow title") }), title, h("button", { type: "submit", id: "flow-rename" }, t("Rename"))),
      h("form", { class: "inline-form", onsubmit: (e) => { e.preventDefault(); this.addNode(typeSelect.value); } },
        h("label", { for: "flow-add-type", text: t("Node type") }), typeSelect, h("button", { type: "submit", id: "flow-add" }, t("Add node"))),
      ids.length > 1 ? h("form", { class: "inline-form", onsubmit: (e) => { e.preventDefault(); this.connect(from.value, to.value); } },
        h("label", { for: "flow-connect-from", text: t("Output of") }), from,
        h("label", { for: "flow-connect-to", text: t("into the input of") }), to,
        h("button", { type: "submit", id: "flow-connect" }, t("Connect"))) : null,
      h("button", { type: "button", id: "flow-undo", disabled: !undo, onclick: () => this.undo() }, undo ? t("Undo: {what}", { what: undo.label }) : t("Undo")),
    );
  }

  renderWires() {
    const edges = this.view.graph.edges || [];
    return h("section", { class: "flow-wires-list", "aria-labelledby": "flow-wires-heading" },
      h("h4", { id: "flow-wires-heading", text: t("Wires") }),
      edges.length ? null : h("p", { class: "hint", text: t("No wires yet: drag from a node's output to another's input, or use Connect.") }),
      h("ul", { class: "edges" }, ...edges.map(([a, b]) => h("li", { "data-edge": `${a}>${b}` },
        h("span", { class: "edge-text", text: `${a} → ${b}` }), " ",
        h("button", { type: "button", class: "link", "aria-label": t("Remove the wire {from} → {to}", { from: a, to: b }), onclick: () => this.disconnect(a, b) }, t("Remove"))))));
  }

  renderNode(id, node) {
    const type = this.types.get(node.type) || { title: node.type, inputs: [], outputs: [], params_schema: { properties: {} } };
    const dirty = this.view.dirty.get(id);
    const params = dirty ? dirty.params : node.params || {};
    const sid = safeId(id);
    const area = h("textarea", { id: `node-${sid}-params`, rows: "4", class: "params" });
    area.value = JSON.stringify(params, null, 1);
    const fields = h("div", { class: "node-fields" });
    const form = h("form", { class: "node-form", onsubmit: (e) => { e.preventDefault(); this.saveNode(id, area.value, this.view.dirty.get(id)?.base); } });
    const sync = () => { // a field changed: the JSON follows, and the node keeps the version it was read at
      let current = {};
      try { current = JSON.parse(area.value); } catch { current = { ...params }; }
      area.value = JSON.stringify(this.readFields(fields, current), null, 1);
      this.markDirty(id);
    };
    this.buildFields(fields, sid, id, type.params_schema, params, [], sync);
    area.addEventListener("input", () => this.markDirty(id));
    form.append(
      fields,
      h("details", { class: "advanced", open: this.view.advanced?.has(id), ontoggle: (e) => {
        this.view.advanced = this.view.advanced || new Set();
        if (e.target.open) this.view.advanced.add(id); else this.view.advanced.delete(id);
        this.layout();
      } }, h("summary", { text: t("Advanced JSON of {id}", { id }) }),
        h("label", { for: area.id, text: t("Params of {id} (JSON)", { id }) }), area),
      h("button", { type: "submit", "data-save-node": id }, t("Save {id}", { id })),
    );
    const isStart = this.view.graph.start === id;
    const input = type.inputs[0], output = type.outputs[0];
    const accepts = input ? input.accepts.map((port) => this.portTitles[port] || port).join(", ") : "";
    const carries = output ? output.types.map((port) => this.portTitles[port] || port).join(` ${t("or")} `) : "";
    const element = h("section", {
      class: "node", "data-node": id, "data-type": node.type, "data-node-version": String(node.version ?? ""),
      "aria-label": t("Node {id}: {type}", { id, type: type.title }), "data-dirty": dirty ? "true" : null,
    },
      h("div", { class: "node-head" },
        h("button", { type: "button", class: "node-move", "aria-label": t("Move {id} (arrow keys)", { id }), title: t("Drag to move; arrow keys move it too") }, "⠿"),
        h("strong", { text: id }),
        h("span", { class: "reason", text: t(isStart ? "{type} · start · v{version}" : "{type} · v{version}", { type: type.title, version: node.version ?? "?" }) }),
        h("span", { id: `node-${sid}-status`, class: "badge node-status", "data-node-status": "idle", role: "status", "aria-label": t("Run status of {id}", { id }), text: t("idle") })),
      h("div", { class: "ports" },
        input ? h("button", { type: "button", class: "port port-in", "data-port": "in", "data-node": id, "aria-label": t("in: the input of {id}, takes {types}", { id, types: accepts }), title: t("Takes {types}", { types: accepts }), onclick: () => this.portClicked(id, "in") }, t("in")) : h("span"),
        output ? h("button", { type: "button", class: "port port-out", "data-port": "out", "data-node": id, "aria-label": t("out: the output of {id}, gives {types}", { id, types: carries }), title: t("Gives {types}", { types: carries }), onclick: () => this.portClicked(id, "out") }, t("out")) : h("span")),
      form,
      h("div", { class: "node-output", "aria-live": "polite" }),
      h("div", { class: "row node-actions" },
        INPUT_TYPES.includes(node.type) && !isStart ? h("button", { type: "button", onclick: () => this.setStart(id) }, t("Start runs at {id}", { id })) : null,
        h("button", { type: "button", class: "node-retry", hidden: true, onclick: () => this.retryNode(id) }, t("Re-run {id}", { id })),
        h("button", { type: "button", class: "danger", onclick: () => this.removeNode(id) }, t("Remove {id}", { id }))),
      h("div", { class: "node-conflict conflict", hidden: true }),
    );
    this.draggable(element, id);
    return element;
  }

  /** A form field per schema property: text, textarea, number with its limits, select for an enum, checkbox. */
  buildFields(container, sid, nodeId, schema, values, path, onChange) {
    const entries = Object.entries(schema.properties || {});
    // Optional settings (nullable, no choice list) fold under "More settings" unless they are all the type has.
    const optional = ([, raw]) => { const { field, nullable } = unwrap(raw); return nullable && !field.enum; };
    const folded = entries.every(optional) ? null : h("details", { class: "more-settings", ontoggle: () => this.layout() }, h("summary", { text: t("More settings of {id}", { id: nodeId }) }));
    for (const [key, raw] of entries) {
      const { field, nullable } = unwrap(raw);
      const into = folded && optional([key, raw]) ? folded : container;
      const fieldPath = [...path, key];
      const inputId = `node-${sid}-${fieldPath.join("-")}`;
      const value = values && key in values ? values[key] : field.default;
      const label = field.title || key;
      if (field.type === "object") {
        if (!field.properties) continue; // free-form (provider parameters, routes): the Advanced JSON edits it
        const group = h("fieldset", { class: "node-fieldset" }, h("legend", { text: label }));
        this.buildFields(group, sid, nodeId, field, value || {}, fieldPath, onChange);
        into.append(group);
        continue;
      }
      let control;
      if (field.enum) {
        control = h("select", { id: inputId },
          h("option", { value: "", text: nullable || field.default === undefined ? t("(default)") : "" }),
          ...field.enum.map((option) => h("option", { value: option, text: option })));
        control.value = value ?? "";
      } else if (field.type === "boolean") {
        control = h("input", { id: inputId, type: "checkbox" });
        control.checked = Boolean(value);
      } else if (field.type === "integer" || field.type === "number") {
        control = h("input", { id: inputId, type: "number", step: field.type === "integer" ? "1" : "any",
          min: field.minimum !== undefined && field.minimum > -1e15 ? String(field.minimum) : null,
          max: field.maximum !== undefined && field.maximum < 1e15 ? String(field.maximum) : null });
        control.value = value ?? "";
      } else {
        const long = (field.maxLength || 0) > 200;
        control = h(long ? "textarea" : "input", long ? { id: inputId, rows: "2" } : { id: inputId, type: "text" });
        control.value = value ?? "";
      }
      control.dataset.path = JSON.stringify(fieldPath);
      control.dataset.kind = field.enum ? "enum" : field.type;
      control.addEventListener(field.type === "boolean" || field.enum ? "change" : "input", onChange);
      const described = field.description ? `${inputId}-help` : null;
      if (described) control.setAttribute("aria-describedby", described);
      into.append(h("div", { class: field.type === "boolean" ? "node-field check" : "node-field" },
        h("label", { for: inputId, text: field.type === "boolean" ? label : `${label}` }), control,
        described ? h("small", { id: described, class: "hint", text: field.description }) : null));
    }
    if (folded && folded.childElementCount > 1) container.append(folded);
  }

  /** The params the form says, over the ones it does not show (kept as they were). Empty means "the default". */
  readFields(container, params) {
    const out = structuredClone(params || {});
    for (const control of container.querySelectorAll("[data-path]")) {
      const path = JSON.parse(control.dataset.path);
      let target = out;
      for (const key of path.slice(0, -1)) target = target[key] = typeof target[key] === "object" && target[key] ? target[key] : {};
      const key = path[path.length - 1];
      const kind = control.dataset.kind;
      if (kind === "boolean") target[key] = control.checked;
      else if (control.value === "") delete target[key];
      else if (kind === "integer" || kind === "number") target[key] = Number(control.value);
      else target[key] = control.value;
    }
    return out;
  }

  markDirty(id) {
    const node = this.view.graph.nodes[id];
    const known = this.view.dirty.get(id);
    const area = document.getElementById(`node-${safeId(id)}-params`);
    let params = known?.params || node.params || {};
    try { params = JSON.parse(area.value); } catch { /* kept until the JSON is valid again */ }
    this.view.dirty.set(id, { base: known ? known.base : this.view.base, params });
    this.nodeElement(id)?.setAttribute("data-dirty", "true");
  }

  /** Columns by depth from the start (longest path), rows by measured height; a moved node keeps its place. */
  layout() {
    const { graph, positions } = this.view;
    const ids = Object.keys(graph.nodes || {});
    const depth = Object.fromEntries(ids.map((id) => [id, 0]));
    for (let pass = 0; pass < ids.length; pass += 1) {
      for (const [a, b] of graph.edges || []) if (depth[b] < depth[a] + 1) depth[b] = depth[a] + 1;
    }
    // A node with no wire yet stands where it will likely go: inputs first, the finish last, the rest between.
    const wired = new Set((graph.edges || []).flat());
    const last = Math.max(2, ...Object.values(depth).map((d) => d + 1));
    for (const id of ids) {
      if (wired.has(id)) continue;
      const type = graph.nodes[id].type;
      depth[id] = INPUT_TYPES.includes(type) ? 0 : type === "finish" ? last : 1;
    }
    const columnBottom = {};
    let width = 0, height = 0;
    for (const id of ids) {
      const element = this.nodeElement(id);
      let place = positions[id];
      if (!place) {
        const column = depth[id];
        const y = columnBottom[column] ?? 10;
        place = { x: 10 + column * (NODE_WIDTH + COLUMN_GAP), y };
      }
      element.style.left = `${place.x}px`;
      element.style.top = `${place.y}px`;
      const column = Math.round((place.x - 10) / (NODE_WIDTH + COLUMN_GAP));
      columnBottom[column] = Math.max(columnBottom[column] ?? 10, place.y + element.offsetHeight + ROW_GAP);
      width = Math.max(width, place.x + NODE_WIDTH + 20);
      height = Math.max(height, place.y + element.offsetHeight + 20);
    }
    const board = document.getElementById("flow-board");
    board.style.width = `${Math.max(width, 300)}px`;
    board.style.height = `${Math.max(height, 120)}px`;
    this.drawWires();
  }

  portCenter(id, side) {
    const board = document.getElementById("flow-board").getBoundingClientRect();
    const port = this.nodeElement(id)?.querySelector(side === "out" ? ".port-out" : ".port-in");
    if (!port) return null;
    const box = port.getBoundingClientRect();
    return { x: (side === "out" ? box.right : box.left) - board.left, y: box.top + box.height / 2 - board.top };
  }

  drawWires() {
    const svg = document.querySelector("#flow-board .flow-wires");
    if (!svg) return;
    svg.replaceChildren();
    for (const [a, b] of this.view.graph.edges || []) {
      const from = this.portCenter(a, "out"), to = this.portCenter(b, "in");
      if (!from || !to) continue;
      const path = document.createElementNS(SVG, "path");
      path.setAttribute("d", curve(from, to));
      path.setAttribute("class", "wire");
      path.dataset.edge = `${a}>${b}`;
      svg.append(path);
    }
  }

  /** Move a node by dragging its grip or with the arrow keys on it; drag from an output onto an input to wire. */
  draggable(element, id) {
    const grip = element.querySelector(".node-move");
    const place = () => this.view.positions[id] || { x: parseFloat(element.style.left) || 0, y: parseFloat(element.style.top) || 0 };
    const moveTo = (x, y) => {
      this.view.positions[id] = { x: Math.max(0, x), y: Math.max(0, y) };
      element.style.left = `${this.view.positions[id].x}px`;
      element.style.top = `${this.view.positions[id].y}px`;
      this.drawWires();
    };
    grip.addEventListener("pointerdown", (event) => {
      event.preventDefault();
      const start = place(), origin = { x: event.clientX, y: event.clientY };
      const move = (e) => moveTo(start.x + e.clientX - origin.x, start.y + e.clientY - origin.y);
      const up = () => {
        document.removeEventListener("pointermove", move);
        document.removeEventListener("pointerup", up);
        this.savePositions();
        this.layout();
      };
      document.addEventListener("pointermove", move);
      document.addEventListener("pointerup", up);
    });
    grip.addEventListener("keydown", (event) => {
      const step = { ArrowLeft: [-20, 0], ArrowRight: [20, 0], ArrowUp: [0, -20], ArrowDown: [0, 20] }[event.key];
      if (!step) return;
      event.preventDefault();
      const at = place();
      moveTo(at.x + step[0], at.y + step[1]);
      this.savePositions();
      this.layout();
    });
    const out = element.querySelector(".port-out");
    if (!out) return;
    out.addEventListener("pointerdown", (event) => {
      event.preventDefault();
      const svg = document.querySelector("#flow-board .flow-wires");
      const from = this.portCenter(id, "out");
      const board = document.getElementById("flow-board").getBoundingClientRect();
      const ghost = document.createElementNS(SVG, "path");
      ghost.setAttribute("class", "wire ghost");
      svg.append(ghost);
      const move = (e) => ghost.setAttribute("d", curve(from, { x: e.clientX - board.left, y: e.clientY - board.top }));
      const up = (e) => {
        document.removeEventListener("pointermove", move);
        document.removeEventListener("pointerup", up);
        ghost.remove();
        const target = document.elementFromPoint(e.clientX, e.clientY)?.closest(".port-in");
        if (target && target.dataset.node !== id) this.connect(id, target.dataset.node);
      };
      document.addEventListener("pointermove", move);
      document.addEventListener("pointerup", up);
    });
  }

  /** Click (or Enter on) an output, then an input: the keyboard's way to wire two nodes on the canvas. */
  portClicked(id, side) {
    const pending = this.view.connecting;
    if (side === "out") {
      this.view.connecting = pending === id ? null : id;
      for (const port of viewerBody().querySelectorAll(".port-out")) port.setAttribute("aria-pressed", String(port.dataset.node === this.view.connecting));
      this.say(this.view.connecting ? t("Wiring from {id}: now choose an input.", { id }) : "");
      return;
    }
    if (!pending) {
      this.say(t("Choose an output first, then the input of {id}.", { id }));
      return;
    }
    this.view.connecting = null;
    this.connect(pending, id);
  }

  nodeElement(id) {
    return viewerBody().querySelector(`.node[data-node="${CSS.escape(id)}"]`);
  }

  say(text) {
    const status = document.getElementById("flow-edit-status");
    if (status) status.textContent = text;
  }

  problem(text, ...extra) {
    const problem = document.getElementById("flow-problem");
    problem.replaceChildren(h("span", { text }), ...extra);
    problem.hidden = !text;
  }

  // --- edits ---------------------------------------------------------------------------------------------

  /** One `flow/edits` request on `base`; then the page shows the version it made. Returns whether it landed. */
  async edit(body, { label, undo, base = this.view.base, node = null, mine = null } = {}) {
    const { artifact } = this.view;
    try {
      const written = await this.api.post(`/artifacts/${artifact.id}/flow/edits/`, { base_version: base, ...body });
      this.canvas.myVersions.add(`${artifact.id}:${written.version}`);
      if (node) this.view.dirty.delete(node);
      this.view.undo = undo ? { label, body: undo } : null;
      await this.open({ live: true });
      const others = (written.changed_since_base || []).filter((n) => n !== node);
      const done = `${label[0].toUpperCase()}${label.slice(1)}`;
      this.say(others.length
        ? t("{what}: version {number} (also changed since your version: {nodes})", { what: done, number: written.version, nodes: others.join(", ") })
        : t("{what}: version {number}", { what: done, number: written.version }));
      return written;
    } catch (error) {
      if (error instanceof ApiError && error.code === "node_conflict") {
        await this.showNodeConflicts(error.details, mine || {});
        this.problem(t("Not saved: node {nodes} changed since version {base} (the Flow is at v{current}).", { nodes: error.details.nodes.join(", "), base: error.details.base_version, current: error.details.current_version }) + " ",
          h("button", { type: "button", onclick: () => this.open() }, t("Reload the Flow")));
      } else {
        this.problem(error.message);
      }
      return null;
    }
  }

  async addNode(type) {
    const nodes = this.view.graph.nodes || {};
    const stem = ID_STEM[type] || type;
    let id = stem;
    for (let n = 2; id in nodes; n += 1) id = `${stem}_${n}`;
    const body = { add_nodes: { [id]: { type, params: {} } } };
    if (!this.view.graph.start && INPUT_TYPES.includes(type)) body.start = id; // the first input is where runs start
    const written = await this.edit(body, { label: t("added {id}", { id }), undo: { node_edits: { [id]: { delete: true } } } });
    if (written) this.nodeElement(id)?.querySelector(".node-move")?.focus();
  }

  async removeNode(id) {
    const { graph } = this.view;
    const node = graph.nodes[id];
    const wires = (graph.edges || []).filter((e) => e.includes(id));
    const undo = { add_nodes: { [id]: { type: node.type, params: node.params || {} } }, add_edges: wires };
    if (graph.start === id) undo.start = id;
    if (await this.edit({ node_edits: { [id]: { delete: true } } }, { label: t("removed {id}", { id }), undo })) {
      delete this.view.positions[id];
      this.savePositions();
      document.getElementById("flow-add-type")?.focus();
    }
  }

  /** Why a wire from `a` into `b` cannot be, from the port types (the server checks again), or "". */
  wireProblem(a, b) {
    const { graph } = this.view;
    if (!graph.nodes[a] || !graph.nodes[b]) return t("Both ends must be nodes of this Flow.");
    if (a === b) return t("A wire cannot join {id} to itself.", { id: a });
    if ((graph.edges || []).some(([x, y]) => x === a && y === b)) return t("{from} is already wired into {to}.", { from: a, to: b });
    const out = this.types.get(graph.nodes[a].type), into = this.types.get(graph.nodes[b].type);
    if (!out.outputs.length) return t("{id} is a {type} node: it hands nothing on.", { id: a, type: out.title });
    if (!into.inputs.length) return t("{id} is a {type} node: it takes no input (a run starts there).", { id: b, type: into.title });
    const gives = out.outputs[0].types, accepts = into.inputs[0].accepts;
    if (!gives.some((port) => accepts.includes(port))) {
      const names = (list) => list.map((port) => this.portTitles[port] || port).join(", ");
      return t("{from} gives {gives}, but the input of {to} ({type}) takes {takes}.", { from: a, gives: names(gives), to: b, type: into.title, takes: names(accepts) });
    }
    const reaches = (from, to, seen = new Set()) => from === to || (!seen.has(from) && (seen.add(from), (graph.edges || []).some(([x, y]) => x === from && reaches(y, to, seen))));
    if (reaches(b, a)) return t("{to} already leads to {from}: this wire would make a loop.", { from: a, to: b });
    return "";
  }

  async connect(a, b) {
    const refused = this.wireProblem(a, b);
    if (refused) {
      this.problem(t("Wire refused: {reason}", { reason: refused }));
      return;
    }
    const written = await this.edit({ add_edges: [[a, b]] }, { label: t("wired {from} → {to}", { from: a, to: b }), undo: { remove_edges: [[a, b]] } });
    if (!written && !document.getElementById("flow-problem").hidden) {
      const problem = document.getElementById("flow-problem");
      problem.firstChild.textContent = t("Wire refused: {reason}", { reason: problem.firstChild.textContent });
    }
  }

  async disconnect(a, b) {
    await this.edit({ remove_edges: [[a, b]] }, { label: t("removed the wire {from} → {to}", { from: a, to: b }), undo: { add_edges: [[a, b]] } });
  }

  async setStart(id) {
    const before = this.view.graph.start;
    await this.edit({ start: id }, { label: t("started runs at {id}", { id }), undo: before ? { start: before } : null });
  }

  async saveNode(id, text, base = this.view.base) {
    let params;
    try {
      params = JSON.parse(text);
    } catch {
      this.problem(t("The params of {id} are not valid JSON.", { id }));
      return;
    }
    const before = this.view.graph.nodes[id]?.params || {};
    const written = await this.edit({ node_edits: { [id]: { params } } },
      { label: t("saved {id}", { id }), undo: { node_edits: { [id]: { params: before } } }, base: base ?? this.view.base, node: id, mine: { [id]: text } });
    if (written) document.getElementById("flow-run-status").textContent = t("Saved {id} as version {number}", { id, number: written.version });
  }

  async rename(title, { undoable = true } = {}) {
    const { artifact } = this.view;
    const before = artifact.title;
    try {
      await this.api.patch(`/artifacts/${artifact.id}/`, { title });
      this.view.undo = undoable ? { label: t("renamed to “{title}”", { title }), rename: before } : null;
      await this.canvas.refreshTile(artifact.id);
      document.getElementById("viewer-title").replaceChildren(h("bdi", { text: title }), ` (${t("flow")})`);
      await this.open({ live: true });
      this.say(t("Renamed to “{title}”", { title }));
    } catch (error) {
      this.problem(error.message);
    }
  }

  /** Undo the last edit made here: its inverse, as a new edit on the version shown. */
  async undo() {
    const last = this.view.undo;
    if (!last) return;
    this.view.undo = null;
    if (last.rename !== undefined) {
      await this.rename(last.rename, { undoable: false });
    } else {
      await this.edit(last.body, { label: t("undid {what}", { what: last.label }) });
    }
    document.getElementById("flow-undo")?.focus();
  }

  /** A 409 node_conflict: on each conflicting node, the person's params beside the current ones, to resolve. */
  async showNodeConflicts(details, mine) {
    const { artifact } = this.view;
    const current = details.current_version;
    let latest = { nodes: {} };
    try {
      latest = JSON.parse(await fetchText(this.canvas.fileUrl(artifact.id, current)));
    } catch { /* shown without their params */ }
    for (const id of details.nodes) {
      const element = this.nodeElement(id);
      if (!element) continue;
      element.dataset.conflict = "true";
      const theirsNode = latest.nodes ? latest.nodes[id] : undefined;
      const mineText = mine[id] ?? element.querySelector("textarea.params").value;
      const sid = safeId(id);
      const mineBox = h("textarea", { id: `node-${sid}-mine`, readonly: true, rows: "3" });
      mineBox.value = mineText;
      const theirsBox = h("textarea", { id: `node-${sid}-theirs`, readonly: true, rows: "3" });
      theirsBox.value = theirsNode ? JSON.stringify(theirsNode.params || {}, null, 1) : t("(deleted)");
      const box = element.querySelector(".node-conflict");
      box.replaceChildren(
        h("p", { role: "alert", text: t("{id} was changed in version {theirs} while you edited version {base}.", { id, theirs: theirsNode ? theirsNode.version : current, base: details.base_version }) }),
        h("div", { class: "side-by-side" },
          h("div", {}, h("label", { for: mineBox.id, text: t("Your params of {id}", { id }) }), mineBox),
          h("div", {}, h("label", { for: theirsBox.id, text: t("Current params of {id} (v{number})", { id, number: current }) }), theirsBox)),
        h("div", { class: "row" },
          theirsNode ? h("button", { type: "button", class: "primary", onclick: () => this.saveNode(id, mineText, current) }, t("Keep my {id} on top of latest", { id })) : null,
          h("button", { type: "button", onclick: () => { this.view.dirty.delete(id); this.open(); } }, t("Take their {id}", { id }))),
      );
      box.hidden = false;
      this.layout();
    }
  }

  // --- runs ----------------------------------------------------------------------------------------------

  async runFlow(text) {
    const status = document.getElementById("flow-run-status");
    const button = document.getElementById("flow-run");
    button.disabled = true;
    try {
      const run = await this.api.post(`/artifacts/${this.view.artifact.id}/flow/runs/`, { inputs: text ? { text } : {} });
      this.view.run = run.id;
      const seen = this.seen(run.id);
      for (const node of viewerBody().querySelectorAll(".node")) {
        node.querySelector(".node-output").replaceChildren();
        node.querySelector(".node-retry").hidden = true;
      }
      for (const node of run.nodes || []) {
        const nodeId = node.node_id || node.node;
        this.nodeStatus(nodeId, node.status);
        const known = seen.nodes.get(nodeId); // events may arrive before this answer: they are newer
        if (known) this.nodeStatus(nodeId, known.status, known.detail);
      }
      const waiting = run.card && run.card.status === "open" ? t(" — approve its {cost} credits on the quote card in the chat", { cost: run.cost }) : "";
      seen.waiting = waiting; // a later event or re-render says it again while the run still waits
      status.textContent = t("Run #{id}: {status}", { id: run.id, status: t(seen.status || run.status) }) + waiting;
      status.dataset.run = String(run.id);
      status.dataset.runStatus = seen.status || run.status;
      if ((seen.status || run.status) === "done") await this.loadOutputs(run.id);
    } catch (error) {
      status.textContent = error.message;
    } finally {
      button.disabled = false;
    }
  }

  seen(runId) {
    const seen = this.canvas.runs.get(runId) || { nodes: new Map(), status: null, outputs: new Map() };
    seen.outputs = seen.outputs || new Map();
    this.canvas.runs.set(runId, seen);
    return seen;
  }

  /** The run's detail holds each node's whole output (events carry only its artifact and choice). */
  async loadOutputs(runId) {
    const run = await this.api.get(`/flow-runs/${runId}/`);
    const seen = this.seen(runId);
    for (const node of run.nodes || []) {
      if (node.status !== "done" || !node.output) continue;
      seen.outputs.set(node.node_id, node.output);
      if (this.view?.run === runId) this.showOutput(node.node_id, node.output);
    }
  }

  showOutput(nodeId, output) {
    const box = this.nodeElement(nodeId)?.querySelector(".node-output");
    if (!box) return;
    const parts = [];
    const artifacts = output.artifact ? [{ artifact: output.artifact, version: output.version }] : [];
    for (const item of Array.isArray(output.artifacts) ? output.artifacts : []) {
      if (item && typeof item === "object" && item.artifact) artifacts.push(item);
      else if (typeof item === "number") artifacts.push({ artifact: item });
    }
    for (const { artifact, version } of artifacts) {
      const known = this.canvas.artifacts.get(artifact);
      const title = known ? known.title : t("artifact #{id}", { id: artifact });
      const link = h("a", { href: `#artifact-${artifact}`, class: "node-thumb", onclick: (e) => { e.preventDefault(); this.canvas.open(artifact); } },
        (!known || known.kind === "image") && version ? h("img", { src: this.canvas.fileUrl(artifact, version), alt: "" }) : null,
        h("span", { text: t("Open {title}", { title }) }));
      parts.push(link);
    }
    if (typeof output.text === "string" && output.text && !(output.artifact && nodeId)) parts.push(h("p", { class: "node-text", text: output.text }));
    if (output.writer === "offline" && output.note) parts.push(h("small", { class: "hint", text: output.note }));
    if (output.choice) parts.push(h("p", { class: "hint", text: t("Chose the branch to {branch}", { branch: output.choice }) }));
    box.replaceChildren(...(parts.length ? [h("h5", { text: t("Output of {id}", { id: nodeId }) }), ...parts] : []));
    this.layout();
  }

  showRerun(seen) {
    const button = document.getElementById("flow-rerun");
    if (!button) return;
    const stale = [...seen.nodes].filter(([, known]) => known.status === "stale").map(([id]) => id);
    button.hidden = stale.length === 0;
    button.textContent = t("Re-run the stale nodes ({nodes})", { nodes: stale.join(", ") });
  }

  async rerunStale() {
    const status = document.getElementById("flow-run-status");
    const button = document.getElementById("flow-rerun");
    button.disabled = true;
    try {
      const run = await this.api.post(`/flow-runs/${this.view.run}/rerun-stale/`, {});
      this.restarted(run, (known) => known?.status === "stale", t("re-running"));
    } catch (error) {
      status.textContent = error.message;
    } finally {
      button.disabled = false;
    }
  }

  /** Re-run one failed node (and what it skipped) as a new attempt; what succeeded is kept. */
  async retryNode(nodeId) {
    const status = document.getElementById("flow-run-status");
    try {
      const run = await this.api.post(`/flow-runs/${this.view.run}/nodes/${encodeURIComponent(nodeId)}/retry/`, {});
      this.restarted(run, (known) => ["failed", "skipped", "cancelled"].includes(known?.status), t("re-running {id}", { id: nodeId }));
    } catch (error) {
      status.textContent = error.message;
    }
  }

  restarted(run, replaced, what) {
    const seen = this.seen(run.id);
    for (const node of run.nodes || []) {
      const nodeId = node.node_id || node.node;
      if (replaced(seen.nodes.get(nodeId))) seen.nodes.set(nodeId, { status: node.status, detail: "" });
      this.nodeStatus(nodeId, seen.nodes.get(nodeId)?.status || node.status, seen.nodes.get(nodeId)?.detail || "");
    }
    const waiting = run.card && run.card.status === "open" ? t(" — approve its {cost} credits on the quote card in the chat", { cost: run.cost }) : "";
    seen.waiting = waiting;
    document.getElementById("flow-run-status").textContent = t("Run #{id}: {what} — {status}", { id: run.id, what, status: t(seen.status || run.status) }) + waiting;
    this.showRerun(seen);
  }

  nodeStatus(nodeId, status, detail = "") {
    const element = this.nodeElement(nodeId || "");
    if (!element) return;
    const badge = element.querySelector(".node-status");
    badge.textContent = detail ? `${t(status)}: ${detail}` : t(status);
    badge.dataset.nodeStatus = status;
    for (const known of STATUSES) element.classList.toggle(`run-${known}`, known === status);
    element.querySelector(".node-retry").hidden = status !== "failed";
  }

  flowEvent(kind, data) {
    // Remember every run's latest statuses: a run's first events can arrive before the POST that started it answers.
    const seen = this.seen(data.run);
    let detail = "";
    if (kind === "flow.node") {
      const output = data.output ? Object.values(data.output).filter((v) => v !== null && v !== undefined && typeof v !== "object").join(" ").slice(0, 80) : "";
      detail = data.error ? data.error.message || data.error.code || "" : output;
      seen.nodes.set(data.node, { status: data.status, detail: data.error ? detail : "" });
      if (data.status === "done" && data.output) seen.outputs.set(data.node, { ...(seen.outputs.get(data.node) || {}), ...data.output });
    } else if (kind === "flow.stale") {
      for (const node of data.nodes || []) seen.nodes.set(node, { status: "stale", detail: t("made from an input that has changed") });
    } else {
      seen.status = data.status;
    }
    if (!this.view || this.view.artifact.id !== data.artifact || this.view.artifact.kind !== "flow") return;
    if (this.view.run !== data.run) return;
    this.showRerun(seen);
    if (kind === "flow.node") {
      this.nodeStatus(data.node, data.status, data.error ? detail : "");
      if (data.status === "done") {
        if (data.output) this.showOutput(data.node, seen.outputs.get(data.node));
        this.loadOutputs(data.run).catch(() => {}); // the text is in the run's detail, not the event
      }
    } else if (kind === "flow.stale") {
      for (const node of data.nodes || []) this.nodeStatus(node, "stale", t("made from an input that has changed"));
    } else {
      const status = document.getElementById("flow-run-status");
      status.textContent = t("Run #{id}: {status}", { id: data.run, status: t(data.status) }) + waitingClause(seen);
      status.dataset.runStatus = data.status;
    }
  }
}

/** What a run waiting for its spending approval asks of the person (kept from the answer that started it): the run's
 * own event, arriving after that answer on a loaded server, would otherwise replace the sentence by the bare status. */
function waitingClause(seen) {
  return seen.status === "awaiting_approval" ? seen.waiting || "" : "";
}

function curve(from, to) {
  const bend = Math.max(40, Math.abs(to.x - from.x) / 2);
  return `M ${from.x} ${from.y} C ${from.x + bend} ${from.y}, ${to.x - bend} ${to.y}, ${to.x} ${to.y}`;
}
