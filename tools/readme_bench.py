"""The README's benchmark table, from a saved ``gamecodec bench --full`` report.

    python tools/readme_bench.py benchmarks/results/full.json          # print the table
    python tools/readme_bench.py benchmarks/results/full.json --check  # README.md has it

The README quotes a few rows of one full run; the run's whole report (every
row, each round's ratio, versions) is committed beside it, so every figure in
the README can be traced to it, and ``--check`` (run by tests/test_readme_bench.py)
fails when the README's table is not the report's.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BEGIN, END = "<!-- bench-table -->", "<!-- /bench-table -->"
ROWS = (  # (protocol, title, start of the workload): the rows the README quotes
    ("lludp", "decode, results dropped", ""),
    ("lludp", "decode, results kept in a list (GC on)", ""),
    ("lludp", "encode", ""),
    ("lludp", "Circuit per packet: send, receive, acks, resend bookkeeping", ""),
    ("archipelago", "decode (typed) vs msgspec.json.decode into the same Structs", "recorded"),
    ("archipelago", "compat.decode vs the pure compat twin (reference semantics)", "recorded"),
    ("avara", "decode_array per command vs one struct.unpack_from per command", ""),
    ("bzrc", "Decoder.feed on mytanks replies vs a str.split loop", ""),
    ("ywindow", "Decoder.feed on a session's messages vs the pure twin", ""),
)


def _us(value: float) -> str:
    return f"{value:.3g}" if value < 100 else f"{value:,.0f}"


def _ratio(value: float) -> str:
    return f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def _result(row: dict[str, Any]) -> str:
    word = "faster" if row["kind"] == "speedup" else "the time"
    low, high = _ratio(row["ratio_low"]), _ratio(row["ratio_high"])
    return f"{_ratio(row['ratio'])}x {word} ({low}-{high})"


def table(report: dict[str, Any]) -> str:
    """The README's Markdown table of the quoted rows of ``report``."""
    lines = [
        "| protocol | what is timed | compared with | us/item | result (lowest-highest) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for protocol, title, workload in ROWS:
        found = [
            r
            for r in report["results"]
            if (r["protocol"], r["title"]) == (protocol, title)
            and r["workload"].startswith(workload)
        ]
        if len(found) != 1 or found[0]["ratio"] is None:
            raise SystemExit(f"the report has no measured row {protocol}: {title} ({workload})")
        row = found[0]
        lines.append(
            f"| {protocol} | {title} | {row['peer']} | {_us(row['ours_us_per_item'])} "
            f"| {_result(row)} |"
        )
    return "\n".join(lines)


def readme_table(readme: str) -> str:
    """The table between the README's bench-table markers."""
    start, end = readme.index(BEGIN) + len(BEGIN), readme.index(END)
    return readme[start:end].strip()


def main(argv: list[str]) -> int:
    """Print the table, or with --check compare it with README.md's."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    wanted = table(json.loads(args.report.read_text(encoding="utf-8")))
    if not args.check:
        print(wanted)
        return 0
    have = readme_table((ROOT / "README.md").read_text(encoding="utf-8"))
    if have != wanted:
        print(f"README.md's benchmark table is not {args.report}'s; it should be:\n{wanted}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
