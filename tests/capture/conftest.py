"""Fixtures for the capture tests: the real captures under ../shared/corpus/pcap."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import shared_path


def real_capture(name: str) -> Path:
    """A capture from ../shared/corpus/pcap; skips the test when it is not there."""
    return shared_path("corpus", "pcap", name)
