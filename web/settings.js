// Settings: the user's profile, password, theme, Enter-sends and desktop notifications;
// for administrators, invitations, members' roles and accounts, default channels, and the
// organization's name and icon.

import { get, post, patch, del, postFile, signOut } from "./api.js";
import { h, fill, toast, announce } from "./dom.js";
import { state, isAdmin, listen } from "./store.js";
import { dialog, avatar } from "./ui.js";
import { draftsKey } from "./compose.js";

const ROLES = [[100, "Owner"], [200, "Administrator"], [300, "Moderator"], [400, "Member"], [600, "Guest"]];

function section(title, ...children) {
  return h("section", { class: "settings-section", "aria-label": title }, h("h3", {}, title), ...children);
}

function field(id, label, input) {
  input.id = id;
  return [h("label", { for: id }, label), input];
}

async function save(what, action) {
  try {
    await action();
    toast(`${what} saved.`);
  } catch (error) {
    toast(`${what} not saved: ${error.message}`, "error");
  }
}

function profile() {
  const me = state.users.get(state.me);
  const name = h("input", { type: "text", value: me.full_name, maxlength: "60" });
  const nameForm = h("form", { class: "stack" }, field("settings-full-name", "Full name", name), h("button", { type: "submit" }, "Save name"));
  nameForm.addEventListener("submit", (event) => {
    event.preventDefault();
    save("Name", () => patch("/settings", { full_name: name.value.trim() }));
  });
  const picture = h("input", { type: "file", accept: "image/*" });
  picture.addEventListener("change", () => {
    if (picture.files[0]) save("Avatar", () => postFile("/users/me/avatar", picture.files[0]));
  });
  const remove = h("button", { type: "button", onclick: () => save("Avatar", () => del("/users/me/avatar")) }, "Remove avatar");
  return section("Profile", h("div", { class: "row" }, avatar(state.me, "large")), nameForm, h("div", { class: "stack" }, field("settings-avatar", "Upload an avatar", picture), remove));
}

function password() {
  const old = h("input", { type: "password", autocomplete: "current-password" });
  const fresh = h("input", { type: "password", autocomplete: "new-password" });
  const form = h("form", { class: "stack" }, field("settings-old-password", "Current password", old), field("settings-new-password", "New password", fresh), h("button", { type: "submit" }, "Change password"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    save("Password", async () => {
      await patch("/settings", { old_password: old.value, new_password: fresh.value });
      old.value = fresh.value = "";
    });
  });
  return section("Password", form);
}

/** Applies the theme the user chose (1 automatic, 2 dark, 3 light). */
export function applyTheme() {
  const scheme = state.settings.color_scheme;
  document.documentElement.dataset.theme = scheme === 2 ? "dark" : scheme === 3 ? "light" : "auto";
}

function preferences() {
  const theme = h("select", {}, [[1, "Automatic (as the system)"], [3, "Light"], [2, "Dark"]]
    .map(([value, label]) => h("option", { value: String(value), selected: state.settings.color_scheme === value }, label)));
  theme.addEventListener("change", () => save("Theme", () => patch("/settings", { color_scheme: Number(theme.value) })));
  const enter = h("input", { type: "checkbox", id: "settings-enter-sends", checked: Boolean(state.settings.enter_sends) });
  enter.addEventListener("change", () => save("Enter key", () => patch("/settings", { enter_sends: enter.checked })));
  const notify = h("input", { type: "checkbox", id: "settings-desktop", checked: state.settings.enable_desktop_notifications !== false });
  notify.addEventListener("change", () => save("Desktop notifications", () => patch("/settings", { enable_desktop_notifications: notify.checked })));
  const permission = typeof Notification === "undefined" ? "unsupported" : Notification.permission;
  const ask = permission === "default"
    ? h("button", { type: "button", onclick: async () => {
      const answer = await Notification.requestPermission();
      announce(answer === "granted" ? "Desktop notifications are on." : "Desktop notifications stay off.");
    } }, "Allow desktop notifications in this browser")
    : h("p", { class: "hint" }, permission === "granted" ? "This browser shows desktop notifications." : "This browser does not show desktop notifications (its settings decide).");
  return section("Preferences",
    h("div", { class: "stack" }, field("settings-theme", "Theme", theme)),
    h("label", { class: "check" }, enter, " Enter sends the message (Shift+Enter for a new line)"),
    h("label", { class: "check" }, notify, " Desktop notifications for direct messages and mentions"),
    ask);
}

function invitations() {
  const emails = h("input", { type: "text", placeholder: "one@example.com, two@example.com" });
  const role = h("select", {}, ROLES.filter(([r]) => r !== 100).map(([value, label]) => h("option", { value: String(value), selected: value === 400 }, label)));
  const form = h("form", { class: "stack" }, field("invite-emails", "Email addresses", emails), field("invite-role", "Role", role), h("button", { type: "submit" }, "Send invitations"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    save("Invitations", async () => {
      await post("/invites", { invitee_emails: emails.value, invite_as: Number(role.value), stream_ids: [], include_realm_default_subscriptions: true });
      emails.value = "";
    });
  });
  const linkOut = h("output", { class: "invite-link", "aria-live": "polite" });
  const link = h("button", { type: "button" }, "Create an invitation link");
  link.addEventListener("click", async () => {
    try {
      const data = await post("/invites/multiuse", { invite_as: Number(role.value), stream_ids: [], include_realm_default_subscriptions: true, invite_expires_in_minutes: 7 * 24 * 60 });
      fill(linkOut, h("code", {}, data.invite_link));
    } catch (error) {
      toast(error.message, "error");
    }
  });
  return section("Invite people", form, h("div", { class: "stack" }, link, linkOut));
}

function members() {
  const list = h("ul", { class: "member-list" });
  const render = () => fill(list, [...state.users.values()].filter((u) => u.user_id > 0 && !u.is_bot).sort((a, b) => a.full_name.localeCompare(b.full_name)).map((user) => {
    const role = h("select", { "aria-label": `Role of ${user.full_name}`, disabled: user.user_id === state.me }, ROLES.map(([value, label]) => h("option", { value: String(value), selected: user.role === value }, label)));
    role.addEventListener("change", () => save("Role", () => patch(`/users/${user.user_id}`, { role: Number(role.value) })));
    const toggle = user.is_active === false
      ? h("button", { type: "button", onclick: () => save("Account", () => post(`/users/${user.user_id}/reactivate`)) }, `Reactivate ${user.full_name}`)
      : h("button", { type: "button", class: "danger", disabled: user.user_id === state.me, onclick: () => save("Account", () => del(`/users/${user.user_id}`)) }, `Deactivate ${user.full_name}`);
    return h("li", {}, h("span", {}, user.full_name, user.is_active === false ? " (deactivated)" : ""), role, toggle);
  }));
  render();
  return [section("Members", list), render];
}

function defaultChannels() {
  const list = h("ul", {});
  const choose = h("select", {});
  const render = async () => {
    let defaults = [];
    try {
      defaults = (await get("/default_streams")).default_streams || [];
    } catch {
      defaults = [];
    }
    const ids = new Set(defaults.map((s) => s.stream_id));
    fill(list, defaults.map((s) => h("li", {}, `#${s.name} `, h("button", { type: "button", onclick: () => save("Default channels", async () => {
      await del("/default_streams", { stream_id: s.stream_id });
      render();
    }) }, `Remove ${s.name}`))));
    fill(choose, [...state.streams.values()].filter((s) => !ids.has(s.stream_id) && !s.invite_only).map((s) => h("option", { value: String(s.stream_id) }, s.name)));
  };
  const add = h("button", { type: "button", onclick: () => save("Default channels", async () => {
    await post("/default_streams", { stream_id: Number(choose.value) });
    render();
  }) }, "Add");
  render();
  return section("Default channels for new members", list, h("div", { class: "row" }, h("label", { for: "default-channel-add", class: "visually-hidden" }, "Channel"), Object.assign(choose, { id: "default-channel-add" }), add));
}

function organization() {
  const name = h("input", { type: "text", value: state.realm.realm_name || "", maxlength: "40" });
  const form = h("form", { class: "stack" }, field("org-name", "Organization name", name), h("button", { type: "submit" }, "Save name"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    save("Organization name", () => patch("/realm", { name: name.value.trim() }));
  });
  const icon = h("input", { type: "file", accept: "image/*" });
  icon.addEventListener("change", () => {
    if (icon.files[0]) save("Icon", () => postFile("/realm/icon", icon.files[0]));
  });
  return section("Organization", form, h("div", { class: "stack" }, field("org-icon", "Organization icon", icon)));
}

/** Opens the settings dialog. */
export function openSettings() {
  const parts = [profile(), password(), preferences()];
  let stop = () => {};
  if (isAdmin()) {
    const [memberSection, renderMembers] = members();
    parts.push(invitations(), memberSection, defaultChannels(), organization());
    stop = listen((what) => {
      if (what === "users") renderMembers();
    });
  }
  parts.push(h("div", { class: "row" }, h("button", { type: "button", class: "danger", onclick: () => signOut([draftsKey()]) }, "Log out")));
  dialog("Settings", h("div", { class: "settings" }, parts), { onClose: () => stop() });
}
