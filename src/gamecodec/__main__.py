"""``python -m gamecodec``: the ``gamecodec`` command."""

from gamecodec.cli import main

raise SystemExit(main())
