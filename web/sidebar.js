// The left sidebar: the views (Inbox, Recent conversations, Combined feed, Starred,
// Mentions), the user's channels with unread counts and the open channel's topics, and the
// direct-message conversations. Re-drawn (at most once a frame) whenever the state changes.

import { post, patch, del } from "./api.js";
import { h, fill, toast, announce } from "./dom.js";
import { state, listen, isMutedTopic, topicPolicy, dmOthers, nameOf, presenceOf } from "./store.js";
import { hashOf, sameNarrow, unreadIn } from "./narrow.js";
import { dialog, menu } from "./ui.js";
import { browseChannels } from "./channels.js";

const RESOLVED = "✔ ";

function count(n, what) {
  return n > 0 ? h("span", { class: "count", "aria-label": `${n} ${what}` }, String(n)) : null;
}

/** Sets a topic's visibility policy for the user (0 none, 1 muted, 2 unmuted, 3 followed). */
export async function setTopicPolicy(streamId, topic, policy) {
  try {
    await post("/user_topics", { stream_id: streamId, topic, visibility_policy: policy });
  } catch (error) {
    toast(error.message, "error");
  }
}

/** The newest message id of a topic the client knows, to move or resolve it by. */
function topicMessage(streamId, topic) {
  const known = (state.topics.get(streamId) || new Map()).get(topic.toLowerCase());
  return known ? known.maxId : null;
}

/** Renames (and optionally moves) a whole topic. */
export async function moveTopic(streamId, topic, newTopic, newStreamId) {
  const id = topicMessage(streamId, topic);
  if (!id) {
    toast("Open the topic first, then move it.", "error");
    return false;
  }
  const params = { topic: newTopic, propagate_mode: "change_all", send_notification_to_old_thread: false, send_notification_to_new_thread: newStreamId !== streamId };
  if (newStreamId !== streamId) params.stream_id = newStreamId;
  try {
    await patch(`/messages/${id}`, params);
    return true;
  } catch (error) {
    toast(`The topic was not moved: ${error.message}`, "error");
    return false;
  }
}

function moveDialog(streamId, topic) {
  const name = h("input", { id: "move-topic-name", type: "text", value: topic, maxlength: "60" });
  const channel = h("select", { id: "move-topic-channel" }, [...state.subs.values()].sort((a, b) => a.name.localeCompare(b.name))
    .map((s) => h("option", { value: String(s.stream_id), selected: s.stream_id === streamId }, s.name)));
  const submit = h("button", { type: "submit", class: "primary" }, "Move topic");
  const form = h("form", { class: "stack" },
    h("label", { for: "move-topic-channel" }, "Channel"), channel,
    h("label", { for: "move-topic-name" }, "Topic"), name, submit);
  const box = dialog(`Move “${topic}”`, form);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (await moveTopic(streamId, topic, name.value.trim(), Number(channel.value))) {
      box.close();
      location.hash = hashOf({ view: "topic", streamId: Number(channel.value), topic: name.value.trim() });
    }
  });
  name.focus();
}

function topicMenu(anchor, streamId, topic) {
  const policy = topicPolicy(streamId, topic);
  const resolved = topic.startsWith(RESOLVED);
  menu(anchor, `Options for topic ${topic}`, [
    policy === 1 ? ["Unmute topic", () => setTopicPolicy(streamId, topic, 0)] : ["Mute topic", () => setTopicPolicy(streamId, topic, 1)],
    policy === 3 ? ["Unfollow topic", () => setTopicPolicy(streamId, topic, 0)] : ["Follow topic", () => setTopicPolicy(streamId, topic, 3)],
    [resolved ? "Mark as unresolved" : "Mark as resolved", () => moveTopic(streamId, topic, resolved ? topic.slice(RESOLVED.length) : RESOLVED + topic, streamId)],
    ["Move topic…", () => moveDialog(streamId, topic)],
    ["Mark topic as read", () => post("/mark_topic_as_read", { stream_id: streamId, topic_name: topic }).catch((e) => toast(e.message, "error"))],
  ]);
}

function channelMenu(anchor, sub) {
  menu(anchor, `Options for channel ${sub.name}`, [
    [sub.is_muted ? "Unmute channel" : "Mute channel", () => post("/users/me/subscriptions/properties", {
      subscription_data: [{ stream_id: sub.stream_id, property: "is_muted", value: !sub.is_muted }],
    }).catch((e) => toast(e.message, "error"))],
    ["Mark all messages as read", () => post("/mark_stream_as_read", { stream_id: sub.stream_id }).catch((e) => toast(e.message, "error"))],
    ["Unsubscribe", () => del("/users/me/subscriptions", { subscriptions: [sub.name] })
      .then(() => announce(`Unsubscribed from ${sub.name}.`), (e) => toast(e.message, "error"))],
  ]);
}

export class Sidebar {
  constructor(root) {
    this.root = root;
    this.narrow = { view: "inbox" };
    this.pending = false;
    listen((what) => {
      if (what !== "typing" && what !== "connection") this.schedule();
    });
  }

  show(narrow) {
    this.narrow = narrow;
    this.render();
  }

  schedule() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      this.render();
    });
  }

  link(narrow, label, extra) {
    const current = sameNarrow(narrow, this.narrow);
    return h("a", { href: hashOf(narrow), "aria-current": current ? "page" : false, class: current ? "current" : "" }, label, extra || null);
  }

  render() {
    if (!state.unread) return;
    const focused = document.activeElement && this.root.contains(document.activeElement) ? document.activeElement.getAttribute("href") : null;
    const unread = state.unread;
    const views = h("nav", { class: "views", "aria-label": "Views" }, h("ul", {},
      h("li", {}, this.link({ view: "inbox" }, "Inbox"), count(unread.count((w) => w.kind === "dm" || !isMutedTopic(w.streamId, w.topic)), "unread")),
      h("li", {}, this.link({ view: "recent" }, "Recent conversations")),
      h("li", {}, this.link({ view: "feed" }, "Combined feed"), count(unreadIn({ view: "feed" }).length, "unread")),
      h("li", {}, this.link({ view: "starred" }, "Starred messages"), state.settings.starred_message_counts === false ? null : count(state.starred.size, "starred")),
      h("li", {}, this.link({ view: "mentions" }, "Mentions"), count(unread.mentions.size, "unread mentions"))));

    const openChannel = this.narrow.view === "channel" || this.narrow.view === "topic" ? this.narrow.streamId : null;
    const subs = [...state.subs.values()].filter((s) => !s.is_archived).sort((a, b) => Number(b.pin_to_top) - Number(a.pin_to_top) || a.name.localeCompare(b.name));
    const channels = h("nav", { class: "channels", "aria-label": "Channels" },
      h("div", { class: "section-head" }, h("h2", {}, "Channels"),
        h("button", { type: "button", class: "icon", "aria-label": "Browse and create channels", title: "Browse channels", onclick: () => browseChannels() }, "+")),
      h("ul", {}, subs.map((sub) => {
        const options = h("button", { type: "button", class: "icon options", "aria-label": `Options for ${sub.name}`, "aria-haspopup": "menu" }, "⋯");
        options.addEventListener("click", () => channelMenu(options, sub));
        const item = h("li", { class: `channel${sub.is_muted ? " muted" : ""}` },
          h("span", { class: "swatch", "aria-hidden": "true" }),
          this.link({ view: "channel", streamId: sub.stream_id }, sub.name),
          count(unread.channelCount(sub.stream_id), "unread"), options);
        item.style.setProperty("--channel-color", sub.color || "#888");
        if (sub.stream_id === openChannel) item.append(this.topicList(sub.stream_id));
        return item;
      })));

    const dms = [...state.recentDms.entries()].sort((a, b) => b[1] - a[1]).slice(0, 20);
    const directs = h("nav", { class: "dms", "aria-label": "Direct messages" },
      h("div", { class: "section-head" }, h("h2", {}, this.link({ view: "dms" }, "Direct messages"))),
      h("ul", {}, dms.map(([key]) => {
        const others = dmOthers(key);
        const label = others.length === 1 && others[0] === state.me ? `${nameOf(state.me)} (you)` : others.map(nameOf).join(", ");
        const dot = others.length === 1 ? h("span", { class: `presence ${presenceOf(others[0])}`, "aria-hidden": "true" }) : null;
        return h("li", {}, dot, this.link({ view: "dm", key }, label), count(unread.dmCount(key), "unread"));
      })));
    fill(this.root, views, channels, directs);
    if (focused) {
      const again = this.root.querySelector(`a[href="${CSS.escape(focused)}"]`);
      if (again) again.focus();
    }
  }

  topicList(streamId) {
    const topics = [...(state.topics.get(streamId) || new Map()).values()].sort((a, b) => b.maxId - a.maxId).slice(0, 12);
    return h("ul", { class: "topics", "aria-label": "Topics" }, topics.map((t) => {
      const options = h("button", { type: "button", class: "icon options", "aria-label": `Options for topic ${t.name}`, "aria-haspopup": "menu" }, "⋯");
      options.addEventListener("click", () => topicMenu(options, streamId, t.name));
      const policy = topicPolicy(streamId, t.name);
      return h("li", { class: `topic${isMutedTopic(streamId, t.name) ? " muted" : ""}${policy === 3 ? " followed" : ""}` },
        this.link({ view: "topic", streamId, topic: t.name }, t.name || state.realm.realm_empty_topic_display_name || "general chat"),
        count(state.unread.topicCount(streamId, t.name), "unread"), options);
    }));
  }
}
