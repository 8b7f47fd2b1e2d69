// The studio's tabs for narrow windows (under 1,000 px the studio is one column): Chat · Canvas · Tasks · Memory ·
// Billing · More (members, API keys). Every panel names its tab in `data-tab`; the panels of the other tabs get
// `tab-hidden`, which only hides them under 1,000 px (studio.css), so a wide window keeps showing everything and
// switching width never loses the person's place. A tab whose panel got something new while another tab was
// shown is marked (a dot, and "new" in its accessible name) until it is opened.

import { t } from "./i18n.js";

const NARROW = "(max-width: 999.98px)";

export class Tabs {
  constructor(root) {
    this.root = root;
    this.list = root.querySelector("[role='tablist']");
    this.tabs = [...this.list.querySelectorAll("[role='tab']")];
    this.narrow = window.matchMedia(NARROW);
    for (const tab of this.tabs) {
      tab.addEventListener("click", () => this.show(tab.dataset.tabFor, { focus: false }));
    }
    // Arrow keys, Home and End move between the tabs (one Tab stop for the whole list), as the ARIA tabs pattern has it.
    this.list.addEventListener("keydown", (event) => {
      const at = this.tabs.indexOf(event.target);
      if (at < 0) return;
      const next = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: this.tabs.length - 1 }[event.key];
      if (next === undefined) return;
      event.preventDefault();
      const tab = this.tabs[(next + this.tabs.length) % this.tabs.length];
      this.show(tab.dataset.tabFor, { focus: true });
    });
    this.show("chat", { focus: false });
  }

  get shown() {
    return this.root.dataset.tab;
  }

  /** Whether the tabs are what the person sees (a narrow window), rather than every panel at once. */
  get active() {
    return this.narrow.matches;
  }

  show(name, { focus = false } = {}) {
    this.root.dataset.tab = name;
    for (const panel of this.root.querySelectorAll("[data-tab-panel]")) {
      panel.classList.toggle("tab-hidden", panel.dataset.tabPanel !== name);
    }
    for (const tab of this.tabs) {
      const selected = tab.dataset.tabFor === name;
      tab.setAttribute("aria-selected", String(selected));
      tab.tabIndex = selected ? 0 : -1;
      if (selected) this.unmark(name);
      if (selected && focus) tab.focus();
    }
  }

  /** Something new arrived for a tab: mark it, unless the person is looking at it (or sees every panel). */
  mark(name) {
    if (!this.active || this.shown === name) return;
    const tab = this.tabs.find((t) => t.dataset.tabFor === name);
    if (!tab || tab.dataset.new === "true") return;
    tab.dataset.new = "true";
    tab.querySelector(".tab-new").textContent = ` ${t("(new)")}`;
  }

  unmark(name) {
    const tab = this.tabs.find((t) => t.dataset.tabFor === name);
    if (!tab) return;
    delete tab.dataset.new;
    tab.querySelector(".tab-new").textContent = "";
  }
}
