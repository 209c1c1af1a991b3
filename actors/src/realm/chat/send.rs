//! Sending messages (`POST /messages`), rendering Zulip's Markdown, the `message` event and the message object.
