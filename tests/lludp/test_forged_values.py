"""Values and templates the parser and the decoder never make, built by hand:
the compiled twin trusted them (found in review) and must now behave as the pure one."""

from __future__ import annotations

import uuid
from types import ModuleType
from typing import Any

import pytest

from gamecodec.lludp import (
    BlockKind,
    BlockSpec,
    Deprecation,
    FieldSpec,
    FieldType,
    Frequency,
    MessageSpec,
    Template,
    build,
)
from tests.lludp.conftest import unchecked


def forged_uuid(value: Any) -> uuid.UUID:
    """A UUID whose ``int`` slot holds ``value`` (object.__setattr__ allows it)."""
    u = object.__new__(uuid.UUID)
    object.__setattr__(u, "int", value)
    object.__setattr__(u, "is_safe", uuid.SafeUUID.unknown)
    return u


def one_field(ftype: Any, size: Any) -> Template:
    block = BlockSpec("B", BlockKind.SINGLE, 1, (FieldSpec("a", ftype, size),))
    return Template([MessageSpec("M", Frequency.HIGH, 1, False, False, Deprecation.NONE, (block,))])


def outcome(codec: ModuleType, message: Any, template: Template) -> Any:
    try:
        return codec.encode(message, template)
    except Exception as exc:  # compared between the twins: type and text
        return (type(exc).__name__, str(exc))


@pytest.mark.parametrize(
    "value", ["abc", None, [1, 2, 3], 2.5, -1, 2**128, 2**200, True, 2**128 - 1, 0, 2**64]
)
def test_a_uuid_with_a_forged_int_encodes_as_the_pure_twin_does(
    py_codec: ModuleType, c_codec: ModuleType, value: Any
) -> None:
    """The compiled writer read a non-int `int` slot as an int's digits (an
    out-of-bounds read that sent garbage); the pure twin raises."""
    template = one_field(FieldType.LLUUID, 16)
    message = unchecked("M", template=template, B={"a": forged_uuid(value)})
    assert outcome(c_codec, message, template) == outcome(py_codec, message, template)


@pytest.mark.parametrize(
    ("ftype", "size"),
    [
        (FieldType.LLUUID, 2),
        (FieldType.U64, 1),
        (FieldType.U32, 8),
        (FieldType.LLVECTOR3D, 1),
        (FieldType.FIXED, 0),
        (FieldType.VARIABLE, 3),
        (99, 4),
        (FieldType.U8, "1"),
    ],
)
def test_a_hand_built_template_with_a_wrong_field_size_is_refused(ftype: Any, size: Any) -> None:
    """A UUID field of 2 bytes made decode read 14 bytes past the field (and past
    the packet) on the compiled twin."""
    with pytest.raises(ValueError, match=r"M\.B\.a:"):
        one_field(ftype, size)


def test_hand_built_templates_with_right_sizes_still_work(codec: ModuleType) -> None:
    template = one_field(FieldType.U32, 4)
    message = build("M", template=template, B={"a": 7})
    assert codec.decode(codec.encode(message, template), template).B[0].a == 7
    assert one_field(int(FieldType.FIXED), 3).by_name["M"].blocks[0].fields[0].size == 3
