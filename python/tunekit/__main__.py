"""``python -m tunekit ...`` runs the ``tunekit`` command installed with the package (the same
binary as the C++ build's: ``cache list|show|clear``, ``artifact``, ``table``, ``device``,
``report``).

``tunekit report`` runs ``python3 -m tunekit.report`` with the interpreter ``TUNEKIT_PYTHON``
names, else ``python3`` on PATH. Run this way, the command gets this interpreter (the one that
has the package, active virtual environment or not) as ``TUNEKIT_PYTHON`` unless that is set."""

import os
import sys

from . import cli_path


def main() -> int:
    path = cli_path()
    if path is None:
        print("tunekit: this installation has no tunekit command (CLI11 was not found when the "
              "package was built; install libcli11-dev and reinstall)", file=sys.stderr)
        return 2
    env = dict(os.environ)
    if not env.get("TUNEKIT_PYTHON") and sys.executable:
        env["TUNEKIT_PYTHON"] = sys.executable
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(path, [path, *sys.argv[1:]], env)
    return 0  # pragma: no cover - execve does not return


if __name__ == "__main__":
    sys.exit(main())
