"""A local TCP proxy whose connections can all be cut at once: a network blip between a page
and the lab, as a student's Wi-Fi drops for a moment. Written here (40 lines of sockets)
because a blip needs open connections closed from outside, which chromium's offline
emulation does not do: it fails new requests but leaves the page's heartbeat stream open
(tried), so the server never sees the page go."""

from __future__ import annotations

import socket
import threading


class Proxy:
    """Listens on 127.0.0.1:port and forwards every connection to 127.0.0.1:target."""

    def __init__(self, target: int) -> None:
        self.target = target
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                page, _ = self._server.accept()
            except OSError:  # closed
                return
            try:
                lab = socket.create_connection(("127.0.0.1", self.target))
            except OSError:  # the lab is gone: refuse this one, keep listening
                _close(page)
                continue
            with self._lock:
                self._open += [page, lab]
            for a, b in ((page, lab), (lab, page)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        _close(src, dst)

    def cut(self) -> None:
        """Close every open connection, both ways; new ones are accepted as before."""
        with self._lock:
            open_, self._open = self._open, []
        _close(*open_)

    def close(self) -> None:
        """Stop listening (a blocked accept() wakes on the shutdown) and cut what is open."""
        _close(self._server)
        self.cut()


def _close(*socks: socket.socket) -> None:
    for s in socks:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()
