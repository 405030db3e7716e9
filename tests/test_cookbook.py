"""The cookbook's programs (docs/cookbook/*.py) run as a user runs them, and say what they did.

Each is a complete program against a local server the library ships (the
Archipelago test room, LLUDP endpoints on loopback) or a capture it records
itself, and ends by itself. ``.ci/run docs`` also checks them with ``mypy --strict``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import PACKAGE_ROOT

ROOT = Path(__file__).resolve().parents[1]
COOKBOOK = ROOT / "docs" / "cookbook"


def _run(name: str, *args: str) -> str:
    env = dict(os.environ)
    src = str(PACKAGE_ROOT)  # the gamecodec under test (src/, or an installed copy)
    env["PYTHONPATH"] = src + os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else src
    done = subprocess.run(
        [sys.executable, str(COOKBOOK / name), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr
    return done.stdout


def test_every_program_has_a_page_and_a_test() -> None:
    programs = sorted(p.name for p in COOKBOOK.glob("*.py"))
    assert programs == ["capture_report.py", "lludp_proxy.py", "load_test.py", "tracker_bot.py"]
    pages = "".join(p.read_text(encoding="utf-8") for p in COOKBOOK.glob("*.md"))
    for program in programs:
        assert f'--8<-- "docs/cookbook/{program}"' in pages, program


def test_tracker_bot_names_who_found_what() -> None:
    pytest.importorskip("websockets")
    assert _run("tracker_bot.py").splitlines() == [
        "Alice sent Button to Bob (Press)",
        "Alice found their Lamp (Shelf)",
        "Alice sent Key to Bob (Drawer)",
    ]


def test_proxy_forwards_every_packet_unchanged() -> None:
    out = _run("lludp_proxy.py")
    assert [line for line in out.splitlines() if line.startswith("region got:")] == [
        "region got: hello 0",
        "region got: hello 1",
        "region got: hello 2",
    ]
    ups = re.findall(r"proxy: viewer -> region: ChatFromViewer #(\d) reliable", out)
    assert ups == ["1", "2", "3"]
    assert "ChatFromViewer x3 (viewer -> region)" in out
    assert "(region -> viewer)" in out  # the acks came back through it


def test_capture_report_lists_flows_messages_and_the_damage() -> None:
    pytest.importorskip("dpkt")
    pytest.importorskip("pyarrow")
    lines = _run("capture_report.py").splitlines()
    assert lines[0] == "demo.pcap: 51 packets, 50 units, 1 errors"
    assert "  lludp  udp 10.0.0.2:51712 -> 10.0.0.1:9000: 41 packets, 40 units, 1 errors" in lines
    assert "  avara  udp 10.0.0.3:40000 -> 10.0.0.1:19567: 10 packets, 10 units, 0 errors" in lines
    assert any(re.match(r"  lludp  ChatFromViewer +20 x", line) for line in lines)
    assert any(re.match(r"  avara  kpKeyAndMouse +10 x", line) for line in lines)
    assert lines[-1].startswith("  decode: LLUDP packet of 3 bytes")


def test_load_test_delivers_every_item() -> None:
    pytest.importorskip("websockets")
    lines = _run("load_test.py", "8", "10").splitlines()
    assert lines[:2] == [
        "8 clients, 80 checks, 80 items received",
        "every client got all its items: True",
    ]
    assert re.fullmatch(r"[\d.]+ s, \d+ checks per second", lines[2])
