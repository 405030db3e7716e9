"""The protocol registry: each protocol package's one declaration, and what reads it.

Every place that iterates over "the protocols" (capture detection, the capture
tables, the CLI, the fuzz driver, the benchmarks, ``gamecodec.PROTOCOLS``)
reads :func:`protocols`. A declaration is cheap: the heavy parts are named by
``"module:attribute"`` strings and imported by :func:`resolve` when first used.
``docs/new-protocol.md`` is the checklist for a sixth protocol;
``tests/test_protocols.py`` fails while any part of one is missing.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
from typing import Any, Literal, NamedTuple

__all__ = ["NAMES", "Port", "Protocol", "declaration", "protocols", "resolve"]

Transport = Literal["udp", "tcp"]

NAMES: tuple[str, ...] = ("archipelago", "avara", "bzrc", "lludp", "ywindow")
"""The protocol packages (``gamecodec.<name>``, each with a ``_protocol.py``), in
the order everything iterates over them (content sniffing included)."""


class Port(NamedTuple):
    """A well-known port range of a protocol's servers."""

    first: int
    last: int
    what: str
    """What the ports are (``"Avara's server port"``)."""


class Protocol(NamedTuple):
    """One protocol's declaration: everything the library and its tools need of it.

    The ``"module:attribute"`` strings are imported by :func:`resolve`. A
    NamedTuple (immutable), not a dataclass: importing gamecodec stays as cheap
    as it was (dataclasses imports inspect and ast).
    """

    name: str
    """The package name (``gamecodec.<name>``) and the protocol's name everywhere."""
    title: str
    """The protocol's name in prose (``"LLUDP"``)."""
    transport: Transport
    ports: tuple[Port, ...]
    """Well-known server ports (a capture flow on one is guessed to be this protocol)."""
    sniffer: str
    """``(data: bytes, exact: bool) -> Content | None``: whether a flow's first
    datagram (UDP) or first bytes of one direction (TCP) are this protocol.
    ``exact`` (UDP) asks for no doubt: the port did not point to this protocol."""
    twins: tuple[str, ...]
    """The hot-path modules with a pure ``X_py`` and a compiled ``X_c`` twin (``X``)."""
    capture_decoder: str
    """UDP: ``(version: int | None) -> DatagramDecoder``; TCP: a ``StreamDecoder`` class."""
    capture_table: str
    """The :class:`gamecodec.capture._tables.Table` of the protocol's capture table."""
    cli_decoder: str
    """``(data, args) -> Iterator[unit]``: what ``gamecodec decode <name>`` runs."""
    cli_text: bool
    """``gamecodec decode`` hands the decoder text (``str``), not bytes."""
    bench_suites: tuple[str, ...]
    """Modules with ``rows(config)`` and ``contests(config)`` (``gamecodec bench``, benchmarks/)."""
    fuzz_targets: tuple[str, ...]
    """The fuzz targets ``tools/fuzz/<name>.py`` registers."""
    docs_page: str
    """The guide, relative to the repository (``docs/<name>.md``)."""


@functools.cache
def protocols() -> tuple[Protocol, ...]:
    """Every protocol's declaration, in :data:`NAMES` order (imports the packages)."""
    return tuple(declaration(name) for name in NAMES)


@functools.cache
def declaration(name: str) -> Protocol:
    """The declaration of protocol ``name``; ``KeyError`` when there is none.

    Its ``_protocol.py`` is run without importing the protocol's package
    (``gamecodec.archipelago`` alone imports msgspec and some sixty modules), and
    is not left in ``sys.modules``: importing ``gamecodec.<name>._protocol`` later
    imports the package as usual (its ``PROTOCOL`` is then an equal declaration)."""
    if name not in NAMES:
        raise KeyError(name)
    module_name = f"gamecodec.{name}._protocol"
    path = os.path.join(os.path.dirname(__file__), name, "_protocol.py")
    module = sys.modules.get(module_name)
    if module is None and os.path.isfile(path):
        from importlib.util import module_from_spec, spec_from_file_location

        spec = spec_from_file_location(module_name, path)
        assert spec is not None and spec.loader is not None
        module = module_from_spec(spec)
        spec.loader.exec_module(module)
    elif module is None:  # not a plain file (a zip): the ordinary way
        module = importlib.import_module(module_name)
    protocol: Protocol = module.PROTOCOL
    return protocol


@functools.cache
def resolve(target: str) -> Any:
    """The object ``"module:attribute"`` names (imported on first use)."""
    module_name, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module_name), attribute)
