"""Helpers shared by the asyncio adapter tests of the UDP sessions."""

from __future__ import annotations

import asyncio
from typing import Any


async def all_acked(session: Any, tries: int = 100, pause: float = 0.02) -> bool:
    """Wait (up to ``tries`` pauses) until ``session.unacked`` is 0; return whether it is."""
    for _ in range(tries):
        if session.unacked == 0:
            return True
        await asyncio.sleep(pause)
    return bool(session.unacked == 0)
