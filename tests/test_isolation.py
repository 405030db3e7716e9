"""Loading the compiled twins changes nothing about objects others make.

In a fresh interpreter, where the package itself uses only the pure twins
(GAMECODEC_NO_EXTENSIONS=1): the pure LLUDP twin decodes (types, GC tracking,
deallocation, the classes involved are recorded), then every compiled twin
is imported and the compiled LLUDP codec decodes the same packets, then the
pure twin decodes again. Both records must be the same, and objects the pure
twin made before must be as they were.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import gamecodec

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = r"""
import gc, importlib, json, pkgutil, sys, uuid
import gamecodec
from gamecodec.lludp import _codec_py as py
from gamecodec.lludp import _models
from gamecodec.lludp.sample import bench_messages
from gamecodec.lludp.template import default_template

# only explicit collections: an automatic one untracks tuples whenever it happens to
# run, which would make the two records differ by timing alone
gc.disable()
# the package was imported with GAMECODEC_NO_EXTENSIONS=1: no compiled twin yet
assert not [m for m in sys.modules if m.startswith("gamecodec.") and m.endswith("_c")]
tpl = default_template()
packets = [py.encode(m, tpl) for m in bench_messages().values()]
user_block_cls = tpl.block_classes("AgentUpdate")["AgentData"]


def walk(obj):
    # every object reachable from a decoded message, with its type and tracking
    seen, out, todo = set(), [], [obj]
    while todo:
        o = todo.pop()
        if id(o) in seen or isinstance(o, (int, float, str, bytes, bool, type(None))):
            continue
        seen.add(id(o))
        out.append((type(o).__module__, type(o).__qualname__, gc.is_tracked(o)))
        if isinstance(o, dict):
            todo.extend(o.values())
        elif isinstance(o, (list, tuple)):
            todo.extend(o)
        elif isinstance(o, uuid.UUID):
            todo.append(o.int)
    return sorted(out)


def classes():
    # what a compiled module could patch: the classes' namespaces (by identity)
    out = {}
    for cls in (_models.Message, _models.Block, _models.Header, uuid.UUID, tuple,
                *tpl.block_classes("ObjectUpdate").values(), user_block_cls):
        out[cls.__qualname__] = sorted((k, id(v)) for k, v in vars(cls).items())
        out[cls.__qualname__ + ".flags"] = cls.__flags__
    return out


def leaked():
    # memory blocks left after decoding and dropping 2,000 messages
    [py.decode(p, tpl) for p in packets for _ in range(40)]  # warm caches
    gc.collect()
    base = sys.getallocatedblocks()
    made = [py.decode(p, tpl) for p in packets for _ in range(400)]
    del made
    gc.collect()
    return sys.getallocatedblocks() - base


def record():
    msgs = [py.decode(p, tpl) for p in packets]
    values = list(msgs[0].AgentData[0])  # the AgentUpdate
    values[0] = [uuid.uuid4()]
    user = user_block_cls(values)
    return {
        "objects": [walk(m) for m in msgs],
        "user": walk(user),
        "leaked": leaked(),
        "classes": classes(),
    }, msgs


first, kept = record()
kept_facts = [walk(m) for m in kept]
compiled = []
for info in pkgutil.walk_packages(gamecodec.__path__, "gamecodec."):
    if info.name.endswith("_c"):
        try:
            importlib.import_module(info.name)
        except ImportError:
            continue
        compiled.append(info.name)
c = importlib.import_module("gamecodec.lludp._codec_c")
decoded = [c.decode(p, tpl) for p in packets for _ in range(50)]
assert [c.decode(p, tpl) for p in packets] == [py.decode(p, tpl) for p in packets]
del decoded
gc.collect()
second, _ = record()
print(json.dumps({
    "first": first, "second": second, "compiled": compiled,
    "kept_before": kept_facts, "kept_after": [walk(m) for m in kept],
}))
"""


@pytest.fixture(scope="module")
def facts() -> dict[str, object]:
    # the gamecodec under test (a checkout's src/ or an installed copy), not another one
    package_root = Path(gamecodec.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(package_root)}
    env["GAMECODEC_NO_EXTENSIONS"] = "1"  # the package uses the pure twins; the script
    # then imports the compiled ones itself
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_compiled_twins_were_loaded(facts: dict[str, object]) -> None:
    assert "gamecodec.lludp._codec_c" in facts["compiled"]  # type: ignore[operator]


def test_pure_objects_unchanged(facts: dict[str, object]) -> None:
    """Types and GC tracking of everything the pure twin and the user make."""
    first, second = facts["first"], facts["second"]
    assert isinstance(first, dict) and isinstance(second, dict)
    assert first["objects"] == second["objects"]
    assert first["user"] == second["user"]
    assert facts["kept_before"] == facts["kept_after"]


def test_classes_unchanged(facts: dict[str, object]) -> None:
    """No compiled module patches the model classes (namespaces, flags)."""
    first, second = facts["first"], facts["second"]
    assert isinstance(first, dict) and isinstance(second, dict)
    assert first["classes"] == second["classes"]


def test_pure_objects_are_freed(facts: dict[str, object]) -> None:
    """Messages the pure twin made are deallocated, not kept by a compiled module."""
    first, second = facts["first"], facts["second"]
    assert isinstance(first, dict) and isinstance(second, dict)
    assert first["leaked"] < 100 and second["leaked"] < 100, (first["leaked"], second["leaked"])
