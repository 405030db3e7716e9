"""Run a call on a fresh thread's stack, so that how deep a frame may nest does
not depend on how deep the caller's own stack already is.

The JSON parsers (``json``'s scanner, msgspec) count their nesting against the
interpreter's recursion limit, which the caller's frames use up too: called
from a deep recursion, they refuse a frame that the reference's depth check
accepts. The decoders check that depth first; a ``RecursionError`` after the
check passed is the caller's stack, and the call is made again on a new
thread (its stack starts empty). A call already on such a thread raises.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["on_fresh_stack", "retrying"]

T = TypeVar("T")

_state = threading.local()


def retrying() -> bool:
    """Whether this thread is already a fresh stack (a second retry would not help)."""
    return bool(getattr(_state, "fresh", False))


def on_fresh_stack(call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``call(*args, **kwargs)`` on a new thread; its result, or its exception raised here."""
    outcome: list[Any] = []

    def run() -> None:
        _state.fresh = True
        try:
            outcome.append((True, call(*args, **kwargs)))
        except BaseException as exc:  # handed to the caller below
            outcome.append((False, exc))

    thread = threading.Thread(target=run, name="gamecodec-fresh-stack")
    thread.start()
    thread.join()
    ok, value = outcome[0]
    if ok:
        result: T = value
        return result
    raise value
