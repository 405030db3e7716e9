"""The greeting lines that open a ywindow connection.

``Yserver <major>.<minor> <software>\\n`` and ``Yclient ...``: at most 100
bytes each, ``<software>`` at most 40 characters and free of newlines.
"""

from __future__ import annotations

import re

from gamecodec._public import public_dir
from gamecodec.ywindow._errors import remote_error
from gamecodec.ywindow._models import MAX_GREETING, MAX_SOFTWARE, VERSION, Greeting, Role

__all__ = ["encode_greeting", "parse_greeting"]

_LINE = re.compile(rb"Y(server|client) ([0-9]{1,5})\.([0-9]{1,5})(?: ([^\n]*))?\n")


def encode_greeting(role: Role, software: str, version: tuple[int, int] = VERSION) -> bytes:
    """The greeting line ``role`` sends; ``ValueError`` if it breaks a limit."""
    if not isinstance(software, str) or "\n" in software or len(software) > MAX_SOFTWARE:
        raise ValueError(f"software {software!r} is not at most {MAX_SOFTWARE} chars, one line")
    major, minor = version
    if not (0 <= major <= 99999 and 0 <= minor <= 99999):
        raise ValueError(f"version {version!r} outside 0..99999")
    line = f"Y{Role(role).value} {major}.{minor} {software}\n".encode()
    if len(line) > MAX_GREETING:
        raise ValueError(f"greeting of {len(line)} bytes, more than {MAX_GREETING}")
    return line


def parse_greeting(line: bytes, role: Role) -> Greeting:
    """Parse the greeting ``role`` sent (``line`` ends with its newline);
    :class:`~gamecodec.RemoteProtocolError` if it is not one."""
    match = _LINE.fullmatch(line)
    if match is None or match[1].decode() != role.value:
        raise remote_error(f"expected a 'Y{role.value}' greeting line, got {line!r}")
    try:
        software = (match[4] or b"").decode("utf-8")
    except UnicodeDecodeError:
        raise remote_error(f"greeting software is not UTF-8: {line!r}") from None
    if len(software) > MAX_SOFTWARE:
        raise remote_error(f"greeting software of {len(software)} chars, over 40")
    return Greeting(role, int(match[2]), int(match[3]), software)


__dir__ = public_dir(__name__)
