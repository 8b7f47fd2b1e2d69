"""`python -m bench`: every bench part, then the summary (bench/runner.py)."""

import sys

from bench.runner import main

sys.exit(main())
