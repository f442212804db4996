"""The web inspector served by the sidecar at ``/ui`` (server-rendered pages, no CDN, no build step)."""

from __future__ import annotations

from bridge.inspector.pages import RecentRecalls, mount_inspector

__all__ = ["RecentRecalls", "mount_inspector"]
