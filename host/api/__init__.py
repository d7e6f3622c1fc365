"""The table's local HTTP API: `create_app(daemon, token)` (FastAPI). See docs/api.md."""

from cardshoe.api.app import create_app

__all__ = ["create_app"]
