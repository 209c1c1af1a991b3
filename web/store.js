// The client's state: what `POST /json/register` answered, then every event applied in
// order (as Zulip's web app keeps it). Views read it and listen for what changed.

const listeners = new Set();

/** Calls `listener(what, detail)` after every change; returns the way to stop. */
export function listen(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function changed(what, detail) {
  for (const listener of listeners) {
    try {
      listener(what, detail);
    } catch (error) {
      console.error(error);
    }
  }
}

export const state = {
  me: 0,
  realm: {},
  settings: {},
  users: new Map(),
  streams: new Map(),
  subs: new Map(),
  messages: new Map(),
  unread: null,
  starred: new Set(),
  presences: new Map(),
  /** Per channel: lower-cased topic → {name, maxId}. */
  topics: new Map(),
  /** `${stream_id}\n${lower-cased topic}` → visibility policy (1 muted, 2 unmuted, 3 followed). */
  userTopics: new Map(),
  /** Direct-message conversations by key → highest message id. */
  recentDms: new Map(),
  /** Conversation key → Map(user id → expiry time). */
  typing: new Map(),
  mutedUsers: new Set(),
  realmEmoji: {},
  emojiDataUrl: "",
};

/** The key of a direct-message conversation: its members' ids, sorted (oneself included). */
export function dmKey(ids) {
  const all = new Set(ids);
  all.add(state.me);
  return [...all].sort((a, b) => a - b).join(",");
}

/** The ids of a key's members other than oneself (oneself alone for a note to self). */
export function dmOthers(key) {
  const ids = key.split(",").map(Number);
  const others = ids.filter((id) => id !== state.me);
  return others.length > 0 ? others : [state.me];
}

/** The conversation a message belongs to: `{kind: "channel", streamId, topic}` or `{kind: "dm", key}`. */
export function conversationOf(message) {
  if (message.type === "stream") return { kind: "channel", streamId: message.stream_id, topic: message.subject };
  const ids = Array.isArray(message.display_recipient) ? message.display_recipient.map((r) => r.id) : [];
  return { kind: "dm", key: dmKey(ids) };
}

/** Unread messages by conversation, and the mentions among them. */
export class Unread {
  constructor() {
    this.where = new Map();
    this.mentions = new Set();
  }

  static fromRegister(unread) {
    const tracker = new Unread();
    for (const entry of unread.streams || []) {
      for (const id of entry.unread_message_ids) tracker.where.set(id, { kind: "channel", streamId: entry.stream_id, topic: entry.topic });
    }
    for (const entry of unread.pms || []) {
      const key = dmKey([entry.other_user_id ?? entry.sender_id]);
      for (const id of entry.unread_message_ids) tracker.where.set(id, { kind: "dm", key });
    }
    for (const entry of unread.huddles || []) {
      const key = dmKey(entry.user_ids_string.split(",").map(Number));
      for (const id of entry.unread_message_ids) tracker.where.set(id, { kind: "dm", key });
    }
    for (const id of unread.mentions || []) tracker.mentions.add(id);
    return tracker;
  }

  add(message) {
    this.where.set(message.id, conversationOf(message));
    if ((message.flags || []).some((f) => f === "mentioned" || f === "stream_wildcard_mentioned" || f === "topic_wildcard_mentioned")) {
      this.mentions.add(message.id);
    }
  }

  remove(id) {
    this.where.delete(id);
    this.mentions.delete(id);
  }

  has(id) {
    return this.where.has(id);
  }

  /** Unread ids matching `predicate(where)`. */
  ids(predicate = () => true) {
    const out = [];
    for (const [id, where] of this.where) if (predicate(where, id)) out.push(id);
    return out.sort((a, b) => a - b);
  }

  count(predicate) {
    let n = 0;
    for (const [id, where] of this.where) if (!predicate || predicate(where, id)) n += 1;
    return n;
  }

  channelCount(streamId) {
    return this.count((w) => w.kind === "channel" && w.streamId === streamId && !isMutedTopic(w.streamId, w.topic));
  }

  topicCount(streamId, topic) {
    const lower = topic.toLowerCase();
    return this.count((w) => w.kind === "channel" && w.streamId === streamId && w.topic.toLowerCase() === lower);
  }

  dmCount(key) {
    return this.count((w) => w.kind === "dm" && w.key === key);
  }

  /** Unread conversations: channel topics and direct-message conversations with counts. */
  conversations() {
    const byKey = new Map();
    for (const [id, where] of this.where) {
      const key = where.kind === "channel" ? `c${where.streamId}\n${where.topic.toLowerCase()}` : `d${where.key}`;
      const entry = byKey.get(key) || { ...where, count: 0, maxId: 0 };
      entry.count += 1;
      entry.maxId = Math.max(entry.maxId, id);
      byKey.set(key, entry);
    }
    return [...byKey.values()];
  }
}

function topicKey(streamId, topic) {
  return `${streamId}\n${topic.toLowerCase()}`;
}

/** A topic's visibility policy for the user (0 when none is set). */
export function topicPolicy(streamId, topic) {
  return state.userTopics.get(topicKey(streamId, topic)) || 0;
}

/** Whether a topic's messages are muted: muted itself, or in a muted channel and not unmuted or followed. */
export function isMutedTopic(streamId, topic) {
  const policy = topicPolicy(streamId, topic);
  if (policy === 1) return true;
  if (policy === 2 || policy === 3) return false;
  const sub = state.subs.get(streamId);
  return Boolean(sub && sub.is_muted);
}

function noteTopic(streamId, topic, id) {
  if (!state.topics.has(streamId)) state.topics.set(streamId, new Map());
  const topics = state.topics.get(streamId);
  const lower = topic.toLowerCase();
  const known = topics.get(lower);
  if (!known || known.maxId < id) topics.set(lower, { name: topic, maxId: id });
}

/** Takes a message into the cache (from a fetch or an event). */
export function remember(message) {
  const known = state.messages.get(message.id);
  if (known) Object.assign(known, message);
  else state.messages.set(message.id, message);
  const where = conversationOf(message);
  if (where.kind === "channel") noteTopic(where.streamId, where.topic, message.id);
  else state.recentDms.set(where.key, Math.max(state.recentDms.get(where.key) || 0, message.id));
  return state.messages.get(message.id);
}

/** Builds the state from `POST /register`'s answer. */
export function load(data) {
  state.me = data.user_id;
  state.realm = data;
  state.settings = data.user_settings || {};
  state.users = new Map();
  for (const user of data.realm_users || []) state.users.set(user.user_id, { ...user, is_active: true });
  for (const user of data.realm_non_active_users || []) state.users.set(user.user_id, { ...user, is_active: false });
  for (const bot of data.cross_realm_bots || []) state.users.set(bot.user_id, bot);
  state.subs = new Map((data.subscriptions || []).map((s) => [s.stream_id, s]));
  state.streams = new Map();
  for (const s of [...(data.subscriptions || []), ...(data.unsubscribed || []), ...(data.never_subscribed || [])]) state.streams.set(s.stream_id, s);
  state.unread = Unread.fromRegister(data.unread_msgs || {});
  state.starred = new Set(data.starred_messages || []);
  state.presences = new Map(Object.entries(data.presences || {}).map(([id, p]) => [Number(id), p]));
  state.userTopics = new Map((data.user_topics || []).map((t) => [topicKey(t.stream_id, t.topic_name), t.visibility_policy]));
  state.recentDms = new Map();
  for (const c of data.recent_private_conversations || []) state.recentDms.set(dmKey(c.user_ids), c.max_message_id);
  state.topics = new Map();
  for (const [id, where] of state.unread.where) if (where.kind === "channel") noteTopic(where.streamId, where.topic, id);
  state.mutedUsers = new Set((data.muted_users || []).map((m) => m.id));
  state.realmEmoji = data.realm_emoji || {};
  state.emojiDataUrl = data.server_emoji_data_url || "";
  state.messages = new Map();
  state.typing = new Map();
  changed("loaded");
}

function setFlag(message, flag, on) {
  const flags = new Set(message.flags || []);
  if (on) flags.add(flag);
  else flags.delete(flag);
  message.flags = [...flags];
}

/** Applies one event of `GET /json/events`. */
export function apply(event) {
  const handler = handlers[event.type];
  if (handler) handler(event);
}

const handlers = {
  message(event) {
    const message = remember({ ...event.message, flags: event.flags || [] });
    if (!message.flags.includes("read")) state.unread.add(message);
    if (message.flags.includes("starred")) state.starred.add(message.id);
    changed("message", message);
  },

  update_message(event) {
    const ids = event.message_ids || [event.message_id];
    for (const id of ids) {
      const message = state.messages.get(id);
      if (!message) continue;
      if (id === event.message_id && event.rendered_content !== undefined) {
        message.content = event.rendered_content;
        // A thumbnail's arrival re-renders the message without anyone editing it.
        if (!event.rendering_only) message.last_edit_timestamp = event.edit_timestamp;
      }
      if (id === event.message_id && Array.isArray(event.flags)) {
        message.flags = event.flags;
        const mentioned = event.flags.some((f) => f.endsWith("mentioned"));
        if (mentioned && state.unread.has(id)) state.unread.mentions.add(id);
        if (!mentioned) state.unread.mentions.delete(id);
      }
      if (event.subject !== undefined) message.subject = event.subject;
      if (event.new_stream_id !== undefined) {
        message.stream_id = event.new_stream_id;
        const stream = state.streams.get(event.new_stream_id);
        if (stream) message.display_recipient = stream.name;
      }
      if (message.type === "stream") noteTopic(message.stream_id, message.subject, message.id);
    }
    // A whole topic moved: its old name goes from the channel's topics.
    if ((event.subject !== undefined || event.new_stream_id !== undefined) && event.propagate_mode === "change_all" && event.orig_subject !== undefined) {
      const topics = state.topics.get(event.stream_id);
      if (topics) topics.delete(event.orig_subject.toLowerCase());
    }
    // Moved unread messages move with their conversation.
    if (event.subject !== undefined || event.new_stream_id !== undefined) {
      for (const id of ids) {
        const where = state.unread.where.get(id);
        if (!where || where.kind !== "channel") continue;
        if (event.subject !== undefined) where.topic = event.subject;
        if (event.new_stream_id !== undefined) where.streamId = event.new_stream_id;
        noteTopic(where.streamId, where.topic, id);
      }
    }
    changed("update_message", event);
  },

  delete_message(event) {
    const ids = event.message_ids || [event.message_id];
    for (const id of ids) {
      state.messages.delete(id);
      state.unread.remove(id);
      state.starred.delete(id);
    }
    changed("delete_message", ids);
  },

  reaction(event) {
    const message = state.messages.get(event.message_id);
    if (message) {
      const reactions = message.reactions || [];
      const same = (r) => r.user_id === event.user_id && r.emoji_code === event.emoji_code && r.reaction_type === event.reaction_type;
      if (event.op === "add" && !reactions.some(same)) {
        reactions.push({ emoji_name: event.emoji_name, emoji_code: event.emoji_code, reaction_type: event.reaction_type, user_id: event.user_id });
      }
      message.reactions = event.op === "remove" ? reactions.filter((r) => !same(r)) : reactions;
    }
    changed("reaction", event);
  },

  update_message_flags(event) {
    const op = event.op || event.operation;
    const on = op === "add";
    const ids = event.all ? [...state.messages.keys()] : event.messages || [];
    if (event.flag === "read") {
      if (on && event.all) state.unread = new Unread();
      for (const id of ids) {
        const message = state.messages.get(id);
        if (message) setFlag(message, "read", on);
        if (on) state.unread.remove(id);
        else if (message) state.unread.add(message);
        else if (event.message_details && event.message_details[id]) {
          const d = event.message_details[id];
          const where = d.type === "stream"
            ? { kind: "channel", streamId: d.stream_id, topic: d.topic }
            : { kind: "dm", key: dmKey(d.user_ids || []) };
          state.unread.where.set(id, where);
          if (d.mentioned) state.unread.mentions.add(id);
        }
      }
    } else {
      for (const id of ids) {
        const message = state.messages.get(id);
        if (message) setFlag(message, event.flag, on);
        if (event.flag === "starred") {
          if (on) state.starred.add(id);
          else state.starred.delete(id);
        }
      }
    }
    changed("flags", event);
  },

  subscription(event) {
    if (event.op === "add") {
      for (const sub of event.subscriptions) {
        state.subs.set(sub.stream_id, sub);
        state.streams.set(sub.stream_id, sub);
      }
    } else if (event.op === "remove") {
      for (const sub of event.subscriptions) {
        state.subs.delete(sub.stream_id);
        // Its unread messages are not the user's to read any more (the server drops them too).
        for (const id of state.unread.ids((w) => w.kind === "channel" && w.streamId === sub.stream_id)) state.unread.remove(id);
      }
    } else if (event.op === "update") {
      const sub = state.subs.get(event.stream_id);
      if (sub) sub[event.property] = event.value;
      if (sub && event.property === "in_home_view") sub.is_muted = !event.value;
    }
    changed("subscription", event);
  },

  stream(event) {
    if (event.op === "create") {
      for (const stream of event.streams) if (!state.streams.has(stream.stream_id)) state.streams.set(stream.stream_id, stream);
    } else if (event.op === "delete") {
      for (const id of event.stream_ids || event.streams.map((s) => s.stream_id)) {
        state.streams.delete(id);
        state.subs.delete(id);
      }
    } else if (event.op === "update") {
      for (const record of [state.streams.get(event.stream_id), state.subs.get(event.stream_id)]) {
        if (!record) continue;
        record[event.property] = event.value;
        if (event.rendered_description !== undefined) record.rendered_description = event.rendered_description;
      }
    }
    changed("stream", event);
  },

  realm_user(event) {
    const person = event.person;
    if (event.op === "add") state.users.set(person.user_id, person);
    else if (event.op === "update" || event.op === "remove") {
      const user = state.users.get(person.user_id);
      if (user) Object.assign(user, person);
    }
    changed("users", event);
  },

  presence(event) {
    if (event.presences) {
      for (const [id, presence] of Object.entries(event.presences)) state.presences.set(Number(id), presence);
    }
    changed("presence", event);
  },

  typing(event) {
    const key = event.message_type === "stream"
      ? `c${event.stream_id}\n${(event.topic || "").toLowerCase()}`
      : `d${dmKey((event.recipients || []).map((r) => r.user_id))}`;
    const who = state.typing.get(key) || new Map();
    if (event.op === "start") who.set(event.sender.user_id, Date.now() + 15000);
    else who.delete(event.sender.user_id);
    state.typing.set(key, who);
    changed("typing", key);
  },

  user_settings(event) {
    if (event.op === "update") state.settings[event.property] = event.value;
    changed("settings", event);
  },

  user_topic(event) {
    const key = topicKey(event.stream_id, event.topic_name);
    if (event.visibility_policy) state.userTopics.set(key, event.visibility_policy);
    else state.userTopics.delete(key);
    changed("user_topic", event);
  },

  realm(event) {
    if (event.op === "update") state.realm[`realm_${event.property}`] = event.value;
    else if (event.op === "update_dict") for (const [k, v] of Object.entries(event.data || {})) state.realm[`realm_${k}`] = v;
    changed("realm", event);
  },

  muted_users(event) {
    state.mutedUsers = new Set((event.muted_users || []).map((m) => m.id));
    changed("users", event);
  },

  realm_emoji(event) {
    state.realmEmoji = event.realm_emoji || {};
    changed("emoji", event);
  },
};

/** Someone's display name. */
export function nameOf(userId) {
  const user = state.users.get(userId);
  return user ? user.full_name : "Unknown user";
}

/** A channel's name. */
export function channelName(streamId) {
  const stream = state.streams.get(streamId);
  return stream ? stream.name : "Unknown channel";
}

/** Whether the user is an administrator (or owner). */
export function isAdmin() {
  const user = state.users.get(state.me);
  return Boolean(user && (user.role === 100 || user.role === 200));
}

/** Presence of a user: "active", "idle" or "offline". */
export function presenceOf(userId) {
  const presence = state.presences.get(userId);
  if (!presence) return "offline";
  const now = Date.now() / 1000;
  const offline = state.realm.server_presence_offline_threshold_seconds || 140;
  if (presence.active_timestamp && now - presence.active_timestamp < offline) return "active";
  if (presence.idle_timestamp && now - presence.idle_timestamp < offline) return "idle";
  return "offline";
}

/** Marks something changed from outside (a view's own action). */
export function notify(what, detail) {
  changed(what, detail);
}
