"""The native-messaging host: what a browser starts for Tallei's extension (``tallei-desktop native-host``).

Messages are the browser's framing (a 4-byte native-endian length, then UTF-8 JSON) on stdin and
stdout; the contract is docs/native-messaging.md. Nothing here imports Qt or the MCP SDK.
"""
