"""The ``message_template.msg`` format: parser, :class:`Template`, built-in schema.

The format (version 2.0), as the LL viewer's ``llmessagetemplateparser.cpp``
reads it::

    version 2.0
    {
        Name  High|Medium|Low|Fixed  Number  Trusted|NotTrusted  Zerocoded|Unencoded
              [Deprecated|UDPDeprecated|UDPBlackListed|NotDeprecated]
        {   BlockName  Single | Multiple N | Variable
            {   FieldName  Type [Size]  }   ...
        }   ...
    }

``//`` starts a comment. Errors are :class:`TemplateError` naming the line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from gamecodec._public import public_dir
from gamecodec.lludp._errors import TemplateError
from gamecodec.lludp._models import (
    FIELD_SIZES,
    Block,
    BlockKind,
    BlockSpec,
    Deprecation,
    FieldSpec,
    FieldType,
    Frequency,
    MessageSpec,
    block_class,
)

__all__ = [
    "BUILTIN_TEMPLATES",
    "Template",
    "TemplateError",
    "builtin_template",
    "default_template",
    "load_template",
    "opensim_template",
    "parse_template",
    "resolve_template",
]


_TYPES: dict[str, FieldType] = {
    "U8": FieldType.U8,
    "U16": FieldType.U16,
    "U32": FieldType.U32,
    "U64": FieldType.U64,
    "S8": FieldType.S8,
    "S16": FieldType.S16,
    "S32": FieldType.S32,
    "S64": FieldType.S64,
    "F32": FieldType.F32,
    "F64": FieldType.F64,
    "LLVector3": FieldType.LLVECTOR3,
    "LLVector3d": FieldType.LLVECTOR3D,
    "LLVector4": FieldType.LLVECTOR4,
    "LLQuaternion": FieldType.LLQUATERNION,
    "LLUUID": FieldType.LLUUID,
    "BOOL": FieldType.BOOL,
    "IPADDR": FieldType.IPADDR,
    "IPPORT": FieldType.IPPORT,
    "Fixed": FieldType.FIXED,
    "Variable": FieldType.VARIABLE,
}
_FREQUENCIES = {
    "High": Frequency.HIGH,
    "Medium": Frequency.MEDIUM,
    "Low": Frequency.LOW,
    "Fixed": Frequency.FIXED,
}
_TRUST = {"Trusted": True, "NotTrusted": False}
_ENCODING = {"Zerocoded": True, "Unencoded": False}
_DEPRECATION = {
    "NotDeprecated": Deprecation.NONE,
    "Deprecated": Deprecation.DEPRECATED,
    "UDPDeprecated": Deprecation.UDP_DEPRECATED,
    "UDPBlackListed": Deprecation.UDP_BLACKLISTED,
}
_NUMBER_RANGES = {
    Frequency.HIGH: (1, 0xFE),
    Frequency.MEDIUM: (1, 0xFE),
    Frequency.LOW: (1, 0xFFFF),
    Frequency.FIXED: (0xFFFFFF00, 0xFFFFFFFF),
}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_TOKEN = re.compile(r"//[^\n]*|[{}]|[^\s{}]+|\n")

Plan = tuple[Any, ...]
"""What the codecs walk: (spec, name, frequency, number, blocks); see :meth:`Template.plan`."""


def _tokens(text: str) -> Iterator[tuple[str, int]]:
    line = 1
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token == "\n":
            line += 1
        elif not token.startswith("//"):
            yield token, line


class _Reader:
    def __init__(self, text: str) -> None:
        self.tokens = list(_tokens(text))
        self.pos = 0

    def line(self) -> int:
        if self.pos < len(self.tokens):
            return self.tokens[self.pos][1]
        return self.tokens[-1][1] if self.tokens else 1

    def peek(self) -> str | None:
        return self.tokens[self.pos][0] if self.pos < len(self.tokens) else None

    def take(self, what: str) -> str:
        if self.pos >= len(self.tokens):
            raise TemplateError(f"unexpected end of template, expected {what}", self.line())
        token = self.tokens[self.pos][0]
        self.pos += 1
        return token

    def expect(self, token: str) -> None:
        line = self.line()
        got = self.take(repr(token))
        if got != token:
            raise TemplateError(f"expected {token!r}, got {got!r}", line)

    def name(self, what: str) -> str:
        line = self.line()
        token = self.take(what)
        if not _NAME.match(token):
            raise TemplateError(f"bad {what} {token!r}", line)
        return token

    def number(self, what: str) -> int:
        line = self.line()
        token = self.take(what)
        try:
            return int(token, 0)
        except ValueError:
            raise TemplateError(f"bad {what} {token!r}", line) from None


def _field(r: _Reader) -> FieldSpec:
    r.expect("{")
    name = r.name("field name")
    line = r.line()
    type_name = r.take("field type")
    ftype = _TYPES.get(type_name)
    if ftype is None:
        raise TemplateError(f"unknown field type {type_name!r}", line)
    if ftype == FieldType.FIXED:
        line = r.line()
        size = r.number("Fixed size")
        if not 1 <= size <= 0xFFFF:
            raise TemplateError(f"Fixed size {size} out of range 1..65535", line)
    elif ftype == FieldType.VARIABLE:
        line = r.line()
        size = r.number("Variable size")
        if size not in (1, 2, 4):
            raise TemplateError(f"Variable size must be 1, 2 or 4, not {size}", line)
    else:
        size = FIELD_SIZES[ftype]
    r.expect("}")
    return FieldSpec(name, ftype, size)


def _block(r: _Reader) -> BlockSpec:
    r.expect("{")
    name = r.name("block name")
    line = r.line()
    kind_name = r.take("block kind")
    if kind_name == "Single":
        kind, count = BlockKind.SINGLE, 1
    elif kind_name == "Multiple":
        kind = BlockKind.MULTIPLE
        line = r.line()
        count = r.number("Multiple count")
        if not 1 <= count <= 255:
            raise TemplateError(f"Multiple count {count} out of range 1..255", line)
    elif kind_name == "Variable":
        kind, count = BlockKind.VARIABLE, 0
    else:
        raise TemplateError(f"unknown block kind {kind_name!r}", line)
    fields: list[FieldSpec] = []
    seen: set[str] = set()
    while r.peek() == "{":
        line = r.line()
        field = _field(r)
        if field.name in seen:
            raise TemplateError(f"duplicate field {field.name} in block {name}", line)
        seen.add(field.name)
        fields.append(field)
    r.expect("}")
    if not fields:
        raise TemplateError(f"block {name} has no fields", line)
    return BlockSpec(name, kind, count, tuple(fields))


def _message(r: _Reader) -> MessageSpec:
    r.expect("{")
    name = r.name("message name")
    line = r.line()
    freq_name = r.take("frequency")
    frequency = _FREQUENCIES.get(freq_name)
    if frequency is None:
        raise TemplateError(f"unknown frequency {freq_name!r}", line)
    line = r.line()
    number = r.number("message number")
    low, high = _NUMBER_RANGES[frequency]
    if not low <= number <= high:
        raise TemplateError(f"{freq_name} message number {number:#x} out of range", line)
    line = r.line()
    trust = r.take("Trusted or NotTrusted")
    if trust not in _TRUST:
        raise TemplateError(f"expected Trusted or NotTrusted, got {trust!r}", line)
    line = r.line()
    encoding = r.take("Zerocoded or Unencoded")
    if encoding not in _ENCODING:
        raise TemplateError(f"expected Zerocoded or Unencoded, got {encoding!r}", line)
    deprecation = Deprecation.NONE
    token = r.peek()
    if token is not None and token in _DEPRECATION:
        deprecation = _DEPRECATION[r.take("deprecation")]
    blocks: list[BlockSpec] = []
    seen: set[str] = set()
    while r.peek() == "{":
        line = r.line()
        block = _block(r)
        if block.name in seen:
            raise TemplateError(f"duplicate block {block.name} in message {name}", line)
        seen.add(block.name)
        blocks.append(block)
    r.expect("}")
    return MessageSpec(
        name, frequency, number, _TRUST[trust], _ENCODING[encoding], deprecation, tuple(blocks)
    )


def parse_template(text: str) -> Template:
    """Parse template text; raises :class:`TemplateError` with the line number."""
    r = _Reader(text)
    version = "2.0"
    if r.peek() == "version":
        r.take("version")
        line = r.line()
        version = r.take("version number")
        if not re.fullmatch(r"\d+(\.\d+)?", version):
            raise TemplateError(f"bad version {version!r}", line)
    messages: list[MessageSpec] = []
    names: dict[str, int] = {}
    codes: dict[int, str] = {}
    while r.peek() is not None:
        line = r.line()
        spec = _message(r)
        if spec.name in names:
            raise TemplateError(
                f"duplicate message {spec.name} (first at line {names[spec.name]})", line
            )
        code = spec.code
        if code in codes:
            raise TemplateError(f"{spec.name} reuses the number of {codes[code]}", line)
        names[spec.name] = line
        codes[code] = spec.name
        messages.append(spec)
    return Template(messages, version=version)


def load_template(source: str | os.PathLike[str]) -> Template:
    """A :class:`Template` from a path, or from template text (anything containing ``{``)."""
    if isinstance(source, str) and "{" in source:
        return parse_template(source)
    return parse_template(Path(source).read_text(encoding="utf-8", errors="replace"))


def _check_fields(spec: MessageSpec) -> None:
    """Refuse field specs the parser never makes (the codecs trust the sizes:
    a UUID field of 2 bytes would read past its field)."""
    for block in spec.blocks:
        for field in block.fields:
            where = f"{spec.name}.{block.name}.{field.name}"
            try:
                ftype = FieldType(field.type)
            except ValueError:
                raise TemplateError(f"{where}: unknown field type {field.type!r}") from None
            size = field.size
            if type(size) is not int:
                raise TemplateError(f"{where}: size must be an int, not {size!r}")
            if ftype == FieldType.FIXED:
                ok = 1 <= size <= 0xFFFF
            elif ftype == FieldType.VARIABLE:
                ok = size in (1, 2, 4)
            else:
                ok = size == FIELD_SIZES[ftype]
            if not ok:
                raise TemplateError(f"{where}: size {size} is not a size of {ftype.name}")


class Template:
    """A set of message specs, looked up by name or wire code, with codec plans.
    Field specs are checked as the parser makes them (:class:`TemplateError`
    otherwise)."""

    def __init__(
        self, messages: Iterable[MessageSpec], *, version: str = "2.0", name: str | None = None
    ) -> None:
        self.version = version
        self.name = name
        self.messages: tuple[MessageSpec, ...] = tuple(messages)
        for spec in self.messages:
            _check_fields(spec)
        self.by_name: dict[str, MessageSpec] = {m.name: m for m in self.messages}
        self.by_code: dict[int, MessageSpec] = {m.code: m for m in self.messages}
        self._classes: dict[str, dict[str, type[Block]]] = {}
        # code -> plan, or False for a code the template does not know (filled lazily)
        self._plans: dict[int, Plan | Literal[False]] = {}
        self._name_plans: dict[str, Plan] = {}

    def __len__(self) -> int:
        return len(self.messages)

    def __iter__(self) -> Iterator[MessageSpec]:
        return iter(self.messages)

    def __contains__(self, name: object) -> bool:
        return name in self.by_name

    def __getitem__(self, name: str) -> MessageSpec:
        return self.by_name[name]

    def __repr__(self) -> str:
        named = "" if self.name is None else f"{self.name}, "
        return f"<Template {named}version {self.version}, {len(self.messages)} messages>"

    def show(self) -> str:
        """Every message, one a line: name, number, trust and encoding, blocks."""
        from gamecodec.lludp._show import describe_template

        return describe_template(self)

    def block_classes(self, name: str) -> dict[str, type[Block]]:
        """The Block subclass of every block of message ``name``."""
        classes = self._classes.get(name)
        if classes is None:
            spec = self.by_name[name]
            classes = {b.name: block_class(b) for b in spec.blocks}
            self._classes[name] = classes
        return classes

    def plan(self, code: int) -> Plan | Literal[False]:
        """The codec plan for a wire code (False if unknown); cached.

        A plan is ``(spec, name, frequency, number, blocks, zerocoded)`` with
        ``blocks`` a tuple of ``(name, kind, count, cls, layout)``; ``layout``
        holds 3 bytes per field: type code, size low byte, size high byte.
        """
        plan = self._plans.get(code)
        if plan is None:
            spec = self.by_code.get(code)
            plan = False if spec is None else self._make_plan(spec)
            # setdefault: a plan, once cached, is never replaced (the compiled
            # codec reads these dicts' values as borrowed references)
            plan = self._plans.setdefault(code, plan)
        return plan

    def plan_by_name(self, name: str) -> Plan:
        """The codec plan of message ``name`` (``KeyError`` if unknown); cached."""
        plan = self._name_plans.get(name)
        if plan is None:
            found = self.plan(self.by_name[name].code)
            assert not isinstance(found, bool)
            plan = self._name_plans.setdefault(name, found)
        return plan

    def _make_plan(self, spec: MessageSpec) -> Plan:
        classes = self.block_classes(spec.name)
        blocks = tuple(
            (
                b.name,
                int(b.kind),
                b.count,
                classes[b.name],
                bytes(byte for f in b.fields for byte in (int(f.type), f.size & 0xFF, f.size >> 8)),
            )
            for b in spec.blocks
        )
        return (spec, spec.name, spec.frequency, spec.number, blocks, spec.zerocoded)


@lru_cache(maxsize=1)
def default_template() -> Template:
    """The built-in Second Life template (483 messages; see ``_schema_sl``),
    ``template="secondlife"``."""
    from gamecodec.lludp._schema_sl import MESSAGES, VERSION

    specs = [
        MessageSpec(
            name,
            Frequency(freq),
            number,
            trusted,
            zerocoded,
            Deprecation(deprecation),
            tuple(
                BlockSpec(
                    bname,
                    BlockKind(kind),
                    count,
                    tuple(
                        FieldSpec(fname, FieldType(ftype), size) for fname, ftype, size in fields
                    ),
                )
                for bname, kind, count, fields in blocks
            ),
        )
        for name, freq, number, trusted, zerocoded, deprecation, blocks in MESSAGES
    ]
    return Template(specs, version=VERSION, name="secondlife")


@lru_cache(maxsize=1)
def opensim_template() -> Template:
    """The built-in OpenSimulator variant, ``template="opensim"``: the Second
    Life template with the layouts OpenSimulator sends.

    ImprovedInstantMessage without MetaData (OpenSim writes EstateBlock and
    stops), AvatarAppearance without AttachmentBlock, AlertMessage without
    AgentInfo, RegionInfo without RegionInfo5 and CombatSettings, and
    MapBlockReply with OpenSim's ``Size`` block (SizeX, SizeY: U16) after
    Data. Every other message is the Second Life one. A Second Life
    viewer's ImprovedInstantMessage (with its MetaData count) has one byte
    this template does not expect: decode viewers' traffic with the Second
    Life template.
    """
    from gamecodec.lludp._schema_opensim import ADDED, DROPPED

    base = default_template()
    specs = []
    for spec in base.messages:
        dropped = DROPPED.get(spec.name, ())
        added = tuple(
            BlockSpec(
                name,
                BlockKind(kind),
                count,
                tuple(FieldSpec(fname, FieldType(ftype), size) for fname, ftype, size in fields),
            )
            for name, kind, count, fields in ADDED.get(spec.name, ())
        )
        kept = tuple(b for b in spec.blocks if b.name not in dropped)
        specs.append(spec._replace(blocks=kept + added) if dropped or added else spec)
    return Template(specs, version=base.version, name="opensim")


BUILTIN_TEMPLATES = ("secondlife", "opensim")
"""The names :func:`builtin_template` (and every ``template=``) takes."""


def builtin_template(name: str) -> Template:
    """A built-in template by name: ``"secondlife"`` (:func:`default_template`)
    or ``"opensim"`` (:func:`opensim_template`)."""
    if name == "secondlife":
        return default_template()
    if name == "opensim":
        return opensim_template()
    raise TemplateError(f"no built-in template {name!r} (there are {', '.join(BUILTIN_TEMPLATES)})")


def resolve_template(template: Template | str | None) -> Template:
    """What a ``template=`` argument names: a :class:`Template` as it is, a
    built-in one by name, the Second Life template for ``None``."""
    if template is None:
        return default_template()
    if isinstance(template, str):
        return builtin_template(template)
    return template


def schema_literal(template: Template) -> list[tuple[Any, ...]]:
    """``template`` as the plain tuples that ``_schema_sl`` holds (used by the generator)."""
    return [
        (
            m.name,
            int(m.frequency),
            m.number,
            m.trusted,
            m.zerocoded,
            int(m.deprecation),
            tuple(
                (
                    b.name,
                    int(b.kind),
                    b.count,
                    tuple((f.name, int(f.type), f.size) for f in b.fields),
                )
                for b in m.blocks
            ),
        )
        for m in template.messages
    ]


__dir__ = public_dir(__name__)
