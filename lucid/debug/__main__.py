"""`python -m lucid.debug`: see lucid.debug.cli."""

import sys

from lucid.debug.cli import main

sys.exit(main())
