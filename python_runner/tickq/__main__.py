"""`python -m tickq`: the same command as the `tickq` script."""

import sys

from tickq.cli.main import main

sys.exit(main())
