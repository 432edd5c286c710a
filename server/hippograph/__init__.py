"""hippograph: long-term graph memory for AI assistants over MCP."""

__version__ = "0.1.0"
