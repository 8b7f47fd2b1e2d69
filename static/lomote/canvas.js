// The canvas: the artifact grid (real images, playable video, a 3D badge for glTF models), an artifact view with its
// version history (a glTF/GLB model opens in the interactive 3D viewer of viewer3d.js),
// the document editor (saves on its base version; a 409 is shown side by side and resolved by the person),
// and the Flow editor (nodes, edges, params as JSON, per-node conflicts, runs with per-node status).
// The person's own files come in through the Upload button or by dropping them on the canvas (the server decides
// what each file is from its content, and its refusal is shown as it says it); a viewed artifact can get a new
// version from a file, or be deleted — which only asks: the confirmation card is brought into view in the chat.

import { ApiError, fetchText } from "./api.js";
import { h } from "./dom.js";
import { N_, t } from "./i18n.js";
import { FlowEditor } from "./flow_editor.js";
import { ProvenanceView } from "./provenance.js";
import { modelThumbnail, modelViewer } from "./viewer3d.js";

const grid = () => document.getElementById("grid");
const viewer = () => document.getElementById("viewer");
const viewerBody = () => document.getElementById("viewer-body");
const notices = () => document.getElementById("notices");
const canvasStatus = () => document.getElementById("canvas-status");
const uploadError = () => document.getElementById("upload-error");
const uploadProgress = () => document.getElementById("upload-progress");
// Kinds whose versions can come from a file (a Flow or a collection changes in its editor).
const FILE_KINDS = ["image", "video", "3d", "document"];

const SAMPLE_FLOW = {
  nodes: {
    input: { type: "text_input", params: { default: "a retro brand poster" } },
    tagline: { type: "generate_text", params: { prompt: "Write a short tagline for {input}" } },
    end: { type: "finish", params: {} },
  },
  edges: [["input", "tagline"], ["tagline", "end"]],
  start: "input",
};

function isPlayableVideo(mediaType) {
  return /^video\//.test(mediaType || "");
}

function authorText(author, describeTask) {
  if (!author) return t("someone");
  if (author.type === "task") return describeTask ? describeTask(author.task) : t("task #{id}", { id: author.task });
  if (author.type === "user") return author.username || t("user #{id}", { id: author.id });
  return author.name || author.type;
}

export class Canvas {
  constructor({ api, workspaceId, userId, onError, onCard, describeTask, onOpen = () => {}, onClose = () => {} }) {
    this.api = api;
    this.onOpen = onOpen; // the viewer shows an artifact (the studio targets messages at it, shows the Canvas tab)
    this.onClose = onClose;
    this.describeTask = describeTask; // task id → how the studio names it ("task #3 “Posters”")
    this.workspaceId = workspaceId;
    this.userId = userId;
    this.onError = onError;
    this.onCard = onCard;
    this.uploading = false;
    this.artifacts = new Map();
    this.tileShown = new Map(); // artifact id → what its tile shows (see showTile)
    this.openArtifactId = null;
    this.view = null; // what the viewer shows: {artifact, version, ...editor state}
    this.myVersions = new Set(); // "<artifact>:<version>" written from this page
    this.runs = new Map(); // Flow run id → {status, nodes: Map(node id → {status, detail})} from flow.* events
    this.flowEditor = new FlowEditor(this);
    this.provenance = new ProvenanceView({ api, openVersion: (id, number) => this.openVersion(id, number) });
    document.getElementById("viewer-close").onclick = () => this.close();
    // Escape closes the viewer, except while typing (a document's text, a Flow's params keep their own Escape).
    viewer().onkeydown = (event) => {
      if (event.key !== "Escape" || event.defaultPrevented) return; // the provenance view closes itself first
      if (["INPUT", "TEXTAREA", "SELECT"].includes(event.target.tagName)) return;
      event.preventDefault();
      this.close();
    };
    document.getElementById("new-document").onclick = () => this.create("document");
    document.getElementById("new-flow").onclick = () => this.createFlow(document.getElementById("new-flow-from").value);
    this.loadTemplates();
    const files = document.getElementById("upload-file");
    document.getElementById("upload").onclick = () => files.click();
    files.onchange = () => {
      const chosen = [...files.files];
      files.value = "";
      this.uploadFiles(chosen);
    };
    const versionFile = document.getElementById("version-file");
    document.getElementById("viewer-upload-version").onclick = () => versionFile.click();
    versionFile.onchange = () => {
      const [file] = versionFile.files;
      versionFile.value = "";
      if (file) this.uploadVersion(file);
    };
    document.getElementById("viewer-delete").onclick = () => this.askDelete();
    this.acceptDrops(document.getElementById("canvas"));
  }

  fileUrl(artifactId, number) {
    return `${this.api.base}/artifacts/${artifactId}/versions/${number}/file`;
  }

  /** The original file of a version, sent as an attachment named after the artifact ("retro-poster-v2.png"). */
  downloadUrl(artifactId, number) {
    return `${this.fileUrl(artifactId, number)}?download=1`;
  }

  /** A link that saves one version's file; its accessible name says which. */
  downloadLink(artifact, number, text = t("Download")) {
    return h("a", {
      class: "download", href: this.downloadUrl(artifact.id, number), download: "",
      // The visible text starts the accessible name (WCAG 2.5.3), the artifact's title completes it.
      "aria-label": t("{text} (version {number} of {title})", { text, number, title: artifact.title }), "data-version": String(number),
    }, text);
  }

  async load() {
    grid().replaceChildren();
    this.artifacts.clear();
    const response = await fetch(`${this.api.base}/artifacts/?limit=200`, { credentials: "same-origin" });
    const { results } = await response.json();
    for (const artifact of results.reverse()) this.showTile(artifact);
  }

  // --- grid ---------------------------------------------------------------------------------------------

  preview(artifact, number = artifact.current_version, { tile = false } = {}) {
    const url = this.fileUrl(artifact.id, number);
    if (artifact.kind === "image") return h("img", { src: url, alt: artifact.title });
    if (artifact.kind === "video") {
      // WebP and GIF animations play as images; real video files get a player (in a tile, a still that opens it).
      if (isPlayableVideo(artifact.media_type)) {
        return tile
          ? h("video", { src: url, muted: true, playsinline: true, preload: "metadata", "aria-label": artifact.title })
          : h("video", { src: url, controls: true, muted: true, loop: true, playsinline: true, "aria-label": artifact.title });
      }
      return h("img", { src: url, alt: artifact.title });
    }
    const label = { flow: "Flow", "3d": "3D" }[artifact.kind] || t("Doc");
    const icon = h("div", { class: `doc-icon ${artifact.kind}`, "aria-hidden": "true", text: label });
    if (artifact.kind !== "3d") return icon;
    // A model shows a still of itself once rendered; the 3D badge stays in its corner (alone if it cannot load).
    const still = h("img", { class: "model-thumb", alt: t("{title} (3D model)", { title: artifact.title }), hidden: true });
    const frame = h("div", { class: "model-tile" }, still, icon);
    modelThumbnail(url).then((src) => {
      still.src = src;
      still.hidden = false;
      frame.dataset.thumbnail = "ready";
    }, () => { frame.dataset.thumbnail = "none"; });
    return frame;
  }

  showTile(artifact) {
    this.artifacts.set(artifact.id, artifact);
    // One change arrives as several events (generation.succeeded, artifact.created…): a tile that would come out the
    // same is kept, so a click in progress on it is not lost to a replaced element (and its media is not reloaded).
    const shown = JSON.stringify([artifact.kind, artifact.title, artifact.current_version, artifact.media_type]);
    const existing = grid().querySelector(`[data-artifact="${artifact.id}"]`);
    if (existing && this.tileShown.get(artifact.id) === shown) return;
    this.tileShown.set(artifact.id, shown);
    const open = () => this.open(artifact.id).catch((e) => this.onError(e));
    // The whole thumbnail opens the artifact for a pointer; the caption's button is the one keyboard stop.
    const tile = h(
      "li",
      {
        class: "tile", "data-artifact": String(artifact.id), "data-kind": artifact.kind,
        "data-version": String(artifact.current_version), "data-task": artifact.created_by_task_id ?? "",
      },
      h("div", { class: "tile-thumb", onclick: open }, this.preview(artifact, artifact.current_version, { tile: true })),
      // The caption wraps (never cut); the full title is also its tooltip.
      h("button", { type: "button", class: "tile-open", title: `${artifact.title} · v${artifact.current_version}`, onclick: open },
        h("bdi", { text: artifact.title }), ` · v${artifact.current_version}`),
    );
    if (existing) existing.replaceWith(tile);
    else grid().append(tile);
    this.arrange();
  }

  /**
   * Tiles in a stable order that an update never changes: the newest work first, grouped by the task that made
   * it (a task's group placed by its newest artifact), and within a group in the order it was made (a series
   * reads 1, 2, 3). Artifacts ids grow with creation; a new version changes nothing here.
   */
  arrange() {
    const groupOf = (a) => (a.created_by_task_id ? `task:${a.created_by_task_id}` : `artifact:${a.id}`);
    const newest = new Map();
    for (const a of this.artifacts.values()) newest.set(groupOf(a), Math.max(newest.get(groupOf(a)) ?? 0, a.id));
    const order = [...this.artifacts.values()]
      .sort((a, b) => newest.get(groupOf(b)) - newest.get(groupOf(a)) || (groupOf(a) < groupOf(b) ? -1 : groupOf(a) > groupOf(b) ? 1 : 0) || a.id - b.id)
      .map((a) => String(a.id));
    const tiles = [...grid().children];
    if (tiles.map((t) => t.dataset.artifact).join() === order.join()) return;
    const byId = new Map(tiles.map((t) => [t.dataset.artifact, t]));
    // Move only what is out of place, so a focused or playing tile usually stays where it is in the DOM.
    let previous = null;
    for (const id of order) {
      const tile = byId.get(id);
      if (!tile) continue;
      const wanted = previous ? previous.nextElementSibling : grid().firstElementChild;
      if (wanted !== tile) (previous ? previous.after(tile) : grid().prepend(tile));
      previous = tile;
    }
  }

  /** A grid entry from an artifact's detail (its current version's media type picks the preview). */
  tileOf(detail) {
    const current = detail.versions.find((v) => v.number === detail.current_version) || detail.versions[0] || {};
    return {
      id: detail.id, kind: detail.kind, title: detail.title, current_version: detail.current_version, media_type: current.media_type,
      created_by_task_id: detail.created_by_task_id,
    };
  }

  async refreshTile(artifactId) {
    const detail = await this.api.get(`/artifacts/${artifactId}/`);
    this.showTile(this.tileOf(detail));
    return detail;
  }

  /** An event said the artifact was created or got a version: refresh its tile, and tell the viewer. */
  async artifactChanged(artifactId, data) {
    if (!artifactId) return;
    let detail;
    try {
      detail = await this.refreshTile(artifactId);
    } catch (error) {
      // Deleted since the event was written: its own event takes the tile away.
      if (error instanceof ApiError && error.status === 404) return;
      throw error;
    }
    if (!this.view || this.view.artifact.id !== artifactId) return;
    const mine = this.myVersions.has(`${artifactId}:${data.version}`);
    if (mine || !data.version || data.version <= this.view.seenVersion) return;
    this.view.seenVersion = data.version;
    this.view.artifact = detail;
    this.renderVersions();
    this.notice(t("Version {version} was added by {author} while you were viewing this.", { version: data.version, author: authorText(data.author, this.describeTask) }), data.version);
    // A Flow shows the other writer's edit at once; a node with unsaved changes keeps the version it was read at.
    if (detail.kind === "flow") await this.flowEditor.open({ live: true });
  }

  async create(kind, graph = SAMPLE_FLOW) {
    const title = t(kind === "flow" ? N_("Untitled Flow") : N_("Untitled document"));
    const body = kind === "flow" ? { kind, title, graph } : { kind, title, content: "" };
    try {
      const artifact = await this.api.post("/artifacts/", body);
      this.myVersions.add(`${artifact.id}:${artifact.current_version}`);
      await this.refreshTile(artifact.id);
      await this.open(artifact.id);
    } catch (error) {
      this.onError(error);
    }
  }

  /** The Flows to start from (flow-templates) join the "Flow from" choice, after the sample and the empty canvas. */
  async loadTemplates() {
    try {
      const templates = await this.api.get("/flow-templates/");
      document.getElementById("new-flow-from").append(...templates.map((template) => h("option", { value: `template:${template.name}`, text: t("the template “{title}”", { title: template.title || template.name }) })));
    } catch { /* the sample and the empty canvas stay */ }
  }

  /** A new Flow: the sample, an empty canvas to build on, or a template stored as the workspace's own Flow. */
  async createFlow(from) {
    if (!from.startsWith("template:")) {
      await this.create("flow", from === "empty" ? { nodes: {}, edges: [], start: null } : SAMPLE_FLOW);
      return;
    }
    try {
      const name = from.slice("template:".length);
      const artifact = await this.api.post(`/flow-templates/${encodeURIComponent(name)}/use/`, { params: {} });
      this.myVersions.add(`${artifact.id}:${artifact.current_version}`);
      await this.refreshTile(artifact.id);
      await this.open(artifact.id);
    } catch (error) {
      this.onError(error);
    }
  }

  // --- viewer -------------------------------------------------------------------------------------------

  close() {
    const artifactId = this.openArtifactId;
    this.provenance.close({ restoreFocus: false });
    viewer().hidden = true;
    delete viewer().dataset.delete;
    this.view = null;
    this.openArtifactId = null;
    this.onClose(artifactId);
    // The keyboard goes back to the tile that opened the viewer (or the canvas heading if it is gone).
    const tile = document.querySelector(`.tile[data-artifact='${artifactId}'] .tile-open`);
    (tile || document.getElementById("canvas-heading")).focus();
  }

  async open(artifactId, number) {
    const artifact = await this.api.get(`/artifacts/${artifactId}/`);
    this.openArtifactId = artifactId;
    const shown = number || artifact.current_version;
    this.view = { artifact, number: shown, seenVersion: artifact.current_version };
    if (this.provenance.shown && this.provenance.shown.artifactId !== artifactId) this.provenance.close({ restoreFocus: false });
    viewer().hidden = false;
    viewer().dataset.artifact = String(artifactId);
    viewer().dataset.kind = artifact.kind;
    delete viewer().dataset.delete;
    document.getElementById("viewer-upload-version").hidden = !FILE_KINDS.includes(artifact.kind);
    document.getElementById("viewer-title").replaceChildren(h("bdi", { text: artifact.title }), ` (${artifact.kind})`);
    this.onOpen(artifact);
    notices().replaceChildren();
    viewerBody().replaceChildren();
    if (artifact.kind === "document") await this.openDocument();
    else if (artifact.kind === "flow") await this.openFlow();
    else this.openMedia(shown);
    this.renderVersions();
    document.getElementById("viewer-title").focus?.();
  }

  renderVersions() {
    const { artifact } = this.view;
    // The header's Download saves the version on screen (the current one until another is picked).
    const download = document.getElementById("viewer-download");
    download.href = this.downloadUrl(artifact.id, this.view.number);
    download.textContent = t("Download v{number}", { number: this.view.number });
    download.setAttribute("aria-label", t("{text} (version {number} of {title})", { text: download.textContent, number: this.view.number, title: artifact.title }));
    document.getElementById("versions").replaceChildren(
      ...artifact.versions.map((v) =>
        h(
          "li",
          { "data-version": String(v.number) },
          h("button", { type: "button", onclick: () => this.showVersion(v.number), "aria-current": v.number === this.view.number ? "true" : null }, `v${v.number}`),
          ` by `,
          h("span", { class: "version-author", "data-author-type": v.author ? v.author.type : "" }, authorText(v.author, this.describeTask)),
          ` · ${new Date(v.created_at).toLocaleString()}`,
          v.meta && v.meta.change ? [" · ", h("bdi", { text: v.meta.change })] : null,
          " ",
          h("button", {
            type: "button",
            class: "how",
            "aria-label": t("How was this made: version {number}", { number: v.number }),
            "aria-controls": "provenance",
            "aria-expanded": "false",
            onclick: () => this.provenance.toggle(artifact.id, v.number),
          }, t("How was this made")),
          this.downloadLink(artifact, v.number),
        ),
      ),
    );
    this.provenance.syncTriggers();
  }

  /** Show one version of an artifact (from a provenance link), with the keyboard on its row in the history. */
  async openVersion(artifactId, number) {
    try {
      await this.open(artifactId, number);
      const { artifact } = this.view;
      if ((artifact.kind === "document" || artifact.kind === "flow") && number !== artifact.current_version) await this.showVersion(number);
      document.querySelector(`#versions [data-version="${number}"] button:not(.how)`)?.focus();
    } catch (error) {
      this.onError(error);
    }
  }

  async showVersion(number) {
    const { artifact } = this.view;
    if (artifact.kind === "document" || artifact.kind === "flow") {
      const text = await fetchText(this.fileUrl(artifact.id, number));
      viewerBody().querySelector(".version-preview")?.remove();
      viewerBody().append(h("section", { class: "version-preview", "aria-label": t("Version {number}", { number }) }, h("h4", { text: t("Version {number}", { number }) }), h("pre", { text }), this.downloadLink(artifact, number, t("Download v{number}", { number }))));
      return;
    }
    this.view.number = number;
    this.openMedia(number);
    this.renderVersions();
  }

  openMedia(number) {
    const { artifact } = this.view;
    const version = artifact.versions.find((v) => v.number === number) || {};
    if (artifact.kind === "3d") {
      viewerBody().replaceChildren(modelViewer({ url: this.fileUrl(artifact.id, number), title: artifact.title, caption: t("Version {number}", { number }) }));
      return;
    }
    viewerBody().replaceChildren(h("figure", { class: "media" }, this.preview({ ...artifact, media_type: version.media_type }, number), h("figcaption", { text: t("Version {number}", { number }) })));
  }

  notice(text, version) {
    const actions = [];
    if (this.view && this.view.artifact.kind === "document") {
      actions.push(h("button", { type: "button", onclick: () => this.loadLatestDocument() }, t("Load the latest version")));
    } else if (this.view && this.view.artifact.kind === "flow") {
      actions.push(h("button", { type: "button", onclick: () => this.openFlow() }, t("Reload the Flow")));
    } else if (this.view) {
      actions.push(h("button", { type: "button", onclick: () => this.showVersion(version) }, t("Show v{version}", { version })));
    }
    notices().append(h("div", { class: "notice", role: "status", "data-version": String(version) }, h("span", { text }), ...actions, h("button", { type: "button", "aria-label": t("Dismiss notice"), onclick: (e) => e.target.closest(".notice").remove() }, "×")));
  }

  // --- the person's own files --------------------------------------------------------------------------

  /** Files dropped anywhere on the canvas are uploaded; the canvas shows where they will land while dragged. */
  acceptDrops(zone) {
    let depth = 0;
    const carriesFiles = (event) => [...(event.dataTransfer?.types || [])].includes("Files");
    zone.addEventListener("dragenter", (event) => {
      if (!carriesFiles(event)) return;
      event.preventDefault();
      depth += 1;
      zone.dataset.dropping = "true";
    });
    zone.addEventListener("dragover", (event) => {
      if (!carriesFiles(event)) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = "copy";
    });
    zone.addEventListener("dragleave", () => {
      depth = Math.max(0, depth - 1);
      if (!depth) delete zone.dataset.dropping;
    });
    zone.addEventListener("drop", (event) => {
      if (!carriesFiles(event)) return;
      event.preventDefault();
      depth = 0;
      delete zone.dataset.dropping;
      this.uploadFiles([...event.dataTransfer.files]);
    });
  }

  say(text) {
    canvasStatus().textContent = text;
    canvasStatus().hidden = !text;
  }

  busy(on, text = "") {
    const canvas = document.getElementById("canvas");
    if (on) canvas.dataset.uploading = "true";
    else delete canvas.dataset.uploading;
    grid().setAttribute("aria-busy", on ? "true" : "false");
    document.getElementById("upload").disabled = on;
    document.getElementById("viewer-upload-version").disabled = on;
    uploadProgress().hidden = !on;
    if (on) this.progress(text, 0);
  }

  progress(text, fraction) {
    uploadProgress().value = Math.round(fraction * 100);
    this.say(fraction > 0 && fraction < 1 ? `${text} ${Math.round(fraction * 100)}%` : text);
  }

  showUploadError(messages, code) {
    uploadError().textContent = messages.join(" ");
    uploadError().dataset.code = code || "";
    uploadError().hidden = !messages.length;
  }

  /** Upload the files one after the other; each success lands in the grid, each refusal is said as the API says it. */
  async uploadFiles(files) {
    if (!files.length || this.uploading) return;
    this.uploading = true;
    this.showUploadError([]);
    const refused = [];
    let code = "";
    let done = 0;
    for (const [index, file] of files.entries()) {
      const label = files.length > 1 ? t("{name} ({index} of {count})", { name: file.name, index: index + 1, count: files.length }) : file.name;
      this.busy(true, t("Uploading {label}…", { label }));
      const form = new FormData();
      form.append("file", file, file.name);
      try {
        const artifact = await this.api.upload("/artifacts/upload/", form, { onProgress: (f) => this.progress(t("Uploading {label}…", { label }), f) });
        this.myVersions.add(`${artifact.id}:${artifact.current_version}`);
        this.showTile(this.tileOf(artifact));
        done += 1;
      } catch (error) {
        refused.push(`${file.name}: ${error.message}`);
        code = code || error.code;
      }
    }
    this.busy(false);
    this.uploading = false;
    this.say(done ? t(files.length > 1 ? "Uploaded {done} of {count} files." : "Uploaded {done} of {count} file.", { done, count: files.length }) : "");
    this.showUploadError(refused, code);
  }

  /** A new version of the viewed artifact from a file, on the version the person is looking at. */
  async uploadVersion(file) {
    if (!this.view || this.uploading) return;
    const { artifact } = this.view;
    this.uploading = true;
    this.showUploadError([]);
    this.busy(true, t("Uploading {name} as a new version…", { name: file.name }));
    const form = new FormData();
    form.append("file", file, file.name);
    form.append("base_version", String(artifact.current_version));
    try {
      const detail = await this.api.upload(`/artifacts/${artifact.id}/versions/upload/`, form, { onProgress: (f) => this.progress(t("Uploading {label}…", { label: file.name }), f) });
      this.myVersions.add(`${detail.id}:${detail.current_version}`);
      this.showTile(this.tileOf(detail));
      this.say(t("Version {version} of “{title}” uploaded.", { version: detail.current_version, title: detail.title }));
      await this.open(detail.id);
    } catch (error) {
      this.say("");
      this.showUploadError([`${file.name}: ${error.message}`], error.code);
    } finally {
      this.busy(false);
      this.uploading = false;
    }
  }

  /** Deleting only asks: the card that confirms it is brought into view in the chat, and nothing goes before. */
  async askDelete() {
    if (!this.view) return;
    const { artifact } = this.view;
    try {
      const answer = await this.api.post(`/artifacts/${artifact.id}/delete/`);
      viewer().dataset.delete = "asked";
      notices().replaceChildren(
        h("div", { class: "notice", role: "status", "data-delete": "asked" },
          h("span", { text: t("Confirm the deletion of “{title}” on its card in the chat. Nothing is deleted until then.", { title: artifact.title }) })),
      );
      if (this.onCard) await this.onCard(answer.card.id);
    } catch (error) {
      this.onError(error);
    }
  }

  /** The log says an artifact was deleted (a person confirmed its card): its tile goes, and its view closes. */
  artifactDeleted(artifactId, data) {
    if (!artifactId) return;
    this.artifacts.delete(artifactId);
    grid().querySelector(`[data-artifact="${artifactId}"]`)?.remove();
    if (this.view && this.view.artifact.id === artifactId) this.close();
    const by = data && data.by && data.by.username ? t(" by {name}", { name: data.by.username }) : "";
    this.say(t("“{title}” was deleted{by}.", { title: (data && data.title) || t("Artifact #{id}", { id: artifactId }), by }));
  }

  // --- document editor ----------------------------------------------------------------------------------

  async openDocument() {
    const { artifact } = this.view;
    const text = await fetchText(this.fileUrl(artifact.id, artifact.current_version));
    this.view.base = artifact.current_version;
    const editor = h("textarea", { id: "doc-editor", rows: "12", class: "doc-editor" });
    editor.value = text;
    const status = h("p", { id: "doc-status", class: "doc-status", role: "status", "aria-live": "polite", text: t("Editing version {number}", { number: this.view.base }) });
    const form = h(
      "form",
      { class: "doc-form", onsubmit: (e) => { e.preventDefault(); this.saveDocument(editor.value, this.view.base); } },
      h("label", { for: "doc-editor", text: t("Document text") }),
      editor,
      h("div", { class: "row" }, h("button", { type: "submit", id: "doc-save", class: "primary" }, t("Save")), status),
    );
    viewerBody().replaceChildren(form, h("section", { id: "conflict", class: "conflict", hidden: true, "aria-live": "assertive" }));
  }

  async loadLatestDocument() {
    notices().replaceChildren();
    this.view.artifact = await this.api.get(`/artifacts/${this.view.artifact.id}/`);
    await this.openDocument();
    this.renderVersions();
  }

  async saveDocument(content, base) {
    const status = document.getElementById("doc-status");
    const { artifact } = this.view;
    try {
      const written = await this.api.put(`/artifacts/${artifact.id}/document/`, { base_version: base, content });
      this.myVersions.add(`${artifact.id}:${written.version}`);
      this.view.base = written.version;
      this.view.seenVersion = Math.max(this.view.seenVersion, written.version);
      document.getElementById("conflict").hidden = true;
      status.textContent = t("Saved as version {number}", { number: written.version });
      this.view.artifact = await this.api.get(`/artifacts/${artifact.id}/`);
      this.renderVersions();
    } catch (error) {
      if (error instanceof ApiError && error.status === 409 && error.code === "stale_version") {
        await this.showConflict(content, error.details.current_version);
      } else {
        status.textContent = error.message;
      }
    }
  }

  async showConflict(mine, currentVersion) {
    const { artifact } = this.view;
    const theirs = await fetchText(this.fileUrl(artifact.id, currentVersion));
    const panel = document.getElementById("conflict");
    const mineBox = h("textarea", { id: "conflict-mine", readonly: true, rows: "8" });
    mineBox.value = mine;
    const theirsBox = h("textarea", { id: "conflict-theirs", readonly: true, rows: "8" });
    theirsBox.value = theirs;
    panel.replaceChildren(
      h("h4", { role: "alert", text: t("Not saved: version {current} was written while you edited version {base}.", { current: currentVersion, base: this.view.base }) }),
      h("div", { class: "side-by-side" },
        h("div", {}, h("label", { for: "conflict-mine", text: t("Your text") }), mineBox),
        h("div", {}, h("label", { for: "conflict-theirs", text: t("Current version (v{number})", { number: currentVersion }) }), theirsBox)),
      h("div", { class: "row" },
        h("button", { type: "button", id: "keep-mine", class: "primary", onclick: () => this.saveDocument(mine, currentVersion) }, t("Keep mine on top of latest")),
        h("button", { type: "button", id: "take-theirs", onclick: () => this.takeTheirs(theirs, currentVersion) }, t("Take theirs"))),
    );
    panel.hidden = false;
    document.getElementById("doc-status").textContent = t("Conflict with version {number}", { number: currentVersion });
  }

  async takeTheirs(theirs, currentVersion) {
    document.getElementById("doc-editor").value = theirs;
    this.view.base = currentVersion;
    this.view.seenVersion = Math.max(this.view.seenVersion, currentVersion);
    document.getElementById("conflict").hidden = true;
    document.getElementById("doc-status").textContent = t("Editing version {number}", { number: currentVersion });
    this.view.artifact = await this.api.get(`/artifacts/${this.view.artifact.id}/`);
    this.renderVersions();
  }

  // --- Flow editor (flow_editor.js) ----------------------------------------------------------------------

  openFlow() {
    return this.flowEditor.open();
  }

  flowEvent(kind, data) {
    this.flowEditor.flowEvent(kind, data);
  }
}
