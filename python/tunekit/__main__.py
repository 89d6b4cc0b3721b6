"""``python -m tunekit ...`` runs the ``tunekit`` command installed with the package (the same
binary as the C++ build's: ``cache list|show|clear``, ``artifact``, ``table``, ``device``)."""

import os
import sys

from . import cli_path


def main() -> int:
    path = cli_path()
    if path is None:
        print("tunekit: this installation has no tunekit command (CLI11 was not found when the "
              "package was built; install libcli11-dev and reinstall)", file=sys.stderr)
        return 2
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(path, [path, *sys.argv[1:]])
    return 0  # pragma: no cover - execv does not return


if __name__ == "__main__":
    sys.exit(main())
