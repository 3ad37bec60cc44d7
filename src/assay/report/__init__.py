"""Looking at results: the web UI's pages and their SVG charts."""
