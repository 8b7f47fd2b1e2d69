// "How was this made": the provenance of one artifact version, opened from its row in the version history.
// The task and the person's request, the exact model lease, the tool calls with their results, the generation job,
// the human decisions (cards, and who resolved them, by name), the charges, the versions and source artifacts it
// came from (each opens in the viewer), the creative guides its turn read and the memories the step was shown —
// all from GET …/artifacts/<id>/versions/<n>/provenance/. Escape or Close goes back to the button that opened it.

import { h } from "./dom.js";
import { N_, t } from "./i18n.js";

const section = () => document.getElementById("provenance");

// Keys for t(): said when shown.
const MADE_BY = { agent: N_("the agent"), person: N_("a person"), system: N_("the system") };
const RELATIONS = { previous_version: N_("the earlier version"), source: N_("the source") };
const ACTIONS = {
  approve: N_("Approved"),
  confirm: N_("Confirmed"),
  decline: N_("Declined"),
  choose: N_("Chose"),
  adjust: N_("Asked for changes"),
  answer: N_("Answered"),
};
// What a charge became, and how it was authorised (the server's values, said in words).
N_("charged"); N_("released, nothing kept"); N_("held"); N_("refunded");
N_("budget"); N_("auto"); N_("started"); N_("unknown");
N_("preference"); N_("instruction"); N_("fact"); N_("hypothesis");

function when(iso) {
  return iso ? new Date(iso).toLocaleString() : "";
}

/** A JSON value for reading: indented, and cut short past a few thousand characters. */
function json(value, limit = 4000) {
  const text = JSON.stringify(value ?? null, null, 1);
  return text.length > limit ? `${text.slice(0, limit)}\n… ${t("({count} more characters)", { count: text.length - limit })}` : text;
}

/** What a person decided on a card, by name: "Approved by alice". */
export function decisionText(decision) {
  if (decision.status !== "resolved") return decision.status === "open" ? t("Still open") : t("Closed ({status})", { status: t(decision.status) });
  const resolution = decision.resolution || {};
  const action = ACTIONS[resolution.action] ? t(ACTIONS[resolution.action]) : resolution.action || t("Resolved");
  const label = resolution.action === "choose" && resolution.label ? resolution.label : null;
  let text = decision.resolved_by
    ? t(label ? "{action} “{label}” by {name}" : "{action} by {name}", { action, label, name: decision.resolved_by })
    : t(label ? "{action} “{label}” by the runtime" : "{action} by the runtime", { action, label });
  if (resolution.text) text += `: ${resolution.text}`;
  return decision.resolved_at ? `${text} · ${when(decision.resolved_at)}` : text;
}

/** What a quote card asked to approve, which may be a whole series: "Covered 3 images at 40 credits each,
 * 120 credits in all". */
export function coversText(covers) {
  if (covers.items != null && covers.per_item != null) {
    return t("Covered {things} at {each} credits each, {amount} credits in all", { things: covers.things, each: covers.per_item, amount: covers.amount });
  }
  return covers.items != null
    ? t("Covered {things}, {amount} credits in all", { things: covers.things, amount: covers.amount })
    : t("Covered {amount} credits in all", { amount: covers.amount });
}

function part(id, title, ...body) {
  const headingId = `provenance-${id}-heading`;
  return h("section", { class: "provenance-part", "data-part": id, "aria-labelledby": headingId },
    h("h5", { id: headingId, text: title }), ...body);
}

function none(text) {
  return h("p", { class: "reason", text });
}

export class ProvenanceView {
  /** `openVersion(artifactId, number)` shows another version or artifact in the viewer. */
  constructor({ api, openVersion }) {
    this.api = api;
    this.openVersion = openVersion;
    this.shown = null; // {artifactId, number}
    this.request = 0;
    section().hidden = true; // a view left from another workspace goes
    section().replaceChildren();
    // Assigned, not added: the studio makes a new view when the person switches workspace, and only it may answer.
    section().onkeydown = (event) => {
      if (event.key === "Escape") {
        event.preventDefault();
        this.close();
      }
    };
  }

  isShowing(artifactId, number) {
    return Boolean(this.shown && this.shown.artifactId === artifactId && this.shown.number === number);
  }

  /** The button in the version history that opens this version's provenance (re-rendered rows make new ones). */
  trigger(number) {
    return document.querySelector(`#versions [data-version="${number}"] button.how`);
  }

  /** The version's button: opens its provenance, or closes it when it is the one shown (it says aria-expanded). */
  toggle(artifactId, number) {
    if (this.isShowing(artifactId, number)) this.close();
    else this.show(artifactId, number);
  }

  async show(artifactId, number) {
    const asked = ++this.request;
    this.shown = { artifactId, number };
    const box = section();
    box.hidden = false;
    box.dataset.artifact = String(artifactId);
    box.dataset.version = String(number);
    box.dataset.state = "loading";
    box.setAttribute("aria-busy", "true");
    box.replaceChildren(this.header(t("How version {number} was made", { number })), h("p", { role: "status", text: t("Loading…") }));
    this.syncTriggers();
    this.focusHeading();
    let found;
    try {
      found = await this.api.get(`/artifacts/${artifactId}/versions/${number}/provenance/`);
    } catch (error) {
      if (asked !== this.request) return;
      box.replaceChildren(this.header(t("How version {number} was made", { number })), h("p", { class: "error", role: "alert", text: error.message }));
      box.dataset.state = "error";
      box.removeAttribute("aria-busy");
      return;
    }
    if (asked !== this.request) return; // another version was asked for meanwhile
    this.render(found);
    box.dataset.state = "ready";
    box.removeAttribute("aria-busy");
    this.focusHeading();
  }

  close({ restoreFocus = true } = {}) {
    const shown = this.shown;
    this.shown = null;
    this.request += 1;
    section().hidden = true;
    section().replaceChildren();
    this.syncTriggers();
    if (restoreFocus && shown) this.trigger(shown.number)?.focus();
  }

  /** Each row's button says whether its provenance is the one shown. */
  syncTriggers() {
    for (const button of document.querySelectorAll("#versions button.how")) {
      const number = Number(button.closest("[data-version]").dataset.version);
      button.setAttribute("aria-expanded", this.shown && this.shown.number === number ? "true" : "false");
    }
  }

  focusHeading() {
    document.getElementById("provenance-title")?.focus();
  }

  header(title) {
    return h("header", { class: "panel-head" },
      h("h4", { id: "provenance-title", tabindex: "-1", text: title }),
      h("button", { type: "button", id: "provenance-close", onclick: () => this.close() }, t("Close")));
  }

  render(found) {
    const { artifact } = found;
    const [before, after] = t("How version {number} of “{title}” was made", { number: artifact.version }).split("{title}");
    const title = h("span", {}, before, h("bdi", { text: artifact.title }), after);
    const header = this.header("");
    header.querySelector("h4").replaceChildren(title);
    const by = found.made_by === "person" && found.person ? found.person : MADE_BY[found.made_by] ? t(MADE_BY[found.made_by]) : found.made_by;
    section().replaceChildren(
      header,
      h("p", { class: "provenance-summary", "data-made-by": found.made_by },
        t("Made by {who} · {when}", { who: by, when: when(artifact.created_at) }) + (artifact.media_type ? ` · ${artifact.media_type}` : "")),
      this.task(found),
      this.requestPart(found.request),
      this.model(found),
      this.calls(found),
      this.decisions(found.decisions),
      this.charges(found.charges, found.decisions),
      this.sources(found.derived_from),
      this.guides(found.sources || []),
      this.memories(found.memories),
    );
  }

  task(found) {
    if (!found.task) return part("task", t("Task"), none(found.made_by === "person" ? t("Written or uploaded by a person, outside any task.") : t("No task.")));
    const { task } = found;
    const [before, after] = t("#{id} “{title}” · {status} now", { id: task.id, status: t(task.status) }).split("{title}");
    return part("task", t("Task"), h("p", { "data-task": String(task.id) }, before, h("bdi", { text: task.title }), after));
  }

  requestPart(request) {
    if (!request.length) return part("request", t("The request"), none(t("No request recorded.")));
    return part("request", t("The request"),
      h("ol", { class: "provenance-list" }, ...request.map((r) =>
        h("li", { "data-kind": r.kind, "data-source": r.source },
          h("span", { class: "reason", text: `${r.kind === "brief" ? t("The task's brief") : t("Message ({source})", { source: r.source })}${r.author ? t(" from {name}", { name: r.author }) : ""} · ${when(r.created_at)}` }),
          h("p", { class: "quote", dir: "auto", text: r.text })))));
  }

  model(found) {
    const { model, step } = found;
    if (!model) return part("model", t("Model"), none(t("No model: no agent step made this version.")));
    const params = Object.keys(model.params || {}).length ? Object.entries(model.params).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ") : t("defaults");
    return part("model", t("Model"),
      h("dl", { class: "provenance-facts" },
        h("dt", { text: t("Model") }), h("dd", { "data-model": model.model, text: `${model.model} (${model.provider})` }),
        h("dt", { text: t("Lease") }), h("dd", { text: t("#{id} of turn {turn} · {when}", { id: model.lease_id, turn: model.turn_number, when: when(model.leased_at) }) }),
        h("dt", { text: t("Parameters") }), h("dd", { text: params }),
        model.base_url_host ? [h("dt", { text: t("Endpoint") }), h("dd", { text: model.base_url_host })] : null,
        h("dt", { text: t("Context") }), h("dd", { text: t("{count} tokens", { count: model.context_tokens }) }),
        step ? [h("dt", { text: t("Step") }), h("dd", { text: t("step {number} (answered as {model}) · {when}", { number: step.number, model: step.model, when: when(step.created_at) }) })] : null),
      step && step.text ? h("p", { class: "quote", dir: "auto", text: step.text }) : null);
  }

  calls(found) {
    const madeBy = found.step ? found.step.made_by_call : null;
    const items = found.tool_calls.map((call) => {
      const made = call.call_id === madeBy;
      return h("li", { class: "provenance-call", "data-call": call.call_id, "data-name": call.name, "data-made": made ? "true" : null },
        h("p", {}, h("strong", { text: call.name }), ` · ${t(call.status)}${made ? t(" · made this version") : ""}`),
        h("details", {},
          h("summary", { text: t("Input and result of {name}", { name: call.name }) }),
          h("p", { class: "reason", text: t("Call {id} · {start} → {end}", { id: call.call_id, start: when(call.started_at), end: when(call.finished_at) }) }),
          h("h6", { text: t("Input") }), h("pre", { text: json(call.input) }),
          h("h6", { text: t(call.error ? "Error" : "Result") }), h("pre", { text: json(call.error || call.result) })));
    });
    const job = found.job
      ? h("p", { class: "provenance-job", "data-job": String(found.job.id) },
        t("Generation job #{id} ({kind}, {provider}): {status}", { id: found.job.id, kind: t(found.job.kind), provider: found.job.provider, status: t(found.job.status) }),
        found.job.prompt ? (([before, after]) => [before, h("bdi", { text: found.job.prompt }), after])(t(" · prompt “{prompt}”").split("{prompt}")) : null)
      : null;
    return part("calls", t("Tool calls"),
      items.length ? h("ol", { class: "provenance-list" }, ...items) : none(t("No tool calls.")), job);
  }

  decisions(decisions) {
    if (!decisions.length) return part("decisions", t("Human decisions"), none(t("No decision was asked of a person.")));
    return part("decisions", t("Human decisions"),
      h("ul", { class: "provenance-list" }, ...decisions.map((d) =>
        h("li", { class: "provenance-decision", "data-card": String(d.card_id), "data-status": d.status },
          h("p", {}, h("bdi", { text: d.title }), h("span", { class: "reason", text: ` · ${t("{kind} card", { kind: t(d.kind) })}` })),
          h("p", { class: "decision", "data-resolved-by": d.resolved_by || "", text: decisionText(d) }),
          d.covers ? h("p", { class: "reason provenance-covers", text: coversText(d.covers) }) : null))));
  }

  /** Only this version's own charges; one approved across a series says it was this version's share. */
  charges(charges, decisions = []) {
    if (!charges.length) return part("charges", t("Charges for this version"), none(t("Nothing was charged.")));
    return part("charges", t("Charges for this version"),
      h("ul", { class: "provenance-list" }, ...charges.map((c) => {
        const outcome = t(c.captured ? "charged" : c.released ? "released, nothing kept" : c.status);
        const under = decisions.find((d) => d.approval_id != null && d.approval_id === c.approval_id && d.covers);
        const share = under && under.covers.amount !== c.amount
          ? t(" · this version's share of the {amount} credits approved", { amount: under.covers.amount })
          : "";
        return h("li", { class: "provenance-charge", "data-status": c.status, "data-order": String(c.order_id) },
          t("{amount} credits for {operation}", { amount: c.amount, operation: c.operation }) + ` · ${outcome} · ${t(c.authorisation.replaceAll("_", " "))}${share} · ${when(c.settled_at || c.created_at)}`);
      })));
  }

  sources(sources) {
    if (!sources.length) return part("sources", t("Came from"), none(t("Nothing earlier: this is where it starts.")));
    return part("sources", t("Came from"),
      h("ul", { class: "provenance-list" }, ...sources.map((s) =>
        h("li", { "data-relation": s.relation },
          `${RELATIONS[s.relation] ? t(RELATIONS[s.relation]) : s.relation}: `,
          h("button", {
            type: "button",
            class: "link",
            "data-artifact": String(s.artifact_id),
            "data-version": String(s.version),
            onclick: () => this.openVersion(s.artifact_id, s.version),
          }, h("bdi", { text: s.artifact_title }), ` v${s.version}`),
          h("span", { class: "reason", text: ` · ${t(s.artifact_kind)} · ${when(s.created_at)}` })))));
  }

  /** The creative guides its turn read before making it: a workspace guide's version opens in the viewer. */
  guides(guides) {
    if (!guides.length) return part("guides", t("Guides it followed"), none(t("No creative guide was read before it was made.")));
    return part("guides", t("Guides it followed"),
      h("ul", { class: "provenance-list" }, ...guides.map((g) =>
        h("li", { "data-guide": g.name, "data-version": String(g.version) },
          g.artifact_id
            ? h("button", {
              type: "button",
              class: "link",
              "data-artifact": String(g.artifact_id),
              onclick: () => this.openVersion(g.artifact_id, g.version),
            }, h("bdi", { text: g.name }), ` v${g.version}`)
            : h("bdi", { text: `${g.name} v${g.version}` }),
          h("span", { class: "reason", text: ` · ${t(g.builtin ? "built in" : "this workspace's")} · ${g.purpose}` })))));
  }

  memories(memories) {
    if (!memories.length) return part("memories", t("Memories it was shown"), none(t("No long-term memory was shown to this step.")));
    return part("memories", t("Memories it was shown"),
      h("ul", { class: "provenance-list" }, ...memories.map((m) =>
        h("li", { "data-memory-version": String(m.version_id), "data-status": m.status },
          h("span", { class: "reason", text: `${m.kind ? t(m.kind) : t("memory")}${m.subject ? ` · ${m.subject}` : ""} · ${t(m.status)}` }),
          h("p", { class: "quote", dir: "auto", text: m.content })))));
  }
}
