"""The training run of the profile-guided LLUDP build still works.

``setup.py`` builds the two LLUDP extensions instrumented, runs
``tools/pgo_lludp.py`` on them and rebuilds with the profile; when the run
fails it warns and builds them plain. A script broken by a later change would
then only cost speed, silently: this test makes that failure loud.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import IMPLS, ROOT, load_twin

SCRIPT = ROOT / "tools" / "pgo_lludp.py"


@pytest.mark.skipif("c" not in IMPLS, reason="the compiled twins are not under test")
def test_training_run_succeeds_on_the_compiled_twins() -> None:
    if not SCRIPT.exists():
        pytest.skip(f"{SCRIPT} is not beside the tests")
    codec = load_twin("gamecodec.lludp", "_codec", "c")
    load_twin("gamecodec.lludp", "_circuit", "c")
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(codec.__file__)))
    env = {**os.environ, "PYTHONPATH": package_root}
    done = subprocess.run(
        [sys.executable, str(SCRIPT)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # it reports how much it did: thousands of packets through the codec and the circuits
    words = done.stdout.split()
    coded, delivered = int(words[1]), int(words[4])
    assert coded > 5000 and delivered > 5000, done.stdout
