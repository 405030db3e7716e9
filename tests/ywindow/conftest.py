from __future__ import annotations

from tests.conftest import twin_fixtures

codec, py_codec, c_codec = twin_fixtures("gamecodec.ywindow")
