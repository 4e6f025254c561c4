"""The MCP server: tools over the memory service, wire schemas, client platforms, stdio and Streamable HTTP."""
