"""A drop-in for Archipelago's own ``NetUtils.encode`` / ``NetUtils.decode``.

>>> from gamecodec.archipelago import compat, NetworkItem
>>> compat.encode([{"cmd": "ReceivedItems", "index": 0, "items": [NetworkItem(7, 9, 1)]}])
'[{"cmd":"ReceivedItems","index":0,"items":[{"item":7,"location":9,"player":1,"flags":0,"class":"NetworkItem"}]}]'
>>> compat.decode('[{"cmd":"Sync"}]')
[{'cmd': 'Sync'}]

``decode(data, *, max_depth=16)`` accepts ``str`` or UTF-8 ``bytes``; ``max_depth``
is the reference's bracket count limit (at most ``max_depth - 1`` nested containers).
``encode(obj, *, default=None)`` and ``encode_bytes`` take an optional ``default``
(as in ``json``): called for a value the encoder does not know, its result is
written instead by the same rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gamecodec import _accel
from gamecodec.archipelago._models import DEFAULT_MAX_DEPTH

__all__ = ["DEFAULT_MAX_DEPTH", "decode", "encode", "encode_bytes"]

if TYPE_CHECKING:  # both twins have these signatures (_compat_c.pyi)
    from gamecodec.archipelago._compat_c import decode, encode, encode_bytes
else:
    _codec = _accel.load("gamecodec.archipelago", "_compat", "archipelago")
    encode = _codec.encode
    encode_bytes = _codec.encode_bytes
    decode = _codec.decode
