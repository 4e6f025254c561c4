"""Command line: argument parsing and dispatch.

The GUI and the MCP server are imported lazily inside their commands, so ``tallei-desktop mcp`` never
loads Qt and ``tallei-desktop save`` never loads the MCP SDK.
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import json
import logging
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tallei_desktop import __version__
from tallei_desktop.config import Settings, has_display, load_settings
from tallei_desktop.core import (
    APP_PLATFORM,
    Bucket,
    BugError,
    InvalidInput,
    KeyUnavailable,
    KnownError,
    Memory,
    MemoryType,
    StoreDamaged,
    StoreLocked,
    WrongKey,
)

if TYPE_CHECKING:  # the service pulls in numpy and apsw: not needed to start `mcp`
    from tallei_desktop.core import MemoryService

__all__ = ["main"]

log = logging.getLogger("tallei_desktop")

#: The browsers `connect` and `disconnect` register the native host with (app/browsers.py).
_BROWSERS = ("chrome", "chromium", "edge", "brave", "firefox")
#: The assistants `connect` writes settings for (app/clients.py's CLIENT_NAMES; a test keeps them equal),
#: spelled out so that parsing the command line does not import the module.
_CLIENTS = (
    "claude",
    "claude-code",
    "codex",
    "cursor",
    "vscode",
    "windsurf",
    "zed",
    "antigravity",
    "gemini",
    "lmstudio",
    "goose",
    "cline",
    "copilot",
)

#: `restore ID` brings back a forgotten memory; anything else names a backup file.
_MEMORY_ID = re.compile(r"^[0-9a-f]{12}$")

#: How long a command that reads first finishes the work earlier saves left (embedding, dedup,
#: conflicts) before answering without it.
PENDING_WAIT_S = 10.0


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one line, not a usage dump
        self.exit(2, f"{self.prog}: {message} (see --help)\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="tallei-desktop",
        description="Tallei: one private, encrypted memory shared by every AI assistant you use.",
    )
    p.add_argument("--version", action="version", version=f"tallei-desktop {__version__}")
    _add_global_options(p, in_command=False)
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    s = sub.add_parser("save", help="save a memory")
    s.add_argument("text", help="what to remember")
    s.add_argument("--type", choices=[t.value for t in MemoryType], help="memory type (default: detected)")
    s.add_argument("--platform", default="cli", help="who is saving it (default: cli)")
    s.add_argument("--pinned", action="store_true", help="pin the memory")
    s.add_argument("--json", action="store_true", help="print JSON")

    r = sub.add_parser("recall", help="print the context block an assistant would get for QUERY")
    r.add_argument("query", nargs="?", default="", help="what the conversation is about")
    r.add_argument("--json", action="store_true", help="print structured JSON instead of the text block")

    f = sub.add_parser("search", help="search memories by words and meaning")
    f.add_argument("query")
    f.add_argument("--limit", type=int, default=10)
    f.add_argument("--json", action="store_true")

    ls = sub.add_parser("list", help="list memories, newest first")
    ls.add_argument("--bucket", choices=[b.value for b in Bucket])
    ls.add_argument("--type", choices=[t.value for t in MemoryType])
    ls.add_argument("--platform")
    ls.add_argument("--status", default="active", help="active, archived, superseded, merged or deleted")
    ls.add_argument("--limit", type=int, default=50)
    ls.add_argument("--json", action="store_true")

    for name, text in (
        ("forget", "soft-delete a memory"),
        ("pin", "pin a memory"),
        ("unpin", "unpin a memory"),
        ("show", "show one memory with its provenance"),
    ):
        c = sub.add_parser(name, help=text)
        c.add_argument("id")

    pg = sub.add_parser("purge", help="erase a memory for good (cannot be undone)")
    pg.add_argument("id")
    pg.add_argument("--yes", action="store_true", help="do not ask for confirmation")

    sub.add_parser("conflicts", help="list open conflicts between assistants")
    rc = sub.add_parser("resolve", help="resolve a conflict")
    rc.add_argument("conflict_id")
    rc.add_argument("resolution", choices=["keep_first", "keep_second", "keep_both", "replace"])
    rc.add_argument("--text", help="the merged text, with 'replace'")

    d = sub.add_parser("doctor", help="show the store, key source, model state, counts and pending work")
    d.add_argument("--json", action="store_true")

    sub.add_parser("gui", help="start the tray app (the default when there is a display)")
    sub.add_parser("mcp", help="serve MCP over stdio (what the assistants `connect` sets up launch)")
    sv = sub.add_parser("serve", help="serve MCP over Streamable HTTP on loopback, without the tray")
    sv.add_argument("--host", help="address to bind (default 127.0.0.1; loopback only)")
    sv.add_argument("--port", type=int, help="port (default 8765)")
    tk = sub.add_parser("token", help="print the bearer token for the HTTP endpoint")
    tk.add_argument("--rotate", action="store_true", help="replace the token with a new one")
    nh = sub.add_parser(
        "native-host",
        help="talk to Tallei's browser extension (what the browser starts, over native messaging)",
    )
    nh.add_argument(
        "caller", nargs=argparse.REMAINDER, help="what the browser passes: the extension's origin"
    )
    cn = sub.add_parser(
        "connect", help="add Tallei to an assistant's MCP settings (chatgpt: how ChatGPT can reach it)"
    )
    cn.add_argument("client", nargs="?", metavar="CLIENT", choices=[*_CLIENTS, "chatgpt", *_BROWSERS])
    cn.add_argument("--all", action="store_true", help="connect every assistant found on this computer")
    cn.add_argument(
        "--print", dest="print_only", action="store_true", help="print the snippet, change nothing"
    )
    dc = sub.add_parser("disconnect", help="remove Tallei's entry from an assistant or a browser")
    dc.add_argument("client", metavar="CLIENT", choices=[*_CLIENTS, *_BROWSERS])
    _add_transfer_commands(sub)

    # People write `["mcp", "--data-dir", …]` into client settings by hand: every command takes the
    # global options too, meaning the same after the command as before it.
    for command in {id(c): c for c in sub.choices.values()}.values():
        _add_global_options(command, in_command=True)
    return p


def _add_transfer_commands(sub: Any) -> None:
    ex = sub.add_parser("export", help="write every memory to a file, encrypted with a passphrase")
    ex.add_argument("--out", type=Path, required=True, metavar="FILE", help="the file to write")
    ex.add_argument("--plain", action="store_true", help="write plain JSON, not encrypted")
    ex.add_argument("--force", action="store_true", help="replace FILE if it exists")
    im = sub.add_parser(
        "import", help="merge an export file into the store (importing twice changes nothing)"
    )
    im.add_argument("file", type=Path)
    sub.add_parser("backup", help="back up the store now (still encrypted) and print the backup's path")
    rs = sub.add_parser(
        "restore",
        help="restore the store from a backup (default: the newest), or bring back a forgotten memory",
    )
    rs.add_argument(
        "target", nargs="?", metavar="FILE|ID", help="a backup file, or the id of a forgotten memory"
    )
    rs.add_argument("--yes", action="store_true", help="replace the store from a backup without asking")


def _add_global_options(parser: argparse.ArgumentParser, *, in_command: bool) -> None:
    """Add --data-dir, --model-dir, --config and -v to ``parser``.

    In a command's own parser they default to nothing at all (SUPPRESS), so that leaving them out
    there keeps what was given before the command instead of resetting it.
    """
    unset: Any = argparse.SUPPRESS if in_command else None
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=unset,
        help="folder holding the encrypted store (default: the user data folder)",
    )
    parser.add_argument(
        "--model-dir", type=Path, default=unset, help="local folder with the embedding model (ONNX)"
    )
    parser.add_argument(
        "--config",
        type=Path,
        default=unset,
        help="settings file (default: config.toml in the user config folder)",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        default=argparse.SUPPRESS if in_command else False,
        help="log debug detail to stderr",
    )


def _settings(args: argparse.Namespace) -> Settings:
    return load_settings(
        config_path=args.config,
        overrides={"data_dir": args.data_dir, "model_dir": args.model_dir},
    )


def _open(settings: Settings, *, background: bool = True, preload: bool = False) -> MemoryService:
    from tallei_desktop.factory import build_service

    # Like ssh-agent: on a passphrase store, the running app gives the key when no passphrase is set.
    return build_service(settings, background=background, preload_model=preload, use_agent=True)


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def _print_json(value: Any) -> None:
    print(json.dumps(_jsonable(value), ensure_ascii=False, indent=2))


def _memory_line(m: Memory) -> str:
    pin = " pinned" if m.pinned else ""
    text = " ".join(m.content.split())
    if len(text) > 100:
        text = text[:99] + "…"
    return f"{m.id}  {m.type:<10} {m.confidence:<11} {m.platform:<10} {m.updated_at:%Y-%m-%d}{pin}  {text}"


def _cmd_save(args: argparse.Namespace, settings: Settings) -> int:
    # Fire and forget: the memory is committed before this returns; the next process embeds it.
    service = _open(settings, background=False)
    try:
        result = service.save(args.text, type=args.type, platform=args.platform, pinned=args.pinned)
    finally:
        service.close()
    if args.json:
        _print_json(asdict(result))
    else:
        verb = "confirmed existing" if result.confirmed_existing else "saved"
        print(f"{verb} {result.id} ({result.type}, {result.bucket})")
    return 0


def _with_service(
    fn: Callable[[MemoryService, argparse.Namespace], int], *, reads: bool = False
) -> Callable[[argparse.Namespace, Settings], int]:
    """A command running ``fn`` on a service opened for it; one that ``reads`` finishes pending work first."""

    def run(args: argparse.Namespace, settings: Settings) -> int:
        service = _open(settings, background=False)
        try:
            if reads:
                _finish_pending(service)
            return fn(service, args)
        finally:
            service.close()

    return run


def _finish_pending(service: MemoryService, timeout: float = PENDING_WAIT_S) -> None:
    """Finish what earlier saves left to do, or say on stderr what the answer may miss."""
    from tallei_desktop.app.opening import finish_pending

    left = finish_pending(service, timeout)
    if left:
        what = "memory is" if left == 1 else "memories are"
        print(
            f"tallei-desktop: {left} {what} still being indexed; results may miss them.",
            file=sys.stderr,
            flush=True,
        )


def _recall(service: MemoryService, args: argparse.Namespace) -> int:
    result = service.recall(args.query)
    if args.json:
        _print_json(asdict(result))
    else:
        print(result.text)
    return 0


def _search(service: MemoryService, args: argparse.Namespace) -> int:
    hits = service.search(args.query, limit=args.limit)
    if args.json:
        _print_json([asdict(h) for h in hits])
    for h in [] if args.json else hits:
        print(f"{h.score:.3f}  {_memory_line(h.memory)}")
    return 0


def _list(service: MemoryService, args: argparse.Namespace) -> int:
    memories = service.list(
        bucket=args.bucket, type=args.type, platform=args.platform, status=args.status, limit=args.limit
    )
    if args.json:
        _print_json([asdict(m) for m in memories])
    else:
        for m in memories:
            print(_memory_line(m))
        if not memories:
            print("No memories match.")
    return 0


def _by_id(action: str) -> Callable[[MemoryService, argparse.Namespace], int]:
    def run(service: MemoryService, args: argparse.Namespace) -> int:
        if action == "show":
            m = service.get(args.id)
            print(_memory_line(m))
            print(m.content)
            for p in m.provenance:
                who = "you in Tallei" if p.platform == APP_PLATFORM else p.platform
                before = f"; before: {' '.join(p.previous.split())!r}" if p.previous is not None else ""
                print(f"  {p.action} by {who} at {p.at:%Y-%m-%d %H:%M}{before}")
            return 0
        m = getattr(service, action)(args.id)
        print(f"{action}: {_memory_line(m)}")
        return 0

    return run


def _purge(service: MemoryService, args: argparse.Namespace) -> int:
    memory = service.get(args.id)
    if not args.yes:
        if not sys.stdin.isatty():
            print("tallei-desktop: purge erases for good; add --yes to confirm.", file=sys.stderr)
            return 2
        answer = input(f"Erase {memory.id} for good? [y/N] ")
        if answer.strip().lower() not in {"y", "yes"}:
            print("Nothing erased.")
            return 1
    service.purge(memory.id)
    print(f"purged {memory.id}")
    return 0


def _conflicts(service: MemoryService, args: argparse.Namespace) -> int:
    found = service.conflicts()
    for c in found:
        print(f"{c.id}  opened {c.created_at:%Y-%m-%d}")
        print(f"  first:  [{c.memory_a.platform}] {c.memory_a.content}")
        print(f"  second: [{c.memory_b.platform}] {c.memory_b.content}")
    if not found:
        print("No open conflicts.")
    return 0


def _resolve(service: MemoryService, args: argparse.Namespace) -> int:
    c = service.resolve_conflict(args.conflict_id, args.resolution, content=args.text)
    print(f"resolved {c.id}: {c.resolution}")
    return 0


def _doctor(service: MemoryService, args: argparse.Namespace) -> int:
    st = service.status()
    if args.json:
        _print_json(asdict(st))
        return 0
    print(f"store:        {st.path}")
    print(f"key source:   {st.key_source}")
    print(f"schema:       version {st.schema_version}")
    print(f"model:        {st.model_state}")
    print(f"semantic:     {'on' if st.semantic_search else 'off'}")
    for bucket, n in st.counts.items():
        print(f"{bucket + ':':<13} {n} active")
    print(f"archived:     {st.archived}")
    print(f"forgotten:    {st.deleted}")
    print(f"pending work: {st.pending_embeddings}")
    print(f"conflicts:    {st.open_conflicts} open")
    return 0


def _cmd_doctor(args: argparse.Namespace, settings: Settings) -> int:
    # The doctor looks at the model too, so load it here (in this short-lived process only).
    service = _open(settings, background=False, preload=False)
    try:
        load = getattr(service.embedder, "load", None)
        if callable(load):
            with contextlib.suppress(KnownError):  # reported in the model line
                load()
        _finish_pending(service)
        return _doctor(service, args)
    finally:
        service.close()


def _cmd_mcp(args: argparse.Namespace, settings: Settings) -> int:
    from tallei_desktop.mcp_server.entry import run_stdio

    return run_stdio(settings)


def _cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    from tallei_desktop.mcp_server.entry import run_http

    return run_http(settings, host=args.host, port=args.port)


def _cmd_gui(args: argparse.Namespace, settings: Settings) -> int:
    from tallei_desktop.gui import run_gui

    return run_gui(settings)


def _cmd_default(args: argparse.Namespace, settings: Settings) -> int:
    if has_display():
        return _cmd_gui(args, settings)
    print("tallei-desktop: no display, so serving MCP over HTTP without the tray.", file=sys.stderr)
    from tallei_desktop.mcp_server.entry import run_http

    return run_http(settings, host=None, port=None)


def _cmd_token(args: argparse.Namespace, settings: Settings) -> int:
    from tallei_desktop.mcp_server.entry import show_token

    return show_token(settings, rotate=args.rotate)


def _cmd_native_host(args: argparse.Namespace, settings: Settings) -> int:
    from tallei_desktop.native_host.entry import run_native_host

    return run_native_host(settings, args.caller)


def _cmd_browser(args: argparse.Namespace, settings: Settings, *, connect: bool) -> int:
    from tallei_desktop.app import browsers

    if connect:
        result = browsers.connect_browser(settings, args.client, dry_run=args.print_only)
    else:
        result = browsers.disconnect_browser(args.client)
    print(result.message)
    return 0


def _cmd_connect(args: argparse.Namespace, settings: Settings) -> int:
    if args.client in _BROWSERS:
        return _cmd_browser(args, settings, connect=True)
    from tallei_desktop.app import clients
    from tallei_desktop.app.key_agent import connect_note

    if args.all == (args.client is not None):
        raise InvalidInput("Name one assistant to connect, or use --all for every one found here.")
    if args.all:
        return _connect_all(settings, dry_run=args.print_only)
    print(clients.connect(settings, args.client, dry_run=args.print_only).message)
    note = connect_note(settings)
    if note is not None:
        print(note)
    return 0


def _connect_all(settings: Settings, *, dry_run: bool) -> int:
    from tallei_desktop.app import clients
    from tallei_desktop.app.key_agent import connect_note

    done = clients.connect_all(settings, dry_run=dry_run)
    if not done:
        print(
            "No assistant that can start Tallei was found on this computer. Name one to connect it anyway: "
            + ", ".join(clients.CLIENT_NAMES)
            + "."
        )
        return 0
    failed = 0
    for client, outcome in done:
        title = clients.CLIENT_TITLES[client]
        if isinstance(outcome, KnownError):
            failed += 1
            print(f"{title} was not connected: {outcome}", file=sys.stderr)
        else:
            print(f"{title}: {outcome.message}")
    note = connect_note(settings)
    if note is not None and failed < len(done):
        print(note)
    return 2 if failed else 0


def _cmd_disconnect(args: argparse.Namespace, settings: Settings) -> int:
    if args.client in _BROWSERS:
        return _cmd_browser(args, settings, connect=False)
    from tallei_desktop.app import clients

    print(clients.disconnect(args.client).message)
    return 0


def _export_passphrase(settings: Settings, *, twice: bool) -> str:
    """From the environment, else asked on the terminal (twice when choosing one)."""
    known = settings.export_passphrase or settings.passphrase
    if known:
        return known
    if not sys.stdin.isatty():
        raise InvalidInput(
            "An export passphrase is needed: set TALLEI_EXPORT_PASSPHRASE, run on a terminal, or use --plain."
            if twice
            else "This export is encrypted: set TALLEI_EXPORT_PASSPHRASE, or run on a terminal to type it."
        )
    first = getpass.getpass("Export passphrase: ")
    if not first:
        raise InvalidInput("The passphrase is empty; nothing was done.")
    if twice and getpass.getpass("Repeat the passphrase: ") != first:
        raise InvalidInput("The two passphrases differ; nothing was written.")
    return first


def _cmd_export(args: argparse.Namespace, settings: Settings) -> int:
    from tallei_desktop.core import encode_export, write_new_file

    if args.out.exists() and not args.force:
        raise InvalidInput(f"{args.out} already exists; choose another name or add --force to replace it.")
    passphrase = None if args.plain else _export_passphrase(settings, twice=True)
    service = _open(settings, background=False)
    try:
        document = service.export_memories()
    finally:
        service.close()
    write_new_file(args.out, encode_export(document, passphrase), force=args.force)
    kind = "plain JSON" if args.plain else "encrypted"
    memories, conflicts = len(document["memories"]), len(document["conflicts"])
    print(f"exported {memories} memories and {conflicts} conflicts to {args.out} ({kind})")
    return 0


def _import(service: MemoryService, args: argparse.Namespace, settings: Settings) -> int:
    from tallei_desktop.core import decode_export, is_encrypted

    try:
        data = args.file.read_bytes()
    except OSError as exc:
        raise InvalidInput(f"Cannot read {args.file}: {exc.strerror}.") from None
    passphrase = _export_passphrase(settings, twice=False) if is_encrypted(data) else None
    report = service.import_memories(decode_export(data, passphrase))
    print(
        f"imported {args.file}: {report.added} added, {report.confirmed} confirmed, {report.skipped} skipped; "
        f"conflicts: {report.conflicts_added} added, {report.conflicts_skipped} skipped"
    )
    if report.added:
        # New memories still need their embeddings and the duplicate and conflict checks.
        from tallei_desktop.app.opening import finish_pending

        left = finish_pending(service, PENDING_WAIT_S)
        if left:
            print(
                f"{left} imported memories are still to be indexed and checked for duplicates and "
                "conflicts; the tray app or the next assistant to start will finish that.",
                file=sys.stderr,
            )
    return 0


def _backup(service: MemoryService, args: argparse.Namespace, settings: Settings) -> int:
    from tallei_desktop.core import backups_dir

    service.configure_backups(backups_dir(settings.db_path), keep=settings.backup_keep)
    print(service.backup_now(backups_dir(settings.db_path)))
    return 0


def _cmd_restore(args: argparse.Namespace, settings: Settings) -> int:
    from tallei_desktop.core import restore_backup
    from tallei_desktop.factory import build_secrets

    target: str | None = args.target
    if target is not None and _MEMORY_ID.match(target.strip().lower()) and not Path(target).exists():
        args.id = target
        return _with_service(_by_id("restore"))(args, settings)
    backup = Path(target) if target is not None else None
    if not args.yes:
        what = str(backup) if backup is not None else "the newest backup"
        question = f"Replace the whole memory store with {what}? (the current file is kept beside it)"
        if not sys.stdin.isatty():
            print(
                f"tallei-desktop: restore replaces the whole store with {what}; add --yes to confirm.",
                file=sys.stderr,
            )
            return 2
        if input(f"{question} [y/N] ").strip().lower() not in {"y", "yes"}:
            print("Nothing restored.")
            return 1
    key = build_secrets(settings).store_key(create=False)
    result = restore_backup(settings.db_path, key.key, backup, key_source=key.source, now=datetime.now(UTC))
    print(f"restored {result.restored_from} to {settings.db_path}")
    if result.replaced is not None:
        print(f"the replaced store is kept as {result.replaced}")
    return 0


def _with_settings(
    fn: Callable[[MemoryService, argparse.Namespace, Settings], int],
) -> Callable[[argparse.Namespace, Settings], int]:
    def run(args: argparse.Namespace, settings: Settings) -> int:
        service = _open(settings, background=False)
        try:
            return fn(service, args, settings)
        finally:
            service.close()

    return run


_COMMANDS: dict[str, Callable[[argparse.Namespace, Settings], int]] = {
    "save": _cmd_save,
    "recall": _with_service(_recall, reads=True),
    "search": _with_service(_search, reads=True),
    "list": _with_service(_list, reads=True),
    "show": _with_service(_by_id("show"), reads=True),
    "forget": _with_service(_by_id("forget")),
    "pin": _with_service(_by_id("pin")),
    "unpin": _with_service(_by_id("unpin")),
    "purge": _with_service(_purge),
    "conflicts": _with_service(_conflicts, reads=True),
    "resolve": _with_service(_resolve),
    "doctor": _cmd_doctor,
    "mcp": _cmd_mcp,
    "serve": _cmd_serve,
    "gui": _cmd_gui,
    "default": _cmd_default,
    "token": _cmd_token,
    "connect": _cmd_connect,
    "disconnect": _cmd_disconnect,
    "native-host": _cmd_native_host,
    "export": _cmd_export,
    "import": _with_settings(_import),
    "backup": _with_settings(_backup),
    "restore": _cmd_restore,
}


def _configure_logging(verbose: bool) -> None:
    # stderr only: stdout belongs to command output (and, for `mcp`, to the protocol).
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )


def _advice(exc: KnownError) -> str:
    """What a person at the command line can do about a key or store problem (the core only describes it)."""
    if isinstance(exc, StoreLocked):
        return " Or set TALLEI_PASSPHRASE to the passphrase, then try again."
    if isinstance(exc, WrongKey):
        return " Set TALLEI_PASSPHRASE to the passphrase this store was created with, then try again."
    if isinstance(exc, KeyUnavailable):
        return " If the store key is guarded by a passphrase, set TALLEI_PASSPHRASE to it, then try again."
    if isinstance(exc, StoreDamaged):
        return " `tallei-desktop restore` puts the newest backup back (the damaged file is kept)."
    return ""


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    _configure_logging(args.verbose)
    command = args.command or "default"
    try:
        settings = _settings(args)
        return _COMMANDS[command](args, settings)
    except KnownError as exc:
        print(f"tallei-desktop: {exc}{_advice(exc)}", file=sys.stderr)
        return 2
    except (BugError, Exception) as exc:
        log.exception("internal error")
        print(f"tallei-desktop: internal error: {exc}. Please report it.", file=sys.stderr)
        return 70
    except KeyboardInterrupt:
        return 130
