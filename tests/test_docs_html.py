"""The built-docs check (tools/check_docs_html.py) and the docstring fencing it relies on.

``mkdocs build --strict`` passes on pages whose ``>>>`` examples render as
nested blockquotes, whose attributes show source text as values and whose
constants come before ``decode``: these pin what the check catches.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


check = _load(ROOT / "tools" / "check_docs_html.py")

_OBJ = (
    '<div class="doc doc-object doc-{kind}"><h3 id="{ident}" class="doc doc-heading">'
    '<code class="highlight">{text}</code><small class="doc-label"><code>x</code></small>'
    "</h3></div>"
)


def _page(*objects: tuple[str, str, str], body: str = "") -> str:
    parts = [_OBJ.format(kind="module", ident="gamecodec.x", text="gamecodec.x")]
    parts += [_OBJ.format(kind=k, ident=i, text=t) for k, i, t in objects]
    return "<html><body>" + body + "".join(parts) + "</body></html>"


def test_a_clean_page_passes() -> None:
    html = _page(
        ("function", "gamecodec.x.decode", "decode(data)"),
        ("class", "gamecodec.x.Thing", "Thing"),
        ("attribute", "gamecodec.x.LIMIT", "LIMIT = 64"),
        body="<pre><code>&gt;&gt;&gt; decode(b'')</code></pre>",
    )
    assert check.check_page(Path("p.html"), html) == []


def test_doctest_as_nested_blockquotes_fails() -> None:
    # what Markdown makes of an unfenced ">>> x" docstring line
    html = _page(
        body="<blockquote><blockquote><blockquote><p>x</p></blockquote></blockquote></blockquote>"
    )
    (problem,) = check.check_page(Path("p.html"), html)
    assert "nested blockquotes" in problem


def test_prompt_in_prose_fails() -> None:
    (problem,) = check.check_page(Path("p.html"), _page(body="<p>&gt;&gt;&gt; decode()</p>"))
    assert "as prose" in problem


def test_source_text_as_a_value_fails() -> None:
    html = _page(("attribute", "gamecodec.x.BY_TAG", "BY_TAG = {str(cls.tag): cls for cls in X}"))
    (problem,) = check.check_page(Path("p.html"), html)
    assert "gamecodec.x.BY_TAG shows source text" in problem


def test_constants_before_functions_fail() -> None:
    html = _page(
        ("attribute", "gamecodec.x.LIMIT", "LIMIT = 64"),
        ("function", "gamecodec.x.decode", "decode(data)"),
    )
    (problem,) = check.check_page(Path("p.html"), html)
    assert "gamecodec.x.decode comes after the constant gamecodec.x.LIMIT" in problem


def test_a_huge_page_fails() -> None:
    html = _page(body="<h2>h</h2>" * (check.MAX_HEADINGS + 1))
    assert any("headings" in p for p in check.check_page(Path("p.html"), html))


def test_a_public_package_without_a_page_fails(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text('<h1 id="gamecodec">x</h1>', encoding="utf-8")
    problems = check.check_site(tmp_path)
    assert "no API entry for gamecodec.capture" in problems


def test_doctests_are_fenced() -> None:
    pytest.importorskip("griffe")  # the docs extra
    reading = _load(ROOT / "docs" / "_ext" / "reading.py")
    text = "Intro.\n\n>>> 1 + 1\n2\n\nAfter.\n\n    >>> x\n    1\n"
    assert reading.fence_doctests(text) == (
        "Intro.\n\n```pycon\n>>> 1 + 1\n2\n```\n\n"
        "After.\n\n    ```pycon\n    >>> x\n    1\n    ```\n"
    )
    fenced = "```pycon\n>>> 1\n1\n```"
    assert reading.fence_doctests(fenced) == fenced
