"""The server's network layer on trio streams: HTTP/1.1 through h11, WebSocket through wsproto."""
