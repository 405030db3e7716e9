"""compat.decode / compat.encode against the reference's results on every recorded frame."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from tests.archipelago.typed_values import to_typed

Corpus = list[tuple[str, dict[str, Any], dict[str, Any]]]


def test_corpus_is_complete(corpus: Corpus) -> None:
    assert len(corpus) == 288
    assert all(expected["ok"] for _, _, expected in corpus)


def test_decode_gives_the_reference_value(codec: ModuleType, corpus: Corpus) -> None:
    for session, frame, expected in corpus:
        decoded = codec.decode(frame["raw"])
        assert to_typed(decoded) == expected["decoded"], (session, frame["seq"])


def test_decode_bytes_gives_the_same_value(codec: ModuleType, corpus: Corpus) -> None:
    for session, frame, expected in corpus:
        decoded = codec.decode(frame["raw"].encode("utf-8"))
        assert to_typed(decoded) == expected["decoded"], (session, frame["seq"])


def test_reencode_is_identical_where_the_reference_is(codec: ModuleType, corpus: Corpus) -> None:
    identical = 0
    for session, frame, expected in corpus:
        text = codec.encode(codec.decode(frame["raw"]))
        assert (text == frame["raw"]) == expected["roundtrip_identical"], (session, frame["seq"])
        assert codec.encode_bytes(codec.decode(frame["raw"])) == text.encode("utf-8")
        identical += text == frame["raw"]
    assert identical == 286
