"""The MCP server: tools over the memory service, stdio and Streamable HTTP transports, client setup."""
