"""The ``gamecodec`` command: ``decode``, ``dump``, ``stats``, ``bench``, ``fields``, ``info``."""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import os
import platform
import sys
import textwrap
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

import gamecodec
from gamecodec._bench import PLAIN_WIDTH, Config, Row, legend, render_table, stderr_progress
from gamecodec._json import to_json
from gamecodec._protocols import declaration, resolve
from gamecodec._public import public_dir
from gamecodec.errors import DecodeError

__all__ = ["main", "to_json"]

# ---- decode ----------------------------------------------------------------------
#
# One function per protocol: the bytes (or, for Archipelago, the text) of one input
# in, the decoded units out. On bad input each raises DecodeError; units decoded
# before the error by the same library call are in its ``partial`` (a list).


def _decode_avara(data: Any, args: argparse.Namespace) -> Iterator[Any]:
    from gamecodec import avara

    version = avara.DEFAULT_VERSION if args.net_version is None else args.net_version
    yield avara.decode(data, version=version, strict=args.strict)


def _decode_lludp(data: Any, args: argparse.Namespace) -> Iterator[Any]:
    from gamecodec import lludp

    yield lludp.decode(data, strict=args.strict)


def _decode_archipelago(data: Any, args: argparse.Namespace) -> Iterator[Any]:
    from gamecodec import archipelago

    yield from archipelago.decode(data)


def _decode_bzrc(data: Any, args: argparse.Namespace) -> Iterator[Any]:
    from gamecodec import bzrc

    parser = bzrc.Decoder()
    yield from parser.feed(data)
    yield from parser.close()  # what only the end of the stream completes; refuses a cut reply


class Bytes(NamedTuple):
    """A ywindow bytes word, written ``{"type": "Bytes", "hex": ...}`` so that it
    differs from a string word."""

    hex: str


def _decode_ywindow(data: Any, args: argparse.Namespace) -> Iterator[Any]:
    from gamecodec import ywindow

    for message in ywindow.decode(data):
        words = [Bytes(w.hex()) if isinstance(w, bytes) else w for w in message.words]
        yield {"type": "Message", "kind": message.kind, "words": words}


# Each protocol's decode function, and how its input reads, are in its declaration
# (read when a command runs: naming the protocols imports none of them).


def _datagrams(protocol: str) -> bool:
    """Each input of ``protocol`` is one datagram (a UDP protocol)."""
    return declaration(protocol).transport == "udp"


def _text(protocol: str) -> bool:
    """``protocol``'s decoder takes text, not bytes."""
    return declaration(protocol).cli_text


class _InputError(Exception):
    """Input that cannot be read (no decode attempted)."""


def _from_hex(text: str, what: str) -> bytes:
    try:
        return bytes.fromhex(text)
    except ValueError as exc:
        raise _InputError(f"{what} is not hex ({exc})") from None


def _read_inputs(args: argparse.Namespace) -> list[Any]:
    """The inputs to decode, each one datagram, frame or stream."""
    if args.data not in (None, "-"):
        if _text(args.protocol):
            return [args.data]
        return [_from_hex(args.data, "the argument")]
    try:
        if args.data == "-":
            raw = sys.stdin.buffer.read()
        else:
            with open(args.file, "rb") as stream:
                raw = stream.read()
    except OSError as exc:
        raise _InputError(f"cannot read {exc.filename or 'the input'}: {exc.strerror}") from None
    if not args.hex:
        return [raw]
    try:
        lines = [(n, line) for n, line in enumerate(raw.decode("ascii").splitlines(), 1)]
    except UnicodeDecodeError:
        raise _InputError("the input is not hex text (a non-ASCII byte)") from None
    if _datagrams(args.protocol):  # one datagram a line
        return [_from_hex(line, f"line {n}") for n, line in lines if line.strip()]
    return [_from_hex("".join(line for _, line in lines), "the input")]


def _one_line(text: str) -> str:
    return " ".join(text.splitlines())


def decode(args: argparse.Namespace) -> int:
    """``gamecodec decode``: print each decoded unit as JSON; 2 on bad input."""
    try:
        inputs = _read_inputs(args)
    except _InputError as exc:
        print(f"gamecodec: error: {exc}", file=sys.stderr)
        return 2
    indent = 2 if args.pretty else None
    decoder: Callable[[Any, argparse.Namespace], Iterator[Any]] = resolve(
        declaration(args.protocol).cli_decoder
    )

    def emit(unit: object) -> None:
        print(json.dumps(to_json(unit), indent=indent))

    for number, data in enumerate(inputs, 1):
        try:
            for unit in decoder(data, args):
                emit(unit)
        except DecodeError as exc:
            if not _datagrams(args.protocol) and isinstance(exc.partial, list):
                for unit in exc.partial:
                    emit(unit)
            where = f"datagram {number}: " if len(inputs) > 1 else ""
            sys.stdout.flush()
            print(f"gamecodec: decode error: {where}{_one_line(str(exc))}", file=sys.stderr)
            return 2
    return 0


# ---- bench -----------------------------------------------------------------------

_BENCHES = (*gamecodec.PROTOCOLS, "capture")
"""What ``gamecodec bench --protocol`` takes: a protocol (its declaration's suites) or capture."""


def _suites(name: str) -> tuple[str, ...]:
    """The bench suite modules of a protocol, or of ``capture``."""
    return ("gamecodec.capture._bench",) if name == "capture" else declaration(name).bench_suites


_EXPLAIN = (
    "Each row times gamecodec, through its public functions, and something else doing "
    "the same work on the same stream: the two take turns, round after round, with the "
    "cyclic garbage collector on, so that a change of load on the machine hits both alike "
    "(in one process, or for Hippolyzer, which needs Python 3.12+, in a second Python when "
    "one with it is found)."
)
_QUICK = (
    "This is a quick run: small streams, results only. The targets are set on the stream "
    "sizes of `gamecodec bench --full` (several minutes), which judges them; the README's "
    "table is a --full run."
)


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _summary(rows: list[Row]) -> str:
    targets = [r for r in rows if r.limit is not None]
    count = {
        s: sum(1 for r in targets if r.status == s)
        for s in ("met", "MISSED", "skipped", "not judged")
    }
    if count["not judged"]:
        return (
            f"{_count(len(targets), 'target')}, not judged in a quick run (gamecodec bench "
            f"--full judges them); {count['skipped']} skipped; "
            f"{_count(len(rows) - len(targets), 'row')} without a target"
        )
    return (
        f"{_count(len(targets), 'target')}: {count['met']} met, {count['MISSED']} missed, "
        f"{count['skipped']} skipped; {_count(len(rows) - len(targets), 'row')} without a target"
    )


def _config(args: argparse.Namespace) -> Config:
    full = args.full or args.check
    rounds = args.rounds or (5 if full else 3)
    progress = sys.stdout.isatty() if args.progress is None else args.progress
    return Config(
        "full" if full else "quick",
        rounds,
        stderr_progress if progress else None,
        0.1 if full else 0.02,
    )


def run_bench(protocols: list[str], config: Config) -> tuple[list[Row], list[Row]]:
    """Every contest of ``protocols`` (main table) and the single-packet rows."""
    rows: list[Row] = []
    single: list[Row] = []
    for name in protocols:
        for module_name in _suites(name):
            module = importlib.import_module(module_name)
            rows.extend(module.rows(config))
            if config.full and hasattr(module, "single_packet_rows"):
                single.extend(module.single_packet_rows(config))
    return rows, single


def _print_report(rows: list[Row], single: list[Row], config: Config, markdown: bool) -> None:
    impls = ", ".join(f"{k}={v}" for k, v in sorted(gamecodec.implementation().items()))
    first = (
        f"gamecodec {gamecodec.__version__} on Python {platform.python_version()} "
        f"({platform.machine()}); implementations: {impls}; {config.mode} run, "
        f"median of {_count(config.rounds, 'round')}."
    )
    print(first if markdown else textwrap.fill(first, PLAIN_WIDTH))
    print()
    print(_EXPLAIN if markdown else textwrap.fill(_EXPLAIN, PLAIN_WIDTH))
    if not config.full:
        print()
        print(_QUICK if markdown else textwrap.fill(_QUICK, PLAIN_WIDTH))
    print()
    print("What the columns mean:")
    print()
    print(legend(markdown))
    print()
    print(render_table(rows, markdown))
    if single:
        print()
        print(
            "Secondary: one packet decoded or encoded again and again (the best case "
            "of every cache; not traffic, no targets)."
        )
        print()
        print(render_table(single, markdown))
    elif not config.full:
        print()
        print("(--full adds a secondary table: single LLUDP packets again and again.)")
    print()
    print(_summary(rows) if markdown else textwrap.fill(_summary(rows), PLAIN_WIDTH))


def bench(args: argparse.Namespace) -> int:
    """``gamecodec bench``: run, print the table or JSON; 1 if --check finds a miss."""
    protocols = args.protocol or list(_BENCHES)
    config = _config(args)
    config.say(
        f"gamecodec bench: {config.mode} run, {config.rounds} rounds, {', '.join(protocols)}"
    )
    rows, single = run_bench(protocols, config)
    if not config.full:
        for row in rows:
            row.judged = False
    report = {
        "info": _info(),
        "mode": config.mode,
        "rounds": config.rounds,
        "results": [r.as_dict() for r in rows],
        "single_packet": [r.as_dict() for r in single],
        "summary": _summary(rows),
    }
    if args.save:
        with open(args.save, "w", encoding="utf-8") as out:
            json.dump(report, out, indent=2)
            out.write("\n")
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _print_report(rows, single, config, args.markdown)
    if args.check and any(r.status == "MISSED" for r in rows):
        print("gamecodec bench --check: a target was missed", file=sys.stderr)
        return 1
    return 0


# ---- info ------------------------------------------------------------------------


def _info() -> dict[str, object]:
    import msgspec
    import numpy

    return {
        "gamecodec": gamecodec.__version__,
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "numpy": numpy.__version__,
        "msgspec": msgspec.__version__,
        "protocols": dict(sorted(gamecodec.implementation().items())),
    }


def info(args: argparse.Namespace) -> int:
    """``gamecodec info``: versions and the implementation of each protocol."""
    data = _info()
    if args.json:
        json.dump(data, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    for key, value in data.items():
        if key == "protocols":
            assert isinstance(value, dict)
            for proto, impl in value.items():
                label = "compiled" if impl == "c" else "pure Python"
                print(f"{proto:>14}: {label}")
        else:
            print(f"{key:>14}: {value}")
    return 0


# ---- the parser ------------------------------------------------------------------

_DECODE_EPILOG = """\
input, per protocol:
  avara, lludp   one datagram: DATA is its bytes in hex; a file or stdin holds
                 the datagram's raw bytes, or with --hex one datagram in hex
                 per line. One JSON object per datagram.
  archipelago    one text frame (a JSON array of commands): DATA is the frame
                 itself, a file or stdin holds it. One JSON object per command.
  bzrc           server replies, a byte stream: DATA is the stream in hex, a
                 file or stdin holds it raw (or in hex with --hex). One JSON
                 object per reply; a reply cut off at the end is an error.
  ywindow        packet-mode messages, a byte stream, given as for bzrc. One
                 JSON object per message; a message cut off at the end is an
                 error.

output:
  One JSON object per line (indented with --pretty). Objects carry a "type"
  key with the model's class name, then its fields; bytes are written in hex,
  UUIDs as strings, enum members by name, arrays as lists. A field named
  "type" is written "type_". A ywindow bytes word is {"type": "Bytes", "hex":
  ...}, so that it differs from a string word. An Archipelago command
  gamecodec does not know is printed as the frame has it.

exit status:
  0 when everything decoded. 2 on a decode error: the units decoded before it
  are printed, then one line on stderr: "gamecodec: decode error: <reason>"
  (with the byte offset). 2 also for input that cannot be read.

examples:
  gamecodec decode avara 7ab00200040000b111d20406d001000000010005
  gamecodec decode ywindow 7204000000016b026f6b
  gamecodec decode archipelago '[{"cmd": "Say", "text": "hello"}]'
  printf 'ack 1.5 shoot 0\\nok\\n' | gamecodec decode bzrc -
  gamecodec decode lludp -f packet.bin --pretty
"""


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def _add_decode(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "decode",
        help="decode traffic of one protocol and print it as JSON",
        description="Decode traffic of one protocol and print each decoded unit\n"
        "(datagram, command, reply or message) as one JSON object.",
        epilog=_DECODE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    names = sorted(gamecodec.PROTOCOLS)
    p.add_argument("protocol", metavar="PROTOCOL", choices=names, help=", ".join(names))
    p.add_argument(
        "data",
        metavar="DATA",
        nargs="?",
        help="the input: hex (an Archipelago frame as text), or - to read stdin",
    )
    p.add_argument("-f", "--file", metavar="FILE", help="read the input from FILE")
    p.add_argument(
        "--hex", action="store_true", help="the file or stdin holds hex text, not raw bytes"
    )
    p.add_argument("--pretty", action="store_true", help="indent the JSON objects")
    p.add_argument(
        "--strict",
        action="store_true",
        help="avara and lludp: refuse what the reference implementation tolerates",
    )
    p.add_argument(
        "--net-version",
        metavar="N",
        type=int,
        help="avara: the net version the checksum is keyed on (default 18)",
    )
    p.set_defaults(func=decode, validate=functools.partial(_check_decode, p))
    return p


def _check_decode(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse option combinations that make no sense (a usage error, status 2)."""
    if (args.data is None) == (args.file is None):
        parser.error("give exactly one input: DATA, -f FILE, or - for stdin")
    if args.hex and args.data not in (None, "-"):
        parser.error("--hex is for a file or stdin (DATA is hex already)")
    if args.hex and _text(args.protocol):
        parser.error(f"{args.protocol} input is text, not hex")
    if args.strict and not _datagrams(args.protocol):
        parser.error("--strict applies to avara and lludp only")
    if args.net_version is not None and args.protocol != "avara":
        parser.error("--net-version applies to avara only")


def _add_bench(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "bench",
        help="time every protocol against peers and floors on realistic traffic",
        description="Time gamecodec against peers and floors on realistic streams and "
        "print a table (a legend explains its columns). The default run uses small "
        "streams, takes about half a minute and judges no target; --full uses the "
        "stream sizes the targets are set on and judges them (several minutes with "
        "Hippolyzer). Hippolyzer needs Python 3.12+: from an older Python its rows run "
        "in the Python named by GAMECODEC_HIPPOLYZER_PYTHON (or a python3.12+ on PATH "
        "that has it).",
    )
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print a machine-readable report")
    out.add_argument(
        "--markdown", action="store_true", help="print the report with Markdown tables"
    )
    p.add_argument("--save", metavar="PATH", help="also write the JSON report to PATH")
    size = p.add_mutually_exclusive_group()
    size.add_argument(
        "--full",
        action="store_true",
        help="the stream sizes of the targets, 5 rounds, targets judged",
    )
    size.add_argument(
        "--quick",
        action="store_true",
        help="small streams (the default; this option does nothing and will go)",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="as --full, and exit with status 1 when a target is missed (skipped rows "
        "do not count)",
    )
    p.add_argument(
        "--rounds", type=_positive, default=0, help="rounds per row (default 3, 5 with --full)"
    )
    p.add_argument(
        "--protocol",
        action="append",
        choices=list(_BENCHES),
        help="only this protocol, or capture (repeatable)",
    )
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a line on stderr as each row finishes (default: when stdout is a terminal)",
    )
    p.set_defaults(func=bench)


def _capture_missing(error: ImportError, args: argparse.Namespace) -> int:
    print(
        f"gamecodec: error: {args.command} needs the capture extra "
        f"(pip install 'gamecodec[capture]'): {error}",
        file=sys.stderr,
    )
    return 2


def _add_capture(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``dump`` and ``stats`` (gamecodec.capture); without the capture extra, each
    says what to install."""
    try:
        from gamecodec.capture._cli import add_commands
    except ImportError as exc:
        for name in ("dump", "stats"):
            p = sub.add_parser(name, help="decode packet captures (needs gamecodec[capture])")
            p.add_argument("rest", nargs=argparse.REMAINDER)
            p.set_defaults(func=functools.partial(_capture_missing, exc))
        return
    add_commands(sub)


def _parsers() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """The command-line parser of ``gamecodec`` and its ``decode`` parser."""
    parser = argparse.ArgumentParser(
        prog="gamecodec",
        description="Codecs for game network protocols (Avara, LLUDP, Archipelago, BZRC, "
        "ywindow): decode traffic, time the codecs, show versions.",
    )
    parser.add_argument("--version", action="version", version=f"gamecodec {gamecodec.__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    decode_parser = _add_decode(sub)
    _add_capture(sub)
    _add_bench(sub)
    _add_fields(sub)
    p = sub.add_parser(
        "info",
        help="versions, and which implementation each protocol uses",
        description="Versions, and whether each protocol runs compiled or as pure Python.",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=info)
    return parser, decode_parser


def _add_fields(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "fields",
        help="list a protocol's messages, or one message's blocks and fields",
        description="Without NAME, every message of the template; with NAME, its blocks "
        "(Single, Multiple(n), Variable) and their fields' types and sizes.",
    )
    p.add_argument("protocol", metavar="PROTOCOL", choices=["lludp"], help="lludp")
    p.add_argument("name", metavar="NAME", nargs="?", help="a message name: ChatFromSimulator")
    p.add_argument(
        "--template",
        choices=["secondlife", "opensim"],
        default="secondlife",
        help="the built-in template (default secondlife)",
    )
    p.set_defaults(func=functools.partial(fields, p))


def fields(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``gamecodec fields lludp [NAME]``: the template's messages, or one message's fields."""
    import difflib

    from gamecodec import lludp

    template = lludp.builtin_template(args.template)
    if args.name is None:
        print(template.show())
        return 0
    spec = template.by_name.get(args.name)
    if spec is None:
        close = difflib.get_close_matches(args.name, template.by_name, n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        parser.error(f"no message {args.name!r} in the {args.template} template{hint}")
    print(spec.show())
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser of ``gamecodec``."""
    return _parsers()[0]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``gamecodec`` command; returns its exit status."""
    parser, decode_parser = _parsers()
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["decode"]:
        # options may come between PROTOCOL and DATA (plain parsing would give DATA
        # up as absent at the first option)
        args = decode_parser.parse_intermixed_args(argv[1:])
        args.command = "decode"
    else:
        args = parser.parse_args(argv)
    validate = getattr(args, "validate", None)
    if validate is not None:
        validate(args)
    try:
        return int(args.func(args))
    except BrokenPipeError:  # the reader went away (| head): stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

__dir__ = public_dir(__name__)
