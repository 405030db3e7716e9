"""``dir()`` of a public module: what it exports, not what it imports for itself.

``from __future__ import annotations``, ``typing.Any``, ``TYPE_CHECKING`` and
private helpers are names in a module's namespace, so ``dir(gamecodec.errors)``
listed them beside the API. A module sets ``__dir__ = public_dir(__name__)``:
its ``__all__``, its public submodules once imported and the module
dunders, nothing else (attribute access is unchanged).
"""

import sys
from collections.abc import Callable
from types import ModuleType

__all__ = ["public_dir"]

_DUNDERS = ("__all__", "__doc__", "__file__", "__name__", "__package__", "__path__", "__spec__")


def public_dir(module_name: str) -> Callable[[], list[str]]:
    """A module ``__dir__`` listing ``module_name``'s ``__all__`` and its dunders."""

    def __dir__() -> list[str]:
        module = sys.modules[module_name]
        names = set(getattr(module, "__all__", ()))
        names.update(d for d in _DUNDERS if hasattr(module, d))
        names.update(  # public subpackages already imported (gamecodec.avara, ...)
            name
            for name, value in vars(module).items()
            if isinstance(value, ModuleType)
            and value.__name__ == f"{module_name}.{name}"
            and not name.startswith("_")
        )
        return sorted(names)

    return __dir__
