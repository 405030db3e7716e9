"""Fixtures and helpers of the LLUDP codec tests.

``codec`` is the twin under test (both, through ``impl``); ``py_codec`` and
``c_codec`` are both twins at once for the parity tests (a missing compiled
twin fails them); ``twin`` is the circuit twin under test, and ``numbered(i)``
a small zero-coded TestMessage carrying ``i`` for the circuit tests.
``template`` is the built-in Second Life template and ``all_types`` a small
template with one field of every :class:`FieldType`.
"""

from __future__ import annotations

import math
import struct
from types import ModuleType
from typing import Any

import pytest

from gamecodec.errors import DecodeError, EncodeError
from gamecodec.lludp import ZEROCODED, Message, Template, build, default_template, parse_template
from gamecodec.lludp._models import blocks_from_mapping
from tests.conftest import load_twin, twin_fixtures

ALL_TYPES_TEMPLATE = """
version 2.0
// one field of every type, plus Multiple and Variable blocks
{
    Everything Low 1000 NotTrusted Unencoded
    {
        Scalars Single
        {   AU8      U8      }
        {   AU16     U16     }
        {   AU32     U32     }
        {   AU64     U64     }
        {   AS8      S8      }
        {   AS16     S16     }
        {   AS32     S32     }
        {   AS64     S64     }
        {   AF32     F32     }
        {   AF64     F64     }
        {   ABool    BOOL    }
        {   AIP      IPADDR  }
        {   APort    IPPORT  }
        {   AID      LLUUID  }
    }
    {
        Vectors Multiple 2
        {   V3      LLVector3     }
        {   V3d     LLVector3d    }
        {   V4      LLVector4     }
        {   Q       LLQuaternion  }
    }
    {
        Raw Variable
        {   Fix4    Fixed 4       }
        {   Var1    Variable 1    }
        {   Var2    Variable 2    }
    }
}
{
    Tiny High 200 NotTrusted Zerocoded
    {
        One Single
        {   Value   U32   }
    }
    {
        Tail Variable
        {   Data    Variable 1   }
    }
}
"""


def unchecked(
    name: str,
    *,
    template: Template | None = None,
    flags: int = 0,
    sequence: int = 0,
    acks: Any = (),
    extra: bytes = b"",
    **blocks: Any,
) -> Message:
    """A message made as :func:`~gamecodec.lludp.build` makes it, without its
    value checks (the values are left for the encoder under test to refuse)."""
    tpl = default_template() if template is None else template
    spec = tpl[name]
    made = blocks_from_mapping(spec, tpl.block_classes(name), blocks)
    flags |= ZEROCODED if spec.zerocoded else 0
    return Message(
        name, made, flags, sequence, tuple(acks), bytes(extra), spec.frequency, spec.number
    )


@pytest.fixture(scope="module")
def twin(impl: str) -> ModuleType:
    """The circuit twin under test."""
    return load_twin("gamecodec.lludp", "_circuit", impl)


def numbered(i: int) -> Message:
    """TestMessage (Low 1, zero-coded) carrying ``i``."""
    return build(
        "TestMessage",
        TestBlock1={"Test1": i},
        NeighborBlock=[{"Test0": 0, "Test1": 0, "Test2": 0}] * 4,
    )


codec, py_codec, c_codec = twin_fixtures("gamecodec.lludp")


@pytest.fixture(scope="session")
def template() -> Template:
    """The built-in Second Life template (483 messages)."""
    return default_template()


@pytest.fixture(scope="session")
def all_types() -> Template:
    """A template whose message ``Everything`` has a field of every type."""
    return parse_template(ALL_TYPES_TEMPLATE)


# --- comparing results ------------------------------------------------------------------------


def canon(value: Any) -> Any:
    """A form of a decoded value where floats compare bit for bit (NaN == NaN, -0.0 != 0.0)."""
    if isinstance(value, float):
        return ("f", struct.pack("<d", value))
    if isinstance(value, DecodeError):
        return ("error", type(value).__name__, str(value), value.offset)
    if isinstance(value, Message):
        return (
            "Message",
            type(value).__name__,
            *(canon(v) for v in value[:1]),
            canon(value.blocks),
            *(canon(v) for v in value[2:]),
        )
    if isinstance(value, dict):
        return ("dict", tuple((k, canon(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(canon(v) for v in value))
    return (type(value).__name__, value)


def outcome(fn: Any, *args: Any) -> tuple[str, Any]:
    """A call's result in canonical form, or its exception's type, message and offset."""
    try:
        return ("ok", canon(fn(*args)))
    except DecodeError as exc:
        return ("decode", type(exc).__name__, str(exc), exc.offset)
    except EncodeError as exc:
        return ("encode", type(exc).__name__, str(exc))
    except (ValueError, TypeError) as exc:
        return ("other", type(exc).__name__, str(exc))


def same_float(a: float, b: float) -> bool:
    return struct.pack("<d", a) == struct.pack("<d", b) or (math.isnan(a) and math.isnan(b))
