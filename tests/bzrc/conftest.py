from __future__ import annotations

import json
from typing import Any

from tests.conftest import shared_path, twin_fixtures

codec, py_codec, c_codec = twin_fixtures("gamecodec.bzrc")


def load_transcript(name: str) -> dict[str, Any]:
    """One recorded transcript from ../shared/corpus/bzrc (skips if absent)."""
    with shared_path("corpus", "bzrc", name).open(encoding="ascii") as fh:
        data: dict[str, Any] = json.load(fh)
    return data


TRANSCRIPTS = ["basic_four_ls.json", "errors_four_ls.json"]
