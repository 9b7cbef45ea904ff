#!/usr/bin/env python3
"""A strict APNs-shaped HTTP/2 server on Python's h2 (PyPI h2 4.4.1): the independent server that found issue 57.

It advertises SETTINGS_MAX_CONCURRENT_STREAMS = --limit from the connection's first frame (h2's initial values, in
force before the client acknowledged them) and, as h2 does, treats a stream over that limit as a connection error:
GOAWAY PROTOCOL_ERROR, then the connection closes with every stream on it unanswered. Every complete request is
answered 200 with its apns-id; nothing else is checked (it referees the sender's stream handling,
not APNs' rules: the simulator does those).

    python3 Tests/referees/h2_strict_apns.py --cert server.pem --key server.key --limit 1

prints `port N` once listening (--port 0 picks one), and on SIGTERM or SIGINT one line of counts:
`answered A connections C excess-closures X` (excess-closures: connections closed for a stream over the limit).
"""
import argparse
import asyncio
import signal
import ssl
import sys
import uuid

import h2.config
import h2.errors
import h2.connection
import h2.events
import h2.exceptions
import h2.settings

counts = {"answered": 0, "connections": 0, "excess-closures": 0}


class Connection(asyncio.Protocol):
    def __init__(self, limit):
        self.limit = limit
        self.transport = None
        self.conn = None
        self.bodies = {}
        self.ids = {}

    def connection_made(self, transport):
        counts["connections"] += 1
        self.transport = transport
        config = h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
        self.conn = h2.connection.H2Connection(config=config)
        # In force at once, before the client's ACK: h2 counts every stream against it from the first.
        self.conn.local_settings = h2.settings.Settings(
            client=False,
            initial_values={h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: self.limit,
                            h2.settings.SettingCodes.MAX_HEADER_LIST_SIZE: 8000})
        self.conn.initiate_connection()
        self.transport.write(self.conn.data_to_send())

    def data_received(self, data):
        try:
            events = self.conn.receive_data(data)
        except h2.exceptions.TooManyStreamsError:
            counts["excess-closures"] += 1
            try:  # h2 has usually queued its GOAWAY PROTOCOL_ERROR already
                self.conn.close_connection(error_code=h2.errors.ErrorCodes.PROTOCOL_ERROR)
            except h2.exceptions.ProtocolError:
                pass
            self.transport.write(self.conn.data_to_send())
            self.transport.close()
            return
        except h2.exceptions.ProtocolError:
            self.transport.write(self.conn.data_to_send())
            self.transport.close()
            return
        for event in events:
            if isinstance(event, h2.events.RequestReceived):
                self.bodies[event.stream_id] = bytearray()
                self.ids[event.stream_id] = dict(event.headers).get("apns-id") or str(uuid.uuid4()).upper()
                if event.stream_ended:
                    self.answer(event.stream_id)
            elif isinstance(event, h2.events.DataReceived):
                self.bodies.setdefault(event.stream_id, bytearray()).extend(event.data)
                self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded):
                self.answer(event.stream_id)
            elif isinstance(event, h2.events.StreamReset):
                self.bodies.pop(event.stream_id, None)
        self.transport.write(self.conn.data_to_send())

    def answer(self, stream_id):
        if self.bodies.pop(stream_id, None) is None:
            return
        # Answered on a later turn of the loop, as a server that does work per request: streams overlap.
        asyncio.get_running_loop().call_soon(self.send_answer, stream_id)

    def send_answer(self, stream_id):
        if self.transport.is_closing():
            return
        try:
            self.conn.send_headers(stream_id, [(":status", "200"), ("apns-id", self.ids.pop(stream_id, ""))], end_stream=True)
        except h2.exceptions.StreamClosedError:
            return
        counts["answered"] += 1
        self.transport.write(self.conn.data_to_send())

    def connection_lost(self, exc):
        self.bodies.clear()


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--limit", type=int, default=1)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(args.cert, args.key)
    context.set_alpn_protocols(["h2"])
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: Connection(args.limit), "127.0.0.1", args.port, ssl=context)
    print("port", server.sockets[0].getsockname()[1], flush=True)
    stop = loop.create_future()
    for s in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(s, lambda: stop.done() or stop.set_result(None))
    await stop
    server.close()
    print(" ".join(f"{k} {v}" for k, v in counts.items()), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
