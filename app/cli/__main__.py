"""``python -m specedit.app.cli``: the ``specedit`` command."""

import sys

from .main import main

sys.exit(main())
