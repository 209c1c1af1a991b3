// People: the user list (with presence) and a person's card.

import { h, fill } from "./dom.js";
import { state, listen, presenceOf, dmKey } from "./store.js";
import { hashOf } from "./narrow.js";
import { avatar, popover, closePopover } from "./ui.js";

const ROLES = { 100: "Owner", 200: "Administrator", 300: "Moderator", 400: "Member", 600: "Guest" };

/** A person's card: name, role, email, profile fields, local time, a way to write to them. */
export function profileCard(anchor, userId) {
  const user = state.users.get(userId);
  if (!user) return;
  const fields = (state.realm.custom_profile_fields || [])
    .map((field) => [field.name, user.profile_data && user.profile_data[field.id] ? user.profile_data[field.id].value : null])
    .filter(([, value]) => value);
  let localTime = null;
  if (user.timezone) {
    try {
      localTime = new Date().toLocaleTimeString([], { timeZone: user.timezone, hour: "numeric", minute: "2-digit", hour12: !state.settings.twenty_four_hour_time });
    } catch {
      localTime = null;
    }
  }
  const card = h("div", { class: "profile-card" },
    avatar(userId, "large"),
    h("h3", {}, user.full_name),
    h("p", { class: "hint" }, user.is_bot ? "Bot" : ROLES[user.role] || "Member", user.is_active === false ? " (deactivated)" : ""),
    user.delivery_email || user.email ? h("p", {}, user.delivery_email || user.email) : null,
    localTime ? h("p", {}, `Local time: ${localTime}`) : null,
    fields.length > 0 ? h("dl", {}, fields.map(([name, value]) => [h("dt", {}, name), h("dd", {}, String(value))])) : null,
    h("a", { class: "button primary", href: hashOf({ view: "dm", key: dmKey([userId]) }), onclick: () => closePopover() }, "Send direct message"));
  popover(anchor, card, `${user.full_name}'s profile`);
}

/** The right sidebar's user list. */
export class People {
  constructor(root) {
    this.root = root;
    this.pending = false;
    listen((what) => {
      if (what === "users" || what === "presence" || what === "loaded") this.schedule();
    });
    setInterval(() => this.schedule(), 60000);
  }

  schedule() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      this.render();
    });
  }

  render() {
    const order = { active: 0, idle: 1, offline: 2 };
    const users = [...state.users.values()]
      .filter((u) => u.is_active && !u.is_bot && u.user_id > 0 && !state.mutedUsers.has(u.user_id))
      .map((u) => ({ user: u, presence: u.user_id === state.me ? "active" : presenceOf(u.user_id) }))
      .sort((a, b) => order[a.presence] - order[b.presence] || a.user.full_name.localeCompare(b.user.full_name))
      .slice(0, 300);
    fill(this.root, h("h2", {}, "Users"), h("ul", { class: "user-list" }, users.map(({ user, presence }) => {
      const button = h("button", { type: "button", class: "person" },
        h("span", { class: `presence ${presence}`, title: presence, "aria-hidden": "true" }),
        user.full_name,
        h("span", { class: "visually-hidden" }, ` (${presence})`));
      button.addEventListener("click", () => profileCard(button, user.user_id));
      return h("li", {}, button);
    })));
  }
}
