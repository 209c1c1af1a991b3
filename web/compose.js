// The compose box: a channel and topic, or direct-message recipients; the message, sent
// with Enter (or Ctrl+Enter) as the user's `enter_sends` says; mentions, channel links and
// emoji completed as they are typed; a preview; files by button, drag and drop or paste,
// with a progress bar; drafts kept per conversation; typing notifications.

import { post, patch, del, upload } from "./api.js";
import { h, fill, html, toast, announce } from "./dom.js";
import { state, dmKey, dmOthers, nameOf, channelName } from "./store.js";
import { findEmoji, emoji } from "./ui.js";
import { queueId } from "./events.js";

let localId = 0;

/** Where this user's drafts are kept in the browser: one key per user, so that people
 * sharing a browser never see each other's (signing out removes them). */
export function draftsKey() {
  return `agora-drafts:${state.me}`;
}

function drafts() {
  try {
    return JSON.parse(localStorage.getItem(draftsKey()) || "{}");
  } catch {
    return {};
  }
}

function targetKey(target) {
  if (!target) return "";
  return target.kind === "channel" ? `c${target.streamId}\n${(target.topic || "").toLowerCase()}` : `d${target.key}`;
}

/** The server's copy of a draft, when the user synchronizes drafts (`enable_drafts_synchronization`). */
function serverDraft(target, content) {
  if (target.kind === "channel") return { type: "stream", to: [target.streamId], topic: target.topic || "", content, timestamp: Date.now() / 1000 };
  return { type: "private", to: dmOthers(target.key), topic: "", content, timestamp: Date.now() / 1000 };
}

class Compose {
  constructor() {
    this.serverIds = new Map();
    this.syncTimer = null;
    this.target = null;
    this.recipients = [];
    this.typingSent = 0;
    this.typingTimer = null;
    this.uploads = 0;
  }

  /** Builds the compose area into `root`. */
  mount(root) {
    this.root = root;
    // Drafts the server keeps (from another browser or app) come in with the local ones.
    const local = drafts();
    for (const d of state.realm.drafts || []) {
      const target = d.type === "stream" ? { kind: "channel", streamId: d.to[0], topic: d.topic } : d.type === "private" ? { kind: "dm", key: dmKey(d.to) } : null;
      if (!target) continue;
      const key = targetKey(target);
      this.serverIds.set(key, d.id);
      if (local[key] === undefined) local[key] = d.content;
    }
    try {
      localStorage.setItem(draftsKey(), JSON.stringify(local));
    } catch {
      // Kept in memory only.
    }
    this.channel = h("select", { id: "compose-channel" });
    this.topic = h("input", { id: "compose-topic", type: "text", autocomplete: "off", maxlength: "60", list: "compose-topics", placeholder: "Topic" });
    this.topics = h("datalist", { id: "compose-topics" });
    this.to = h("input", { id: "compose-to", type: "text", autocomplete: "off", placeholder: "Type a name", role: "combobox", "aria-autocomplete": "list", "aria-expanded": "false" });
    this.pills = h("span", { class: "pills" });
    this.content = h("textarea", { id: "compose-content", rows: "3", placeholder: "Message", "aria-autocomplete": "list" });
    this.preview = h("div", { class: "preview content", hidden: true, "aria-live": "polite" });
    this.progress = h("div", { class: "uploads" });
    this.send = h("button", { type: "submit", class: "primary" }, "Send");
    this.previewButton = h("button", { type: "button", "aria-pressed": "false" }, "Preview");
    const file = h("input", { type: "file", multiple: true, id: "compose-file", class: "visually-hidden" });
    const attach = h("label", { for: "compose-file", class: "button" }, "Attach files");
    this.suggestions = h("ul", { class: "suggestions", role: "listbox", id: "compose-suggestions", hidden: true, "aria-label": "Suggestions" });
    this.channelRow = h("div", { class: "target channel-target" },
      h("label", { for: "compose-channel" }, "Channel"), this.channel,
      h("label", { for: "compose-topic" }, "Topic"), this.topic, this.topics);
    this.dmRow = h("div", { class: "target dm-target", hidden: true },
      h("label", { for: "compose-to" }, "To"), this.pills, this.to);
    const close = h("button", { type: "button", class: "icon", "aria-label": "Close the compose box" }, "×");
    this.form = h("form", { class: "compose-form", novalidate: true },
      h("div", { class: "compose-head" }, this.channelRow, this.dmRow, close),
      h("label", { for: "compose-content", class: "visually-hidden" }, "Message"),
      this.content, this.suggestions, this.preview, this.progress,
      h("div", { class: "compose-buttons" }, this.send, this.previewButton, attach, file,
        h("span", { class: "hint" }, state.settings.enter_sends ? "Enter to send, Shift+Enter for a new line" : "Ctrl+Enter to send")));
    fill(root, this.form);
    this.newButtons = h("div", { class: "compose-closed" },
      h("button", { type: "button", onclick: () => this.open(this.defaultTarget || this.firstChannelTarget()) }, "Start new conversation"),
      h("button", { type: "button", onclick: () => this.open({ kind: "dm", key: "" }, { focus: "to" }) }, "New direct message"));
    root.append(this.newButtons);

    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
    close.addEventListener("click", () => this.close());
    this.channel.addEventListener("change", () => this.retarget({ kind: "channel", streamId: Number(this.channel.value), topic: this.topic.value }));
    this.topic.addEventListener("change", () => this.retarget({ kind: "channel", streamId: Number(this.channel.value), topic: this.topic.value }));
    this.content.addEventListener("keydown", (event) => this.keydown(event));
    this.content.addEventListener("input", () => {
      this.saveDraft();
      this.typing();
      this.complete();
    });
    this.to.addEventListener("input", () => this.completeRecipients());
    this.to.addEventListener("keydown", (event) => this.suggestionKeys(event));
    this.previewButton.addEventListener("click", () => this.togglePreview());
    file.addEventListener("change", () => {
      for (const f of file.files) this.upload(f);
      file.value = "";
    });
    this.content.addEventListener("paste", (event) => {
      const files = [...(event.clipboardData?.files || [])];
      if (files.length > 0) {
        event.preventDefault();
        for (const f of files) this.upload(f);
      }
    });
    for (const zone of [root, document.getElementById("feed")]) {
      if (!zone) continue;
      zone.addEventListener("dragover", (event) => {
        if (event.dataTransfer?.types.includes("Files")) event.preventDefault();
      });
      zone.addEventListener("drop", (event) => {
        const files = [...(event.dataTransfer?.files || [])];
        if (files.length === 0) return;
        event.preventDefault();
        if (!this.target) this.open(this.defaultTarget || this.firstChannelTarget());
        for (const f of files) this.upload(f);
      });
    }
    this.close();
  }

  firstChannelTarget() {
    const first = [...state.subs.values()].sort((a, b) => a.name.localeCompare(b.name))[0];
    return first ? { kind: "channel", streamId: first.stream_id, topic: "" } : { kind: "dm", key: "" };
  }

  /** Where a new message goes when the user starts one in this narrow. */
  setDefault(target) {
    this.defaultTarget = target;
    if (target && this.target && !this.content.value.trim()) this.retarget(target);
  }

  /** Opens the box on `target` (with its draft, if any). */
  open(target, { focus } = {}) {
    this.form.hidden = false;
    this.newButtons.hidden = true;
    this.root.classList.add("open");
    this.retarget(target);
    const field = focus === "to" ? this.to : focus === "topic" ? this.topic : this.content;
    field.focus();
  }

  retarget(target) {
    if (targetKey(target) !== targetKey(this.target)) this.saveDraft();
    this.target = target;
    const channel = target.kind === "channel";
    this.channelRow.hidden = !channel;
    this.dmRow.hidden = channel;
    if (channel) {
      // The user's channels, and the target's even when not subscribed to it (a reply in a
      // channel seen through a search or the channel browser), so that the message goes there.
      const channels = [...state.subs.values()];
      if (!state.subs.has(target.streamId) && state.streams.has(target.streamId)) channels.push(state.streams.get(target.streamId));
      fill(this.channel, channels.sort((a, b) => a.name.localeCompare(b.name))
        .map((s) => h("option", { value: String(s.stream_id), selected: s.stream_id === target.streamId }, s.name)));
      this.topic.value = target.topic || "";
      const topics = [...(state.topics.get(target.streamId) || new Map()).values()].sort((a, b) => b.maxId - a.maxId);
      fill(this.topics, topics.map((t) => h("option", { value: t.name })));
    } else {
      this.recipients = target.key ? dmOthers(target.key) : [];
      this.renderPills();
    }
    const draft = drafts()[targetKey(target)];
    if (draft !== undefined && !this.content.value.trim()) this.content.value = draft;
  }

  renderPills() {
    fill(this.pills, this.recipients.map((id) => h("span", { class: "pill" }, nameOf(id),
      h("button", { type: "button", class: "icon", "aria-label": `Remove ${nameOf(id)}`, onclick: () => {
        this.recipients = this.recipients.filter((r) => r !== id);
        this.renderPills();
        this.to.focus();
      } }, "×"))));
  }

  close() {
    this.saveDraft();
    this.stopTyping();
    this.form.hidden = true;
    this.newButtons.hidden = false;
    this.root.classList.remove("open");
    this.hideSuggestions();
    this.target = null;
  }

  isOpen() {
    return this.target !== null;
  }

  /** Inserts text at the cursor (quotes, uploaded files' links). */
  insert(text) {
    const box = this.content;
    const start = box.selectionStart ?? box.value.length;
    const end = box.selectionEnd ?? box.value.length;
    const before = box.value.slice(0, start);
    const spacer = before && !before.endsWith("\n") && text.startsWith("@_**") ? "\n" : "";
    box.value = before + spacer + text + box.value.slice(end);
    const at = start + spacer.length + text.length;
    box.setSelectionRange(at, at);
    box.focus();
    this.saveDraft();
  }

  saveDraft() {
    if (!this.target) return;
    const all = drafts();
    const key = targetKey(this.target);
    if (this.content.value.trim()) all[key] = this.content.value;
    else delete all[key];
    try {
      localStorage.setItem(draftsKey(), JSON.stringify(all));
    } catch {
      // Storage full or off: the draft lives in the box only.
    }
    if (state.settings.enable_drafts_synchronization) {
      clearTimeout(this.syncTimer);
      const [target, content] = [this.target, this.content.value];
      this.syncTimer = setTimeout(() => this.syncDraft(target, content), 1500);
    }
  }

  /** Keeps the server's copy of a draft as the box holds it (or deletes it once empty). */
  async syncDraft(target, content) {
    if (target.kind === "dm" && !target.key) return;
    const key = targetKey(target);
    const id = this.serverIds.get(key);
    try {
      if (!content.trim()) {
        if (id) await del(`/drafts/${id}`);
        this.serverIds.delete(key);
      } else if (id) {
        await patch(`/drafts/${id}`, { draft: serverDraft(target, content) });
      } else {
        const data = await post("/drafts", { drafts: [serverDraft(target, content)] });
        this.serverIds.set(key, data.ids[0]);
      }
    } catch {
      // The local copy stays; the next change tries again.
    }
  }

  keydown(event) {
    if (this.suggestionKeys(event)) return;
    if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation();
      this.close();
      return;
    }
    if (event.key !== "Enter" || event.isComposing) return;
    const sends = event.ctrlKey || event.metaKey || (state.settings.enter_sends && !event.shiftKey && !event.altKey);
    if (sends) {
      event.preventDefault();
      this.submit();
    }
  }

  async submit() {
    const text = this.content.value;
    if (!text.trim()) {
      toast("Write something first.", "error");
      this.content.focus();
      return;
    }
    if (this.uploads > 0) {
      toast("Wait for the files to finish uploading.", "error");
      return;
    }
    const params = { content: text, queue_id: queueId(), local_id: `${Date.now()}.${(localId += 1)}` };
    if (this.target.kind === "channel") {
      Object.assign(params, { type: "stream", to: Number(this.channel.value), topic: this.topic.value });
    } else {
      if (this.recipients.length === 0) {
        toast("Choose who the message is for.", "error");
        this.to.focus();
        return;
      }
      Object.assign(params, { type: "direct", to: this.recipients });
    }
    this.send.disabled = true;
    try {
      await post("/messages", params);
      const sentTo = targetKey(this.target);
      this.content.value = "";
      const all = drafts();
      delete all[sentTo];
      localStorage.setItem(draftsKey(), JSON.stringify(all));
      clearTimeout(this.syncTimer);
      const serverId = this.serverIds.get(sentTo);
      if (serverId) {
        this.serverIds.delete(sentTo);
        del(`/drafts/${serverId}`).catch(() => {});
      }
      this.stopTyping();
      this.preview.hidden = true;
      this.previewButton.setAttribute("aria-pressed", "false");
      announce("Message sent.");
    } catch (error) {
      toast(`The message was not sent: ${error.message}`, "error");
    } finally {
      this.send.disabled = false;
      this.content.focus();
    }
  }

  async togglePreview() {
    const on = this.preview.hidden;
    this.previewButton.setAttribute("aria-pressed", String(on));
    if (!on) {
      this.preview.hidden = true;
      this.content.focus();
      return;
    }
    try {
      const data = await post("/messages/render", { content: this.content.value || " " });
      this.preview.replaceWith((this.preview = html("div", { class: "preview content", "aria-live": "polite" }, data.rendered)));
    } catch (error) {
      toast(`No preview: ${error.message}`, "error");
    }
  }

  /** Tells the others the user is typing (at most every 10 s; stopped after 5 s idle). */
  typing() {
    if (!this.target) return;
    const now = Date.now();
    const params = this.typingParams("start");
    if (!params) return;
    if (now - this.typingSent > 10000) {
      this.typingSent = now;
      post("/typing", params).catch(() => {});
    }
    clearTimeout(this.typingTimer);
    this.typingTimer = setTimeout(() => this.stopTyping(), 5000);
  }

  typingParams(op) {
    if (!this.target) return null;
    if (this.target.kind === "channel") {
      if (state.settings.send_stream_typing_notifications === false) return null;
      return { op, type: "stream", stream_id: Number(this.channel.value), topic: this.topic.value };
    }
    if (this.recipients.length === 0 || state.settings.send_private_typing_notifications === false) return null;
    return { op, type: "direct", to: this.recipients };
  }

  stopTyping() {
    clearTimeout(this.typingTimer);
    if (this.typingSent === 0) return;
    this.typingSent = 0;
    const params = this.typingParams("stop");
    if (params) post("/typing", params).catch(() => {});
  }

  /** Uploads a file, showing its progress, and links it in the message. */
  async upload(file) {
    const max = (state.realm.max_file_upload_size_mib || 25) * 1024 * 1024;
    if (file.size > max) {
      toast(`${file.name} is larger than this server takes (${state.realm.max_file_upload_size_mib} MiB).`, "error");
      return;
    }
    const bar = h("progress", { max: "100", value: "0", "aria-label": `Uploading ${file.name}` });
    const row = h("div", { class: "upload" }, h("span", {}, file.name), bar);
    this.progress.append(row);
    this.uploads += 1;
    try {
      const done = await upload(file, (fraction) => {
        bar.value = Math.round(fraction * 100);
      });
      const name = (done.filename || file.name).replace(/[[\]]/g, "");
      this.insert(`[${name}](${done.url})`);
      announce(`${file.name} uploaded.`);
    } catch (error) {
      toast(`${file.name} was not uploaded: ${error.message}`, "error");
    } finally {
      this.uploads -= 1;
      row.remove();
    }
  }

  // --- Completion: @mentions, #channels and topics, :emoji:, and recipients.

  async complete() {
    const box = this.content;
    const before = box.value.slice(0, box.selectionStart);
    const match = before.match(/(^|\s)([@#:])([^\s@#:]*)$/) || before.match(/(^|\s)(#)\*\*([^*]*)$/);
    if (!match) {
      this.hideSuggestions();
      return;
    }
    const [, , sigil, query] = match;
    const start = box.selectionStart - query.length - (match[0].includes("**") ? 3 : 1);
    const q = query.toLowerCase();
    let items = [];
    if (sigil === "@") {
      items = [...state.users.values()]
        .filter((u) => u.is_active && !u.is_bot && (u.full_name.toLowerCase().includes(q) || (u.email || "").toLowerCase().includes(q)))
        .slice(0, 8)
        .map((u) => ({ label: u.full_name, detail: u.email, text: `@**${u.full_name}** ` }));
      if ("all".startsWith(q) || "everyone".startsWith(q)) items.push({ label: "all", detail: "Notify everyone here", text: "@**all** " });
    } else if (sigil === "#") {
      items = [...state.subs.values()]
        .filter((s) => s.name.toLowerCase().includes(q))
        .slice(0, 8)
        .map((s) => ({ label: `#${s.name}`, detail: s.description || "", text: `#**${s.name}** ` }));
      const channelTopic = q.match(/^(.+)>(.*)$/);
      if (channelTopic) {
        const stream = [...state.subs.values()].find((s) => s.name.toLowerCase() === channelTopic[1]);
        if (stream) {
          items = [...(state.topics.get(stream.stream_id) || new Map()).values()]
            .filter((t) => t.name.toLowerCase().includes(channelTopic[2]))
            .slice(0, 8)
            .map((t) => ({ label: `#${stream.name} › ${t.name}`, detail: "", text: `#**${stream.name}>${t.name}** ` }));
        }
      }
    } else if (sigil === ":" && q.length >= 2) {
      items = (await findEmoji(q, 8)).map((e) => ({ label: `:${e.name}:`, glyph: emoji(e.type, e.code, e.name), text: `:${e.name}: ` }));
    }
    this.showSuggestions(items, (item) => {
      box.value = box.value.slice(0, start) + item.text + box.value.slice(box.selectionStart);
      const at = start + item.text.length;
      box.setSelectionRange(at, at);
      box.focus();
      this.saveDraft();
    }, box);
  }

  completeRecipients() {
    const q = this.to.value.trim().toLowerCase();
    if (!q) {
      this.hideSuggestions();
      return;
    }
    const items = [...state.users.values()]
      .filter((u) => u.is_active && !this.recipients.includes(u.user_id) && (u.full_name.toLowerCase().includes(q) || (u.email || "").toLowerCase().includes(q)))
      .slice(0, 8)
      .map((u) => ({ label: u.full_name, detail: u.email, id: u.user_id }));
    this.showSuggestions(items, (item) => {
      this.recipients.push(item.id);
      this.to.value = "";
      this.renderPills();
      this.to.focus();
      this.target = { kind: "dm", key: dmKey(this.recipients) };
    }, this.to);
  }

  showSuggestions(items, choose, field) {
    this.choose = choose;
    this.suggestionItems = items;
    this.active = 0;
    if (items.length === 0) {
      this.hideSuggestions();
      return;
    }
    fill(this.suggestions, items.map((item, i) => h("li", {
      role: "option", id: `suggestion-${i}`, "aria-selected": String(i === 0),
      onmousedown: (event) => {
        event.preventDefault();
        this.hideSuggestions();
        choose(item);
      },
    }, item.glyph || null, h("span", { class: "label" }, item.label), item.detail ? h("span", { class: "detail" }, item.detail) : null)));
    this.suggestions.hidden = false;
    field.setAttribute("aria-controls", "compose-suggestions");
    field.setAttribute("aria-activedescendant", "suggestion-0");
    if (field === this.to) field.setAttribute("aria-expanded", "true");
  }

  hideSuggestions() {
    if (!this.suggestions) return;
    this.suggestions.hidden = true;
    this.suggestionItems = [];
    for (const field of [this.content, this.to]) field.removeAttribute("aria-activedescendant");
    this.to.setAttribute("aria-expanded", "false");
  }

  /** Arrow keys, Enter and Tab in the suggestions; whether the key was theirs. */
  suggestionKeys(event) {
    if (this.suggestions.hidden || !this.suggestionItems || this.suggestionItems.length === 0) {
      if (event.target === this.to && event.key === "Backspace" && !this.to.value && this.recipients.length > 0) {
        this.recipients.pop();
        this.renderPills();
      }
      return false;
    }
    const n = this.suggestionItems.length;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      this.active = (this.active + (event.key === "ArrowDown" ? 1 : n - 1)) % n;
      [...this.suggestions.children].forEach((li, i) => li.setAttribute("aria-selected", String(i === this.active)));
      event.target.setAttribute("aria-activedescendant", `suggestion-${this.active}`);
    } else if (event.key === "Enter" || event.key === "Tab") {
      const item = this.suggestionItems[this.active];
      this.hideSuggestions();
      this.choose(item);
    } else if (event.key === "Escape") {
      this.hideSuggestions();
    } else {
      return false;
    }
    event.preventDefault();
    event.stopPropagation();
    return true;
  }

  /** A label for the target, for screen readers and the closed box. */
  describe() {
    if (!this.target) return "";
    return this.target.kind === "channel" ? `#${channelName(this.target.streamId)} › ${this.target.topic}` : dmOthers(this.target.key).map(nameOf).join(", ");
  }
}

/** The page's one compose box. */
export const compose = new Compose();
