"""Old public names kept for one release, each with a :class:`DeprecationWarning`.

A package lists its old names in a dict and sets its module ``__getattr__``::

    __getattr__ = deprecated_names(__name__, {"decode_frame": ("decode", lambda: decode)})

Reading ``package.decode_frame`` (or ``from package import decode_frame``)
then warns once per use site and returns the new object.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["deprecated_names"]


def deprecated_names(
    module: str,
    names: dict[str, tuple[str, Callable[[], Any]]],
    lazy: dict[str, Callable[[], Any]] | None = None,
) -> Callable[[str], Any]:
    """A module ``__getattr__`` serving ``names``: old name -> (new name, getter).

    ``lazy`` maps current names to getters called on first use, without a
    warning (names whose import is costly, such as numpy's).
    """

    def __getattr__(name: str) -> Any:
        if lazy is not None and name in lazy:
            return lazy[name]()
        try:
            new, get = names[name]
        except KeyError:
            raise AttributeError(f"module {module!r} has no attribute {name!r}") from None
        warnings.warn(
            f"{module}.{name} is deprecated; use {new} (the old name goes in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return get()

    return __getattr__
