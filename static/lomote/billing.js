// The billing panel: the balance and today's spending, the holds (credits reserved for work under way), the quotes
// waiting for a person (each with its card in the chat, approvable from here), the limits under which spending
// needs no confirmation (owners change them; others read them), a top-up, and the ledger a page at a time.
// Every figure is re-read from REST when a billing.* event (or a quote card's event) arrives: nothing is computed
// here, so what the panel shows is what the ledger says.

import { ApiError } from "./api.js";
import { h } from "./dom.js";

const LEDGER_PAGE = 10;
const LEDGER_KINDS = {
  topup: "Top-up",
  hold: "Held for work under way",
  capture: "Charged",
  release: "Released (not charged)",
  refund: "Refunded",
  adjust: "Adjustment",
};
const AUTHORISATIONS = {
  quote: "approved quote",
  budget: "approved budget",
  auto: "under the no-confirmation limits",
};
const ROLE_NAMES = { owner: "an owner", editor: "an editor", viewer: "a viewer" };

const $ = (id) => document.getElementById(id);

function when(iso) {
  return iso ? new Date(iso).toLocaleString([], { dateStyle: "short", timeStyle: "short" }) : "";
}

function credits(n) {
  return `${Number(n).toLocaleString()} credit${Math.abs(n) === 1 ? "" : "s"}`;
}

function signed(n) {
  return n > 0 ? `+${n.toLocaleString()}` : n < 0 ? `−${Math.abs(n).toLocaleString()}` : "0";
}

function operationText(operation, params) {
  const count = params && params.count;
  const seconds = params && params.seconds;
  const name = (operation || "").replace(".", " ").replace("generate", "generation");
  if (count) return `${name} × ${count}`;
  if (seconds) return `${name}, ${seconds} s`;
  return name || "an operation";
}

/** Who moved the money: the person, or the agent with what allowed it (someone's approval, or the limits). */
function byText(entry) {
  if (entry.created_by) return entry.created_by;
  const order = entry.order;
  if (!order) return "—";
  if (order.approved_by) return `Agent, approved by ${order.approved_by}`;
  if (order.authorisation === "auto") return "Agent, within the limits";
  return "Agent";
}

function problemText(error) {
  if (!(error instanceof ApiError)) return String(error);
  if (error.code === "role_required") {
    const role = ROLE_NAMES[error.details.your_role] || "not allowed";
    return `Not changed: only ${ROLE_NAMES[error.details.required_role] || "another role"} can do this, and you are ${role} in this workspace.`;
  }
  if (error.code === "person_required") return "Not approved: only a person signed in can approve spending.";
  return error.message;
}

export class BillingPanel {
  /**
   * api: the workspace's REST client; role: the person's role here; taskLabel(id): how the studio names a task;
   * onCard(id): shows that card in the chat and puts the keyboard on it.
   */
  constructor({ api, role, taskLabel, onCard }) {
    this.api = api;
    this.role = role;
    this.taskLabel = taskLabel;
    this.onCard = onCard;
    this.ledgerOffset = 0;
    this.ledgerCount = 0;
    this.reloading = null;
    $("policy").onsubmit = (event) => { event.preventDefault(); this.savePolicy(); };
    $("topup").onsubmit = (event) => { event.preventDefault(); this.topUp(); };
    $("ledger-newer").onclick = () => this.ledgerPage(this.ledgerOffset - LEDGER_PAGE);
    $("ledger-older").onclick = () => this.ledgerPage(this.ledgerOffset + LEDGER_PAGE);
    this.applyRole();
  }

  get isOwner() {
    return this.role === "owner";
  }

  get canApprove() {
    return this.role === "owner" || this.role === "editor";
  }

  /** Owners change the limits and top up; for everyone else the controls stay visible but read-only. */
  applyRole() {
    const owner = this.isOwner;
    for (const id of ["policy-threshold", "policy-cap", "policy-save", "topup-amount", "topup-submit"]) {
      $(id).disabled = !owner;
    }
    const who = ROLE_NAMES[this.role] || "not a member";
    $("policy-hint").textContent = owner
      ? "Above either limit, a person approves the spending first. 0 means every paid step is approved first."
      : `Only an owner can change these limits or add credits; you are ${who} in this workspace.`;
    $("billing-panel").dataset.role = this.role || "";
  }

  /** Everything, from REST. A failure is said in the panel: the rest of the studio still opens. */
  async load() {
    try {
      await Promise.all([this.loadBalance(), this.loadHolds(), this.loadQuotes(), this.loadLedger()]);
      if ($("billing-notice").classList.contains("error")) this.notice(""); // read again: the failure is over
    } catch (error) {
      this.notice(`The billing figures could not be read: ${problemText(error)}`);
    }
  }

  /** A billing event, or a quote card's: reload once the burst is over (one approval moves several rows). */
  apply() {
    clearTimeout(this.reloading);
    this.reloading = setTimeout(() => this.load(), 80);
  }

  notice(text, { alert = true } = {}) {
    const element = $("billing-notice");
    element.textContent = text;
    element.hidden = !text;
    element.classList.toggle("error", alert);
  }

  // --- balance and policy -------------------------------------------------------------------------------

  async loadBalance() {
    const balance = await this.api.get("/billing/balance/");
    $("balance-available").textContent = credits(balance.available);
    $("balance-held").textContent = credits(balance.held);
    $("balance-spent").textContent = credits(balance.spent_today);
    $("balance-auto").textContent = `${credits(balance.auto_spent_today)} of ${credits(balance.policy.daily_no_confirm_cap)}`;
    const panel = $("billing-panel");
    panel.dataset.available = String(balance.available);
    panel.dataset.held = String(balance.held);
    this.showPolicy(balance.policy);
  }

  showPolicy(policy) {
    // A limit the person is typing keeps what they typed; one they left as it was shows the stored figure.
    for (const [id, value] of [["policy-threshold", policy.no_confirm_threshold], ["policy-cap", policy.daily_no_confirm_cap]]) {
      const input = $(id);
      if (input.value === (input.dataset.shown ?? input.value) || input.value === "") input.value = String(value);
      input.dataset.shown = String(value);
    }
    $("policy").dataset.threshold = String(policy.no_confirm_threshold);
    $("policy").dataset.cap = String(policy.daily_no_confirm_cap);
    $("policy-updated").textContent = policy.is_default
      ? "The workspace's default limits."
      : `Last changed ${when(policy.updated_at)}.`;
  }

  async savePolicy() {
    const status = $("policy-status");
    status.textContent = "";
    const body = {
      no_confirm_threshold: Number($("policy-threshold").value),
      daily_no_confirm_cap: Number($("policy-cap").value),
    };
    try {
      const policy = await this.api.patch("/billing/policy/", body);
      for (const input of [$("policy-threshold"), $("policy-cap")]) delete input.dataset.shown; // saved: show what is stored
      this.showPolicy(policy);
      status.textContent = `Saved: up to ${credits(policy.no_confirm_threshold)} per request and ${credits(policy.daily_no_confirm_cap)} a day without asking.`;
      $("policy").dataset.saved = "true";
    } catch (error) {
      status.textContent = problemText(error);
      $("policy").dataset.saved = "false";
      this.learnRole(error);
    }
  }

  async topUp() {
    const status = $("topup-status");
    status.textContent = "";
    const amount = Number($("topup-amount").value);
    try {
      const balance = await this.api.post("/billing/topup/", { amount });
      status.textContent = `Added ${credits(amount)}: ${credits(balance.available)} available.`;
      await this.load();
    } catch (error) {
      status.textContent = problemText(error);
      this.learnRole(error);
    }
  }

  /** A 403 says what the person's role is now (it may have changed since the page loaded). */
  learnRole(error) {
    if (error instanceof ApiError && error.code === "role_required" && error.details.your_role) {
      this.role = error.details.your_role;
      this.applyRole();
    }
  }

  // --- holds --------------------------------------------------------------------------------------------

  async loadHolds() {
    const page = await this.api.get("/billing/orders/?status=held&limit=50");
    const list = $("holds");
    if (!page.results.length) {
      list.replaceChildren(h("li", { class: "billing-empty", text: "Nothing held: no paid work is under way." }));
      return;
    }
    list.replaceChildren(...page.results.map((order) => h("li", { class: "hold", "data-order": String(order.id) },
      h("strong", { text: credits(order.amount) }),
      ` · ${operationText(order.operation)}`,
      order.task ? ` · ${this.taskLabel(order.task)}` : "",
      h("span", { class: "reason", text: ` · since ${when(order.created_at)}, ${AUTHORISATIONS[order.authorisation] || order.authorisation}` }))));
  }

  // --- quotes -------------------------------------------------------------------------------------------

  /**
   * What waits for a person: every open quote card (approving it is the decision the task waits for), and every
   * open quote nobody put on a card (asked through the API). A quote whose card was answered is settled there.
   * The newest 100 quote cards are read: quotes expire within the hour, so older cards cannot name an open one.
   */
  async loadQuotes() {
    const [quotes, cards] = await Promise.all([
      this.api.get("/billing/quotes/?status=open&limit=100"),
      this.api.get("/cards/?kind=quote&limit=100"),
    ]);
    const byId = new Map(quotes.results.map((quote) => [quote.id, quote]));
    const onCards = new Set(cards.results.map((card) => card.payload && card.payload.quote).filter(Boolean));
    const items = [];
    for (const card of cards.results.filter((c) => c.status === "open").reverse()) {
      const quote = byId.get(card.payload.quote) || null;
      const params = { count: card.payload.items, ...(quote?.params || {}) };
      items.push({ card, quote, amount: card.payload.amount ?? quote?.amount, operation: card.payload.operation || quote?.operation, params, task: card.task });
    }
    for (const quote of quotes.results) {
      if (!onCards.has(quote.id)) items.push({ card: null, quote, amount: quote.amount, operation: quote.operation, params: quote.params, task: quote.task });
    }
    const list = $("quotes");
    $("billing-panel").dataset.openQuotes = String(items.length);
    if (!items.length) {
      list.replaceChildren(h("li", { class: "billing-empty", text: "Nothing is waiting for an approval." }));
      return;
    }
    const focused = list.contains(document.activeElement) ? document.activeElement.dataset.focusKey : null;
    list.replaceChildren(...items.map((item) => this.renderQuote(item)));
    if (focused) list.querySelector(`[data-focus-key="${focused}"]`)?.focus();
  }

  renderQuote(item) {
    const { card, quote } = item;
    const key = card ? `card-${card.id}` : `quote-${quote.id}`;
    const titleId = `${key}-quote-title`;
    const subject = item.task ? this.taskLabel(item.task) : card?.payload?.run ? `Flow run #${card.payload.run}` : "no task";
    const element = h("li", {
      class: "quote", "data-quote": quote ? String(quote.id) : "", "data-card": card ? String(card.id) : "", "aria-labelledby": titleId,
    },
    h("p", { id: titleId, class: "quote-title" }, h("strong", { text: credits(item.amount) }), ` for ${operationText(item.operation, item.params)}`),
    h("p", { class: "reason", text: `${subject}${quote ? ` · quote #${quote.id}, expires ${when(quote.expires_at)}` : ""}` }));
    const actions = h("div", { class: "card-actions", role: "group", "aria-label": `Decide: ${credits(item.amount)} for ${operationText(item.operation, item.params)}` });
    if (card) {
      actions.append(h("button", { type: "button", class: "link", "data-action": "show-card", "data-focus-key": `${key}-show`, onclick: () => this.onCard(card.id) }, "Show its card in the chat"));
    }
    actions.append(h("button", {
      type: "button", class: "primary", "data-action": "approve", "data-focus-key": `${key}-approve`,
      disabled: !this.canApprove,
      "aria-describedby": this.canApprove ? null : "quotes-hint",
      onclick: (event) => this.approve(item, element, event.currentTarget),
    }, card ? "Approve" : "Approve this quote"));
    element.append(actions, h("p", { class: "error", role: "alert", hidden: true }));
    return element;
  }

  async approve(item, element, button) {
    const problem = element.querySelector(".error");
    button.disabled = true;
    try {
      if (item.card) await this.api.post(`/cards/${item.card.id}/actions/`, { action: "approve" });
      else await this.api.post("/billing/approvals/", { quote: item.quote.id });
      this.notice(`Approved ${credits(item.amount)} for ${operationText(item.operation, item.params)}.`, { alert: false });
      $("quotes-heading").focus(); // the item goes away; the keyboard stays in the list's place
      await this.load();
    } catch (error) {
      button.disabled = false;
      problem.textContent = problemText(error);
      problem.hidden = false;
    }
  }

  // --- ledger -------------------------------------------------------------------------------------------

  async loadLedger() {
    await this.ledgerPage(this.ledgerOffset);
  }

  async ledgerPage(offset) {
    const start = Math.max(0, offset);
    const page = await this.api.get(`/billing/ledger/?limit=${LEDGER_PAGE}&offset=${start}`);
    this.ledgerOffset = start;
    this.ledgerCount = page.count;
    $("ledger-rows").replaceChildren(...page.results.map((entry) => h("tr", { "data-entry": String(entry.id), "data-kind": entry.kind },
      h("td", { text: when(entry.created_at) }),
      h("td", {},
        LEDGER_KINDS[entry.kind] || entry.kind,
        entry.order ? h("span", { class: "reason", text: ` · ${operationText(entry.order.operation)}${entry.order.task ? ` · ${this.taskLabel(entry.order.task)}` : ""}` }) : null,
        // A memo that only repeats the kind ("Top-up · top-up") says nothing more.
        entry.memo && !entry.order && entry.memo.toLowerCase() !== (LEDGER_KINDS[entry.kind] || entry.kind).toLowerCase()
          ? h("span", { class: "reason", dir: "auto", text: ` · ${entry.memo}` }) : null),
      h("td", { class: "num", text: signed(entry.delta_available) }),
      h("td", { class: "num", text: signed(entry.delta_held) }),
      h("td", { text: byText(entry) }))));
    const last = Math.min(start + page.results.length, page.count);
    $("ledger-position").textContent = page.count ? `${start + 1}–${last} of ${page.count}` : "No movements yet";
    $("ledger-newer").disabled = start === 0;
    $("ledger-older").disabled = last >= page.count;
    // A disabled button cannot keep the keyboard: hand it to the other one.
    if (document.activeElement?.disabled) ($("ledger-newer").disabled ? $("ledger-older") : $("ledger-newer")).focus();
  }
}
