"""The entry point of both bundle executables.

``tallei-desktop`` is the command line (and what MCP clients launch); the windowed ``Tallei`` starts
the tray app when given no command. Both are built from this one script, so the program tells them
apart by the name it was started as.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def _main() -> int:
    from tallei_desktop.app.paths import WINDOWED_NAME
    from tallei_desktop.cli import main

    args = sys.argv[1:]
    windowed = Path(sys.executable).stem == WINDOWED_NAME
    if windowed or not args or "gui" in args:
        # Once Qt is loaded, shiboken inspects every newly imported module; in a bundle, where no
        # source is at hand, that re-enters pydantic's lazy attributes halfway through their import
        # and fails. Importing the HTTP endpoint's stack first keeps those imports out of its way.
        import tallei_desktop.mcp_server.http_endpoint  # noqa: F401
    if windowed:
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
