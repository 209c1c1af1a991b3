//! Changing messages: reactions, typing notifications and deletion (and later edits).
