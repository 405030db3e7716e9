"""The ``message_template.msg`` parser and the built-in Second Life schema.

The parser is pure Python (it is not twinned), so these tests take no
``impl`` fixture. Every keyword, block kind and field type of the format is
exercised, every error names the line it is on, and the built-in schema is
checked against the published figures (spec §1.3, §1.5) and, when the real
template file is available, against a fresh parse of it.
"""

from __future__ import annotations

import os
import pickle
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gamecodec import lludp
from gamecodec.errors import GameCodecError
from gamecodec.lludp._models import (
    BlockKind,
    BlockSpec,
    Deprecation,
    FieldSpec,
    FieldType,
    Frequency,
    MessageSpec,
)
from gamecodec.lludp.template import (
    Template,
    TemplateError,
    default_template,
    load_template,
    parse_template,
)

HIPPOLYZER_TEMPLATE = (
    "/work/hippo-venv/lib/python3.12/site-packages/hippolyzer/lib/base/message/data/"
    "message_template.msg"
)

TYPE_NAMES = {
    FieldType.U8: "U8",
    FieldType.U16: "U16",
    FieldType.U32: "U32",
    FieldType.U64: "U64",
    FieldType.S8: "S8",
    FieldType.S16: "S16",
    FieldType.S32: "S32",
    FieldType.S64: "S64",
    FieldType.F32: "F32",
    FieldType.F64: "F64",
    FieldType.LLVECTOR3: "LLVector3",
    FieldType.LLVECTOR3D: "LLVector3d",
    FieldType.LLVECTOR4: "LLVector4",
    FieldType.LLQUATERNION: "LLQuaternion",
    FieldType.LLUUID: "LLUUID",
    FieldType.BOOL: "BOOL",
    FieldType.IPADDR: "IPADDR",
    FieldType.IPPORT: "IPPORT",
    FieldType.FIXED: "Fixed",
    FieldType.VARIABLE: "Variable",
}
FREQUENCY_NAMES = {
    Frequency.HIGH: "High",
    Frequency.MEDIUM: "Medium",
    Frequency.LOW: "Low",
    Frequency.FIXED: "Fixed",
}
DEPRECATION_NAMES = {
    Deprecation.NONE: "",
    Deprecation.DEPRECATED: "Deprecated",
    Deprecation.UDP_DEPRECATED: "UDPDeprecated",
    Deprecation.UDP_BLACKLISTED: "UDPBlackListed",
}


def render(template: Template) -> str:
    """Write ``template`` back out in the template file format (our own writer)."""
    lines = [f"version {template.version}", ""]
    for m in template.messages:
        number = f"0x{m.number:08X}" if m.frequency == Frequency.FIXED else str(m.number)
        head = [
            m.name,
            FREQUENCY_NAMES[m.frequency],
            number,
            "Trusted" if m.trusted else "NotTrusted",
            "Zerocoded" if m.zerocoded else "Unencoded",
        ]
        if m.deprecation != Deprecation.NONE:
            head.append(DEPRECATION_NAMES[m.deprecation])
        lines += ["// message " + m.name, "{", "\t" + " ".join(head)]
        for b in m.blocks:
            kind = {BlockKind.SINGLE: "Single", BlockKind.VARIABLE: "Variable"}.get(
                b.kind, f"Multiple {b.count}"
            )
            lines += ["\t{", f"\t\t{b.name}\t{kind}"]
            for f in b.fields:
                size = f" {f.size}" if f.type in (FieldType.FIXED, FieldType.VARIABLE) else ""
                lines.append(f"\t\t{{\t{f.name}\t{TYPE_NAMES[f.type]}{size}\t}}")
            lines.append("\t}")
        lines += ["}", ""]
    return "\n".join(lines)


def message_text(head: str, body: str = "") -> str:
    return f"{{\n\t{head}\n{body}}}\n"


def one_message(head: str, body: str = "") -> str:
    return "version 2.0\n" + message_text(head, body)


def error_line(text: str) -> tuple[int, str]:
    with pytest.raises(TemplateError) as info:
        parse_template(text)
    assert isinstance(info.value, ValueError)
    assert str(info.value).endswith(f"(line {info.value.line})")
    return info.value.line, str(info.value)


# --- keywords ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "number_text", "frequency", "number", "code"),
    [
        ("High", "4", Frequency.HIGH, 4, 4),
        ("High", "0xFE", Frequency.HIGH, 0xFE, 0xFE),
        ("Medium", "17", Frequency.MEDIUM, 17, 0xFF11),
        ("Low", "1", Frequency.LOW, 1, 0xFFFF0001),
        ("Low", "65535", Frequency.LOW, 0xFFFF, 0xFFFFFFFF),
        ("Fixed", "0xFFFFFFFB", Frequency.FIXED, 0xFFFFFFFB, 0xFFFFFFFB),
        ("Fixed", "4294967293", Frequency.FIXED, 0xFFFFFFFD, 0xFFFFFFFD),
    ],
)
def test_frequencies(
    word: str, number_text: str, frequency: Frequency, number: int, code: int
) -> None:
    t = parse_template(one_message(f"Msg {word} {number_text} NotTrusted Unencoded"))
    spec = t["Msg"]
    assert (spec.frequency, spec.number, spec.code) == (frequency, number, code)
    assert t.by_code[code] is spec


@pytest.mark.parametrize(
    ("trust", "encoding", "deprecation_word", "trusted", "zerocoded", "deprecation"),
    [
        ("Trusted", "Zerocoded", "", True, True, Deprecation.NONE),
        ("NotTrusted", "Unencoded", "NotDeprecated", False, False, Deprecation.NONE),
        ("Trusted", "Unencoded", "Deprecated", True, False, Deprecation.DEPRECATED),
        ("NotTrusted", "Zerocoded", "UDPDeprecated", False, True, Deprecation.UDP_DEPRECATED),
        ("NotTrusted", "Unencoded", "UDPBlackListed", False, False, Deprecation.UDP_BLACKLISTED),
    ],
)
def test_trust_encoding_deprecation(
    trust: str,
    encoding: str,
    deprecation_word: str,
    trusted: bool,
    zerocoded: bool,
    deprecation: Deprecation,
) -> None:
    head = f"Msg Low 9 {trust} {encoding} {deprecation_word}".strip()
    spec = parse_template(one_message(head))["Msg"]
    assert (spec.trusted, spec.zerocoded, spec.deprecation) == (trusted, zerocoded, deprecation)


def test_block_kinds() -> None:
    body = (
        "\t{ One Single { A U8 } }\n"
        "\t{ Four Multiple 4 { B U16 } { C U32 } }\n"
        "\t{ Max Multiple 255 { D S8 } }\n"
        "\t{ Many Variable { E LLUUID } }\n"
    )
    spec = parse_template(one_message("Msg Medium 3 NotTrusted Zerocoded", body))["Msg"]
    assert [(b.name, b.kind, b.count) for b in spec.blocks] == [
        ("One", BlockKind.SINGLE, 1),
        ("Four", BlockKind.MULTIPLE, 4),
        ("Max", BlockKind.MULTIPLE, 255),
        ("Many", BlockKind.VARIABLE, 0),
    ]
    assert spec.blocks[1].fields == (
        FieldSpec("B", FieldType.U16, 2),
        FieldSpec("C", FieldType.U32, 4),
    )


EVERY_TYPE = [
    ("U8", FieldType.U8, 1),
    ("U16", FieldType.U16, 2),
    ("U32", FieldType.U32, 4),
    ("U64", FieldType.U64, 8),
    ("S8", FieldType.S8, 1),
    ("S16", FieldType.S16, 2),
    ("S32", FieldType.S32, 4),
    ("S64", FieldType.S64, 8),
    ("F32", FieldType.F32, 4),
    ("F64", FieldType.F64, 8),
    ("LLVector3", FieldType.LLVECTOR3, 12),
    ("LLVector3d", FieldType.LLVECTOR3D, 24),
    ("LLVector4", FieldType.LLVECTOR4, 16),
    ("LLQuaternion", FieldType.LLQUATERNION, 12),
    ("LLUUID", FieldType.LLUUID, 16),
    ("BOOL", FieldType.BOOL, 1),
    ("IPADDR", FieldType.IPADDR, 4),
    ("IPPORT", FieldType.IPPORT, 2),
    ("Fixed 4", FieldType.FIXED, 4),
    ("Fixed 32", FieldType.FIXED, 32),
    ("Fixed 1", FieldType.FIXED, 1),
    ("Variable 1", FieldType.VARIABLE, 1),
    ("Variable 2", FieldType.VARIABLE, 2),
    ("Variable 4", FieldType.VARIABLE, 4),
]


def test_every_field_type() -> None:
    fields = "".join(f"\t\t{{ F{i} {text} }}\n" for i, (text, _, _) in enumerate(EVERY_TYPE))
    body = f"\t{{\n\t\tAll Single\n{fields}\t}}\n"
    spec = parse_template(one_message("Msg High 1 Trusted Unencoded", body))["Msg"]
    assert spec.blocks[0].fields == tuple(
        FieldSpec(f"F{i}", ftype, size) for i, (_, ftype, size) in enumerate(EVERY_TYPE)
    )
    # the type codes are distinct: the codecs dispatch on them
    assert len({f.type for f in spec.blocks[0].fields}) == len(FieldType)


def test_comments_whitespace_and_version() -> None:
    text = (
        "// leading comment\n"
        "version 3.5 // trailing comment\n"
        "\n"
        "// a message\n"
        "{\n"
        "\tMsg  Low  7  NotTrusted  Unencoded // flags\n"
        "\t{  // block\n"
        "\t\tData   Variable\n"
        "\t\t{ Blob Variable 2 } // field\n"
        "\t\t// { Commented U8 }\n"
        "\t}\n"
        "}\n"
        "// { Ghost High 9 NotTrusted Unencoded }\n"
    )
    t = parse_template(text)
    assert t.version == "3.5"
    assert [m.name for m in t] == ["Msg"]
    assert t["Msg"].blocks == (
        BlockSpec("Data", BlockKind.VARIABLE, 0, (FieldSpec("Blob", FieldType.VARIABLE, 2),)),
    )
    assert parse_template("{ M Low 1 NotTrusted Unencoded }").version == "2.0"  # no version line
    # braces need no surrounding whitespace
    assert parse_template("{M Low 1 NotTrusted Unencoded{B Single{F U8}}}")["M"].blocks[0].fields


def test_message_without_blocks() -> None:
    t = parse_template(one_message("CloseCircuit Fixed 0xFFFFFFFD NotTrusted Unencoded"))
    assert t["CloseCircuit"] == MessageSpec(
        "CloseCircuit", Frequency.FIXED, 0xFFFFFFFD, False, False, Deprecation.NONE, ()
    )
    assert t.block_classes("CloseCircuit") == {}


def test_template_lookups() -> None:
    body = "\t{ B Single { F U8 } }\n"
    text = one_message("A High 1 NotTrusted Unencoded", body) + message_text(
        "B Medium 1 NotTrusted Unencoded", body
    )
    t = parse_template(text)
    assert len(t) == 2 and "A" in t and "C" not in t
    assert [m.name for m in t] == ["A", "B"]
    assert t.by_code[1].name == "A" and t.by_code[0xFF01].name == "B"
    block = t.block_classes("A")["B"]((7,))
    assert block["F"] == block.F == 7
    assert repr(t) == "<Template version 2.0, 2 messages>"


# --- errors name the right line ------------------------------------------------------------------


def test_error_unknown_type() -> None:
    text = (
        "version 2.0\n{\n\tM Low 1 NotTrusted Unencoded\n\t{\n\t\tB Single\n\t\t{ F U128 }\n"
        "\t}\n}\n"
    )
    line, message = error_line(text)
    assert line == 6 and "U128" in message


@pytest.mark.parametrize("size", ["0", "3", "8", "-1", "two"])
def test_error_bad_variable_size(size: str) -> None:
    text = (
        "{\nM Low 1 NotTrusted Unencoded\n{\nB Single\n{ F U8 }\n"
        f"{{ G Variable {size} }}\n}}\n}}"
    )
    assert error_line(text)[0] == 6


@pytest.mark.parametrize("size", ["0", "65536", "x"])
def test_error_bad_fixed_size(size: str) -> None:
    text = f"{{\nM Low 1 NotTrusted Unencoded\n{{\nB Single\n{{ G Fixed {size} }}\n}}\n}}"
    assert error_line(text)[0] == 5


@pytest.mark.parametrize("count", ["0", "256", "-2", "many", "}"])
def test_error_bad_multiple_count(count: str) -> None:
    text = f"{{\nM Low 1 NotTrusted Unencoded\n{{\nB\nMultiple\n{count}\n{{ F U8 }}\n}}\n}}"
    assert error_line(text)[0] == 6


def test_error_bad_block_kind() -> None:
    text = "{\nM Low 1 NotTrusted Unencoded\n{\nB Several\n{ F U8 }\n}\n}"
    line, message = error_line(text)
    assert line == 4 and "Several" in message


@pytest.mark.parametrize(
    ("frequency", "number"),
    [
        ("High", "0"),
        ("High", "255"),
        ("Medium", "0"),
        ("Medium", "255"),
        ("Low", "0"),
        ("Low", "65536"),
        ("Low", "-1"),
        ("Fixed", "0xFFFFFEFF"),
        ("Fixed", "0x100000000"),
        ("High", "four"),
    ],
)
def test_error_number_out_of_range(frequency: str, number: str) -> None:
    text = f"version 2.0\n\n{{\n\tM {frequency}\n\t{number} NotTrusted Unencoded\n}}\n"
    assert error_line(text)[0] == 5


@pytest.mark.parametrize(
    ("head", "line"),
    [
        ("M Sometimes 1 NotTrusted Unencoded", 2),
        ("M Low 1\nMaybeTrusted Unencoded", 3),
        ("M Low 1 NotTrusted\n\nCompressed", 4),
        ("M Low 1 NotTrusted Unencoded Obsolete", 2),
        ("3M Low 1 NotTrusted Unencoded", 2),
    ],
)
def test_error_bad_header_word(head: str, line: int) -> None:
    assert error_line(f"{{\n{head}\n}}\n")[0] == line


def test_error_duplicate_message_name() -> None:
    a = "{\nM Low 1 NotTrusted Unencoded\n}\n"
    b = "{\nM Low 2 NotTrusted Unencoded\n}\n"
    line, message = error_line(a + b)
    assert line == 4 and "duplicate" in message and "line 1" in message


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Low 5", "Low 5"),
        ("High 5", "High 5"),
        ("Medium 9", "Medium 9"),
        ("Fixed 0xFFFFFFFB", "Fixed 4294967291"),
    ],
)
def test_error_duplicate_number(first: str, second: str) -> None:
    text = f"{{\nA {first} NotTrusted Unencoded\n}}\n\n{{\nB {second} NotTrusted Unencoded\n}}\n"
    line, message = error_line(text)
    assert line == 5 and "A" in message


def test_same_number_in_different_frequencies_is_fine() -> None:
    text = "".join(
        f"{{ M{freq} {freq} 5 NotTrusted Unencoded }}\n" for freq in ("High", "Medium", "Low")
    )
    assert len(parse_template(text)) == 3


def test_error_duplicate_block() -> None:
    text = "{\nM Low 1 NotTrusted Unencoded\n{ B Single { F U8 } }\n{ B Variable { G U8 } }\n}"
    line, message = error_line(text)
    assert line == 4 and "duplicate block B" in message


def test_error_duplicate_field() -> None:
    text = "{\nM Low 1 NotTrusted Unencoded\n{ B Single\n{ F U8 }\n{ G U8 }\n{ F U16 }\n}\n}"
    line, message = error_line(text)
    assert line == 6 and "duplicate field F" in message


def test_error_block_without_fields() -> None:
    assert error_line("{\nM Low 1 NotTrusted Unencoded\n{ B Single\n}\n}")[0] == 3


@pytest.mark.parametrize(
    ("text", "line"),
    [
        # one closing brace too many
        ("{\nM Low 1 NotTrusted Unencoded\n}\n}\n", 4),
        ("{\nM Low 1 NotTrusted Unencoded\n{ B Single { F U8 } } }\n}\n", 4),
        # a field not closed: the next token is not '}'
        ("{\nM Low 1 NotTrusted Unencoded\n{ B Single\n{ F U8\n{ G U8 }\n}\n}", 5),
        # a stray token where '{' or '}' belongs
        ("{\nM Low 1 NotTrusted Unencoded\n{ B Single { F U8 } }\nstray\n}", 4),
        ("junk\n", 1),
    ],
)
def test_error_unbalanced_braces(text: str, line: int) -> None:
    assert error_line(text)[0] == line


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("version 2.0\n{\nM Low 1 NotTrusted Unencoded\n{ B Single\n{ F U8 }\n", 5),
        ("{\nM Low 1 NotTrusted Unencoded\n{ B Single\n{ F U8 }\n}\n\n", 5),
        ("{\nM Low\n", 2),
        ("{\nM Low 1 NotTrusted\n", 2),
        ("{\nM Low 1 NotTrusted Unencoded\n{ B Multiple", 3),
        ("{\nM Low 1 NotTrusted Unencoded\n{ B Single\n{ F Fixed", 4),
        ("{", 1),
        ("version", 1),
    ],
)
def test_error_unexpected_eof(text: str, line: int) -> None:
    got, message = error_line(text)
    assert got == line and "end of template" in message


def test_error_bad_version() -> None:
    assert error_line("// header\nversion two\n{ M Low 1 NotTrusted Unencoded }")[0] == 2


def test_error_line_counts_comment_lines() -> None:
    text = "// 1\n// 2 {\n{ // 3 }\n// 4\nM Low 1 NotTrusted Unencoded\n{ B Single { F Nope } }\n}"
    assert error_line(text)[0] == 6


# --- load_template ----------------------------------------------------------------------------

SMALL = (
    "version 2.0\n"
    "{\n\tPing High 1 NotTrusted Unencoded\n\t{ PingID Single { PingID U8 } { Oldest U32 } }\n}\n"
    "{\n\tBye Fixed 0xFFFFFFFD NotTrusted Unencoded\n}\n"
)


def test_load_template_text_and_path(tmp_path: Path) -> None:
    path = tmp_path / "small.msg"
    path.write_text(SMALL, encoding="utf-8")
    from_text = load_template(SMALL)
    assert [m.name for m in from_text] == ["Ping", "Bye"]
    for source in (path, str(path)):
        assert load_template(source).messages == from_text.messages
    with pytest.raises(OSError):
        load_template(tmp_path / "missing.msg")


def test_load_template_path_error_has_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.msg"
    path.write_text(SMALL.replace("U32", "U33"), encoding="utf-8")
    with pytest.raises(TemplateError) as info:
        load_template(path)
    assert info.value.line == 4


def test_template_error_is_a_gamecodec_error_and_a_value_error() -> None:
    with pytest.raises(TemplateError) as info:
        parse_template(SMALL.replace("U32", "U33"))
    error = info.value
    assert isinstance(error, GameCodecError) and isinstance(error, ValueError)
    assert error.protocol == "lludp" and error.line == 4
    assert str(error) == "unknown field type 'U33' (line 4)"
    again = pickle.loads(pickle.dumps(error))
    assert (type(again), str(again), again.line, again.protocol) == (
        TemplateError,
        str(error),
        4,
        "lludp",
    )
    assert lludp.TemplateError is TemplateError


def test_a_hand_built_template_error_has_no_line() -> None:
    bad = FieldSpec("a", FieldType.U32, 2)
    spec = MessageSpec(
        "M", Frequency.LOW, 1, False, False, Deprecation.NONE,
        (BlockSpec("B", BlockKind.SINGLE, 1, (bad,)),),
    )  # fmt: skip
    with pytest.raises(TemplateError, match=r"^M\.B\.a: size 2 is not a size of U32$") as info:
        Template([spec])
    assert info.value.line is None and info.value.protocol == "lludp"


# --- the built-in schema ------------------------------------------------------------------------


def test_default_template_counts() -> None:
    t = default_template()
    assert t is default_template()
    assert len(t) == 483 and t.version == "2.0"
    assert Counter(m.frequency for m in t) == {
        Frequency.HIGH: 32,
        Frequency.MEDIUM: 17,
        Frequency.LOW: 431,
        Frequency.FIXED: 3,
    }
    assert sum(m.zerocoded for m in t) == 189
    assert Counter(m.deprecation for m in t) == {
        Deprecation.NONE: 483 - 26,
        Deprecation.UDP_DEPRECATED: 17,
        Deprecation.DEPRECATED: 5,
        Deprecation.UDP_BLACKLISTED: 4,
    }
    assert len({m.code for m in t}) == 483
    # High 1..32, Medium 1..17, Low 1..431 (spec §1.3)
    for frequency, top in ((Frequency.HIGH, 32), (Frequency.MEDIUM, 17), (Frequency.LOW, 431)):
        assert sorted(m.number for m in t if m.frequency == frequency) == list(range(1, top + 1))


def test_default_template_field_type_counts() -> None:
    """The type census of spec §1.5, of fields actually declared.

    The spec's figures came from grepping the file and include three fields
    that are commented out (two ``//{ ProductSKU Variable 1 }`` and one
    ``// { Filename Variable 1 }``) and one more LLUUID, U8, BOOL and F32 in
    comments; Hippolyzer's own parser gives the same counts as ours.
    """
    counts = Counter(f.type for m in default_template() for b in m.blocks for f in b.fields)
    variable = Counter(
        f.size
        for m in default_template()
        for b in m.blocks
        for f in b.fields
        if f.type == FieldType.VARIABLE
    )
    assert variable == {1: 289, 2: 70}
    assert counts == {
        FieldType.LLUUID: 1212,
        FieldType.U32: 400,
        FieldType.VARIABLE: 359,
        FieldType.S32: 264,
        FieldType.U8: 169,
        FieldType.BOOL: 162,
        FieldType.F32: 112,
        FieldType.LLVECTOR3: 99,
        FieldType.S8: 55,
        FieldType.U64: 52,
        FieldType.U16: 31,
        FieldType.IPADDR: 17,
        FieldType.IPPORT: 14,
        FieldType.LLQUATERNION: 12,
        FieldType.F64: 7,
        FieldType.S16: 7,
        FieldType.LLVECTOR3D: 6,
        FieldType.FIXED: 4,
        FieldType.LLVECTOR4: 1,
    }
    fixed = {
        f.size
        for m in default_template()
        for b in m.blocks
        for f in b.fields
        if f.type == FieldType.FIXED
    }
    assert fixed == {4, 32}


@pytest.mark.parametrize(
    ("name", "frequency", "number", "zerocoded", "trusted", "deprecation"),
    [
        ("PacketAck", Frequency.FIXED, 0xFFFFFFFB, False, False, Deprecation.NONE),
        ("OpenCircuit", Frequency.FIXED, 0xFFFFFFFC, False, False, Deprecation.UDP_BLACKLISTED),
        ("CloseCircuit", Frequency.FIXED, 0xFFFFFFFD, False, False, Deprecation.NONE),
        ("StartPingCheck", Frequency.HIGH, 1, False, False, Deprecation.NONE),
        ("CompletePingCheck", Frequency.HIGH, 2, False, False, Deprecation.NONE),
        ("AgentUpdate", Frequency.HIGH, 4, True, False, Deprecation.NONE),
        ("LayerData", Frequency.HIGH, 11, False, True, Deprecation.NONE),
        ("ObjectUpdate", Frequency.HIGH, 12, True, True, Deprecation.NONE),
        ("ImprovedTerseObjectUpdate", Frequency.HIGH, 15, False, True, Deprecation.NONE),
        ("UseCircuitCode", Frequency.LOW, 3, False, False, Deprecation.NONE),
        ("RegionHandshake", Frequency.LOW, 148, True, True, Deprecation.NONE),
        ("MapBlockReply", Frequency.LOW, 409, False, True, Deprecation.NONE),
    ],
)
def test_default_template_known_messages(
    name: str,
    frequency: Frequency,
    number: int,
    zerocoded: bool,
    trusted: bool,
    deprecation: Deprecation,
) -> None:
    spec = default_template()[name]
    assert (spec.frequency, spec.number, spec.zerocoded, spec.trusted, spec.deprecation) == (
        frequency,
        number,
        zerocoded,
        trusted,
        deprecation,
    )


def test_default_template_layouts() -> None:
    t = default_template()
    assert t["PacketAck"].blocks == (
        BlockSpec("Packets", BlockKind.VARIABLE, 0, (FieldSpec("ID", FieldType.U32, 4),)),
    )
    assert t["CloseCircuit"].blocks == ()
    agent = t["AgentUpdate"].blocks
    assert [b.name for b in agent] == ["AgentData"]
    assert [(f.name, f.type) for f in agent[0].fields] == [
        ("AgentID", FieldType.LLUUID),
        ("SessionID", FieldType.LLUUID),
        ("BodyRotation", FieldType.LLQUATERNION),
        ("HeadRotation", FieldType.LLQUATERNION),
        ("State", FieldType.U8),
        ("CameraCenter", FieldType.LLVECTOR3),
        ("CameraAtAxis", FieldType.LLVECTOR3),
        ("CameraLeftAxis", FieldType.LLVECTOR3),
        ("CameraUpAxis", FieldType.LLVECTOR3),
        ("Far", FieldType.F32),
        ("ControlFlags", FieldType.U32),
        ("Flags", FieldType.U8),
    ]
    assert [(b.name, b.kind, b.count) for b in t["TestMessage"].blocks] == [
        ("TestBlock1", BlockKind.SINGLE, 1),
        ("NeighborBlock", BlockKind.MULTIPLE, 4),
    ]
    region = t["RegionHandshake"].blocks
    assert [(b.name, b.kind) for b in region] == [
        ("RegionInfo", BlockKind.SINGLE),
        ("RegionInfo2", BlockKind.SINGLE),
        ("RegionInfo3", BlockKind.SINGLE),
        ("RegionInfo4", BlockKind.VARIABLE),
    ]
    assert [b.name for b in t["MapBlockReply"].blocks] == ["AgentData", "Data"]


def test_default_template_round_trips_through_text() -> None:
    """Our writer + the parser reproduce every built-in spec exactly."""
    t = default_template()
    again = parse_template(render(t))
    assert again.messages == t.messages
    assert again.version == t.version


def _real_template_path() -> Path:
    env = os.environ.get("GAMECODEC_SL_TEMPLATE")
    for candidate in (env, HIPPOLYZER_TEMPLATE):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    pytest.skip("no message_template.msg (set GAMECODEC_SL_TEMPLATE to the file in hippolyzer)")


def test_real_template_file_is_the_built_in_schema() -> None:
    """The generated ``_schema_sl`` is exactly a parse of the real file (it is up to date)."""
    path = _real_template_path()
    real = load_template(path)
    builtin = default_template()
    assert real.version == builtin.version
    assert [m.name for m in real] == [m.name for m in builtin]
    for got, want in zip(real.messages, builtin.messages, strict=True):
        assert got == want, got.name


OPENSIM_SIZE_BLOCK = "\t{\n\t\tSize\tVariable\n\t\t{\tSizeX\tU16\t}\n\t\t{\tSizeY\tU16\t}\n\t}\n"


def _opensim_text() -> str:
    """The built-in template with OpenSim's trailing ``Size`` block in MapBlockReply."""
    text = render(default_template())
    start = text.index("\tMapBlockReply Low 409 ")
    end = text.index("\n}\n", start)
    return text[: end + 1] + OPENSIM_SIZE_BLOCK + text[end + 1 :]


def _assert_opensim_variant(opensim: Template) -> None:
    builtin = default_template()
    assert len(opensim) == len(builtin) == 483
    differing = [
        (a.name, b.name) for a, b in zip(opensim.messages, builtin.messages, strict=True) if a != b
    ]
    assert differing == [("MapBlockReply", "MapBlockReply")]
    got, want = opensim["MapBlockReply"], builtin["MapBlockReply"]
    assert got._replace(blocks=got.blocks[:-1]) == want
    assert got.blocks[-1] == BlockSpec(
        "Size",
        BlockKind.VARIABLE,
        0,
        (FieldSpec("SizeX", FieldType.U16, 2), FieldSpec("SizeY", FieldType.U16, 2)),
    )
    assert list(opensim.block_classes("MapBlockReply")) == ["AgentData", "Data", "Size"]


def test_opensim_map_block_reply_variant() -> None:
    _assert_opensim_variant(load_template(_opensim_text()))


def test_opensim_variant_of_real_file(tmp_path: Path) -> None:
    """The same edit applied to the real file's text, loaded from a path."""
    text = _real_template_path().read_text(encoding="utf-8")
    start = text.index("MapBlockReply Low 409")
    # the message ends at the first line that is exactly "}" after its header
    end = text.index("\n}\n", start)
    edited = text[: end + 1] + OPENSIM_SIZE_BLOCK + text[end + 1 :]
    path = tmp_path / "opensim_message_template.msg"
    path.write_text(edited, encoding="utf-8")
    _assert_opensim_variant(load_template(path))


# --- hypothesis: garbage in, TemplateError out ---------------------------------------------

SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])

VOCABULARY = [
    "{", "}", "{", "}", "version", "2.0", "//", "\n", "High", "Medium", "Low", "Fixed", "0",
    "1", "255", "65535", "0xFFFFFFFB", "0x", "-1", "1e3", "Trusted", "NotTrusted", "Zerocoded",
    "Unencoded", "Deprecated", "UDPDeprecated", "UDPBlackListed", "NotDeprecated", "Single",
    "Multiple", "Variable", "U8", "U64", "F32", "LLVector3", "LLQuaternion", "LLUUID", "BOOL",
    "IPADDR", "IPPORT", "Msg", "Blk", "Fld", "Msg", "é", "\x00", "9" * 30,
]  # fmt: skip


def _check_only_template_errors(text: str) -> None:
    try:
        result = parse_template(text)
    except TemplateError as exc:
        assert exc.line >= 1
        assert exc.line <= text.count("\n") + 1
    else:
        assert isinstance(result, Template)


@SETTINGS
@given(st.text(max_size=300))
def test_random_text_only_raises_template_error(text: str) -> None:
    _check_only_template_errors(text)


@SETTINGS
@given(st.lists(st.sampled_from(VOCABULARY), max_size=60))
def test_random_tokens_only_raise_template_error(tokens: list[str]) -> None:
    _check_only_template_errors(" ".join(tokens))


@SETTINGS
@given(st.data())
def test_mutated_template_only_raises_template_error(data: st.DataObject) -> None:
    """Delete, duplicate or replace a token of a valid template."""
    base = SMALL + message_text("Q Low 2 Trusted Zerocoded", "{ B Multiple 2 { F Fixed 3 } }\n")
    tokens = base.replace("{", " { ").replace("}", " } ").split(" ")
    index = data.draw(st.integers(0, len(tokens) - 1))
    action = data.draw(st.sampled_from(["delete", "duplicate", "replace"]))
    if action == "delete":
        del tokens[index]
    elif action == "duplicate":
        tokens.insert(index, tokens[index])
    else:
        tokens[index] = data.draw(st.sampled_from(VOCABULARY) | st.text(max_size=5))
    _check_only_template_errors(" ".join(tokens))
