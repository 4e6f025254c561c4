"""One request in, one reply out: validate the fields, make one service call, map its failure to an error code.

Every request gets exactly one reply, ``{"id", "ok": true, …}`` or ``{"id", "ok": false, "error":
{"code", "message"}}``; nothing a request holds can stop the host. Replies are kept within
:data:`~tallei_desktop.native_host.framing.MAX_MESSAGE`: a list or block that would not fit is cut
and the reply carries ``"truncated": true``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from tallei_desktop import __version__
from tallei_desktop.core import MAX_QUERY_CHARS, InvalidInput, KnownError, StoreLocked
from tallei_desktop.native_host import fields as f
from tallei_desktop.native_host.framing import MAX_MESSAGE
from tallei_desktop.native_host.worth import worth_keeping

if TYPE_CHECKING:  # the service pulls in numpy and apsw, which the first reply need not wait for
    from tallei_desktop.core import MemoryService

__all__ = ["MAX_CONTENT_CHARS", "MAX_DRAFT_CHARS", "Dispatcher", "HostError", "error_reply"]

log = logging.getLogger(__name__)

MAX_DRAFT_CHARS: Final = 8_000
MAX_CONTENT_CHARS: Final = 4_000
MAX_SEARCH_CHARS: Final = 1_000
MAX_IMPORT_ITEMS: Final = 500
_MAX_ERROR_MESSAGE: Final = 400
#: Room kept for the reply's own keys when a list or block is cut to fit.
_ENVELOPE: Final = 4_096


class HostError(Exception):
    """A request answered with an error reply: ``code`` is one of the contract's codes."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class _Request:
    id: str | int | None
    type: str
    body: Mapping[str, Any]


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _MAX_ERROR_MESSAGE else flat[: _MAX_ERROR_MESSAGE - 1] + "…"


def error_reply(request_id: str | int | None, code: str, message: str) -> dict[str, Any]:
    return {"id": request_id, "ok": False, "error": {"code": code, "message": _one_line(message)}}


def _size(reply: Mapping[str, Any]) -> int:
    return len(json.dumps(reply, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def fit(reply: dict[str, Any], limit: int = MAX_MESSAGE) -> dict[str, Any]:
    """``reply`` within ``limit`` bytes of JSON: trailing list items dropped, or the block cut, as needed."""
    if _size(reply) <= limit:
        return reply
    for key in ("hits", "memories"):
        items = reply.get(key)
        if isinstance(items, list):
            kept = list(items)
            while kept and _size({**reply, key: kept}) > limit - _ENVELOPE:
                kept.pop()
            return {**reply, key: kept, "truncated": True}
    block = reply.get("block")
    if isinstance(block, str):
        text = block
        while text and _size({**reply, "block": text}) > limit - _ENVELOPE:
            text = text[: len(text) * 3 // 4]
        return {**reply, "block": text, "truncated": True}
    raise HostError(
        "internal", "The answer is larger than a browser accepts; the details are in the log file."
    )


def _query_from_draft(draft: str) -> str:
    """The end of the draft, as much as a recall query takes: what the person typed last matters most."""
    flat = " ".join(draft.split())
    if len(flat) <= MAX_QUERY_CHARS:
        return flat
    cut = flat[-MAX_QUERY_CHARS:]
    space = cut.find(" ")
    return cut[space + 1 :] if 0 <= space < 80 else cut


class Dispatcher:
    """Answers requests from one browser extension on the service ``source`` gives (waiting for it to open).

    ``start_app`` starts the tray app and says whether it could; ``after_first`` runs once, after the
    first reply is built (where the model starts loading).
    """

    def __init__(
        self,
        source: Callable[[], MemoryService],
        *,
        start_app: Callable[[], bool],
        after_first: Callable[[], None] | None = None,
    ) -> None:
        self._source = source
        self._start_app = start_app
        self._after_first = after_first
        self._handlers: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
            "status": self._status,
            "recall": self._recall,
            "save": self._save,
            "classify": self._classify,
            "search": self._search,
            "recent": self._recent,
            "pause": self._pause,
            "import": self._import,
            "open_app": self._open_app,
        }

    def handle_bytes(self, data: bytes) -> dict[str, Any]:
        """The reply to one framed message's bytes."""
        try:
            message = json.loads(data.decode("utf-8"))
        except UnicodeDecodeError:
            return self._done(error_reply(None, "invalid", "The message is not UTF-8 text."))
        except json.JSONDecodeError as exc:
            return self._done(
                error_reply(None, "invalid", f"The message is not JSON ({exc.msg} at {exc.pos}).")
            )
        return self.handle(message)

    def handle(self, message: object) -> dict[str, Any]:
        """The reply to one decoded message."""
        request_id: str | int | None = None
        try:
            request = self._request(message)
            request_id = request.id
            handler = self._handlers.get(request.type)
            if handler is None:
                known = ", ".join(self._handlers)
                raise HostError(
                    "unknown_type", f"Unknown message type {request.type[:40]!r}; known: {known}."
                )
            reply = fit({**handler(request.body), "id": request_id, "ok": True})
        except HostError as exc:
            reply = error_reply(request_id, exc.code, str(exc))
        except f.BadField as exc:
            reply = error_reply(request_id, "invalid", str(exc))
        except StoreLocked as exc:
            reply = error_reply(request_id, "locked", str(exc))
        except InvalidInput as exc:
            reply = error_reply(request_id, "invalid", str(exc))
        except KnownError as exc:
            reply = error_reply(request_id, "unavailable", str(exc))
        except Exception:
            # The boundary of one request: keep the traceback, answer, and carry on.
            log.exception("a native-messaging request failed")
            reply = error_reply(
                request_id,
                "internal",
                "Tallei failed because of an internal error; the details are in its log file.",
            )
        return self._done(reply)

    def _done(self, reply: dict[str, Any]) -> dict[str, Any]:
        callback, self._after_first = self._after_first, None
        if callback is not None:
            callback()
        return reply

    @staticmethod
    def _request(message: object) -> _Request:
        if not isinstance(message, dict):
            raise HostError("invalid", "A message must be a JSON object with an id and a type.")
        raw_id = message.get("id")
        if isinstance(raw_id, bool) or not isinstance(raw_id, str | int):
            raise HostError("invalid", 'The field "id" must be a string or a whole number.')
        if isinstance(raw_id, str) and len(raw_id) > 200:
            raise HostError("invalid", 'The field "id" is longer than 200 characters.')
        kind = message.get("type")
        if not isinstance(kind, str):
            raise HostError("invalid", 'The field "type" is missing or not text.') from None
        # Attach the id before anything else can fail, so even a bad type is answered under it.
        return _Request(raw_id, kind, message)

    def _refuse_paused(self, service: MemoryService, platform: str, what: str) -> None:
        if platform in service.paused_platforms():
            raise HostError(
                "paused",
                f"Access for {platform} is paused in Tallei, so {what} did nothing. "
                "Resume it on the Assistants page of the Tallei app.",
            )

    # -- the message types -----------------------------------------------------------------------

    def _status(self, body: Mapping[str, Any]) -> dict[str, Any]:
        service = self._source()
        return {
            "version": __version__,
            "semantic_search": service.semantic_search,
            "memories": service.count(),
            "paused": sorted(p for p in service.paused_platforms() if p in f.PLATFORMS),
        }

    def _recall(self, body: Mapping[str, Any]) -> dict[str, Any]:
        platform = f.platform(body)
        draft = f.text(body, "draft", max_chars=MAX_DRAFT_CHARS)
        use = f.boolean(body, "use", default=False)
        service = self._source()
        self._refuse_paused(service, platform, "recall")
        result = service.recall(_query_from_draft(draft or ""), count_use=use)
        items = result.items
        return {
            "block": result.text,
            "count": len(items),
            "ids": [item.memory.id for item in items],
            "conflicts": result.open_conflicts,
        }

    def _save(self, body: Mapping[str, Any]) -> dict[str, Any]:
        platform = f.platform(body)
        content = f.text(body, "content", max_chars=MAX_CONTENT_CHARS, min_chars=1)
        source = f.source(body)
        memory_type = f.memory_type(body)
        service = self._source()
        self._refuse_paused(service, platform, "save")
        result = service.save(content or "", type=memory_type, platform=platform)
        log.info("saved %s from %s (%s)", result.id, platform, source)
        # "id" is the request's, echoed: the memory's id travels as "memory_id".
        return {
            "memory_id": result.id,
            "type": str(result.type),
            "confirmed_existing": result.confirmed_existing,
        }

    def _classify(self, body: Mapping[str, Any]) -> dict[str, Any]:
        from tallei_desktop.core import classify_text

        text = f.text(body, "text", max_chars=MAX_CONTENT_CHARS) or ""
        memory_type = classify_text(text)
        return {"type": str(memory_type), "worth_keeping": worth_keeping(text, memory_type)}

    def _search(self, body: Mapping[str, Any]) -> dict[str, Any]:
        query = f.text(body, "query", max_chars=MAX_SEARCH_CHARS, min_chars=1) or ""
        count = f.limit(body)
        hits = self._source().search(query, limit=count, count_use=False)
        return {
            "hits": [
                {
                    "id": h.memory.id,
                    "content": h.memory.content,
                    "type": str(h.memory.type),
                    "platforms": list(h.memory.platforms),
                    "date": h.memory.created_at.isoformat(),
                    "score": h.score,
                }
                for h in hits
            ]
        }

    def _recent(self, body: Mapping[str, Any]) -> dict[str, Any]:
        platform = f.platform(body)
        count = f.limit(body)
        service = self._source()
        self._refuse_paused(service, platform, "recent")
        memories = service.list(platform=platform, limit=count)
        return {
            "memories": [
                {"id": m.id, "content": m.content, "type": str(m.type), "date": m.created_at.isoformat()}
                for m in memories
            ]
        }

    def _pause(self, body: Mapping[str, Any]) -> dict[str, Any]:
        platform = f.platform(body)
        paused = f.boolean(body, "paused")
        service = self._source()
        service.set_platform_paused(platform, paused)
        return {"paused": sorted(p for p in service.paused_platforms() if p in f.PLATFORMS)}

    def _import(self, body: Mapping[str, Any]) -> dict[str, Any]:
        platform = f.platform(body)
        items = f.text_list(body, "items", most=MAX_IMPORT_ITEMS, max_chars=MAX_CONTENT_CHARS)
        service = self._source()
        self._refuse_paused(service, platform, "import")
        added = confirmed = skipped = 0
        for item in items:
            try:
                result = service.save(item, platform=platform)
            except InvalidInput as exc:
                log.info("import from %s skipped an item: %s", platform, exc)
                skipped += 1
                continue
            if result.confirmed_existing:
                confirmed += 1
            else:
                added += 1
        log.info("imported from %s: %d added, %d confirmed, %d skipped", platform, added, confirmed, skipped)
        return {"added": added, "confirmed": confirmed, "skipped": skipped}

    def _open_app(self, body: Mapping[str, Any]) -> dict[str, Any]:
        return {"started": self._start_app()}
