#!/bin/sh
# Install the built Tallei folder for this user: the program under $PREFIX/lib/tallei-desktop, the
# command `tallei-desktop` in $PREFIX/bin, a menu entry and icons. PREFIX defaults to ~/.local.
#
#   ./install.sh               from inside the built folder
#   ./install.sh BUILD_FOLDER  from anywhere else
#
# Run it again to update; your memories, settings and assistants' configuration are never touched.
set -eu

here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
src=${1:-$here}
src=$(CDPATH= cd -- "$src" && pwd)
prefix=${PREFIX:-$HOME/.local}
appdir=$prefix/lib/tallei-desktop
bindir=$prefix/bin
apps=$prefix/share/applications
icons=$prefix/share/icons/hicolor

if [ ! -x "$src/tallei-desktop" ] || [ ! -x "$src/Tallei" ] || [ ! -d "$src/share" ]; then
    echo "install.sh: $src is not a built Tallei folder (no tallei-desktop, Tallei and share/ in it)." >&2
    echo "Build one with 'make package', or pass its folder: ./install.sh dist/tallei-desktop" >&2
    exit 2
fi

# Quote a path for a desktop entry's Exec key (Desktop Entry Specification: double quotes with
# " ` $ \ escaped inside, then every backslash doubled as the key is a string; % doubled).
exec_quote() {
    case $1 in
        *[!A-Za-z0-9_./+,:@=-]*)
            quoted=$(printf '%s' "$1" | sed -e 's/[\\"`$]/\\&/g' -e 's/\\/\\\\/g' -e 's/%/%%/g')
            printf '"%s"' "$quoted" ;;
        *) printf '%s' "$1" ;;
    esac
}

if [ "$src" != "$appdir" ]; then
    mkdir -p "$prefix/lib"
    rm -rf "$appdir.new"
    cp -R "$src" "$appdir.new"
    rm -rf "$appdir"
    mv "$appdir.new" "$appdir"
fi

mkdir -p "$bindir" "$apps"
ln -sfn "$appdir/tallei-desktop" "$bindir/tallei-desktop"

exec_line="Exec=$(exec_quote "$appdir/Tallei")"
# sed would read & and \ in the replacement, so the line is put in with awk instead.
awk -v line="$exec_line" '/^Exec=/ { print line; next } { print }' \
    "$appdir/share/applications/tallei-desktop.desktop" > "$apps/tallei-desktop.desktop.new"
mv "$apps/tallei-desktop.desktop.new" "$apps/tallei-desktop.desktop"

for size in scalable 48x48 128x128 256x256; do
    for file in "$appdir/share/icons/hicolor/$size/apps/"tallei-desktop.*; do
        [ -e "$file" ] || continue
        mkdir -p "$icons/$size/apps"
        cp "$file" "$icons/$size/apps/"
    done
done

# Menus notice the new entry by themselves. An icon cache, where one exists, must list the new icons;
# where none exists, none is created (desktops then read the folder).
if [ -f "$icons/icon-theme.cache" ] && command -v gtk-update-icon-cache >/dev/null 2>&1; then
    gtk-update-icon-cache -q -t "$icons" 2>/dev/null || true
fi

echo "Installed Tallei in $appdir."
echo "Start it from your applications menu (Tallei), or run: tallei-desktop --help"
case ":${PATH:-}:" in
    *":$bindir:"*) ;;
    *) echo "Note: $bindir is not on your PATH; add it to run tallei-desktop by name." ;;
esac
echo "Connect an assistant with, for example: $bindir/tallei-desktop connect claude"
