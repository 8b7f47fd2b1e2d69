// The members panel: who is in the workspace, by username, with their role. Owners invite people by username (or
// email) and change roles; everyone else sees the list read-only. Refusals are said plainly (nobody by that name,
// already a member, the last owner cannot step down). Reloaded from REST when a member.* event arrives, so a role
// changed in another tab or by another owner shows here too (and a member made owner gets the owner's controls).

import { ApiError } from "./api.js";
import { h } from "./dom.js";
import { N_, t } from "./i18n.js";

const ROLES = [
  ["viewer", N_("Viewer")],
  ["editor", N_("Editor")],
  ["owner", N_("Owner")],
];
const ROLE_NAMES = Object.fromEntries(ROLES);

const $ = (id) => document.getElementById(id);

function roleSelect(id, selected) {
  const select = h("select", { id }, ...ROLES.map(([value, label]) => h("option", { value, text: t(label) })));
  select.value = selected;
  select.dataset.saved = selected;
  return select;
}

/** A refusal said in the person's terms; the API's own message when there is nothing better to say. */
export function refusalText(error, { username } = {}) {
  if (!(error instanceof ApiError)) return String(error);
  if (error.code === "already_member") return t("{name} is already a member of this workspace.", { name: username || t("That person") });
  if (error.code === "last_owner") return t("A workspace must keep at least one owner: make someone else owner first.");
  if (error.status === 403) return t("Only owners can invite people or change roles.");
  if (error.status === 400 && error.details && error.details.fields && error.details.fields.user) {
    return t("Nobody has the username or email “{name}”. Check the spelling: they need an account first.", { name: username });
  }
  if (error.status === 400 && error.details && error.details.fields && error.details.fields.role) {
    return t("Pick viewer, editor or owner.");
  }
  return error.message;
}

export class MembersPanel {
  constructor({ api, userId, onChange }) {
    this.api = api;
    this.userId = userId;
    this.onChange = onChange || (() => {}); // (members) → other panels refresh the names they show
    this.members = [];
    this.mode = null; // "owner" | "read-only": which controls the panel is built with
    this.reloading = null;
  }

  get isOwner() {
    const me = this.members.find((m) => m.user_id === this.userId);
    return Boolean(me && me.role === "owner");
  }

  async load() {
    const page = await this.api.get("/members/?limit=200");
    this.members = page.results;
    this.render();
    this.onChange(this.members);
  }

  /** A member.* event: reload once the burst is over, and say what happened. */
  apply(event) {
    const data = (event && event.data) || {};
    const by = data.by && data.by.username ? t(" (by {name})", { name: data.by.username }) : "";
    const role = ROLE_NAMES[data.role] ? t(ROLE_NAMES[data.role]) : data.role;
    if (event.kind === "member.added") this.notice(t("{user} joined as {role}{by}.", { user: data.user, role, by }));
    else if (event.kind === "member.role_changed") this.notice(t("{user} is now {role}{by}.", { user: data.user, role, by }));
    else if (event.kind === "member.removed") this.notice(t("{user} is no longer a member{by}.", { user: data.user, by }));
    clearTimeout(this.reloading);
    this.reloading = setTimeout(() => this.load().catch((error) => this.problem(error)), 100);
  }

  notice(text) {
    const notice = $("members-notice");
    if (!notice) return;
    notice.textContent = text;
    notice.hidden = !text;
  }

  problem(error, context) {
    const element = $("members-error");
    if (!element) return;
    element.textContent = error ? refusalText(error, context) : "";
    element.dataset.code = error instanceof ApiError ? error.code : "";
    element.hidden = !error;
    if (error) this.notice("");  // an earlier success must not read as the outcome of what was just refused
  }

  // --- rendering ----------------------------------------------------------------------------------------

  render() {
    const mode = this.isOwner ? "owner" : "read-only";
    if (mode !== this.mode) this.build(mode);
    this.renderList();
  }

  /** The panel's frame: built again only when the person's own role changes, so a half-typed invite survives. */
  build(mode) {
    this.mode = mode;
    const body = $("members-body");
    body.dataset.mode = mode;
    const parts = [
      h("p", { id: "members-notice", class: "members-notice", role: "status", "aria-live": "polite", hidden: true }),
      h("ul", { id: "members", class: "members", "aria-label": t("Members and their roles") }),
      h("p", { id: "members-error", class: "error", role: "alert", hidden: true }),
    ];
    if (mode === "owner") {
      const user = h("input", { id: "member-invite-user", type: "text", maxlength: "254", autocomplete: "off", required: true, placeholder: t("username or email") });
      parts.push(h("form", { id: "member-invite", class: "inline-form", onsubmit: (e) => { e.preventDefault(); this.invite(); } },
        h("label", { for: "member-invite-user", text: t("Invite by username") }),
        user,
        h("label", { for: "member-invite-role", text: t("as") }),
        roleSelect("member-invite-role", "viewer"),
        h("button", { type: "submit", id: "member-invite-send" }, t("Invite"))));
    } else {
      parts.push(h("p", { class: "reason", id: "members-read-only", text: t("Only owners can invite people or change roles.") }));
    }
    body.replaceChildren(...parts);
  }

  renderList() {
    const list = $("members");
    // The keyboard stays on the same control when the list is drawn again (a live event, a saved role).
    const focused = list.contains(document.activeElement) ? document.activeElement.id : null;
    // A role picked but not yet saved survives the redraw, unless someone changed that member's role meanwhile.
    const picked = new Map();
    for (const select of list.querySelectorAll("select")) {
      if (select.value !== select.dataset.saved) picked.set(select.id, { value: select.value, saved: select.dataset.saved });
    }
    const owner = this.mode === "owner";
    list.replaceChildren(...this.members.map((member) => {
      const you = member.user_id === this.userId;
      const name = h("span", { class: "member-name" }, h("bdi", { text: member.username }), you ? h("span", { class: "reason", text: ` ${t("(you)")}` }) : null);
      const item = h("li", { class: "member", "data-member": String(member.id), "data-username": member.username, "data-role": member.role }, name);
      if (owner) {
        const selectId = `member-${member.id}-role`;
        const select = roleSelect(selectId, member.role);
        const pending = picked.get(selectId);
        if (pending && pending.saved === member.role) select.value = pending.value;
        item.append(h("form", { class: "member-role", onsubmit: (e) => { e.preventDefault(); this.changeRole(member, select.value); } },
          h("label", { for: selectId, class: "visually-hidden", text: t("Role of {name}", { name: member.username }) }),
          select,
          h("button", { type: "submit", id: `member-${member.id}-save`, "aria-label": t("Change role of {name}", { name: member.username }) }, t("Change role"))));
      } else {
        item.append(h("span", { class: "badge member-role-name", "data-role": member.role, text: ROLE_NAMES[member.role] ? t(ROLE_NAMES[member.role]) : member.role }));
      }
      return item;
    }));
    if (focused) $(focused)?.focus();
  }

  // --- actions ------------------------------------------------------------------------------------------

  async invite() {
    const input = $("member-invite-user");
    const username = input.value.trim();
    const role = $("member-invite-role").value;
    if (!username) {
      this.problem(new Error(t("Type the username (or email) of the person to invite.")));
      input.focus();
      return;
    }
    const button = $("member-invite-send");
    button.disabled = true;
    this.problem(null);
    try {
      const member = await this.api.post("/members/", { user: username, role });
      input.value = "";
      this.notice(t("{user} joined as {role}{by}.", { user: member.username, role: ROLE_NAMES[member.role] ? t(ROLE_NAMES[member.role]) : member.role, by: "" }));
      await this.load();
    } catch (error) {
      this.problem(error, { username });
      input.focus();
    } finally {
      button.disabled = false;
    }
  }

  async changeRole(member, role) {
    this.problem(null);
    if (role === member.role) {
      this.notice(t("{user} is already {role}.", { user: member.username, role: ROLE_NAMES[role] ? t(ROLE_NAMES[role]) : role }));
      return;
    }
    try {
      const updated = await this.api.patch(`/members/${member.id}/`, { role });
      this.notice(t("{user} is now {role}{by}.", { user: updated.username, role: ROLE_NAMES[updated.role] ? t(ROLE_NAMES[updated.role]) : updated.role, by: "" }));
      await this.load();
    } catch (error) {
      this.problem(error, { username: member.username });
      const select = $(`member-${member.id}-role`);
      if (select) select.value = member.role; // the refused role is not left showing as if it were saved
    }
  }
}
