// Channels: browse every channel the user may see, subscribe and unsubscribe, create one.

import { get, post, del } from "./api.js";
import { h, fill, toast, announce } from "./dom.js";
import { state, listen } from "./store.js";
import { hashOf } from "./narrow.js";
import { dialog } from "./ui.js";

/** Subscribes the user to a channel by name. */
export async function subscribe(name) {
  await post("/users/me/subscriptions", { subscriptions: [{ name }] });
}

function createForm(done) {
  const name = h("input", { id: "new-channel-name", type: "text", required: true, maxlength: String(state.realm.max_stream_name_length || 60) });
  const description = h("input", { id: "new-channel-description", type: "text", maxlength: String(state.realm.max_stream_description_length || 1024) });
  const privacy = h("input", { id: "new-channel-private", type: "checkbox" });
  const form = h("form", { class: "stack" },
    h("h3", {}, "Create a channel"),
    h("label", { for: "new-channel-name" }, "Channel name"), name,
    h("label", { for: "new-channel-description" }, "Description"), description,
    h("label", { class: "check" }, privacy, " Private: only people added to it can see it"),
    h("button", { type: "submit", class: "primary" }, "Create channel"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const wanted = name.value.trim();
    if (!wanted) {
      toast("Give the channel a name.", "error");
      name.focus();
      return;
    }
    try {
      await post("/users/me/subscriptions", {
        subscriptions: [{ name: wanted, description: description.value }],
        invite_only: privacy.checked,
      });
      announce(`Channel ${wanted} created.`);
      done(wanted);
    } catch (error) {
      toast(`The channel was not created: ${error.message}`, "error");
    }
  });
  return form;
}

/** The dialog listing channels, with the form that creates one. */
export function browseChannels() {
  const list = h("ul", { class: "channel-list", "aria-label": "All channels" });
  const filter = h("input", { type: "search", id: "channel-filter", placeholder: "Filter channels" });
  const render = () => {
    const q = filter.value.trim().toLowerCase();
    const streams = [...state.streams.values()].filter((s) => !s.is_archived && s.name.toLowerCase().includes(q)).sort((a, b) => a.name.localeCompare(b.name));
    fill(list, streams.map((stream) => {
      const subscribed = state.subs.has(stream.stream_id);
      const action = h("button", { type: "button", class: subscribed ? "" : "primary" }, subscribed ? "Unsubscribe" : "Subscribe");
      action.addEventListener("click", async () => {
        action.disabled = true;
        try {
          if (subscribed) await del("/users/me/subscriptions", { subscriptions: [stream.name] });
          else await subscribe(stream.name);
        } catch (error) {
          toast(error.message, "error");
          action.disabled = false;
        }
      });
      return h("li", {},
        h("div", {}, h("a", { href: hashOf({ view: "channel", streamId: stream.stream_id }), onclick: () => box.close() }, `${stream.invite_only ? "🔒 " : "#"}${stream.name}`),
          stream.description ? h("p", { class: "hint" }, stream.description) : null),
        action);
    }));
  };
  filter.addEventListener("input", render);
  const stop = listen((what) => {
    if (what === "subscription" || what === "stream") render();
  });
  const content = h("div", { class: "channels-dialog" },
    h("label", { for: "channel-filter", class: "visually-hidden" }, "Filter channels"), filter, list,
    createForm(async (name) => {
      box.close();
      // Its id from the server: the event that adds it may not have come yet.
      try {
        const { stream_id: streamId } = await get("/get_stream_id", { stream: name });
        location.hash = hashOf({ view: "channel", streamId });
      } catch (error) {
        toast(error.message, "error");
      }
    }));
  const box = dialog("Channels", content, { onClose: stop });
  render();
  filter.focus();
}
