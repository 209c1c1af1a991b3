// The event loop: `POST /json/register`, then `GET /json/events` long-polls, each event
// applied to the state in order. A lost queue (`BAD_EVENT_QUEUE_ID`) means registering
// again and starting from a fresh state; a lost network or a restarting server means
// trying again with backoff, saying so, and losing nothing: the queue keeps the events.

import { get, post } from "./api.js";
import { load, apply, notify, state } from "./store.js";

const CAPABILITIES = {
  notification_settings_null: true,
  bulk_message_deletion: true,
  user_avatar_url_field_optional: false,
  stream_typing_notifications: true,
  user_settings_object: true,
  linkifier_url_template: true,
  user_list_incomplete: false,
  include_deactivated_groups: false,
  archived_channels: true,
  empty_topic_name: true,
  simplified_presence_events: true,
};

const connection = { queueId: null, lastEventId: -1, status: "connecting" };

/** The queue's id (sent with messages, so that the sender's echo is recognized). */
export function queueId() {
  return connection.queueId;
}

function setStatus(status) {
  if (connection.status === status) return;
  connection.status = status;
  notify("connection", status);
}

/** The connection's state: "connecting", "connected" or "reconnecting". */
export function connectionStatus() {
  return connection.status;
}

async function register() {
  const data = await post("/register", {
    apply_markdown: true,
    client_gravatar: true,
    slim_presence: true,
    include_subscribers: false,
    client_capabilities: CAPABILITIES,
  });
  connection.queueId = data.queue_id;
  connection.lastEventId = data.last_event_id;
  load(data);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Registers (retrying until it works), then polls for as long as the page lives. */
export async function start() {
  let delay = 1000;
  for (;;) {
    try {
      await register();
      break;
    } catch (error) {
      if (error.status === 401) {
        location.assign("/login/");
        return;
      }
      setStatus("reconnecting");
      await sleep(delay);
      delay = Math.min(delay * 2, 30000);
    }
  }
  setStatus("connected");
  poll();
  presence();
}

async function poll() {
  let delay = 1000;
  for (;;) {
    const controller = new AbortController();
    // A long-poll is answered within a minute (an event or a heartbeat): past that the
    // connection is dead.
    const timer = setTimeout(() => controller.abort(), 100000);
    try {
      const data = await get("/events", { queue_id: connection.queueId, last_event_id: connection.lastEventId }, { signal: controller.signal });
      clearTimeout(timer);
      setStatus("connected");
      delay = 1000;
      for (const event of data.events) {
        connection.lastEventId = Math.max(connection.lastEventId, event.id);
        apply(event);
      }
    } catch (error) {
      clearTimeout(timer);
      if (error.status === 401) {
        location.assign("/login/");
        return;
      }
      setStatus("reconnecting");
      if (error.code === "BAD_EVENT_QUEUE_ID") {
        try {
          await register();
          setStatus("connected");
          delay = 1000;
          continue;
        } catch {
          // Tried again below.
        }
      }
      await sleep(delay + Math.random() * 500);
      delay = Math.min(delay * 2, 30000);
    }
  }
}

/** Tells the server the user is here (every minute while the page is in view), and takes the others' presence. */
async function presence() {
  for (;;) {
    try {
      const status = document.visibilityState === "visible" && document.hasFocus() ? "active" : "idle";
      const data = await post("/users/me/presence", { status, slim_presence: true });
      if (data.presences) {
        for (const [id, p] of Object.entries(data.presences)) state.presences.set(Number(id), p);
        notify("presence");
      }
    } catch {
      // The next ping tries again.
    }
    await sleep((state.realm.server_presence_ping_interval_seconds || 60) * 1000);
  }
}
