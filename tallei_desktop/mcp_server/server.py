"""``build_server``: the Tallei tools over a :class:`MemoryService`, as an MCP server.

The tools themselves live in :mod:`tallei_desktop.mcp_server.tools`, one function each; this module
binds them to a service and makes every tool error one line a host model can act on.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.stdio import stdio_server
from mcp_types import CallToolResult, InputRequiredResult, ToolAnnotations
from pydantic import ValidationError

from tallei_desktop import __version__
from tallei_desktop.mcp_server.schemas import flat_schema
from tallei_desktop.mcp_server.tools import TOOLS, ServiceCalls, ServiceSource, ToolSpec, check_access

__all__ = ["INSTRUCTIONS", "SERVER_NAME", "ServiceSource", "TalleiServer", "build_server"]

log = logging.getLogger(__name__)

SERVER_NAME = "tallei"

INSTRUCTIONS = """\
Tallei is the person's own memory, shared by every AI assistant they use: what they tell one \
assistant, every other one can recall. It is stored encrypted on their computer.

- At the start of every conversation, and again whenever the topic changes, call recall_memories \
with a few words about the topic before you answer. Use what it returns as things you already \
know about the person; do not recite it back.
- Whenever the person states a preference, a decision, a fact about themselves, their work or \
their projects, a dated event, a lesson learned or something that failed, call save_memory with \
one self-contained sentence, without asking first. Saving something already known just confirms it.
- When the person says a memory is wrong or outdated, find it with search_memories and fix it \
with update_memory or remove it with forget_memory.
- If recall reports a conflict between assistants, ask the person which version is right and \
settle it with resolve_conflict.
- Never save passwords, keys or other secrets.
"""

_FIELD_ERRORS_SHOWN = 3


def _describe_invalid(error: ValidationError) -> str:
    problems = error.errors(include_url=False, include_input=False, include_context=False)
    parts = [
        f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
        for e in problems[:_FIELD_ERRORS_SHOWN]
    ]
    if len(problems) > _FIELD_ERRORS_SHOWN:
        parts.append(f"and {len(problems) - _FIELD_ERRORS_SHOWN} more")
    return "; ".join(parts)


class TalleiServer(MCPServer[Any]):
    """An :class:`MCPServer` whose tool errors are always one line a host model can act on."""

    def __init__(self, *, calls: ServiceCalls | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._known_tools: set[str] = set()
        self._calls = calls  # for the paused-assistant check; None checks nothing

    def register(
        self, fn: Callable[..., Any], *, title: str, description: str, annotations: ToolAnnotations
    ) -> None:
        """Add ``fn`` as the tool of the same name, with an output schema taken from its return type
        and published flat (:func:`flat_schema`); results are still checked against the model."""
        self.add_tool(
            fn, title=title, description=description, annotations=annotations, structured_output=True
        )
        tool = self._tool_manager.get_tool(fn.__name__)
        if tool is not None and tool.fn_metadata.output_schema is not None:
            tool.fn_metadata.output_schema = flat_schema(tool.fn_metadata.output_schema)
        self._known_tools.add(fn.__name__)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        if name not in self._known_tools:
            raise ToolError(
                f"There is no tool named {name[:60]!r}; the tools are {', '.join(sorted(self._known_tools))}."
            )
        if self._calls is not None:
            await check_access(self._calls, name, arguments, context or Context())
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise
        except ToolError as exc:
            # The SDK quotes pydantic's multi-line report, input values included; the model only
            # needs to know which argument is wrong and why.
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(
                    f"Invalid arguments for {name}: {_describe_invalid(exc.__cause__)}"
                ) from exc.__cause__
            raise

    async def run_stdio_lines(self, stdin: anyio.AsyncFile[str]) -> None:
        """As :meth:`run_stdio_async`, reading messages from ``stdin`` (one per line) instead of fd 0."""
        async with stdio_server(stdin=stdin) as (read_stream, write_stream):
            lowlevel = self._lowlevel_server
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())


def _bound(tool: ToolSpec, calls: ServiceCalls) -> Callable[..., Awaitable[Any]]:
    """``tool.fn`` with its first argument fixed to ``calls``, showing the SDK the remaining signature.

    The SDK builds the tool's name, argument schema, output schema and context argument from the
    function's ``__name__``, signature and type hints, so those are the tool function's own, less
    ``calls``: the published tool is exactly what the function declares.
    """
    fn = tool.fn

    @functools.wraps(fn)
    async def call(*args: Any, **kwargs: Any) -> Any:
        return await fn(calls, *args, **kwargs)

    signature = inspect.signature(fn, eval_str=True)
    first, *rest = signature.parameters.values()
    call.__signature__ = signature.replace(parameters=rest)  # type: ignore[attr-defined]
    call.__annotations__ = {
        k: v for k, v in inspect.get_annotations(fn, eval_str=True).items() if k != first.name
    }
    return call


def build_server(source: ServiceSource, *, instructions: str = INSTRUCTIONS) -> TalleiServer:
    """An MCP server offering the Tallei tools over ``source``; build one per service.

    ``source`` is the service, or a callable returning it that may block while the store opens.
    The server owns nothing: whoever built the service closes it.
    """
    calls = ServiceCalls(source)
    server = TalleiServer(
        calls=calls,
        name=SERVER_NAME,
        title="Tallei",
        version=__version__,
        instructions=instructions,
        log_level="WARNING",
    )
    for tool in TOOLS:
        server.register(
            _bound(tool, calls), title=tool.title, description=tool.description, annotations=tool.annotations
        )
    return server
