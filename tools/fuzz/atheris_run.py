"""One target under atheris (coverage-guided, libFuzzer's engine):
``python -m tools.fuzz.atheris_run TARGET FINDINGS_DIR [libFuzzer flags...]``.

The pure twins and the drivers are instrumented for Python coverage; the
compiled twins run uninstrumented (coverage of the pure twin steers the
inputs, and every input still runs on both). A finding is saved under
FINDINGS_DIR/TARGET/ and re-raised, which ends the run with libFuzzer's
crash report and a non-zero exit.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import atheris

with atheris.instrument_imports(include=["gamecodec", "tools.fuzz"]):
    from tools.fuzz import driver

    targets = driver.load_targets()


def main() -> None:
    name, findings = sys.argv[1], Path(sys.argv[2])
    tgt = targets[name]

    def one_input(data: bytes) -> None:
        try:
            driver.check(tgt, data)
        except driver.Finding as exc:
            print(f"FINDING -> {driver.save_finding(findings, tgt, data, exc)}", file=sys.stderr)
            raise

    # a scratch copy of the seed corpus: libFuzzer adds to the first corpus directory
    work = Path(tempfile.mkdtemp(prefix=f"atheris-{name}-"))
    for i, seed in enumerate(driver.seeds_of(tgt)):
        (work / f"seed{i}").write_bytes(seed)
    atheris.Setup([sys.argv[0], *sys.argv[3:], str(work)], one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
