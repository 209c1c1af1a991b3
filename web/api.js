// API calls.
