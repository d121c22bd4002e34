#!/usr/bin/env python3
"""A minimal RFC 6455 WebSocket client (ws:// only, Python's standard library only).

It is what the web panel's tests and load test (scripts/web/load-test.py) and the DevTools driver
(scripts/web/cdp.py) speak WebSocket with: CI installs nothing from PyPI.

    ws = WebSocket.connect("ws://127.0.0.1:8080/api/status", headers={"Authorization": "Bearer …"})
    message = ws.recv()            # str for a text message, bytes for a binary one
    ws.send_text('{"hello": 1}')
    ws.close()

For many connections on one thread, register `ws` (it has a `fileno()`) with a `selectors` selector and call
`ws.read_available()` when it is readable: it reads what has arrived without waiting and returns the complete
messages; then `ws.closed` says whether the connection has ended. Pings are answered, fragmented messages
joined, and a message longer than `max_message` (4 MB by default) fails the connection with 1009, as the RFC
asks of a client that will not take it.

Run as a script it connects, prints the messages it receives for a while, and closes:

    scripts/web/wsclient.py ws://127.0.0.1:8080/api/status --seconds 2
"""

import argparse
import base64
import collections
import hashlib
import os
import socket
import struct
import sys
import time
import urllib.parse

# RFC 6455 §1.3: the server proves it read our key by hashing it with this GUID.
_ACCEPT_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

_CONTINUATION, _TEXT, _BINARY, _CLOSE, _PING, _PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA

DEFAULT_MAX_MESSAGE = 4 * 1024 * 1024
# A handshake response longer than this is not a WebSocket server's.
_MAX_HANDSHAKE = 16 * 1024


class WebSocketError(Exception):
    """The handshake failed or the server broke the protocol."""


class ConnectionClosed(WebSocketError):
    """The connection is closed: by a close frame (its code and reason), or by the TCP connection ending (1006)."""

    def __init__(self, code, reason=""):
        super().__init__(f"WebSocket closed ({code}{': ' + reason if reason else ''})")
        self.code = code
        self.reason = reason


class WebSocket:
    """One client connection. Not thread-safe: use it from one thread."""

    def __init__(self, sock, buffered=b"", timeout=10.0, max_message=DEFAULT_MAX_MESSAGE):
        """Wraps a socket whose handshake is done; `buffered` is what arrived after the handshake response."""
        self._sock = sock
        self._timeout = timeout
        self._max_message = max_message
        self._buffer = bytearray()
        self._position = 0  # parsed up to here: frames are consumed by index, the buffer compacted after
        self._messages = collections.deque()
        self._fragments = None  # (opcode, bytearray) of a message whose last fragment has not arrived
        self._close_sent = False
        self._closed = None  # ConnectionClosed once the connection has ended
        # A server may send its first frames in the same packet as the handshake response.
        if buffered:
            self._receive(buffered)

    @classmethod
    def connect(cls, url, headers=None, timeout=10.0, max_message=DEFAULT_MAX_MESSAGE, source=None):
        """Opens `url` (ws://host[:port]/path), sending `headers` with the handshake.

        `timeout` (seconds) bounds the connection, the handshake and, later, each blocking call. `source`:
        the local address to connect from (any port)."""
        parts = urllib.parse.urlsplit(url)
        if parts.scheme != "ws" or not parts.hostname:
            raise WebSocketError(f"not a ws:// URL: {url}")
        port = parts.port or 80
        host_header = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        if parts.port:
            host_header += f":{port}"
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        key = base64.b64encode(os.urandom(16)).decode()
        lines = [
            f"GET {target} HTTP/1.1",
            f"Host: {host_header}",
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key}",
            "Sec-WebSocket-Version: 13",
        ] + [f"{name}: {value}" for name, value in (headers or {}).items()]
        sock = socket.create_connection(
            (parts.hostname, port), timeout=timeout, source_address=(source, 0) if source else None
        )
        try:
            # Status messages are small and latency is measured: do not let Nagle hold our frames back.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
            response = b""
            while b"\r\n\r\n" not in response:
                chunk = sock.recv(4096)
                if not chunk:
                    raise WebSocketError(f"{url}: the server closed the connection during the handshake")
                response += chunk
                if len(response) > _MAX_HANDSHAKE:
                    raise WebSocketError(f"{url}: handshake response longer than {_MAX_HANDSHAKE} bytes")
            head, _, rest = response.partition(b"\r\n\r\n")
            _check_handshake(url, head.decode("iso-8859-1"), key)
        except BaseException:
            sock.close()
            raise
        return cls(sock, rest, timeout, max_message)

    def fileno(self):
        """The socket's descriptor, for `selectors`."""
        return self._sock.fileno()

    @property
    def closed(self):
        """None while the connection is open; once it has ended, the ConnectionClosed saying how."""
        return self._closed

    def send_text(self, text):
        self._send_frame(_TEXT, text.encode())

    def recv(self, timeout=None):
        """The next message (str or bytes), waiting up to `timeout` seconds (default: the connection's).

        Raises TimeoutError when none arrived in time, ConnectionClosed once the connection has ended."""
        deadline = time.monotonic() + (self._timeout if timeout is None else timeout)
        while not self._messages:
            if self._closed:
                raise self._closed
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no WebSocket message in time")
            self._read(remaining)
        return self._messages.popleft()

    def read_available(self):
        """The messages complete after reading, without waiting, whatever has arrived (maybe none).

        Check `closed` after each call: when the connection has ended its socket is closed, so a selector
        will not report it again. Raises ConnectionClosed if called with the connection already ended and
        no message waiting."""
        if self._closed and not self._messages:
            raise self._closed
        if not self._closed:
            self._read(0)
        messages = list(self._messages)
        self._messages.clear()
        return messages

    def close(self, code=1000, reason="", timeout=2.0):
        """Sends a close frame, waits up to `timeout` seconds for the server's, and closes the socket.

        Safe to call again, and on a connection that has ended."""
        try:
            if not self._closed:
                self._send_close(code, reason)
                # The server answers with its own close frame; messages still in flight are dropped.
                deadline = time.monotonic() + timeout
                while not self._closed and (remaining := deadline - time.monotonic()) > 0:
                    self._read(remaining)
        except OSError:
            pass  # a timeout, or the server went first: either way there is nothing left to wait for
        finally:
            self._end(ConnectionClosed(code, reason))

    # Frames

    def _send_frame(self, opcode, payload):
        if self._closed:
            raise self._closed
        length = len(payload)
        if length < 126:
            header = struct.pack("!BB", 0x80 | opcode, 0x80 | length)
        elif length < 1 << 16:
            header = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, length)
        else:
            header = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, length)
        # A client masks every frame (RFC 6455 §5.3) with a fresh, unpredictable key.
        key = os.urandom(4)
        self._sock.settimeout(self._timeout)  # a read may have left the socket non-blocking
        self._sock.sendall(header + key + _masked(payload, key))

    def _send_close(self, code, reason):
        if not self._close_sent:
            self._close_sent = True
            self._send_frame(_CLOSE, struct.pack("!H", code) + reason.encode()[:123])

    def _read(self, timeout):
        """Reads once what has arrived, waiting up to `timeout` seconds (0: not at all), and parses it."""
        self._sock.settimeout(timeout)
        try:
            data = self._sock.recv(1 << 20)
        except BlockingIOError:
            return  # nothing has arrived (timeout 0)
        except TimeoutError:
            raise TimeoutError("no WebSocket message in time") from None
        except OSError as error:  # a reset: for the caller, the same as the connection ending
            self._end(ConnectionClosed(1006, str(error)))
            return
        if data:
            self._receive(data)
        else:
            self._end(ConnectionClosed(1006, "connection ended without a close frame"))

    def _end(self, closed):
        """Records why the connection ended (the first reason wins) and closes the socket."""
        self._closed = self._closed or closed
        self._sock.close()

    def _receive(self, data):
        """Takes bytes just read and parses every frame complete in them."""
        self._buffer += data
        try:
            while self._parse_frame():
                pass
        except WebSocketError as error:
            if not self._closed:
                self._fail(1002, str(error))
        except OSError as error:  # answering a ping or a close found the connection gone
            self._end(ConnectionClosed(1006, str(error)))
        finally:
            del self._buffer[: self._position]
            self._position = 0

    def _parse_frame(self):
        """Parses one frame if the buffer holds all of it; returns whether it did."""
        buffer, start = self._buffer, self._position
        if len(buffer) - start < 2:
            return False
        first, second = buffer[start], buffer[start + 1]
        fin, opcode, length = first & 0x80, first & 0x0F, second & 0x7F
        if first & 0x70:
            raise WebSocketError("reserved bits set (no extension was negotiated)")
        if second & 0x80:
            raise WebSocketError("masked frame from the server")
        offset = start + 2
        if length == 126:
            if len(buffer) - start < 4:
                return False
            (length,) = struct.unpack_from("!H", buffer, offset)
            offset += 2
        elif length == 127:
            if len(buffer) - start < 10:
                return False
            (length,) = struct.unpack_from("!Q", buffer, offset)
            if length >> 63:
                raise WebSocketError("64-bit frame length with its top bit set")
            offset += 8
        if opcode >= _CLOSE:
            if not fin or length > 125:
                raise WebSocketError("fragmented or over-long control frame")
        else:
            # Refuse an oversized message before buffering it, from the length its header announces.
            so_far = len(self._fragments[1]) if self._fragments else 0
            if so_far + length > self._max_message:
                self._fail(1009, f"message longer than {self._max_message} bytes")
                return False
        if len(buffer) - offset < length:
            return False
        payload = bytes(buffer[offset : offset + length])
        self._position = offset + length
        self._handle_frame(fin, opcode, payload)
        return not self._closed

    def _handle_frame(self, fin, opcode, payload):
        if opcode == _PING:
            self._send_frame(_PONG, payload)
        elif opcode == _PONG:
            pass  # we send no pings; an unsolicited pong is allowed and means nothing
        elif opcode == _CLOSE:
            if len(payload) == 1:
                raise WebSocketError("close frame with a one-byte payload")
            code = struct.unpack_from("!H", payload)[0] if payload else 1005
            reason = payload[2:].decode("utf-8", "replace")
            try:
                self._send_close(code if payload else 1000, "")
            except OSError:
                pass  # the server may already have gone
            self._end(ConnectionClosed(code, reason))
        elif opcode in (_TEXT, _BINARY):
            if self._fragments:
                raise WebSocketError("new message before the last fragment of the previous one")
            if fin:
                self._deliver(opcode, payload)
            else:
                self._fragments = (opcode, bytearray(payload))
        elif opcode == _CONTINUATION:
            if not self._fragments:
                raise WebSocketError("continuation frame without a message to continue")
            self._fragments[1].extend(payload)
            if fin:
                first_opcode, joined = self._fragments
                self._fragments = None
                self._deliver(first_opcode, bytes(joined))
        else:
            raise WebSocketError(f"unknown opcode {opcode:#x}")

    def _deliver(self, opcode, payload):
        if opcode == _BINARY:
            self._messages.append(payload)
            return
        try:
            self._messages.append(payload.decode("utf-8"))
        except UnicodeDecodeError:
            self._fail(1007, "text message that is not UTF-8")

    def _fail(self, code, reason):
        """Fails the connection (RFC 6455 §7.1.7): a close frame if the socket still takes one, then the end."""
        try:
            self._send_close(code, reason)
        except OSError:
            pass
        self._end(ConnectionClosed(code, reason))


def _masked(payload, key):
    """`payload` XOR the repeated 4-byte `key`: done as one big integer, fast enough for megabytes."""
    if not payload:
        return b""
    repeated = (key * (len(payload) // 4 + 1))[: len(payload)]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(repeated, "big")).to_bytes(len(payload), "big")


def _check_handshake(url, head, key):
    """Raises unless `head` (status line and headers) accepts our upgrade with the right Sec-WebSocket-Accept."""
    status, *header_lines = head.split("\r\n")
    if status.split(" ")[1:2] != ["101"]:
        raise WebSocketError(f"{url}: the server answered '{status}', not 101 Switching Protocols")
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("upgrade", "").lower() != "websocket":
        raise WebSocketError(f"{url}: no 'Upgrade: websocket' in the handshake response")
    if "upgrade" not in [token.strip().lower() for token in headers.get("connection", "").split(",")]:
        raise WebSocketError(f"{url}: no 'Connection: Upgrade' in the handshake response")
    expected = base64.b64encode(hashlib.sha1((key + _ACCEPT_GUID).encode()).digest()).decode()
    if headers.get("sec-websocket-accept") != expected:
        raise WebSocketError(f"{url}: wrong Sec-WebSocket-Accept (expected {expected})")


def main():
    parser = argparse.ArgumentParser(description="Connect to a ws:// URL and print the messages it sends.")
    parser.add_argument("url")
    parser.add_argument("--seconds", type=float, default=5, help="how long to listen (default 5)")
    parser.add_argument("--send", help="a text message to send once connected")
    arguments = parser.parse_args()
    try:
        ws = WebSocket.connect(arguments.url)
        if arguments.send is not None:
            ws.send_text(arguments.send)
        end = time.monotonic() + arguments.seconds
        try:
            while (remaining := end - time.monotonic()) > 0:
                try:
                    message = ws.recv(timeout=remaining)
                except TimeoutError:
                    break
                print(message if isinstance(message, str) else f"<{len(message)} bytes binary>", flush=True)
        finally:
            ws.close()
    except (OSError, WebSocketError) as error:
        sys.exit(f"wsclient: {error}")


if __name__ == "__main__":
    main()
