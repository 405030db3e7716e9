"""The Python examples of docs/lludp.md run as written (loopback only)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.conftest import ROOT

DOC = ROOT / "docs" / "lludp.md"
_FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
EXAMPLES = (
    [
        (text.count("\n", 0, m.start(1)) + 1, m.group(1))
        for text in [DOC.read_text()]
        for m in _FENCE.finditer(text)
    ]
    if DOC.exists()
    else []
)
pytestmark = pytest.mark.skipif(not EXAMPLES, reason="docs/lludp.md is not in this copy")


def run(line: int, code: str) -> None:
    """Run one example; tracebacks give its line in the document."""
    exec(compile("\n" * (line - 1) + code, str(DOC), "exec"), {"__name__": "doc_example"})


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: f"line{e[0]}")
def test_doc_example_runs(example: tuple[int, str]) -> None:
    run(*example)


def test_the_tap_example_logs_the_message_and_its_ack(capsys: Any) -> None:
    (example,) = [e for e in EXAMPLES if "tap=log.append" in e[1]]
    run(*example)
    lines = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert [(w[1], w[2]) for w in lines] == [("out", "ChatFromViewer"), ("in", "PacketAck")]
    assert float(lines[0][0]) < float(lines[1][0])
