"""``python -m tools.fuzz``: run the fuzz targets, rebuild the seed corpus, replay inputs.

  python -m tools.fuzz list
  python -m tools.fuzz run [--seconds N] [--inputs N] [--seed N] [--findings DIR]
                           [--engine mutate|atheris] [TARGET...]
  python -m tools.fuzz corpus            rebuild tools/fuzz/corpus/<target>/ from tests/data
                                         and the sample modules
  python -m tools.fuzz replay TARGET FILE...

TARGET is a name or a prefix (``lludp``, ``avara.decode``); none means all.
``run`` exits 1 when any input is a finding (saved under the findings
directory, default ``fuzz-findings/``). ``--seconds`` is per target.
``--engine atheris`` runs each target under atheris (coverage-guided; pip
install atheris), one process per target, on the checked-in corpus.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time
from pathlib import Path

from tools.fuzz import driver

CORPUS_LIMIT = 14_000  # bytes per target: the whole corpus stays under ~300 KB


def _select(names: list[str], targets: dict[str, driver.Target]) -> list[driver.Target]:
    if not names:
        return list(targets.values())
    chosen = [t for t in targets.values() if any(t.name.startswith(n) for n in names)]
    missing = [n for n in names if not any(t.name.startswith(n) for t in targets.values())]
    if missing:
        raise SystemExit(f"no target matches {missing}; see: python -m tools.fuzz list")
    return chosen


def _run_mutate(args: argparse.Namespace, chosen: list[driver.Target]) -> int:
    findings = Path(args.findings)
    total_found = 0
    for tgt in chosen:
        rng = random.Random(f"{args.seed}:{tgt.name}")
        started = time.monotonic()
        count, saved = driver.fuzz(
            tgt,
            seconds=args.seconds,
            inputs=args.inputs,
            rng=rng,
            findings=findings,
            progress=args.progress,
            report=lambda line: print(line, flush=True),
        )
        spent = time.monotonic() - started
        total_found += len(saved)
        print(
            f"{tgt.name:28} {tgt.kind:8} inputs {count:>9}  "
            f"{count / max(spent, 1e-9):>8.0f}/s  findings {len(saved)}",
            flush=True,
        )
    return 1 if total_found else 0


def _run_atheris(args: argparse.Namespace, chosen: list[driver.Target]) -> int:
    status = 0
    for tgt in chosen:
        folder = Path(args.findings) / tgt.name
        folder.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "tools.fuzz.atheris_run", tgt.name, str(args.findings)]
        cmd.append(f"-artifact_prefix={folder}/")
        if args.seconds is not None:
            cmd.append(f"-max_total_time={int(args.seconds)}")
        if args.inputs is not None:
            cmd.append(f"-runs={args.inputs}")
        print(f"== {tgt.name}: {' '.join(cmd)}", flush=True)
        code = subprocess.call(cmd, env={**os.environ, "PYTHONHASHSEED": "0"})
        if code:
            status = 1
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.fuzz", description=__doc__.split("\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list")
    sub.add_parser("corpus")
    run = sub.add_parser("run")
    run.add_argument("--seconds", type=float, default=None)
    run.add_argument("--inputs", type=int, default=None)
    run.add_argument("--seed", default="1")
    run.add_argument("--findings", default="fuzz-findings")
    run.add_argument("--progress", type=float, default=0.0, help="report counts every N s")
    run.add_argument("--engine", choices=("mutate", "atheris"), default="mutate")
    run.add_argument("targets", nargs="*")
    replay = sub.add_parser("replay")
    replay.add_argument("target")
    replay.add_argument("files", nargs="+")
    args = parser.parse_args(argv)
    targets = driver.load_targets()
    if args.command == "list":
        for tgt in targets.values():
            print(f"{tgt.name:28} {tgt.kind}")
        return 0
    if args.command == "corpus":
        total = 0
        for tgt in targets.values():
            files, size = driver.write_corpus(tgt, CORPUS_LIMIT)
            total += size
            print(f"{tgt.name:28} {files:>4} files {size:>7} bytes")
        print(f"total {total} bytes in {driver.CORPUS}")
        return 0
    if args.command == "replay":
        tgt = targets[args.target]
        status = 0
        for name in args.files:
            try:
                driver.check(tgt, Path(name).read_bytes())
                print(f"{name}: pass")
            except driver.Finding as exc:
                print(f"{name}: FINDING\n{exc}")
                status = 1
        return status
    if args.seconds is None and args.inputs is None:
        args.seconds = 10.0
    chosen = _select(args.targets, targets)
    if args.engine == "atheris":
        return _run_atheris(args, chosen)
    return _run_mutate(args, chosen)


if __name__ == "__main__":
    sys.exit(main())
