"""``python -m gamecodec.archipelago.testing --multiworld FILE.json --port N``:
serve a multiworld described in a JSON file until interrupted."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys

from gamecodec.archipelago.testing._multiworld import load_multiworld


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m gamecodec.archipelago.testing",
        description="Serve an Archipelago test room for a multiworld JSON file.",
    )
    parser.add_argument("--multiworld", required=True, help="the multiworld JSON file")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=38281, help="port (0: any free port)")
    parser.add_argument("--password", default=None, help="room password (overrides the file)")
    return parser


async def _serve(args: argparse.Namespace) -> None:
    overrides = {"host": args.host, "port": args.port}
    if args.password is not None:
        overrides["password"] = args.password
    room = load_multiworld(args.multiworld, **overrides)
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
    args = _parser().parse_args(argv)
    try:
        asyncio.run(_serve(args))
    except (OSError, ValueError, KeyError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
