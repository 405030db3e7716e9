"""Check the built documentation (``mkdocs build -d SITE``) for what --strict lets through.

    python tools/check_docs_html.py SITE

Fails (exit status 1, one line per problem) when a page:

- shows a docstring example as prose: nested blockquotes (Markdown reads unfenced
  ``>>>`` prompts as three levels of quote) or a ``>>>`` outside ``<pre>``/``<code>``;
- shows source text as an attribute's value (a heading ``name = value`` whose
  value is not a Python literal);
- lists a module's constants before its functions or classes (the reading order
  of docs/_ext/reading.py);
- is too big to read: over 600 kB of HTML or 400 headings;

and when a public package has no API entry (``id="gamecodec.capture"`` on some page).
"""

from __future__ import annotations

import ast
import sys
from html.parser import HTMLParser
from pathlib import Path

MAX_BYTES = 600_000
MAX_HEADINGS = 400
PUBLIC = (
    "gamecodec",
    "gamecodec.avara",
    "gamecodec.lludp",
    "gamecodec.archipelago",
    "gamecodec.bzrc",
    "gamecodec.ywindow",
    "gamecodec.sessions",
    "gamecodec.errors",
    "gamecodec.capture",
)
_KINDS = ("module", "class", "function", "attribute")


class _Page(HTMLParser):
    """One page's headings, doc objects (kind, id) and prose text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.headings = 0
        self.ids: list[str] = []
        self.objects: list[tuple[str, str]] = []  # (kind, id), in page order
        self.prose_prompts: list[str] = []
        self.attribute_headings: list[tuple[str, str]] = []  # (id, heading text)
        self._code = 0
        self._pending_kind: str | None = None
        self._heading: tuple[str, str] | None = None  # (id, kind) of an open doc heading
        self._heading_text: list[str] = []
        self._in_heading_code = 0
        self._skip = 0  # <script>, <style>
        self._quotes = 0
        self.nested_quotes = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if a.get("id"):
            self.ids.append(a["id"] or "")
        if tag in ("script", "style"):
            self._skip += 1
        if tag == "blockquote":
            self._quotes += 1
            self.nested_quotes += self._quotes == 2
        if tag in ("pre", "code"):
            self._code += 1
            if self._heading is not None:
                self._in_heading_code += 1
        if tag == "div" and "doc-object" in classes:
            self._pending_kind = next((k for k in _KINDS if f"doc-{k}" in classes), None)
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.headings += 1
            if "doc-heading" in classes and self._pending_kind and a.get("id"):
                self.objects.append((self._pending_kind, a["id"] or ""))
                self._heading = (a["id"] or "", self._pending_kind)
                self._heading_text = []
                self._pending_kind = None
        if tag == "small" and self._heading is not None:
            self._in_heading_code = -1000  # the labels after the signature

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._skip -= 1
        if tag == "blockquote":
            self._quotes -= 1
        if tag in ("pre", "code"):
            self._code -= 1
            if self._heading is not None and self._in_heading_code > 0:
                self._in_heading_code -= 1
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6") and self._heading is not None:
            ident, kind = self._heading
            if kind == "attribute":
                self.attribute_headings.append((ident, "".join(self._heading_text).strip()))
            self._heading = None
            self._in_heading_code = 0

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        if self._heading is not None and self._in_heading_code > 0:
            self._heading_text.append(data)
        if not self._code and ">>>" in data:
            self.prose_prompts.append(" ".join(data.split())[:70])


def _literal(text: str) -> bool:
    try:
        ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


def _order_problems(page: _Page) -> list[str]:
    """Module entries where a constant comes before a function or class."""
    modules = {ident for kind, ident in page.objects if kind == "module"}
    first_constant: dict[str, str] = {}
    reported: set[str] = set()
    problems = []
    for kind, ident in page.objects:
        parent = ident.rsplit(".", 1)[0]
        if parent not in modules or parent in reported:
            continue
        if kind == "attribute":
            first_constant.setdefault(parent, ident)
        elif kind in ("function", "class") and parent in first_constant:
            problems.append(f"{ident} comes after the constant {first_constant[parent]}")
            reported.add(parent)
    return problems


def check_page(path: Path, html: str) -> list[str]:
    """The problems of one built page."""
    page = _Page()
    page.feed(html)
    out = []
    size = len(html.encode())
    if size > MAX_BYTES:
        out.append(f"{size:,} bytes of HTML (at most {MAX_BYTES:,}): split the page")
    if page.headings > MAX_HEADINGS:
        out.append(f"{page.headings} headings (at most {MAX_HEADINGS}): split the page")
    if page.nested_quotes:
        out.append(
            f"{page.nested_quotes} nested blockquotes: unfenced '>>>' examples shown as prose"
        )
    out += [f"a docstring example shown as prose: {text!r}" for text in page.prose_prompts]
    for ident, text in page.attribute_headings:
        _name, eq, value = text.partition(" = ")
        if eq and not _literal(value.strip()):
            out.append(f"{ident} shows source text as its value: {value.strip()[:60]!r}")
    out += _order_problems(page)
    return [f"{path}: {problem}" for problem in out]


def check_site(site: Path) -> list[str]:
    """Every problem of the built site."""
    problems: list[str] = []
    ids: set[str] = set()
    for path in sorted(site.rglob("*.html")):
        html = path.read_text(encoding="utf-8")
        if "/api/" in path.as_posix():
            problems += check_page(path.relative_to(site), html)
        page = _Page()
        page.feed(html)
        ids.update(page.ids)
    problems += [f"no API entry for {name}" for name in PUBLIC if name not in ids]
    return problems


def main(argv: list[str]) -> int:
    """Check the site directory given; print the problems; 1 if there are any."""
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    problems = check_site(Path(argv[0]))
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} problems in the built docs", file=sys.stderr)
        return 1
    print("built docs ok: examples as code, literal values, reading order, page sizes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
