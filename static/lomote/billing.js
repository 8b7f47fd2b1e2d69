// The billing panel: the balance and today's spending, the holds (credits reserved for work under way), the quotes
// waiting for a person (each with its card in the chat, approvable from here), the limits under which spending
// needs no confirmation (owners change them; others read them), a top-up, and the ledger a page at a time.
// Every figure is re-read from REST when a billing.* event (or a quote card's event) arrives: nothing is computed
// here, so what the panel shows is what the ledger says.

import { ApiError } from "./api.js";
import { h } from "./dom.js";
import { N_, t } from "./i18n.js";

const LEDGER_PAGE = 10;
const LEDGER_KINDS = {
  topup: N_("Top-up"),
  hold: N_("Held for work under way"),
  capture: N_("Charged"),
  release: N_("Released (not charged)"),
  refund: N_("Refunded"),
  adjust: N_("Adjustment"),
};
const AUTHORISATIONS = {
  quote: N_("approved quote"),
  budget: N_("approved budget"),
  auto: N_("under the no-confirmation limits"),
};
const ROLE_NAMES = { owner: N_("an owner"), editor: N_("an editor"), viewer: N_("a viewer") };

const $ = (id) => document.getElementById(id);

function when(iso) {
  return iso ? new Date(iso).toLocaleString([], { dateStyle: "short", timeStyle: "short" }) : "";
}

function credits(n) {
  return t(Math.abs(n) === 1 ? "{n} credit" : "{n} credits", { n: Number(n).toLocaleString() });
}

function signed(n) {
  return n > 0 ? `+${n.toLocaleString()}` : n < 0 ? `−${Math.abs(n).toLocaleString()}` : "0";
}

function operationText(operation, params) {
  const count = params && params.count;
  const seconds = params && params.seconds;
  const raw = (operation || "").replace(".", " ").replace("generate", "generation");
  const name = raw ? t(raw) : "";
  if (count) return `${name} × ${count}`;
  if (seconds) return `${name}, ${seconds} s`;
  return name || t("an operation");
}

/** Who moved the money: the person, or the agent with what allowed it (someone's approval, or the limits). */
function byText(entry) {
  if (entry.created_by) return entry.created_by;
  const order = entry.order;
  if (!order) return "—";
  if (order.approved_by) return t("Agent, approved by {name}", { name: order.approved_by });
  if (order.authorisation === "auto") return t("Agent, within the limits");
  return t("Agent");
}

function problemText(error) {
  if (!(error instanceof ApiError)) return String(error);
  if (error.code === "role_required") {
    const role = t(ROLE_NAMES[error.details.your_role] || N_("not allowed"));
    return t("Not changed: only {required} can do this, and you are {role} in this workspace.", { required: t(ROLE_NAMES[error.details.required_role] || N_("another role")), role });
  }
  if (error.code === "person_required") return t("Not approved: only a person signed in can approve spending.");
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
    const who = t(ROLE_NAMES[this.role] || N_("not a member"));
    $("policy-hint").textContent = owner
      ? t("Above either limit, a person approves the spending first. 0 means every paid step is approved first.")
      : t("Only an owner can change these limits or add credits; you are {who} in this workspace.", { who });
    $("billing-panel").dataset.role = this.role || "";
  }

  /** Everything, from REST. A failure is said in the panel: the rest of the studio still opens. */
  async load() {
    try {
      await Promise.all([this.loadBalance(), this.loadHolds(), this.loadQuotes(), this.loadLedger()]);
      if ($("billing-notice").classList.contains("error")) this.notice(""); // read again: the failure is over
    } catch (error) {
      this.notice(t("The billing figures could not be read: {problem}", { problem: problemText(error) }));
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
    $("balance-auto").textContent = t("{spent} of {cap}", { spent: credits(balance.auto_spent_today), cap: credits(balance.policy.daily_no_confirm_cap) });
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
      ? t("The workspace's default limits.")
      : t("Last changed {when}.", { when: when(policy.updated_at) });
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
      status.textContent = t("Saved: up to {threshold} per request and {cap} a day without asking.", { threshold: credits(policy.no_confirm_threshold), cap: credits(policy.daily_no_confirm_cap) });
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
      status.textContent = t("Added {amount}: {available} available.", { amount: credits(amount), available: credits(balance.available) });
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
      list.replaceChildren(h("li", { class: "billing-empty", text: t("Nothing held: no paid work is under way.") }));
      return;
    }
    list.replaceChildren(...page.results.map((order) => h("li", { class: "hold", "data-order": String(order.id) },
      h("strong", { text: credits(order.amount) }),
      ` · ${operationText(order.operation)}`,
      order.task ? ` · ${this.taskLabel(order.task)}` : "",
      h("span", { class: "reason", text: ` · ${t("since {when}, {how}", { when: when(order.created_at), how: AUTHORISATIONS[order.authorisation] ? t(AUTHORISATIONS[order.authorisation]) : order.authorisation })}` }))));
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
      list.replaceChildren(h("li", { class: "billing-empty", text: t("Nothing is waiting for an approval.") }));
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
    const subject = item.task ? this.taskLabel(item.task) : card?.payload?.run ? t("Flow run #{id}", { id: card.payload.run }) : t("no task");
    const element = h("li", {
      class: "quote", "data-quote": quote ? String(quote.id) : "", "data-card": card ? String(card.id) : "", "aria-labelledby": titleId,
    },
    h("p", { id: titleId, class: "quote-title" }, h("strong", { text: credits(item.amount) }), t(" for {operation}", { operation: operationText(item.operation, item.params) })),
    h("p", { class: "reason", text: `${subject}${quote ? ` · ${t("quote #{id}, expires {when}", { id: quote.id, when: when(quote.expires_at) })}` : ""}` }));
    const actions = h("div", { class: "card-actions", role: "group", "aria-label": t("Decide: {amount} for {operation}", { amount: credits(item.amount), operation: operationText(item.operation, item.params) }) });
    if (card) {
      actions.append(h("button", { type: "button", class: "link", "data-action": "show-card", "data-focus-key": `${key}-show`, onclick: () => this.onCard(card.id) }, t("Show its card in the chat")));
    }
    actions.append(h("button", {
      type: "button", class: "primary", "data-action": "approve", "data-focus-key": `${key}-approve`,
      disabled: !this.canApprove,
      "aria-describedby": this.canApprove ? null : "quotes-hint",
      onclick: (event) => this.approve(item, element, event.currentTarget),
    }, t(card ? "Approve" : "Approve this quote")));
    element.append(actions, h("p", { class: "error", role: "alert", hidden: true }));
    return element;
  }

  async approve(item, element, button) {
    const problem = element.querySelector(".error");
    button.disabled = true;
    try {
      if (item.card) await this.api.post(`/cards/${item.card.id}/actions/`, { action: "approve" });
      else await this.api.post("/billing/approvals/", { quote: item.quote.id });
      this.notice(t("Approved {amount} for {operation}.", { amount: credits(item.amount), operation: operationText(item.operation, item.params) }), { alert: false });
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
        LEDGER_KINDS[entry.kind] ? t(LEDGER_KINDS[entry.kind]) : entry.kind,
        entry.order ? h("span", { class: "reason", text: ` · ${operationText(entry.order.operation)}${entry.order.task ? ` · ${this.taskLabel(entry.order.task)}` : ""}` }) : null,
        // A memo that only repeats the kind ("Top-up · top-up") says nothing more.
        entry.memo && !entry.order && entry.memo.toLowerCase() !== (LEDGER_KINDS[entry.kind] || entry.kind).toLowerCase()
          ? h("span", { class: "reason", dir: "auto", text: ` · ${entry.memo}` }) : null),
      h("td", { class: "num", text: signed(entry.delta_available) }),
      h("td", { class: "num", text: signed(entry.delta_held) }),
      h("td", { text: byText(entry) }))));
    const last = Math.min(start + page.results.length, page.count);
    $("ledger-position").textContent = page.count ? t("{first}–{last} of {count}", { first: start + 1, last, count: page.count }) : t("No movements yet");
    $("ledger-newer").disabled = start === 0;
    $("ledger-older").disabled = last >= page.count;
    // A disabled button cannot keep the keyboard: hand it to the other one.
    if (document.activeElement?.disabled) ($("ledger-newer").disabled ? $("ledger-older") : $("ledger-newer")).focus();
  }
}
