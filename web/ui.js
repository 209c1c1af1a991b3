// Shared pieces of the interface: dialogs, popovers, menus, avatars, times, emoji.

import { h, fill } from "./dom.js";
import { state } from "./store.js";

/** Opens a modal dialog titled `title` holding `content`; returns it (closing removes it). */
export function dialog(title, content, { onClose } = {}) {
  const heading = h("h2", { id: `dialog-${Date.now()}` }, title);
  const close = h("button", { class: "icon close", type: "button", "aria-label": "Close" }, "×");
  const box = h("dialog", { class: "modal", "aria-labelledby": heading.id }, h("div", { class: "modal-head" }, heading, close), content);
  close.addEventListener("click", () => box.close());
  box.addEventListener("close", () => {
    box.remove();
    if (onClose) onClose();
  });
  document.body.append(box);
  box.showModal();
  return box;
}

let openPopover = null;

/** Closes the open popover, if any. */
export function closePopover() {
  if (!openPopover) return;
  const { element, anchor } = openPopover;
  openPopover = null;
  element.remove();
  if (anchor && document.body.contains(anchor)) anchor.focus();
}

/** Shows `content` next to `anchor` until Escape, a click elsewhere or another popover. */
export function popover(anchor, content, label) {
  closePopover();
  const element = h("div", { class: "popover", role: "dialog", "aria-label": label }, content);
  document.body.append(element);
  const rect = anchor.getBoundingClientRect();
  const width = element.offsetWidth;
  element.style.left = `${Math.max(8, Math.min(rect.left, window.innerWidth - width - 8))}px`;
  const below = rect.bottom + 4;
  element.style.top = below + element.offsetHeight < window.innerHeight ? `${below}px` : `${Math.max(8, rect.top - element.offsetHeight - 4)}px`;
  openPopover = { element, anchor };
  const focusable = element.querySelector("input, button, [tabindex]");
  if (focusable) focusable.focus();
  return element;
}

document.addEventListener("mousedown", (event) => {
  if (openPopover && !openPopover.element.contains(event.target) && !openPopover.anchor.contains(event.target)) closePopover();
});
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && openPopover) {
    event.stopPropagation();
    closePopover();
  }
}, true);

/** A menu of `[label, action]` items next to `anchor`. */
export function menu(anchor, label, items) {
  const list = h("ul", { class: "menu", role: "menu", "aria-label": label },
    items.filter(Boolean).map(([text, action]) => h("li", { role: "none" },
      h("button", { type: "button", role: "menuitem", onclick: () => { closePopover(); action(); } }, text))));
  list.addEventListener("keydown", (event) => {
    const buttons = [...list.querySelectorAll("button")];
    const at = buttons.indexOf(document.activeElement);
    if (event.key === "ArrowDown") buttons[(at + 1) % buttons.length].focus();
    else if (event.key === "ArrowUp") buttons[(at - 1 + buttons.length) % buttons.length].focus();
    else return;
    event.preventDefault();
  });
  return popover(anchor, list, label);
}

/** Avatar colors dark enough for white initials (contrast of 4.5:1 or more). */
const palette = ["#a2453c", "#7b4aa3", "#2f7a45", "#9a3d5c", "#2f5f8a", "#6f5c00", "#5a4bb0", "#4b721f", "#8a4f00", "#1f6f6a"];

/** A user's avatar: the uploaded picture (this server's), or their initials on a color. */
export function avatar(userId, size = "medium") {
  const user = state.users.get(userId);
  const name = user ? user.full_name : "?";
  const url = user && user.avatar_url;
  if (url && (url.startsWith("/") || url.startsWith(location.origin))) {
    return h("img", { class: `avatar ${size}`, src: url, alt: "", loading: "lazy" });
  }
  const initials = name.split(/\s+/).filter(Boolean).slice(0, 2).map((w) => w[0].toUpperCase()).join("");
  const color = palette[Math.abs(userId) % palette.length];
  const element = h("span", { class: `avatar ${size} initials`, "aria-hidden": "true" }, initials || "?");
  element.style.setProperty("--avatar-color", color);
  return element;
}

// Formatters are costly to make: one of each, kept.
const formats = new Map();

function format(key, options) {
  if (!formats.has(key)) formats.set(key, new Intl.DateTimeFormat([], options));
  return formats.get(key);
}

/** A time of day as the user likes it (24-hour or not). */
export function timeOf(seconds) {
  const twelve = !state.settings.twenty_four_hour_time;
  return format(`time${twelve}`, { hour: "numeric", minute: "2-digit", hour12: twelve }).format(new Date(seconds * 1000));
}

/** A day as a separator names it: "Today", "Yesterday", or the date. */
export function dayOf(seconds) {
  const date = new Date(seconds * 1000);
  const today = new Date();
  const start = (d) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  const days = Math.round((start(today) - start(date)) / 86400000);
  if (days === 0) return "Today";
  if (days === 1) return "Yesterday";
  if (days < 7) return format("weekday", { weekday: "long", month: "short", day: "numeric" }).format(date);
  if (days > 300) return format("year", { year: "numeric", month: "short", day: "numeric" }).format(date);
  return format("day", { month: "short", day: "numeric" }).format(date);
}

/** An emoji as text (Unicode) or image (custom emoji). */
export function emoji(reactionType, code, name) {
  if (reactionType === "unicode_emoji") {
    try {
      return h("span", { class: "emoji-glyph", "aria-hidden": "true" }, String.fromCodePoint(...code.split("-").map((part) => Number.parseInt(part, 16))));
    } catch {
      return h("span", { "aria-hidden": "true" }, `:${name}:`);
    }
  }
  const custom = state.realmEmoji[code];
  if (reactionType === "realm_emoji" && custom) return h("img", { class: "emoji-image", src: custom.source_url, alt: "" });
  return h("span", { "aria-hidden": "true" }, `:${name}:`);
}

let emojiData = null;

/** Every Unicode emoji: `[{code, names}]`, from the server's data file (loaded once). */
export async function allEmoji() {
  if (emojiData) return emojiData;
  // The server names it by its public address; this page may be reached by another.
  const path = state.emojiDataUrl ? new URL(state.emojiDataUrl, location.origin).pathname : "/static/generated/emoji/emoji_api.json";
  const response = await fetch(path, { credentials: "same-origin" });
  const data = await response.json();
  emojiData = Object.entries(data.code_to_names).map(([code, names]) => ({ code, names }));
  return emojiData;
}

/** Emoji matching `query` (by any of their names), custom emoji first. */
export async function findEmoji(query, limit = 60) {
  const q = query.toLowerCase().replace(/^:/, "");
  const custom = Object.entries(state.realmEmoji)
    .filter(([, e]) => !e.deactivated && e.name.includes(q))
    .map(([id, e]) => ({ type: "realm_emoji", code: id, name: e.name }));
  const unicode = (await allEmoji())
    .filter((e) => !q || e.names.some((n) => n.includes(q)))
    .sort((a, b) => Number(!b.names.some((n) => n.startsWith(q))) - Number(!a.names.some((n) => n.startsWith(q))))
    .map((e) => ({ type: "unicode_emoji", code: e.code, name: e.names[0] }));
  return [...custom, ...unicode].slice(0, limit);
}

/** The emoji picker: a search box and the emoji that match; `choose(emoji)` on a pick. */
export function emojiPicker(anchor, choose) {
  const grid = h("div", { class: "emoji-grid", role: "listbox", "aria-label": "Emoji" });
  const search = h("input", { type: "search", id: "emoji-search", autocomplete: "off", placeholder: "Search emoji" });
  const show = async () => {
    const found = await findEmoji(search.value);
    fill(grid, found.map((e) => h("button", {
      type: "button", role: "option", class: "emoji-choice", title: `:${e.name}:`, "aria-label": e.name,
      onclick: () => { closePopover(); choose(e); },
    }, emoji(e.type, e.code, e.name))));
  };
  search.addEventListener("input", show);
  search.addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();
      const first = grid.querySelector("button");
      if (first) first.click();
    }
  });
  const content = h("div", { class: "emoji-picker" }, h("label", { for: "emoji-search", class: "visually-hidden" }, "Search emoji"), search, grid);
  popover(anchor, content, "Add an emoji reaction");
  show();
}
