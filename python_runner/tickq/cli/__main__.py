"""`python -m tickq.cli`: the `tickq` command."""

import sys

from tickq.cli.main import main

sys.exit(main())
