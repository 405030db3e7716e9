"""``help(Circuit)`` shows the circuit's API, not Cython's (issue 35 item 6).

The compiled twin had Cython's generated pickling methods (``__reduce_cython__``,
``__setstate_cython__(self, __pyx_state)``) in its help, for an object neither
twin can pickle (the pure one holds a lock): the module's ``auto_pickle=False``
directive leaves them out. Only Cython's ``__pyx_vtable__`` capsule remains,
among the data attributes.
"""

from __future__ import annotations

import pickle
import pydoc
from types import ModuleType

import pytest


def test_help_names_no_cython_method(twin: ModuleType) -> None:
    text = pydoc.render_doc(twin.Circuit, renderer=pydoc.plaintext)
    assert "receive_datagram(self, data" in text
    shown = [line for line in text.splitlines() if "cython" in line or "__pyx_state" in line]
    assert shown == []


def test_neither_twin_pickles_a_circuit(twin: ModuleType) -> None:
    with pytest.raises(TypeError, match="pickle"):
        pickle.dumps(twin.Circuit())
