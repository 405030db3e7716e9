"""Every fuzz target of tools/fuzz runs a few hundred mutated inputs clean,
and the driver reports what it must (foreign exceptions, twin mismatches)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.conftest import IMPLS

if "c" not in IMPLS:
    pytest.skip("the targets run both twins", allow_module_level=True)

from tools.fuzz import driver  # imports both twins of every module

TARGETS = driver.load_targets()
INPUTS = {"decoder": 300, "session": 120}


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_target_runs_clean(name: str, tmp_path: Path) -> None:
    tgt = TARGETS[name]
    count, findings = driver.fuzz(
        tgt, seconds=None, inputs=INPUTS[tgt.kind], rng=random.Random(name), findings=tmp_path
    )
    assert count == INPUTS[tgt.kind]
    assert findings == [], [p.with_suffix(".txt").read_text() for p in findings]


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_target_has_a_checked_in_corpus(name: str) -> None:
    folder = driver.CORPUS / name
    assert folder.is_dir() and any(folder.iterdir()), "run: python -m tools.fuzz corpus"


def test_every_protocol_has_decoder_and_session_targets() -> None:
    for protocol in driver.PROTOCOLS:
        kinds = {t.kind for t in TARGETS.values() if t.name.startswith(protocol + ".")}
        assert kinds == {"decoder", "session"}, protocol


def test_a_foreign_exception_is_saved_as_a_finding(tmp_path: Path) -> None:
    def broken(data: bytes) -> None:
        if len(data) > 3:
            raise IndexError("out of range")

    tgt = driver.Target("demo.broken", broken, "decoder", lambda: [b"abcdef"])
    _count, findings = driver.fuzz(
        tgt, seconds=None, inputs=50, rng=random.Random(1), findings=tmp_path
    )
    assert len(findings) == 1
    assert findings[0].read_bytes() == b"abcdef"  # the seed runs first
    assert "IndexError escaped demo.broken" in findings[0].with_suffix(".txt").read_text()


def test_twin_mismatch_and_undocumented_errors_are_findings() -> None:
    with pytest.raises(driver.Finding, match="twin mismatch"):
        driver.same("demo", ("ok", 1), ("ok", 2))
    with pytest.raises(driver.Finding, match="KeyError escaped"):
        driver.outcome(driver.DECODE_ONLY, {}.__getitem__, "k")
    nan = float("nan")
    assert driver.canon([nan, -0.0]) == driver.canon([nan, -0.0])
    assert driver.canon(0.0) != driver.canon(-0.0)


def test_op_stream_and_chunking_are_deterministic() -> None:
    data = bytes(range(200))
    assert driver.chunks_of(data) == driver.chunks_of(data)
    assert b"".join(driver.chunks_of(data)) == data
    assert driver.items_of(driver.join_items([b"ab", b"", b"c"])) == [b"ab", b"", b"c"]
    ops = driver.Ops(b"\x05\x01")
    assert (ops.pick(3), ops.byte(), ops.byte(), ops.done) == (2, 1, 0, True)
