// The two views that are not a feed: the Inbox (unread conversations) and Recent
// conversations (the latest conversations, read or not).

import { get } from "./api.js";
import { h, fill } from "./dom.js";
import { state, listen, remember, conversationOf, channelName, dmOthers, nameOf, isMutedTopic } from "./store.js";
import { hashOf } from "./narrow.js";
import { timeOf, dayOf } from "./ui.js";

function conversationLink(where) {
  if (where.kind === "channel") {
    return h("a", { href: hashOf({ view: "topic", streamId: where.streamId, topic: where.topic }) },
      `#${channelName(where.streamId)} › ${where.topic || state.realm.realm_empty_topic_display_name || "general chat"}`);
  }
  return h("a", { href: hashOf({ view: "dm", key: where.key }) }, dmOthers(where.key).map(nameOf).join(", "));
}

/** The unread conversations, direct messages first, then channel by channel. */
export function renderInbox(root) {
  const conversations = state.unread.conversations().filter((c) => c.kind === "dm" || !isMutedTopic(c.streamId, c.topic));
  if (conversations.length === 0) {
    fill(root, h("p", { class: "feed-note" }, "You have no unread messages."));
    return;
  }
  const dms = conversations.filter((c) => c.kind === "dm").sort((a, b) => b.maxId - a.maxId);
  const byChannel = new Map();
  for (const c of conversations.filter((c) => c.kind === "channel")) {
    if (!byChannel.has(c.streamId)) byChannel.set(c.streamId, []);
    byChannel.get(c.streamId).push(c);
  }
  const row = (c) => h("li", {}, conversationLink(c), h("span", { class: "count", "aria-label": `${c.count} unread` }, String(c.count)));
  fill(root,
    dms.length > 0 ? h("section", { class: "inbox-group", "aria-label": "Direct messages" }, h("h2", {}, "Direct messages"), h("ul", {}, dms.map(row))) : null,
    [...byChannel.entries()].sort((a, b) => channelName(a[0]).localeCompare(channelName(b[0]))).map(([streamId, topics]) =>
      h("section", { class: "inbox-group", "aria-label": channelName(streamId) },
        h("h2", {}, h("a", { href: hashOf({ view: "channel", streamId }) }, `#${channelName(streamId)}`)),
        h("ul", {}, topics.sort((a, b) => b.maxId - a.maxId).map(row)))));
}

let recentLoaded = false;
let recentLoading = null;

/** The latest conversations: fetched once (again after a new register), then kept up to
 * date by live messages. `shown()` says whether the view is still the one on screen. */
export async function renderRecent(root, shown = () => true) {
  if (!recentLoaded) {
    if (!recentLoading) {
      fill(root, h("p", { class: "feed-note", role: "status" }, "Loading conversations…"));
      recentLoading = get("/messages", { anchor: "newest", num_before: 400, num_after: 0, narrow: [], apply_markdown: true, client_gravatar: true })
        .then((data) => {
          for (const message of data.messages) remember(message);
          recentLoaded = true;
        })
        .finally(() => {
          recentLoading = null;
        });
    }
    try {
      await recentLoading;
    } catch (error) {
      if (shown()) fill(root, h("p", { class: "feed-note", role: "alert" }, `Conversations could not be loaded: ${error.message}`));
      return;
    }
    if (!shown()) return;
  }
  const latest = new Map();
  for (const message of state.messages.values()) {
    const where = conversationOf(message);
    const key = where.kind === "channel" ? `c${where.streamId}\n${where.topic.toLowerCase()}` : `d${where.key}`;
    const known = latest.get(key);
    if (!known || known.message.id < message.id) latest.set(key, { where, message, senders: new Set([...(known ? known.senders : []), message.sender_id]) });
    else known.senders.add(message.sender_id);
  }
  const rows = [...latest.values()].sort((a, b) => b.message.id - a.message.id).slice(0, 100);
  fill(root, h("table", { class: "recent" },
    h("caption", { class: "visually-hidden" }, "Recent conversations"),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Conversation"), h("th", { scope: "col" }, "Participants"), h("th", { scope: "col" }, "Unread"), h("th", { scope: "col" }, "Last message"))),
    h("tbody", {}, rows.map(({ where, message, senders }) => {
      const unread = where.kind === "channel" ? state.unread.topicCount(where.streamId, where.topic) : state.unread.dmCount(where.key);
      return h("tr", {},
        h("td", {}, conversationLink(where)),
        h("td", {}, [...senders].slice(0, 4).map(nameOf).join(", ")),
        h("td", {}, unread > 0 ? h("span", { class: "count" }, String(unread)) : ""),
        h("td", {}, `${dayOf(message.timestamp)} ${timeOf(message.timestamp)}`));
    }))));
}

/** Keeps the view drawn while it is shown. */
export function watchView(root, current) {
  listen((what) => {
    if (what === "loaded") recentLoaded = false;
    const view = current();
    if (view === "inbox" && ["message", "flags", "delete_message", "update_message", "user_topic", "loaded"].includes(what)) renderInbox(root);
    if (view === "recent" && ["message", "flags", "delete_message", "update_message", "loaded"].includes(what)) renderRecent(root, () => current() === "recent");
  });
}
