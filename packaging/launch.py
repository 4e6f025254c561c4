"""The entry point of both bundle executables.

``tallei-desktop`` is the command line (and what MCP clients launch); the windowed ``Tallei`` starts
the tray app when given no command. They share one Python archive, so the program tells them apart
by the name it was started as.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def _main() -> int:
    from tallei_desktop.app.paths import WINDOWED_NAME
    from tallei_desktop.cli import main

    args = sys.argv[1:]
    if Path(sys.executable).stem == WINDOWED_NAME:
        # A windowed Windows program has no standard streams; give writes somewhere to go.
        if sys.stdout is None:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
        if sys.stderr is None:
            sys.stderr = open(os.devnull, "w")  # noqa: SIM115
        if not args:
            args = ["gui"]
    return main(args)


if __name__ == "__main__":
    sys.exit(_main())
