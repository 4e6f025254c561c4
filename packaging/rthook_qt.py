# Bundle runtime hook, in place of PyInstaller's PySide6 hook: point Qt at the bundled plugins without
# importing Qt. PyInstaller's own hook imports PySide6.QtCore in every process, which would load Qt
# into `tallei-desktop mcp` and every command-line call, and install shiboken's import hook there.
# PySide6's PyPI wheels embed their own qt.conf, so the plugin path is all that is left to set.
import os
import sys

os.environ["QT_PLUGIN_PATH"] = os.path.join(
    sys._MEIPASS, "PySide6", *(() if sys.platform.startswith("win") else ("Qt",)), "plugins"
)
if sys.platform.startswith("win"):  # QtNetwork looks for OpenSSL DLLs on PATH
    os.environ["PATH"] = sys._MEIPASS + os.pathsep + os.environ.get("PATH", "")
