"""What every front-end needs beyond the engine, with no Qt and no MCP: logging to a file, opening the
service in the background, and writing Tallei into other programs' MCP settings."""
