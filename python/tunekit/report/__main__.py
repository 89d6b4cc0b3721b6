"""``python -m tunekit.report``: see ``tunekit.report``."""

import sys

from ._cli import main

if __name__ == "__main__":
    sys.exit(main())
