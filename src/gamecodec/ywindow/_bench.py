"""ywindow rows of ``gamecodec bench``: a session's small calls and events.

The stream is :func:`gamecodec.ywindow.sample.sample_stream` (distinct calls,
replies and events of 10-40 bytes), read in 4 KiB pieces and fed to the
public ``ywindow.Decoder``, against the pure decoder twin doing the same.
"""

from __future__ import annotations

from gamecodec import ywindow
from gamecodec._bench import Config, Contest, Row, Side, pure_twin, run_all, skipped
from gamecodec.ywindow.sample import sample_stream

__all__ = ["contests", "rows"]


def _feed(label: str, decoder_class: type, chunks: list[bytes]) -> Side:
    def run(_: object) -> object:
        feed = decoder_class().feed
        for chunk in chunks:
            feed(chunk)
        return None

    return Side(label, run)


def contests(config: Config) -> list[Contest | Row]:
    """This protocol's benchmark contests at the size ``config`` asks for."""
    title = "Decoder.feed on a session's messages vs the pure twin"
    pure, reason = pure_twin("ywindow", "gamecodec.ywindow._codec_py")
    if pure is None:
        return [skipped("ywindow", title, reason, peer="pure twin", limit=10.0)]
    count = config.size(5_000, 200_000)
    chunks = sample_stream(count)
    return [
        Contest(
            "ywindow",
            title,
            f"{count:,} distinct messages in 4 KiB reads",
            count,
            "message",
            _feed("ywindow.Decoder", ywindow.Decoder, chunks),
            _feed("pure twin", pure.Decoder, chunks),
            limit=10.0,
        )
    ]


def rows(config: Config) -> list[Row]:
    """Every contest of :func:`contests`, timed."""
    return run_all(contests(config), config)
