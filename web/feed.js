// The message feed of a narrow: history fetched page by page around the first unread
// message (anchors), grouped under channel/topic or conversation headers and dates, live
// messages added at the end, messages marked read as they are seen.

import { get, post } from "./api.js";
import { h, fill, html, hidden, toast } from "./dom.js";
import { state, remember, conversationOf, nameOf, channelName, dmOthers, listen } from "./store.js";
import { apiTerms, matches, hashOf, titleOf } from "./narrow.js";
import { avatar, timeOf, dayOf, emoji } from "./ui.js";
import { messageActions, toggleReaction } from "./actions.js";

const PAGE = 50;

/** What a message's header says of its conversation, with links. */
function recipientBar(message) {
  const where = conversationOf(message);
  if (where.kind === "channel") {
    const channel = { view: "channel", streamId: where.streamId };
    const topic = { view: "topic", streamId: where.streamId, topic: where.topic };
    const sub = state.subs.get(where.streamId);
    const bar = h("div", { class: "recipient-bar", role: "heading", "aria-level": "3" },
      h("a", { href: hashOf(channel), class: "channel-link" }, `#${channelName(where.streamId)}`),
      h("span", { "aria-hidden": "true" }, " › "),
      h("a", { href: hashOf(topic), class: "topic-link" }, where.topic || state.realm.realm_empty_topic_display_name || "general chat"));
    if (sub && sub.color) bar.style.setProperty("--channel-color", sub.color);
    return bar;
  }
  const names = dmOthers(where.key).map(nameOf);
  return h("div", { class: "recipient-bar dm", role: "heading", "aria-level": "3" },
    h("a", { href: hashOf({ view: "dm", key: where.key }) }, names.length === 1 && dmOthers(where.key)[0] === state.me ? "You (note to self)" : `You and ${names.join(", ")}`));
}

function conversationKey(message) {
  const where = conversationOf(message);
  return where.kind === "channel" ? `c${where.streamId}\n${where.topic.toLowerCase()}` : `d${where.key}`;
}

/** Message content as the server sanitized it, with emoji shown and links opening elsewhere. */
export function content(message) {
  const element = html("div", { class: "content" }, message.content);
  for (const span of element.querySelectorAll("span.emoji")) {
    const code = [...span.classList].find((c) => c.startsWith("emoji-") && c !== "emoji");
    if (!code) continue;
    try {
      span.textContent = String.fromCodePoint(...code.slice(6).split("-").map((p) => Number.parseInt(p, 16)));
    } catch {
      // Left as its text.
    }
  }
  for (const link of element.querySelectorAll("a[href]")) {
    let url;
    try {
      url = new URL(link.getAttribute("href"), location.origin);
    } catch {
      continue;
    }
    if (url.origin !== location.origin) {
      link.target = "_blank";
      link.rel = "noopener noreferrer";
    }
  }
  for (const spoiler of element.querySelectorAll(".spoiler-block")) {
    const header = spoiler.querySelector(".spoiler-header");
    const inner = spoiler.querySelector(".spoiler-content");
    if (!header || !inner) continue;
    inner.hidden = true;
    const toggle = h("button", { type: "button", class: "spoiler-toggle", "aria-expanded": "false" }, "Show");
    toggle.addEventListener("click", () => {
      inner.hidden = !inner.hidden;
      toggle.setAttribute("aria-expanded", String(!inner.hidden));
      toggle.textContent = inner.hidden ? "Show" : "Hide";
    });
    header.append(toggle);
  }
  return element;
}

/** The reactions under a message: one button per emoji, pressed if the user is among them. */
function reactions(message) {
  const groups = new Map();
  for (const r of message.reactions || []) {
    const key = `${r.reaction_type}:${r.emoji_code}`;
    const group = groups.get(key) || { ...r, users: [] };
    group.users.push(r.user_id);
    groups.set(key, group);
  }
  if (groups.size === 0) return null;
  return h("div", { class: "reactions" }, [...groups.values()].map((g) => {
    const mine = g.users.includes(state.me);
    const who = g.users.map((id) => (id === state.me ? "you" : nameOf(id))).join(", ");
    return h("button", {
      type: "button", class: `reaction${mine ? " mine" : ""}`, "aria-pressed": String(mine),
      "aria-label": `${g.emoji_name}: ${g.users.length} (${who})`, title: `${g.emoji_name}: ${who}`,
      onclick: () => toggleReaction(message, g),
    }, emoji(g.reaction_type, g.emoji_code, g.emoji_name), h("span", { class: "count" }, String(g.users.length)));
  }));
}

/** One message as an `article`: avatar, sender, time, content, reactions, actions. */
export function article(message, continued) {
  const unread = state.unread.has(message.id);
  const starred = (message.flags || []).includes("starred");
  const sender = h("span", { class: "sender" }, message.sender_full_name || nameOf(message.sender_id));
  const time = h("time", { datetime: new Date(message.timestamp * 1000).toISOString(), title: new Date(message.timestamp * 1000).toLocaleString() }, timeOf(message.timestamp));
  const element = h("article", {
    class: `message${continued ? " continued" : ""}${unread ? " unread" : ""}${starred ? " starred" : ""}${message.sender_id === state.me ? " mine" : ""}`,
    id: `message-${message.id}`, tabindex: "-1", dataset: { id: String(message.id) },
  },
  h("div", { class: "gutter" }, continued ? null : avatar(message.sender_id)),
  h("div", { class: "body" },
    h("header", {}, sender, " ", time,
      message.last_edit_timestamp ? h("span", { class: "edited" }, " (edited)") : null,
      starred ? h("span", { class: "star-mark", title: "Starred" }, hidden(" starred"), "★") : null,
      unread ? hidden(" unread") : null),
    content(message),
    reactions(message)),
  messageActions(message));
  return element;
}

/** The feed of one narrow, in a scrolling region labelled "Messages". */
export class Feed {
  constructor(scroller, list) {
    this.scroller = scroller;
    this.list = list;
    this.narrow = null;
    this.ids = [];
    this.foundOldest = false;
    this.foundNewest = false;
    this.loading = false;
    this.generation = 0;
    this.selected = null;
    this.toMark = new Set();
    this.timings = [];
    this.observer = new IntersectionObserver((entries) => this.seen(entries), { root: scroller, threshold: 0.5 });
    scroller.addEventListener("scroll", () => this.scrolled(), { passive: true });
    listen((what, detail) => this.changed(what, detail));
    window.addEventListener("focus", () => this.markVisible());
    setInterval(() => this.flushRead(), 400);
    document.addEventListener("visibilitychange", () => this.markVisible());
  }

  /** Shows a narrow: its messages around the first unread one (or the one asked for). */
  async open(narrow) {
    this.narrow = narrow;
    this.generation += 1;
    const generation = this.generation;
    this.ids = [];
    this.foundOldest = this.foundNewest = false;
    this.selected = null;
    // Live messages that arrive while the first page loads, added after it if it reached the newest.
    this.early = [];
    fill(this.list, h("p", { class: "feed-note", role: "status" }, "Loading messages…"));
    const anchor = narrow.near ? String(narrow.near) : "first_unread";
    let data;
    try {
      data = await get("/messages", { anchor, num_before: PAGE, num_after: PAGE, narrow: apiTerms(narrow), apply_markdown: true, client_gravatar: true });
    } catch (error) {
      if (generation === this.generation) fill(this.list, h("p", { class: "feed-note", role: "alert" }, `These messages could not be loaded: ${error.message}`));
      return;
    }
    if (generation !== this.generation) return;
    this.foundOldest = data.found_oldest;
    this.foundNewest = data.found_newest;
    this.ids = data.messages.map((m) => remember(m).id);
    if (this.foundNewest) {
      const last = this.ids.length > 0 ? this.ids[this.ids.length - 1] : 0;
      for (const message of this.early) if (message.id > last && !this.ids.includes(message.id)) this.ids.push(message.id);
    }
    this.early = [];
    this.render();
    // When the first feed was usable after the page started loading (the benchmark reads it).
    if (window.agoraFeedReady === undefined) window.agoraFeedReady = performance.now();
    const target = this.ids.includes(data.anchor) && !(data.found_newest && !this.firstUnread() && !narrow.near) ? data.anchor : null;
    if (target) {
      this.select(target, { scroll: "start" });
    } else {
      this.scroller.scrollTop = this.scroller.scrollHeight;
      if (this.ids.length > 0) this.select(this.ids[this.ids.length - 1], { scroll: false });
    }
  }

  firstUnread() {
    return this.ids.find((id) => state.unread.has(id));
  }

  /** Renders every message anew (after a fetch or a change of many). */
  render() {
    this.observer.disconnect();
    if (this.ids.length === 0) {
      const empty = this.narrow.view === "search" ? "No messages match this search." : "No messages here yet.";
      fill(this.list, h("p", { class: "feed-note" }, empty));
      return;
    }
    const nodes = [];
    let previous = null;
    if (this.foundOldest) nodes.push(h("p", { class: "feed-note start" }, "This is the beginning of the conversation."));
    for (const id of this.ids) {
      const message = state.messages.get(id);
      if (!message) continue;
      nodes.push(...this.itemNodes(message, previous));
      previous = message;
    }
    fill(this.list, nodes);
    for (const element of this.list.querySelectorAll("article.unread")) this.observer.observe(element);
    this.highlight();
  }

  /** The nodes of a message after `previous`: a date, a recipient header, the article. */
  itemNodes(message, previous) {
    const nodes = [];
    const day = dayOf(message.timestamp);
    if (!previous || dayOf(previous.timestamp) !== day) nodes.push(h("div", { class: "date-separator", role: "separator" }, h("span", {}, day)));
    const newConversation = !previous || conversationKey(previous) !== conversationKey(message) || nodes.length > 0;
    if (newConversation) nodes.push(recipientBar(message));
    const continued = !newConversation && previous.sender_id === message.sender_id && message.timestamp - previous.timestamp < 600;
    nodes.push(article(message, continued));
    return nodes;
  }

  /** Adds a live message at the end, keeping the view at the bottom if it was there. */
  append(message) {
    if (this.ids.includes(message.id)) return;
    const started = performance.now();
    const parts = this.insert(message);
    // How long it took, and until the next frame was drawn (the benchmark reads these).
    const spent = performance.now() - started;
    requestAnimationFrame(() => {
      this.timings.push({ append: spent, frame: performance.now() - started, ...parts });
      if (this.timings.length > 200) this.timings.shift();
    });
  }

  insert(message) {
    const t0 = performance.now();
    const atBottom = this.scroller.scrollHeight - this.scroller.scrollTop - this.scroller.clientHeight < 80;
    const t1 = performance.now();
    const previous = this.ids.length > 0 ? state.messages.get(this.ids[this.ids.length - 1]) : null;
    if (this.ids.length === 0) this.list.replaceChildren();
    this.ids.push(message.id);
    const nodes = this.itemNodes(message, previous);
    const t2 = performance.now();
    this.list.append(...nodes);
    const element = nodes[nodes.length - 1];
    if (element.classList.contains("unread")) this.observer.observe(element);
    // Scrolled in the next frame, whose layout happens anyway: no layout forced here.
    if (atBottom || message.sender_id === state.me) requestAnimationFrame(() => { this.scroller.scrollTop = this.scroller.scrollHeight; });
    const t3 = performance.now();
    return { measure: t1 - t0, build: t2 - t1, place: t3 - t2 };
  }

  /** Replaces one message's article in place. */
  update(id) {
    const old = this.list.querySelector(`#message-${id}`);
    const message = state.messages.get(id);
    if (!old || !message) return;
    const fresh = article(message, old.classList.contains("continued"));
    old.replaceWith(fresh);
    if (fresh.classList.contains("unread")) this.observer.observe(fresh);
    this.highlight();
  }

  changed(what, detail) {
    if (!this.narrow) return;
    if (what === "message") {
      if (!matches(this.narrow, detail)) return;
      if (this.foundNewest) this.append(detail);
      else if (this.early) this.early.push(detail);
    } else if (what === "update_message") {
      const ids = detail.message_ids || [detail.message_id];
      const moved = detail.subject !== undefined || detail.new_stream_id !== undefined;
      const whole = detail.propagate_mode === "change_all" && this.narrow.view === "topic"
        && detail.stream_id === this.narrow.streamId && (detail.orig_subject || "").toLowerCase() === this.narrow.topic.toLowerCase();
      if (moved && whole) {
        // The topic shown moved as a whole: follow it.
        const streamId = detail.new_stream_id ?? this.narrow.streamId;
        location.hash = hashOf({ view: "topic", streamId, topic: detail.subject ?? this.narrow.topic });
        return;
      }
      if (moved) {
        this.ids = this.ids.filter((id) => state.messages.has(id) && (this.narrow.view === "search" || matches(this.narrow, state.messages.get(id))));
        this.render();
      } else {
        for (const id of ids) this.update(id);
      }
    } else if (what === "delete_message") {
      const gone = new Set(detail);
      if (this.ids.some((id) => gone.has(id))) {
        this.ids = this.ids.filter((id) => !gone.has(id));
        this.render();
      }
    } else if (what === "reaction") {
      this.update(detail.message_id);
    } else if (what === "flags") {
      const ids = detail.all ? this.ids : detail.messages || [];
      for (const id of ids) if (this.ids.includes(id)) this.update(id);
    } else if (what === "loaded") {
      this.open(this.narrow);
    }
  }

  scrolled() {
    if (this.loading) return;
    if (this.scroller.scrollTop < 400 && !this.foundOldest && this.ids.length > 0) this.older();
    else if (this.scroller.scrollHeight - this.scroller.scrollTop - this.scroller.clientHeight < 400 && !this.foundNewest && this.ids.length > 0) this.newer();
  }

  /** The page before the oldest message shown, the view kept where it was. */
  async older() {
    this.loading = true;
    const generation = this.generation;
    try {
      const data = await get("/messages", { anchor: this.ids[0], num_before: PAGE, num_after: 0, include_anchor: false, narrow: apiTerms(this.narrow), apply_markdown: true, client_gravatar: true });
      if (generation !== this.generation) return;
      this.foundOldest = data.found_oldest;
      const before = this.scroller.scrollHeight - this.scroller.scrollTop;
      this.ids = [...data.messages.map((m) => remember(m).id).filter((id) => !this.ids.includes(id)), ...this.ids];
      this.render();
      this.scroller.scrollTop = this.scroller.scrollHeight - before;
    } catch (error) {
      toast(`Older messages could not be loaded: ${error.message}`, "error");
    } finally {
      this.loading = false;
    }
  }

  /** The page after the newest message shown. */
  async newer() {
    this.loading = true;
    const generation = this.generation;
    try {
      const data = await get("/messages", { anchor: this.ids[this.ids.length - 1], num_before: 0, num_after: PAGE, include_anchor: false, narrow: apiTerms(this.narrow), apply_markdown: true, client_gravatar: true });
      if (generation !== this.generation) return;
      this.foundNewest = data.found_newest;
      const top = this.scroller.scrollTop;
      this.ids = [...this.ids, ...data.messages.map((m) => remember(m).id).filter((id) => !this.ids.includes(id))];
      this.render();
      this.scroller.scrollTop = top;
    } catch (error) {
      toast(`Newer messages could not be loaded: ${error.message}`, "error");
    } finally {
      this.loading = false;
    }
  }

  /** Unread messages that came into view are marked read (while the page is in view). */
  seen(entries) {
    if (document.visibilityState !== "visible") return;
    for (const entry of entries) {
      if (entry.isIntersecting) this.toMark.add(Number(entry.target.dataset.id));
    }
  }

  markVisible() {
    if (document.visibilityState !== "visible" || this.scroller.hidden) return;
    const box = this.scroller.getBoundingClientRect();
    for (const element of this.list.querySelectorAll("article.unread")) {
      const rect = element.getBoundingClientRect();
      if (rect.top < box.bottom && rect.bottom > box.top) this.toMark.add(Number(element.dataset.id));
    }
  }

  async flushRead() {
    if (this.toMark.size === 0) return;
    const ids = [...this.toMark].filter((id) => state.unread.has(id));
    this.toMark.clear();
    if (ids.length === 0) return;
    try {
      await post("/messages/flags", { messages: ids, op: "add", flag: "read" });
    } catch {
      for (const id of ids) this.toMark.add(id);
    }
  }

  /** Marks every message of the narrow read. */
  async markAllRead() {
    const narrow = this.narrow;
    try {
      if (narrow.view === "feed") await post("/mark_all_as_read");
      else if (narrow.view === "channel") await post("/mark_stream_as_read", { stream_id: narrow.streamId });
      else if (narrow.view === "topic") await post("/mark_topic_as_read", { stream_id: narrow.streamId, topic_name: narrow.topic });
      else {
        // From the first unread message on, as many times as the server's range (5,000) needs.
        let anchor = "first_unread";
        for (let round = 0; round < 50; round += 1) {
          const done = await post("/messages/flags/narrow", { anchor, include_anchor: true, num_before: 0, num_after: 5000, narrow: apiTerms(narrow), op: "add", flag: "read" });
          if (done.found_newest || done.last_processed_id === null || done.last_processed_id === undefined) break;
          anchor = done.last_processed_id;
        }
      }
      toast(`Marked ${titleOf(narrow)} as read.`);
    } catch (error) {
      toast(`Could not mark as read: ${error.message}`, "error");
    }
  }

  /** Selects a message (keyboard navigation, replies). */
  select(id, { scroll = "nearest" } = {}) {
    this.selected = id;
    this.highlight();
    const element = this.list.querySelector(`#message-${id}`);
    if (element && scroll) element.scrollIntoView({ block: scroll });
  }

  highlight() {
    for (const element of this.list.querySelectorAll("article.selected")) element.classList.remove("selected");
    if (this.selected === null) return;
    const element = this.list.querySelector(`#message-${this.selected}`);
    if (element) element.classList.add("selected");
  }

  /** Moves the selection by `step` messages. */
  move(step) {
    if (this.ids.length === 0) return;
    const at = this.selected === null ? this.ids.length - 1 : this.ids.indexOf(this.selected);
    const next = Math.max(0, Math.min(this.ids.length - 1, at + step));
    this.select(this.ids[next]);
    const element = this.list.querySelector(`#message-${this.ids[next]}`);
    if (element) element.focus({ preventScroll: true });
  }

  selectedMessage() {
    return this.selected === null ? null : state.messages.get(this.selected);
  }
}
