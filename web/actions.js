// What can be done to a message: react, star, quote and reply, edit, delete, copy its link,
// mark it (and what follows it) unread.

import { get, post, patch, del } from "./api.js";
import { h, toast, announce } from "./dom.js";
import { state, isAdmin, conversationOf } from "./store.js";
import { apiTerms, messageLink, replyTarget } from "./narrow.js";
import { dialog, emojiPicker, menu } from "./ui.js";
import { compose } from "./compose.js";

/** Adds or takes back the user's reaction `emoji` (`{type, code, name}` or a reaction group). */
export async function toggleReaction(message, group) {
  const type = group.reaction_type || group.type;
  const code = group.emoji_code || group.code;
  const name = group.emoji_name || group.name;
  const mine = (message.reactions || []).some((r) => r.user_id === state.me && r.emoji_code === code && r.reaction_type === type);
  try {
    const params = { emoji_name: name, emoji_code: code, reaction_type: type };
    if (mine) await del(`/messages/${message.id}/reactions`, params);
    else await post(`/messages/${message.id}/reactions`, params);
  } catch (error) {
    toast(`The reaction could not be ${mine ? "removed" : "added"}: ${error.message}`, "error");
  }
}

/** The raw Markdown of a message. */
async function rawContent(message) {
  const data = await get(`/messages/${message.id}`, { apply_markdown: false });
  return data.message.content;
}

/** Whether the user may edit a message's content now (the organization's rule). */
export function canEdit(message) {
  if (message.sender_id !== state.me || !state.realm.realm_allow_message_editing) return false;
  const limit = state.realm.realm_message_content_edit_limit_seconds;
  return limit === null || limit === undefined || Date.now() / 1000 - message.timestamp < limit;
}

/** Edits a message in place: its Markdown in a text box, saved with `PATCH`. */
export async function editMessage(message) {
  const article = document.getElementById(`message-${message.id}`);
  if (!article) return;
  const body = article.querySelector(".content");
  let text;
  try {
    text = await rawContent(message);
  } catch (error) {
    toast(`The message could not be opened for editing: ${error.message}`, "error");
    return;
  }
  const box = h("textarea", { class: "edit-box", id: `edit-${message.id}`, rows: "4" });
  box.value = text;
  const save = h("button", { type: "submit", class: "primary" }, "Save");
  const cancel = h("button", { type: "button" }, "Cancel");
  const form = h("form", { class: "edit-form" }, h("label", { for: box.id, class: "visually-hidden" }, "Edit message"), box, h("div", { class: "row" }, save, cancel));
  const restore = () => form.replaceWith(body);
  cancel.addEventListener("click", restore);
  box.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation();
      restore();
    } else if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    save.disabled = true;
    try {
      await patch(`/messages/${message.id}`, { content: box.value });
      restore();
    } catch (error) {
      save.disabled = false;
      toast(`The message could not be saved: ${error.message}`, "error");
    }
  });
  body.replaceWith(form);
  box.focus();
}

/** Asks, then deletes a message. */
export function deleteMessage(message) {
  const confirm = h("button", { type: "button", class: "danger" }, "Delete");
  const cancel = h("button", { type: "button" }, "Cancel");
  const box = dialog("Delete message?", h("div", {}, h("p", {}, "The message will be deleted for everyone."), h("div", { class: "row" }, confirm, cancel)));
  cancel.addEventListener("click", () => box.close());
  confirm.addEventListener("click", async () => {
    try {
      await del(`/messages/${message.id}`);
      box.close();
      announce("Message deleted.");
    } catch (error) {
      toast(`The message could not be deleted: ${error.message}`, "error");
    }
  });
  confirm.focus();
}

/** Stars or unstars a message. */
export async function toggleStar(message) {
  const starred = (message.flags || []).includes("starred");
  try {
    await post("/messages/flags", { messages: [message.id], op: starred ? "remove" : "add", flag: "starred" });
    announce(starred ? "Unstarred." : "Starred.");
  } catch (error) {
    toast(error.message, "error");
  }
}

/** Opens the compose box on a message's conversation, quoting it. */
export async function quoteAndReply(message) {
  compose.open(replyTarget(message));
  try {
    const text = await rawContent(message);
    const quoted = `@_**${message.sender_full_name}|${message.sender_id}** [said](${messageLink(message)}):\n\`\`\`quote\n${text}\n\`\`\`\n`;
    compose.insert(quoted);
  } catch (error) {
    toast(`The message could not be quoted: ${error.message}`, "error");
  }
}

/** Marks a message and every later one of its conversation unread. */
export async function markUnreadFrom(message) {
  const where = conversationOf(message);
  const narrow = where.kind === "channel" ? { view: "topic", streamId: where.streamId, topic: where.topic } : { view: "dm", key: where.key };
  try {
    await post("/messages/flags/narrow", { anchor: message.id, include_anchor: true, num_before: 0, num_after: 1000, narrow: apiTerms(narrow), op: "remove", flag: "read" });
  } catch (error) {
    toast(`Could not mark as unread: ${error.message}`, "error");
  }
}

/** The toolbar of a message (shown on hover and focus). */
export function messageActions(message) {
  const starred = (message.flags || []).includes("starred");
  const react = h("button", { type: "button", class: "icon", "aria-label": "Add emoji reaction", title: "Add emoji reaction" }, "☺");
  react.addEventListener("click", () => emojiPicker(react, (choice) => toggleReaction(message, choice)));
  const star = h("button", { type: "button", class: "icon", "aria-label": starred ? "Unstar this message" : "Star this message", "aria-pressed": String(starred), title: starred ? "Unstar" : "Star" }, starred ? "★" : "☆");
  star.addEventListener("click", () => toggleStar(message));
  const more = h("button", { type: "button", class: "icon", "aria-label": "Message actions", "aria-haspopup": "menu", title: "More actions" }, "⋯");
  more.addEventListener("click", () => menu(more, "Message actions", [
    ["Quote and reply", () => quoteAndReply(message)],
    canEdit(message) && ["Edit message", () => editMessage(message)],
    (message.sender_id === state.me || isAdmin()) && ["Delete message", () => deleteMessage(message)],
    ["Copy link to message", () => {
      navigator.clipboard.writeText(messageLink(message)).then(() => toast("Link copied."), () => toast(messageLink(message)));
    }],
    ["Mark as unread from here", () => markUnreadFrom(message)],
  ]));
  return h("div", { class: "actions", role: "toolbar", "aria-label": "Message actions" }, react, star, more);
}
