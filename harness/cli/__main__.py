"""``python -m harness.cli``: the same as the ``recall-eval`` command."""

import sys

from harness.cli import main

sys.exit(main())
