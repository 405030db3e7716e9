"""The ``gamecodec dump`` and ``gamecodec stats`` commands."""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import sys
import time
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from gamecodec.capture._records import CaptureError, Item

if TYPE_CHECKING:
    from gamecodec.capture._stats import CaptureStats

__all__ = ["add_commands"]


def _selected(items: Iterable[Item], args: argparse.Namespace) -> Iterator[Item]:
    """The items that pass ``--only``, ``--flow`` and ``--message``."""
    only = set(args.only or ())
    numbers = {int(f) for f in args.flow or () if f.isascii() and f.isdigit()}
    texts = [f for f in args.flow or () if not (f.isascii() and f.isdigit())]  # ² is a text
    messages = args.message or ()
    for item in items:
        flow = item.flow
        if only and (flow is None or flow.protocol not in only):
            continue
        if (numbers or texts) and (
            flow is None or (flow.index not in numbers and not any(t in flow.id for t in texts))
        ):
            continue
        if messages:
            if isinstance(item, CaptureError):
                continue
            if not any(fnmatch.fnmatchcase(n, m) for n in item.names for m in messages):
                continue
        yield item


SHOW_AFTER = 1.0
"""Seconds of work before the progress bar appears."""


class _Progress:
    """A rich progress bar over the captures' bytes, shown once work has taken
    a second, and only when stderr is a terminal."""

    def __init__(self, paths: list[str], enabled: bool) -> None:
        self.total = sum(os.path.getsize(p) for p in paths)
        self.enabled = enabled and self.total > 0
        self.start = time.monotonic()
        self.done = 0
        self.bar: Any = None
        self.task: Any = None

    def update(self, position: int) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            if time.monotonic() - self.start < SHOW_AFTER:
                return
            from rich.console import Console
            from rich.progress import Progress

            self.bar = Progress(console=Console(stderr=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task("decoding", total=self.total)
        self.bar.update(self.task, completed=self.done + position)

    def next_file(self, size: int) -> None:
        self.done += size

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _each_capture(
    args: argparse.Namespace, progress: _Progress, stats: CaptureStats | None = None
) -> Iterator[tuple[str, Iterator[Item]]]:
    """Each capture's name and selected items; with ``stats``, its flows that gave
    no item are counted there once it has been read."""
    from gamecodec.capture._capture import read
    from gamecodec.capture._source import capture_name

    for path in args.captures:
        with open(path, "rb") as stream:
            capture = read(stream, protocols=tuple(args.protocol or ()))

            def tracked(stream: Any = stream, capture: Any = capture) -> Iterator[Item]:
                for n, item in enumerate(capture):
                    if n % 4096 == 0:
                        progress.update(stream.tell())
                    yield item

            name = capture_name(path)
            yield name, _selected(tracked(), args)
            if stats is not None:
                stats.add_silent_flows(capture.flows, name, capture.other_flows)
        progress.next_file(os.path.getsize(path))


def _progress(args: argparse.Namespace) -> _Progress:
    enabled = sys.stderr.isatty() if args.progress is None else args.progress
    return _Progress(args.captures, enabled)


def _failing(command: Any) -> Any:
    """``command`` with a missing file or extra reported in one line (status 2)."""

    def run(args: argparse.Namespace) -> int:
        try:
            return int(command(args))
        except BrokenPipeError:  # the reader went away (| head): gamecodec.cli.main's case
            raise
        except OSError as exc:
            where = exc.filename or "a capture"
            print(f"gamecodec: error: {where}: {exc.strerror}", file=sys.stderr)
        except ImportError as exc:
            print(f"gamecodec: error: {exc}", file=sys.stderr)
        return 2

    run.__doc__ = command.__doc__
    return run


def dump(args: argparse.Namespace) -> int:
    """``gamecodec dump``: decoded messages as JSON lines, Parquet or Arrow files."""
    progress = _progress(args)
    try:
        if args.format == "jsonl":
            from gamecodec.capture._jsonl import json_lines

            out = sys.stdout if args.output in (None, "-") else open(args.output, "w")  # noqa: SIM115
            try:
                for name, items in _each_capture(args, progress):
                    for line in json_lines(items, capture=name):
                        out.write(line)
                        out.write("\n")
            finally:
                if out is not sys.stdout:
                    out.close()
            return 0
        from gamecodec.capture._output import TableFiles
        from gamecodec.capture._tables import TableBuilder

        builder = TableBuilder()
        with TableFiles(args.output or ".", args.format) as files:
            for name, items in _each_capture(args, progress):
                builder.capture = name
                for item in items:
                    for table, batch in builder.add(item):
                        files.write(table, batch)
            for table, batch in builder.finish():
                files.write(table, batch)
        for table, path in files.paths.items():
            print(f"{path}: {files.rows[table]} rows", file=sys.stderr)
        return 0
    finally:
        progress.close()


def _text_report(data: dict[str, Any]) -> str:
    from gamecodec.capture._stats import OTHER_FLOWS_KEPT

    lines = [f"{data['units']} units, {data['errors']} errors"]
    silent = data["silent_flows"]
    if silent["flows"]:
        lines.append(
            f"{silent['flows']} other flows ({silent['packets']} packets, {silent['bytes']} "
            "bytes) were not decoded: no known port, content not recognised "
            "(--protocol PROTO:TRANSPORT/PORT takes a port for a protocol)"
        )
    for error in data["error_list"]:
        lines.append(
            f"  error ({error['where']}) packet {error['packet']} offset {error['offset']}: "
            f"{error['message']}"
        )
    other = data["other_errors"]
    if other:
        by_where = ", ".join(f"{where} {n}" for where, n in other.items())
        lines.append(
            f"  {sum(other.values())} errors in flows of no protocol past the first "
            f"{OTHER_FLOWS_KEPT} ({by_where}), not listed by flow"
        )
    for flow in data["flows"]:
        rate = flow["units_per_second"]
        lines.append("")
        lines.append(
            f"{flow['capture']} #{flow['flow']} {flow['flow_id']}: {flow['protocol']} "
            f"({flow['reason']})"
        )
        units = ", ".join(f"{d} {n}" for d, n in flow["units"].items())
        size = ", ".join(f"{d} {n}" for d, n in flow["bytes"].items())
        lines.append(
            f"  {flow['seconds']:.3f} s; units: {units}; bytes: {size}"
            + (f"; {rate:.1f} units/s" if rate is not None else "")
        )
        top = list(flow["messages"].items())[:12]
        lines.append("  messages: " + ", ".join(f"{n} {c}" for n, c in top))
        for direction, seq in flow["sequences"].items():
            lines.append(f"  {direction}: " + ", ".join(f"{k} {v}" for k, v in seq.items()))
        for key in ("ack_rtt", "ping_rtt"):
            rtt = flow[key]
            if rtt["samples"]:
                lines.append(
                    f"  {key.replace('_', ' ')}: median {rtt['median_ms']:.2f} ms "
                    f"({rtt['min_ms']:.2f}-{rtt['max_ms']:.2f}), {rtt['samples']} samples"
                )
        for error in flow["error_list"]:
            lines.append(
                f"  error ({error['where']}) packet {error['packet']} {error['direction']} "
                f"offset {error['offset']}: {error['message']}"
            )
        if flow["errors"] > len(flow["error_list"]):
            lines.append(f"  ... {flow['errors']} errors in all")
    return "\n".join(lines)


def stats(args: argparse.Namespace) -> int:
    """``gamecodec stats``: per-flow statistics, as text or JSON, and a plot."""
    from gamecodec.capture._stats import CaptureStats

    if args.plot:
        from gamecodec.capture import _plot

        try:
            _plot.check(args.plot)
        except ValueError as exc:
            print(f"gamecodec: error: {exc}", file=sys.stderr)
            return 2
    progress = _progress(args)
    result = CaptureStats()
    try:
        filtered = args.only or args.flow or args.message
        for name, items in _each_capture(args, progress, None if filtered else result):
            for item in items:
                result.add(item, name)
    finally:
        progress.close()
    data = result.as_dict()
    if args.json:
        json.dump(data, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(_text_report(data))
    if args.plot:
        from gamecodec.capture._plot import plot

        plot(result, args.plot)
    return 0


def _override(text: str) -> Any:
    from gamecodec.capture import parse_override

    try:
        return parse_override(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("captures", metavar="CAPTURE", nargs="+", help="pcap or pcapng files")
    p.add_argument(
        "--protocol",
        metavar="PROTO:TRANSPORT/PORT",
        action="append",
        type=_override,
        help="take flows on this port for this protocol, e.g. lludp:udp/9000 (repeatable)",
    )
    p.add_argument("--only", metavar="PROTO", action="append", help="only this protocol's flows")
    p.add_argument(
        "--flow",
        metavar="FLOW",
        action="append",
        help="only flow number FLOW (digits), or the flows whose id holds FLOW",
    )
    p.add_argument(
        "--message", metavar="NAME", action="append", help="only units holding NAME (a glob)"
    )
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a progress bar after a second (default: when stderr is a terminal)",
    )


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``dump`` and ``stats`` to the ``gamecodec`` command."""
    p = sub.add_parser(
        "dump",
        help="decode the messages of packet captures (JSON lines, Parquet, Arrow)",
        description="Decode every message of pcap/pcapng captures of the five protocols. "
        "JSON lines (the default) go to stdout or -o FILE; parquet and arrow write one "
        "file per protocol (and errors) into the directory -o DIR.",
    )
    _common(p)
    p.add_argument("--format", choices=("jsonl", "parquet", "arrow"), default="jsonl")
    p.add_argument("-o", "--output", metavar="PATH", help="a file (jsonl) or directory")
    p.set_defaults(func=_failing(dump))
    p = sub.add_parser(
        "stats",
        help="per-flow statistics of packet captures",
        description="Per flow: messages by name, bytes, rates, resends, duplicates and "
        "sequence gaps, round trips from acks and pings, decode errors with offsets.",
    )
    _common(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--plot", metavar="FILE", help="draw rates and sizes into FILE (png, svg)")
    p.set_defaults(func=_failing(stats))
