"""The registry of the TCP protocols' stream decoders."""

from __future__ import annotations

import importlib
from typing import Any

from gamecodec._protocols import protocols
from gamecodec.capture._records import Flow, StreamDecoder

__all__ = ["STREAM_DECODERS", "stream_decoder"]

STREAM_DECODERS: dict[str, str] = {
    p.name: p.capture_decoder for p in protocols() if p.transport == "tcp"
}
"""Each TCP protocol's :class:`StreamDecoder`, as ``module:class`` (imported when first
needed), from the protocols' declarations."""


def stream_decoder(protocol: str, flow: Flow) -> StreamDecoder | str:
    """A new stream decoder of ``protocol`` for ``flow``, or why there is none."""
    target = STREAM_DECODERS.get(protocol)
    if target is None:
        return f"no stream decoder for {protocol}"
    module_name, _, class_name = target.partition(":")
    try:
        cls: Any = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as exc:
        return f"the {protocol} stream decoder is not available ({exc})"
    decoder: StreamDecoder = cls(flow)
    return decoder
