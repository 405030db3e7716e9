"""One LLUDP packet decoded and encoded again and again (a cache's best case, not traffic).

The five sample packets (``gamecodec.lludp.sample.bench_messages``) through the
public ``lludp.decode`` and ``lludp.encode``, beside Hippolyzer (where it is
importable) in each group.
"""

from __future__ import annotations

from typing import Any

import pytest

from gamecodec import lludp
from gamecodec.lludp._bench import hippolyzer
from gamecodec.lludp.sample import bench_messages

PACKETS = {name: lludp.encode(m) for name, m in bench_messages().items()}
HIPPOLYZER = hippolyzer()


@pytest.mark.parametrize("impl", ["gamecodec", "hippolyzer"])
@pytest.mark.parametrize("case", list(PACKETS))
def test_decode(benchmark: Any, case: str, impl: str) -> None:
    benchmark.group = f"lludp decode, one packet again and again: {case}"
    data = PACKETS[case]
    if impl == "gamecodec":
        benchmark(lludp.decode, data)
    elif isinstance(HIPPOLYZER, str):
        pytest.skip(HIPPOLYZER)
    else:
        benchmark(HIPPOLYZER["decode"], data)


@pytest.mark.parametrize("impl", ["gamecodec", "hippolyzer"])
@pytest.mark.parametrize("case", list(PACKETS))
def test_encode(benchmark: Any, case: str, impl: str) -> None:
    benchmark.group = f"lludp encode, one packet again and again: {case}"
    data = PACKETS[case]
    if impl == "gamecodec":
        assert benchmark(lludp.encode, lludp.decode(data)) == data
    elif isinstance(HIPPOLYZER, str):
        pytest.skip(HIPPOLYZER)
    else:
        benchmark(HIPPOLYZER["encode"], HIPPOLYZER["decode"](data))
