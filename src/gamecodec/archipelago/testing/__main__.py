"""Serve a test room until interrupted:

* ``python -m gamecodec.archipelago.testing serve FILE.archipelago [--port N]``:
  a multiworld Archipelago generated (the ``.archipelago`` file, or the ``.zip``
  holding it), read without running any of it;
* ``python -m gamecodec.archipelago.testing --multiworld FILE.json --port N``:
  a multiworld described in JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys

from gamecodec.archipelago.testing._multiworld import load_multiworld
from gamecodec.archipelago.testing._room import Room
from gamecodec.errors import GameCodecError

_PROG = "python -m gamecodec.archipelago.testing"


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=38281, help="port (0: any free port)")
    parser.add_argument("--password", default=None, help="room password (overrides the file)")


def _json_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=_PROG, description="Serve an Archipelago test room for a multiworld JSON file."
    )
    parser.add_argument("--multiworld", required=True, help="the multiworld JSON file")
    _common(parser)
    return parser


def _serve_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=f"{_PROG} serve",
        description="Serve an Archipelago test room for a generated multiworld.",
    )
    parser.add_argument("multidata", help="the .archipelago file (or the .zip holding it)")
    parser.add_argument(
        "--ignore-embedded-options",
        action="store_true",
        help="leave out the server options the generator stored in the file",
    )
    _common(parser)
    return parser


def _room(args: argparse.Namespace) -> Room:
    overrides = {"host": args.host, "port": args.port}
    if args.password is not None:
        overrides["password"] = args.password
    if hasattr(args, "multidata"):
        return Room.from_multidata(
            args.multidata, use_embedded_options=not args.ignore_embedded_options, **overrides
        )
    return load_multiworld(args.multiworld, **overrides)


async def _serve(room: Room) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    async with room:
        print(f"serving {len(room.slots)} slots at {room.url}", flush=True)
        await stop.wait()


def main(argv: list[str] | None = None) -> int:
    """Run the standalone room; returns the exit status."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["serve"]:
        args = _serve_parser().parse_args(argv[1:])
    else:
        args = _json_parser().parse_args(argv)
    try:
        asyncio.run(_serve(_room(args)))
    except (OSError, ValueError, KeyError, GameCodecError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
