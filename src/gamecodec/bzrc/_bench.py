"""BZRC rows of ``gamecodec bench``: a bot's replies through the public parser.

Two workloads: a stream of successive ``mytanks`` replies of 20 moving tanks
(every reply distinct), read in 64 KiB pieces as an event loop hands them over, and full
800x800 ``occgrid`` replies of the four_ls world. The public
``bzrc.Decoder`` is timed against what a bot author writes (the
reference client's ``str.split`` loop with its field conversions) and against
the pure parser twin.
"""

from __future__ import annotations

from collections.abc import Callable

from gamecodec import bzrc
from gamecodec._bench import Config, Contest, Row, Side, pure_twin, run_all, skipped
from gamecodec.bzrc.sample import mytanks_responses, occgrid_response

__all__ = ["contests", "rows", "split_baseline"]

READ = 65536


def _reads(replies: list[bytes]) -> list[bytes]:
    data = b"".join(replies)
    return [data[i : i + READ] for i in range(0, len(data), READ)]


def _parse(label: str, parser_class: type, reads: list[bytes]) -> Side:
    def run(_: object) -> object:
        feed = parser_class().feed
        for chunk in reads:
            feed(chunk)
        return None

    return Side(label, run)


def split_baseline(replies: list[bytes]) -> Callable[[object], object]:
    """What a bot author writes: decode each reply, split it into lines and
    words, and convert a ``mytank`` line's fields as the reference client
    (``bzagents/bzrc.py``) does: ints for the index and shots, floats for
    the numbers, words as str; one plain tuple per tank."""

    def run(_: object) -> object:
        for data in replies:
            tanks = []
            for line in data.decode().splitlines():
                f = line.split()
                if f[0] == "mytank":
                    tanks.append(
                        (
                            int(f[1]), f[2], f[3], int(f[4]), float(f[5]), f[6],
                            float(f[7]), float(f[8]), float(f[9]), float(f[10]),
                            float(f[11]), float(f[12]),
                        )
                    )  # fmt: skip
        return None

    return run


def contests(config: Config) -> list[Contest | Row]:
    """This protocol's benchmark contests at the size ``config`` asks for."""
    count = config.size(64, 1_000)
    replies = mytanks_responses(count, 20)
    reads = _reads(replies)
    nbytes = sum(map(len, replies))
    tanks_work = f"{count:,} distinct mytanks replies of 20 tanks, {nbytes / 1e3:,.0f} kB"
    out: list[Contest | Row] = [
        Contest(
            "bzrc",
            "Decoder.feed on mytanks replies vs a str.split loop",
            tanks_work,
            count,
            "reply",
            _parse("bzrc.Decoder", bzrc.Decoder, reads),
            Side("str.split loop", split_baseline(replies)),
            limit=5.0,
        )
    ]
    pure, reason = pure_twin("bzrc", "gamecodec.bzrc._codec_py")
    grid_title = "Decoder.feed on 800x800 occgrid replies vs the pure twin"
    tanks_title = "Decoder.feed on mytanks replies vs the pure twin"
    if pure is None:
        return [
            *out,
            skipped("bzrc", grid_title, reason, peer="pure twin"),
            skipped("bzrc", tanks_title, reason, peer="pure twin"),
        ]
    grids = config.size(5, 50)
    grid = occgrid_response(800)
    grid_reads = _reads([grid] * grids)
    out.append(
        Contest(
            "bzrc",
            grid_title,
            f"{grids} replies of {len(grid) / 1e3:,.0f} kB in 64 KiB reads",
            grids,
            "reply",
            _parse("bzrc.Decoder", bzrc.Decoder, grid_reads),
            _parse("pure twin", pure.Decoder, grid_reads),
        )
    )
    out.append(
        Contest(
            "bzrc",
            tanks_title,
            tanks_work,
            count,
            "reply",
            _parse("bzrc.Decoder", bzrc.Decoder, reads),
            _parse("pure twin", pure.Decoder, reads),
        )
    )
    return out


def rows(config: Config) -> list[Row]:
    """Every contest of :func:`contests`, timed."""
    return run_all(contests(config), config)
