"""The web UI's pages, served by the API app: runs, items, compare, traces, the sign-in page."""
