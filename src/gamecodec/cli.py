"""The ``gamecodec`` command: ``bench``, ``info`` and ``decode``."""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import sys
import textwrap
from collections.abc import Sequence

import gamecodec
from gamecodec._bench import Config, Row, stderr_progress

__all__ = ["main"]

_SUITES: dict[str, tuple[str, ...]] = {
    "lludp": ("gamecodec.lludp._bench", "gamecodec.lludp._bench_circuit"),
    "archipelago": ("gamecodec.archipelago._bench",),
    "avara": ("gamecodec.avara._bench",),
    "bzrc": ("gamecodec.bzrc._bench",),
    "ywindow": ("gamecodec.ywindow._bench",),
}

_EXPLAIN = (
    "Each row times gamecodec (through its public functions) and a peer doing the same work "
    "on the same realistic stream, in interleaved rounds in one process, the cyclic GC on. "
    "Times are medians per item (packet, frame, command, ...). 'result' is the median of the "
    "per-round ratios, with their range: 'Nx faster' is the peer's time over gamecodec's; "
    "'Nx the time' is gamecodec's time over the peer's (a floor that gamecodec should come "
    "close to, or stay under). 'status': met or MISSED against the limit; 'skipped' when the "
    "peer is not available here (the reason is given); '-' when the row has no target."
)


def _fmt_us(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def _result(row: Row) -> str:
    if row.ratio is None:
        return "-"
    word = "faster" if row.kind == "speedup" else "the time"
    return f"{row.ratio:.2f}x {word} ({row.low:.2f}-{row.high:.2f})"


def _limit(row: Row) -> str:
    if row.limit is None:
        return "-"
    if row.kind == "speedup":
        return f">= {row.limit:g}x faster"
    return f"<= {row.limit:g}x the time"


def _status(row: Row) -> str:
    if row.skipped is not None:
        return f"skipped: {row.skipped}"
    status = row.status
    return "-" if status == "no target" else status


_HEAD = (
    "protocol",
    "what is timed",
    "workload",
    "gamecodec us/item",
    "peer",
    "peer us/item",
    "result",
    "limit",
    "status",
)


def _cells(row: Row) -> tuple[str, ...]:
    ours = "-" if row.skipped else f"{_fmt_us(row.ours_us)} ({row.ours_label})"
    return (
        row.protocol,
        row.title,
        row.workload or "-",
        ours,
        row.peer_label,
        _fmt_us(row.peer_us),
        _result(row),
        _limit(row),
        _status(row),
    )


def _table(rows: list[Row], markdown: bool) -> str:
    cells = [_HEAD] + [_cells(r) for r in rows]
    if markdown:
        lines = ["| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in cells]
        lines.insert(1, "|" + "|".join("---" for _ in _HEAD) + "|")
        return "\n".join(lines)
    widths = [max(len(row[i]) for row in cells) for i in range(len(_HEAD))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _summary(rows: list[Row]) -> str:
    targets = [r for r in rows if r.limit is not None]
    count = {s: sum(1 for r in targets if r.status == s) for s in ("met", "MISSED", "skipped")}
    return (
        f"{len(targets)} targets: {count['met']} met, {count['MISSED']} missed, "
        f"{count['skipped']} skipped"
    )


def _config(args: argparse.Namespace) -> Config:
    mode = "quick" if args.quick else "full" if (args.full or args.check) else "default"
    rounds = args.rounds or {"quick": 3, "default": 3, "full": 5}[mode]
    return Config(mode, rounds, stderr_progress, 0.02 if mode == "quick" else 0.1)


def run_bench(protocols: list[str], config: Config) -> tuple[list[Row], list[Row]]:
    """Every contest of ``protocols`` (main table) and the single-packet rows."""
    rows: list[Row] = []
    single: list[Row] = []
    for name in protocols:
        for module_name in _SUITES[name]:
            module = importlib.import_module(module_name)
            rows.extend(module.rows(config))
            if config.full and hasattr(module, "single_packet_rows"):
                single.extend(module.single_packet_rows(config))
    return rows, single


def bench(args: argparse.Namespace) -> int:
    protocols = args.protocol or list(_SUITES)
    config = _config(args)
    print(
        f"gamecodec bench: {config.mode} run, {config.rounds} rounds, {', '.join(protocols)}",
        file=sys.stderr,
    )
    rows, single = run_bench(protocols, config)
    missed = any(r.status == "MISSED" for r in rows)
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
        impls = ", ".join(f"{k}={v}" for k, v in gamecodec.implementation().items())
        print(
            f"gamecodec {gamecodec.__version__} on Python {platform.python_version()} "
            f"({platform.machine()}); implementations: {impls}; {config.mode} run, "
            f"median of {config.rounds} rounds"
        )
        print()
        print(_EXPLAIN if args.markdown else textwrap.fill(_EXPLAIN, 100))
        print()
        print(_table(rows, args.markdown))
        if single:
            print()
            print(
                "Secondary: one packet decoded or encoded again and again (the best case "
                "of every cache; not traffic, no targets)."
            )
            print()
            print(_table(single, args.markdown))
        elif not config.full:
            print()
            print("(--full adds a secondary table: single LLUDP packets again and again.)")
        print()
        print(_summary(rows))
    if args.check and missed:
        print("bench --check: a target was missed", file=sys.stderr)
        return 1
    return 0


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
        "protocols": gamecodec.implementation(),
    }


def info(args: argparse.Namespace) -> int:
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


def decode(args: argparse.Namespace) -> int:
    from gamecodec import avara
    from gamecodec.errors import DecodeError

    status = 0
    for text in args.hex:
        try:
            data = bytes.fromhex(text)
        except ValueError:
            print(f"not hex: {text!r}", file=sys.stderr)
            status = 2
            continue
        try:
            print(avara.decode_datagram(data, version=args.version))
        except DecodeError as exc:
            print(f"error: {exc}", file=sys.stderr)
            status = 1
    return status


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gamecodec", description=gamecodec.__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser(
        "bench",
        help="time every protocol on realistic traffic against peers and floors",
        description="Time gamecodec against peers and floors on realistic streams. The "
        "default run uses smaller streams (about a minute); --full and --check use the "
        "streams the targets are set on (several minutes with Hippolyzer installed).",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--markdown", action="store_true", help="tables in Markdown")
    p.add_argument("--save", metavar="PATH", help="also write the JSON report to PATH")
    p.add_argument("--full", action="store_true", help="the targets' stream sizes, 5 rounds")
    p.add_argument(
        "--check",
        action="store_true",
        help="full sizes; exit 1 when a target is missed (skipped rows do not count)",
    )
    p.add_argument("--quick", action="store_true", help="small streams (a smoke test)")
    p.add_argument("--rounds", type=int, default=0, help="rounds per contest")
    p.add_argument(
        "--protocol",
        action="append",
        choices=gamecodec.PROTOCOLS,
        help="only this protocol (repeatable)",
    )
    p.set_defaults(func=bench)
    p = sub.add_parser("info", help="versions and which implementation each protocol uses")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=info)
    p = sub.add_parser("decode", help="decode datagrams given as hex")
    p.add_argument("protocol", choices=["avara"])
    p.add_argument("hex", nargs="+")
    p.add_argument("--version", type=int, default=18, help="Avara net version (default 18)")
    p.set_defaults(func=decode)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
