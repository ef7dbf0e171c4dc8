"""`python -m tickq`: the same command as the `tickq` script (the default agent runner uses it)."""

import sys

from tickq.cli.main import main

sys.exit(main())
