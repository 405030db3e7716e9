"""Readable views of LLUDP templates and messages (``Message.show()``, ``gamecodec fields``).

Plain text, one item a line, at most 100 columns for the template views:
what a reader needs to know the fields without the template's source.
"""

from __future__ import annotations

import uuid
from enum import IntFlag
from typing import Any

__all__ = ["describe_message", "describe_template", "show_message"]

# It reads the specs and messages by their attributes and their enums' names,
# importing nothing of lludp: _models and template call it, with no import cycle.

WIDTH = 100
"""The widest line of a template view."""
_BYTES_SHOWN = 32
"""The bytes of a non-text field shown before ``...``."""


_TEMPLATE_NAMES = {
    "LLVECTOR3": "LLVector3",
    "LLVECTOR3D": "LLVector3d",
    "LLVECTOR4": "LLVector4",
    "LLQUATERNION": "LLQuaternion",
}
"""The template's spelling of the types whose enum name differs from it."""


def _number(spec: Any) -> str:
    if spec.frequency.name == "FIXED":
        return f"Fixed 0x{spec.number:08X}"
    return f"{spec.frequency.name.capitalize()} {spec.number}"


def _kind(block: Any) -> str:
    if block.kind.name == "MULTIPLE":
        return f"Multiple({block.count})"
    return str(block.kind.name).capitalize()


def _field_type(field: Any) -> tuple[str, str]:
    """The field's template type and its size on the wire (a FieldSpec's ``size``
    is N for Fixed N, the length prefix's for Variable, else the wire size)."""
    kind, size = field.type.name, field.size
    if kind == "FIXED":
        return f"Fixed {size}", f"{size} bytes"
    if kind == "VARIABLE":
        return f"Variable {size}", f"{size}-byte length, then the data"
    return _TEMPLATE_NAMES.get(kind, kind), f"{size} byte" + ("" if size == 1 else "s")


def _marks(spec: Any) -> str:
    marks = ["Trusted" if spec.trusted else "NotTrusted"]
    marks.append("Zerocoded" if spec.zerocoded else "Unencoded")
    if spec.deprecation:
        marks.append(spec.deprecation.name.title().replace("_", ""))
    return " ".join(marks)


def describe_message(spec: Any) -> str:
    """A :class:`MessageSpec`'s blocks (kind) and fields (type, size), one a line."""
    lines = [f"{spec.name}  {_number(spec)}  {_marks(spec)}"]
    width = max((len(f.name) for b in spec.blocks for f in b.fields), default=0)
    for block in spec.blocks:
        lines.append(f"  {block.name}  {_kind(block)}")
        for field in block.fields:
            kind, size = _field_type(field)
            lines.append(f"    {field.name:<{width}}  {kind:<12}  {size}"[:WIDTH].rstrip())
    return "\n".join(lines)


def describe_template(template: Any) -> str:
    """Every message of ``template``: name, number, trust and encoding, blocks."""
    width = max((len(spec.name) for spec in template), default=0)
    lines = [repr(template)]
    for spec in template:
        blocks = ", ".join(b.name for b in spec.blocks) or "-"
        line = f"{spec.name:<{width}}  {_number(spec):<16}  {_marks(spec):<20}  {blocks}"
        lines.append(line if len(line) <= WIDTH else line[: WIDTH - 3] + "...")
    return "\n".join(lines)


def _text(raw: bytes) -> str | None:
    """``raw`` as text when it is UTF-8 text as LL writes it (one NUL at the end, or none)."""
    body = raw[:-1] if raw.endswith(b"\x00") else raw
    if b"\x00" in body:
        return None
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if all(c.isprintable() or c in "\n\r\t" for c in text) else None


def _value(value: Any) -> str:
    if isinstance(value, bytes):
        text = _text(value) if value else ""
        if text is not None:
            return repr(text)
        shown = value[:_BYTES_SHOWN].hex(" ")
        more = " ..." if len(value) > _BYTES_SHOWN else ""
        return f"{len(value)} bytes: {shown}{more}"
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, tuple):
        return "(" + ", ".join(_value(v) for v in value) + ")"
    return repr(value)


def _flags(flags: int, flag_type: type[IntFlag]) -> str:
    names = [f.name for f in flag_type if f.name and flags & f]
    return f"0x{flags:02x}" + (f" {'|'.join(names)}" if names else "")


def show_message(message: Any, flag_type: type[IntFlag]) -> str:
    """A :class:`Message` indented (``flag_type`` names its flags): header, then
    each block instance and its fields' values (text fields as text where they
    decode as UTF-8)."""
    lines = [
        f"{message.name}  {message.frequency.name.capitalize()} {message.number}  "
        f"flags {_flags(message.flags, flag_type)}  sequence {message.sequence}"
    ]
    for label, present in (
        ("acks", message.acks),
        ("extra", message.extra),
        ("absent", message.absent),
        ("excess", message.excess),
        ("bool_bytes", message.bool_bytes),
    ):
        if present:
            lines.append(f"  {label}: {_value(present)}")
    if message.truncated:
        lines.append("  truncated: a field ran off the end (zero-filled)")
    if message.body is not None:
        lines.append(f"  body: {_value(message.body)}")
    for name, instances in message.blocks.items():
        if not instances:
            lines.append(f"  {name}: no instances")
        for index, block in enumerate(instances):
            lines.append(f"  {name}" + (f"[{index}]" if len(instances) > 1 else ""))
            width = max(map(len, block.keys()), default=0)
            lines.extend(f"    {key:<{width}}  {_value(value)}" for key, value in block.items())
    return "\n".join(lines)
