// Agora's web client: builds the page, follows the URL's fragment from narrow to narrow,
// and wires the keyboard, notifications, typing indicators and the connection's state.

import { start } from "./events.js";
import { state, listen, conversationOf, nameOf, dmOthers } from "./store.js";
import { parseHash, hashOf, titleOf, isFeed, replyTarget, unreadIn, searchTerms } from "./narrow.js";
import { h, fill, announce } from "./dom.js";
import { Feed } from "./feed.js";
import { Sidebar } from "./sidebar.js";
import { People } from "./people.js";
import { compose } from "./compose.js";
import { renderInbox, renderRecent, watchView } from "./views.js";
import { openSettings, applyTheme } from "./settings.js";
import { dialog, closePopover } from "./ui.js";

let narrow = { view: "inbox" };
let feed;
let sidebar;
const parts = {};

function build(root) {
  parts.search = h("input", { id: "search", type: "search", placeholder: "Search", autocomplete: "off" });
  parts.connection = h("span", { id: "connection", class: "connection", role: "status" });
  parts.title = h("h1", { id: "narrow-title" });
  parts.markRead = h("button", { type: "button", id: "mark-read", hidden: true }, "Mark all as read");
  parts.view = h("div", { id: "view", class: "view", hidden: true });
  parts.list = h("div", { id: "feed-list", class: "feed-list" });
  parts.scroller = h("section", { id: "feed", class: "feed", "aria-label": "Messages", tabindex: "-1" }, parts.list);
  parts.typing = h("div", { id: "typing", class: "typing", "aria-live": "polite" });
  parts.compose = h("section", { id: "compose", class: "compose", "aria-label": "Compose" });
  parts.left = h("div", { id: "left-sidebar", class: "left" });
  parts.right = h("aside", { id: "right-sidebar", class: "right", "aria-label": "Users" });
  const menuToggle = h("button", { type: "button", class: "icon toggle", id: "menu-toggle", "aria-label": "Channels and views", "aria-expanded": "false", "aria-controls": "left-sidebar" }, "☰");
  const peopleToggle = h("button", { type: "button", class: "icon toggle", id: "people-toggle", "aria-label": "Users", "aria-expanded": "false", "aria-controls": "right-sidebar" }, "👥");
  const searchForm = h("form", { class: "search", role: "search" }, h("label", { for: "search", class: "visually-hidden" }, "Search"), parts.search);
  const settings = h("button", { type: "button", class: "icon", id: "settings-button", "aria-label": "Settings", title: "Settings" }, "⚙");
  const layout = h("div", { class: "layout" },
    h("header", { class: "topbar" }, menuToggle, h("a", { class: "brand", href: "#inbox" }, state.realm.realm_name || "Agora"), searchForm, parts.connection, peopleToggle, settings),
    parts.left,
    h("main", { class: "center", id: "main" }, h("div", { class: "narrow-head" }, parts.title, parts.markRead), parts.view, parts.scroller, parts.typing, parts.compose),
    parts.right);
  fill(root, layout, h("div", { id: "toasts", class: "toasts" }), h("div", { id: "announcer", class: "visually-hidden", "aria-live": "polite" }));
  root.removeAttribute("aria-busy");

  const toggle = (button, panel) => button.addEventListener("click", () => {
    const open = !panel.classList.contains("shown");
    panel.classList.toggle("shown", open);
    button.setAttribute("aria-expanded", String(open));
    if (open) {
      const first = panel.querySelector("a, button");
      if (first) first.focus();
    }
  });
  toggle(menuToggle, parts.left);
  toggle(peopleToggle, parts.right);
  parts.left.addEventListener("click", (event) => {
    if (event.target.closest("a")) {
      parts.left.classList.remove("shown");
      menuToggle.setAttribute("aria-expanded", "false");
    }
  });
  settings.addEventListener("click", () => openSettings());
  searchForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const query = parts.search.value.trim();
    if (!query) return;
    if (searchTerms(query).length === 0) return;
    location.hash = hashOf({ view: "search", query });
  });
  parts.markRead.addEventListener("click", () => feed.markAllRead());

  feed = new Feed(parts.scroller, parts.list);
  sidebar = new Sidebar(parts.left);
  new People(parts.right).render();
  compose.mount(parts.compose);
  watchView(parts.view, () => narrow.view);
}

/** Shows the narrow the URL's fragment names. */
function route() {
  narrow = parseHash(location.hash);
  closePopover();
  const title = titleOf(narrow);
  parts.title.textContent = title;
  document.title = `${title} · ${state.realm.realm_name || "Agora"}`;
  sidebar.show(narrow);
  const showsFeed = isFeed(narrow);
  parts.view.hidden = showsFeed;
  parts.scroller.hidden = !showsFeed;
  if (showsFeed) {
    feed.open(narrow);
  } else if (narrow.view === "inbox") {
    renderInbox(parts.view);
  } else {
    renderRecent(parts.view, () => narrow.view === "recent");
  }
  if (narrow.view === "search") parts.search.value = narrow.query;
  updateMarkRead();
  updateTyping();
  const target = narrow.view === "topic" ? { kind: "channel", streamId: narrow.streamId, topic: narrow.topic }
    : narrow.view === "channel" ? { kind: "channel", streamId: narrow.streamId, topic: "" }
      : narrow.view === "dm" ? { kind: "dm", key: narrow.key } : null;
  compose.setDefault(target);
}

function updateMarkRead() {
  parts.markRead.hidden = !isFeed(narrow) || narrow.view === "search" || unreadIn(narrow).length === 0;
}

/** "X is typing…" for the conversation shown. */
function updateTyping() {
  const wanted = narrow.view === "topic" ? (key) => key === `c${narrow.streamId}\n${narrow.topic.toLowerCase()}`
    : narrow.view === "channel" ? (key) => key.startsWith(`c${narrow.streamId}\n`)
      : narrow.view === "dm" ? (key) => key === `d${narrow.key}` : () => false;
  const now = Date.now();
  const typers = new Set();
  for (const [key, who] of state.typing) {
    if (!wanted(key)) continue;
    for (const [id, until] of who) if (until > now && id !== state.me) typers.add(id);
  }
  const names = [...typers].map(nameOf);
  const text = names.length === 0 ? "" : names.length === 1 ? `${names[0]} is typing…` : `${names.join(", ")} are typing…`;
  if (parts.typing.textContent !== text) parts.typing.textContent = text;
}

/** A desktop notification for a direct message or a mention, when the page is not in view. */
function notifyDesktop(message) {
  if (message.sender_id === state.me || typeof Notification === "undefined" || Notification.permission !== "granted") return;
  if (state.settings.enable_desktop_notifications === false) return;
  const mentioned = (message.flags || []).some((f) => f.endsWith("mentioned"));
  if (message.type !== "private" && !mentioned) return;
  if (document.visibilityState === "visible" && document.hasFocus()) return;
  const text = new DOMParser().parseFromString(message.content, "text/html").body.textContent || "";
  const where = conversationOf(message);
  const title = where.kind === "dm" ? message.sender_full_name : `${message.sender_full_name} in #${message.display_recipient} › ${message.subject}`;
  const note = new Notification(title, { body: text.slice(0, 300), tag: String(message.id) });
  note.addEventListener("click", () => {
    window.focus();
    const target = where.kind === "dm" ? { view: "dm", key: where.key } : { view: "topic", streamId: where.streamId, topic: where.topic };
    location.hash = `${hashOf(target)}/near/${message.id}`;
  });
}

function showConnection(status) {
  parts.connection.textContent = status === "reconnecting" ? "Reconnecting…" : "";
  parts.connection.classList.toggle("visible", status === "reconnecting");
}

/** The next conversation with unread messages after the one shown. */
function nextUnread() {
  const conversations = state.unread.conversations().sort((a, b) => a.maxId - b.maxId);
  const current = narrow.view === "topic" ? `c${narrow.streamId}\n${narrow.topic.toLowerCase()}` : narrow.view === "dm" ? `d${narrow.key}` : "";
  const next = conversations.find((c) => (c.kind === "channel" ? `c${c.streamId}\n${c.topic.toLowerCase()}` : `d${c.key}`) !== current);
  if (!next) {
    announce("No more unread conversations.");
    return;
  }
  location.hash = hashOf(next.kind === "channel" ? { view: "topic", streamId: next.streamId, topic: next.topic } : { view: "dm", key: next.key });
}

const SHORTCUTS = [
  ["r or Enter", "Reply to the selected message"],
  ["c", "New topic in this channel"],
  ["x", "New direct message"],
  ["↑ ↓ or k j", "Select the previous or next message"],
  ["n", "Next unread conversation"],
  ["/", "Search"],
  ["Esc", "Close the compose box, a menu or a dialog"],
  ["?", "This list"],
];

function keyboard(event) {
  if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
  const typing = event.target.closest && event.target.closest("input, textarea, select, [contenteditable]");
  if (event.key === "Escape") {
    if (document.querySelector("dialog[open]")) return;
    if (typing) event.target.blur();
    if (compose.isOpen()) compose.close();
    return;
  }
  if (typing || document.querySelector("dialog[open]")) return;
  const selected = feed.selectedMessage();
  const action = {
    r: () => selected && compose.open(replyTarget(selected)),
    Enter: () => selected && compose.open(replyTarget(selected)),
    c: () => compose.open(narrow.streamId ? { kind: "channel", streamId: narrow.streamId, topic: "" } : compose.firstChannelTarget(), { focus: "topic" }),
    x: () => compose.open({ kind: "dm", key: narrow.view === "dm" ? narrow.key : "" }, { focus: narrow.view === "dm" ? "content" : "to" }),
    ArrowDown: () => feed.move(1),
    j: () => feed.move(1),
    ArrowUp: () => feed.move(-1),
    k: () => feed.move(-1),
    n: () => nextUnread(),
    "/": () => parts.search.focus(),
    "?": () => dialog("Keyboard shortcuts", h("dl", { class: "shortcuts" }, SHORTCUTS.map(([keys, what]) => [h("dt", {}, h("kbd", {}, keys)), h("dd", {}, what)]))),
  }[event.key];
  if (!action || (!isFeed(narrow) && ["ArrowDown", "ArrowUp", "j", "k", "r", "Enter"].includes(event.key))) return;
  event.preventDefault();
  action();
}

// Errors the page met, kept for the browser tests (which require none) and for anyone
// looking at a misbehaving page in the console.
window.agoraErrors = [];
window.addEventListener("error", (event) => window.agoraErrors.push(`${event.message} (${event.filename}:${event.lineno})`));
window.addEventListener("unhandledrejection", (event) => window.agoraErrors.push(String(event.reason && event.reason.stack ? event.reason.stack : event.reason)));

async function main() {
  await start();
  applyTheme();
  build(document.getElementById("app"));
  listen((what, detail) => {
    if (what === "message") notifyDesktop(detail);
    if (what === "typing") updateTyping();
    if (what === "settings") applyTheme();
    if (what === "connection") showConnection(detail);
    if (["message", "flags", "delete_message", "update_message", "loaded"].includes(what)) updateMarkRead();
    if (what === "realm") document.querySelector(".brand").textContent = state.realm.realm_name;
    if (["subscription", "stream", "users"].includes(what)) parts.title.textContent = titleOf(narrow);
  });
  setInterval(updateTyping, 2000);
  window.addEventListener("hashchange", route);
  document.addEventListener("keydown", keyboard);
  if (!location.hash) history.replaceState(null, "", state.settings.web_home_view === "recent" ? "#recent" : state.settings.web_home_view === "all_messages" ? "#feed" : "#inbox");
  route();
  // Exposed for the browser tests' timing probes only.
  window.agora = { state, feed, compose, dmOthers };
}

main();
