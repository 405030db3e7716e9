"""The Python examples of docs/ywindow.md run as written (loopback only)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.conftest import ROOT

DOC = ROOT / "docs" / "ywindow.md"
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
pytestmark = pytest.mark.skipif(not EXAMPLES, reason="docs/ywindow.md is not in this copy")


def run(line: int, code: str) -> None:
    """Run one example; tracebacks give its line in the document."""
    exec(compile("\n" * (line - 1) + code, str(DOC), "exec"), {"__name__": "doc_example"})


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: f"line{e[0]}")
def test_doc_example_runs(example: tuple[int, str]) -> None:
    run(*example)


def test_the_guide_shows_the_server_calling_the_client(capsys: Any) -> None:
    """The asyncio example has the server call and notify the client
    (``on_connect=``) and the client answer (``connect(on_call=)``), and a
    refused login's AuthenticationError; these were only in docstrings."""
    (example,) = [e for e in EXAMPLES if "on_connect=" in e[1] and "on_call=" in e[1]]
    run(*example)
    assert capsys.readouterr().out.splitlines() == [
        "(Keyword('ok'),)",
        "Notification(method=Keyword('welcome'), args=('viewer-1',))",
        "authentication failed: the server closed the connection on our digest "
        "(it does not know our authority)",
    ]
