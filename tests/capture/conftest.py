"""Test data for the capture tests: corpus payloads and the real captures."""

from __future__ import annotations

import json
from pathlib import Path

from tests.bzrc.conftest import load_transcript
from tests.conftest import data_path, shared_path

CLIENT, SERVER = ("10.0.0.2", 51712), ("10.0.0.1", 9000)
"""An LLUDP client and an OpenSim region (udp/9000)."""


def real_capture(name: str) -> Path:
    """A capture from ../shared/corpus/pcap; skips the test when it is not there."""
    return shared_path("corpus", "pcap", name)


def lludp_wires() -> list[bytes]:
    """The recorded LLUDP packets of the corpus (real datagrams)."""
    with data_path("lludp", "messages.jsonl").open(encoding="ascii") as fh:
        return [bytes.fromhex(json.loads(line)["wire"]) for line in fh if line.strip()]


def avara_wires() -> list[bytes]:
    """The recorded Avara datagrams of the corpus (net version 18)."""
    with data_path("avara", "vectors.jsonl").open(encoding="ascii") as fh:
        return [bytes.fromhex(json.loads(line)["wire"]) for line in fh if line.strip()]


def bzrc_streams(name: str = "basic_four_ls.json") -> tuple[bytes, bytes]:
    """A recorded bzrflag session: (client's bytes, server's bytes)."""
    exchanges = load_transcript(name)["exchanges"]
    sent = b"".join(str(e["send"]).encode("latin-1") for e in exchanges)
    received = b"".join(str(e["recv"]).encode("latin-1") for e in exchanges)
    return sent, received
