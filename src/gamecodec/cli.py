"""The ``gamecodec`` command: ``bench``, ``info`` and ``decode``."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import platform
import sys
from collections.abc import Sequence

import gamecodec
from gamecodec._bench import Result, Target, run_case

__all__ = ["main"]


def _bench_modules(protocol: str) -> list[object]:
    """The protocol's ``_bench`` and, where it has one, its circuit's."""
    mods: list[object] = [importlib.import_module(f"gamecodec.{protocol}._bench")]
    circuit = f"gamecodec.{protocol}._bench_circuit"
    if importlib.util.find_spec(circuit) is not None:
        mods.append(importlib.import_module(circuit))
    return mods


def _fmt_rate(value: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if value >= scale:
            return f"{value / scale:.2f}{unit}"
    return f"{value:.0f}"


def _table(results: list[Result], targets: list[Target]) -> str:
    head = (
        "operation",
        "compiled pkt/s",
        "compiled MB/s",
        "pure pkt/s",
        "pure MB/s",
        "compiled/pure",
    )
    rows = [head]
    for r in results:
        c = r.rate(r.compiled_s)
        p = r.rate(r.pure_s)
        assert p is not None
        rows.append(
            (
                f"{r.protocol} {r.operation}",
                "-" if c is None else _fmt_rate(c[0]),
                "-" if c is None else f"{c[1]:.1f}",
                _fmt_rate(p[0]),
                f"{p[1]:.2f}",
                "-" if r.ratio is None else f"{r.ratio:.1f}x",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = [
        "| " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) + " |"
        for row in rows
    ]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    if targets:
        lines.append("")
        lines.append("| target (measured in this run) | value | limit | met |")
        lines.append("|---|---|---|---|")
        for t in targets:
            sign = "<=" if t.at_most else ">="
            lines.append(
                f"| {t.protocol}: {t.name} | {t.value:.3g} | {sign} {t.limit:.3g} | "
                f"{'yes' if t.met else 'NO'} |"
            )
    return "\n".join(lines)


def bench(args: argparse.Namespace) -> int:
    protocols = args.protocol or list(gamecodec.PROTOCOLS)
    rounds, min_time = (3, 0.01) if args.quick else (7, 0.05)
    results: list[Result] = []
    targets: list[Target] = []
    for name in protocols:
        for module in _bench_modules(name):
            for case in module.cases():  # type: ignore[attr-defined]
                results.append(run_case(case, rounds=rounds, min_time=min_time))
            targets.extend(module.targets(rounds=rounds, min_time=min_time))  # type: ignore[attr-defined]
    if args.json:
        json.dump(
            {
                "info": _info(),
                "results": [r.as_dict() for r in results],
                "targets": [t.as_dict() for t in targets],
            },
            sys.stdout,
            indent=2,
        )
        sys.stdout.write("\n")
    else:
        impls = ", ".join(f"{k}={v}" for k, v in gamecodec.implementation().items())
        print(
            f"gamecodec {gamecodec.__version__} on Python {platform.python_version()} "
            f"({platform.machine()}); implementations: {impls}"
        )
        print(f"median of {rounds} rounds; bundled sample traffic")
        print()
        print(_table(results, targets))
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
    p = sub.add_parser("bench", help="benchmark every protocol on bundled sample traffic")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--quick", action="store_true", help="fewer, shorter rounds (smoke test)")
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
