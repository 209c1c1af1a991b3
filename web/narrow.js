// Narrows: what the feed shows (a channel, a topic, a conversation, a search, a view), as
// Zulip's web app addresses them in the URL's fragment (`#narrow/channel/12-general/topic/…`),
// as terms of the API, and as a test a live message passes or not.

import { state, conversationOf, dmKey, dmOthers, isMutedTopic, channelName, nameOf } from "./store.js";

/** Zulip's encoding of a fragment component: percent escapes written with `.`. */
export function encodeComponent(text) {
  return encodeURIComponent(text).replace(/\./g, "%2E").replace(/%/g, ".");
}

export function decodeComponent(text) {
  try {
    return decodeURIComponent(text.replace(/\./g, "%"));
  } catch {
    return text;
  }
}

function slug(name) {
  return encodeComponent(name.replace(/ /g, "-"));
}

/** The narrow a URL fragment names (the combined feed for anything else). */
export function parseHash(hash) {
  const path = hash.replace(/^#/, "");
  if (path === "inbox") return { view: "inbox" };
  if (path === "recent") return { view: "recent" };
  if (path === "" || path === "feed" || path === "all_messages") return { view: "feed" };
  const parts = path.split("/");
  if (parts[0] !== "narrow") return { view: "feed" };
  const narrow = { view: "feed" };
  for (let i = 1; i + 1 < parts.length; i += 2) {
    const [operator, operand] = [parts[i], decodeComponent(parts[i + 1])];
    if (operator === "channel" || operator === "stream") {
      narrow.view = "channel";
      narrow.streamId = Number.parseInt(operand, 10);
    } else if (operator === "topic" || operator === "subject") {
      narrow.view = "topic";
      narrow.topic = operand;
    } else if (operator === "dm" || operator === "pm-with") {
      narrow.view = "dm";
      narrow.key = dmKey(operand.split("-")[0].split(",").map(Number).filter(Number.isFinite));
    } else if (operator === "is" && (operand === "starred" || operand === "mentioned")) {
      narrow.view = operand === "starred" ? "starred" : "mentions";
    } else if (operator === "is" && (operand === "dm" || operand === "private")) {
      narrow.view = "dms";
    } else if (operator === "search") {
      narrow.view = "search";
      narrow.query = operand;
    } else if (operator === "near" || operator === "with") {
      narrow.near = Number.parseInt(operand, 10);
    }
  }
  if (narrow.view === "topic" && !Number.isFinite(narrow.streamId)) return { view: "feed" };
  if (narrow.view === "channel" && !Number.isFinite(narrow.streamId)) return { view: "feed" };
  return narrow;
}

/** The URL fragment of a narrow. */
export function hashOf(narrow) {
  switch (narrow.view) {
    case "inbox": return "#inbox";
    case "recent": return "#recent";
    case "starred": return "#narrow/is/starred";
    case "mentions": return "#narrow/is/mentioned";
    case "dms": return "#narrow/is/dm";
    case "channel": return `#narrow/channel/${narrow.streamId}-${slug(channelName(narrow.streamId))}`;
    case "topic": return `#narrow/channel/${narrow.streamId}-${slug(channelName(narrow.streamId))}/topic/${encodeComponent(narrow.topic)}`;
    case "dm": {
      const others = dmOthers(narrow.key);
      const label = others.length === 1 ? slug(nameOf(others[0])) : "group";
      return `#narrow/dm/${others.join(",")}-${label}`;
    }
    case "search": return `#narrow/search/${encodeComponent(narrow.query)}`;
    default: return "#feed";
  }
}

/** The link to one message in its conversation. */
export function messageLink(message) {
  const where = conversationOf(message);
  const narrow = where.kind === "channel" ? { view: "topic", streamId: where.streamId, topic: where.topic } : { view: "dm", key: where.key };
  return `${location.origin}/${hashOf(narrow)}/near/${message.id}`;
}

/** The narrow's terms for `GET /messages`. */
export function apiTerms(narrow) {
  switch (narrow.view) {
    case "channel": return [{ operator: "channel", operand: narrow.streamId }];
    case "topic": return [{ operator: "channel", operand: narrow.streamId }, { operator: "topic", operand: narrow.topic }];
    case "dm": return [{ operator: "dm", operand: dmOthers(narrow.key) }];
    case "dms": return [{ operator: "is", operand: "dm" }];
    case "starred": return [{ operator: "is", operand: "starred" }];
    case "mentions": return [{ operator: "is", operand: "mentioned" }];
    case "search": return searchTerms(narrow.query);
    default: return [];
  }
}

/** A search box's text as terms: `channel:name`, `topic:name`, `from:email` and words. */
export function searchTerms(query) {
  const terms = [];
  const words = [];
  for (const token of query.match(/\S+:"[^"]*"|\S+/g) || []) {
    const match = token.match(/^(channel|stream|topic|from|sender):(.+)$/);
    if (!match) {
      words.push(token);
      continue;
    }
    const operand = match[2].replace(/^"|"$/g, "");
    if (match[1] === "channel" || match[1] === "stream") {
      const stream = [...state.streams.values()].find((s) => s.name.toLowerCase() === operand.toLowerCase());
      terms.push({ operator: "channel", operand: stream ? stream.stream_id : operand });
    } else if (match[1] === "topic") terms.push({ operator: "topic", operand });
    else terms.push({ operator: "sender", operand });
  }
  if (words.length > 0) terms.push({ operator: "search", operand: words.join(" ") });
  return terms;
}

/** Whether a message arriving live belongs in the narrow (searches are never extended live). */
export function matches(narrow, message) {
  const where = conversationOf(message);
  switch (narrow.view) {
    case "feed": return where.kind === "dm" || !isMutedTopic(where.streamId, where.topic);
    case "channel": return where.kind === "channel" && where.streamId === narrow.streamId;
    case "topic": return where.kind === "channel" && where.streamId === narrow.streamId && where.topic.toLowerCase() === narrow.topic.toLowerCase();
    case "dm": return where.kind === "dm" && where.key === narrow.key;
    case "dms": return where.kind === "dm";
    case "starred": return (message.flags || []).includes("starred");
    case "mentions": return (message.flags || []).some((f) => f.endsWith("mentioned"));
    default: return false;
  }
}

/** Whether a narrow shows a feed of messages (the inbox and recent views do not). */
export function isFeed(narrow) {
  return narrow.view !== "inbox" && narrow.view !== "recent";
}

/** The narrow's title, as the feed's heading says it. */
export function titleOf(narrow) {
  switch (narrow.view) {
    case "inbox": return "Inbox";
    case "recent": return "Recent conversations";
    case "starred": return "Starred messages";
    case "mentions": return "Mentions";
    case "dms": return "Direct messages";
    case "channel": return `#${channelName(narrow.streamId)}`;
    case "topic": return `#${channelName(narrow.streamId)} › ${narrow.topic || state.realm.realm_empty_topic_display_name || "general chat"}`;
    case "dm": return dmOthers(narrow.key).map(nameOf).join(", ");
    case "search": return `Search: ${narrow.query}`;
    default: return "Combined feed";
  }
}

/** Whether two narrows are the same view. */
export function sameNarrow(a, b) {
  return hashOf(a) === hashOf(b);
}

/** Where a reply to a message goes: its conversation. */
export function replyTarget(message) {
  const where = conversationOf(message);
  return where.kind === "channel" ? { kind: "channel", streamId: where.streamId, topic: where.topic } : { kind: "dm", key: where.key };
}

/** The unread ids of a narrow, oldest first. */
export function unreadIn(narrow) {
  const unread = state.unread;
  switch (narrow.view) {
    case "channel": return unread.ids((w) => w.kind === "channel" && w.streamId === narrow.streamId);
    case "topic": return unread.ids((w) => w.kind === "channel" && w.streamId === narrow.streamId && w.topic.toLowerCase() === narrow.topic.toLowerCase());
    case "dm": return unread.ids((w) => w.kind === "dm" && w.key === narrow.key);
    case "dms": return unread.ids((w) => w.kind === "dm");
    case "mentions": return unread.ids((w, id) => unread.mentions.has(id));
    case "feed": return unread.ids((w) => w.kind === "dm" || !isMutedTopic(w.streamId, w.topic));
    default: return [];
  }
}
