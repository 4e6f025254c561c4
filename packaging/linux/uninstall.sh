#!/bin/sh
# Remove what install.sh put in place (the program, the command, the menu entry, the icons) and the
# start-at-login entry. PREFIX defaults to ~/.local, as for install.sh.
#
# Your memories, settings, logs and downloaded model stay where they are (listed at the end), and so
# do the entries `tallei-desktop connect` wrote into your assistants' settings.
set -eu

prefix=${PREFIX:-$HOME/.local}
appdir=$prefix/lib/tallei-desktop
config_home=${XDG_CONFIG_HOME:-$HOME/.config}

removed=0
remove() {
    if [ -e "$1" ] || [ -L "$1" ]; then
        rm -f "$1"
        removed=1
    fi
}

if [ -d "$appdir" ]; then
    if [ ! -e "$appdir/tallei-desktop" ]; then
        echo "uninstall.sh: $appdir does not look like a Tallei installation; leaving it alone." >&2
        exit 2
    fi
    rm -rf "$appdir"
    removed=1
fi
link=$prefix/bin/tallei-desktop
if [ -L "$link" ]; then
    case $(readlink "$link") in
        "$appdir"/*) remove "$link" ;;
    esac
fi
remove "$prefix/share/applications/tallei-desktop.desktop"
for size in scalable 48x48 128x128 256x256; do
    remove "$prefix/share/icons/hicolor/$size/apps/tallei-desktop.svg"
    remove "$prefix/share/icons/hicolor/$size/apps/tallei-desktop.png"
done
remove "$config_home/autostart/tallei-desktop.desktop"

icons=$prefix/share/icons/hicolor
if [ -f "$icons/icon-theme.cache" ] && command -v gtk-update-icon-cache >/dev/null 2>&1; then
    gtk-update-icon-cache -q -t "$icons" 2>/dev/null || true
fi

if [ "$removed" = 1 ]; then
    echo "Removed Tallei from $prefix."
else
    echo "Tallei was not installed in $prefix; nothing removed."
fi
echo "Your data is kept: memories in ${XDG_DATA_HOME:-$HOME/.local/share}/tallei-desktop,"
echo "settings in $config_home/tallei-desktop, the model in ${XDG_CACHE_HOME:-$HOME/.cache}/tallei-desktop."
echo "Delete those folders yourself to erase everything."
