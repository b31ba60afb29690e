"""contextwarden: keep an agent's conversation valid and inside the context window."""
