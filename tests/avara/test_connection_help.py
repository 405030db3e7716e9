"""``help(Connection)`` shows the connection's API, not Cython's (as ``help(Circuit)``).

The compiled twin listed Cython's generated pickling methods (``__reduce_cython__``,
``__setstate_cython__(self, __pyx_state)``) for an object neither twin can pickle
(both hold a lock): the module's ``auto_pickle=False`` directive leaves them out.
"""

from __future__ import annotations

import pickle
import pydoc

import pytest

from tests.conftest import load_twin


def test_help_names_no_cython_method(impl: str) -> None:
    twin = load_twin("gamecodec.avara", "_session", impl)
    text = pydoc.render_doc(twin.Connection, renderer=pydoc.plaintext)
    assert "receive_datagram(" in text
    shown = [line for line in text.splitlines() if "cython" in line or "__pyx_state" in line]
    assert shown == []


def test_neither_twin_pickles_a_connection(impl: str) -> None:
    twin = load_twin("gamecodec.avara", "_session", impl)
    with pytest.raises(TypeError, match="pickle"):
        pickle.dumps(twin.Connection(now=0.0))
