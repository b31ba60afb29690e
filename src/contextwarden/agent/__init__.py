"""The agent: its loop and its workspace-bounded tools, shared by ``demo`` (a scripted agent)
and ``chat`` (a model through the real SDKs)."""
