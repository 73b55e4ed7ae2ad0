#!/usr/bin/env python3
"""tests/db_cut.py - a TCP relay in front of MariaDB that loses the answer to
a COMMIT or to a statement that has run.

    db_cut.py --dir DIR --port PORT --to TARGET_PORT

Relays connections from 127.0.0.1:PORT (only there) to the server on
127.0.0.1:TARGET_PORT and reads the client's side of the MariaDB protocol
(packets of a 3-byte length, a sequence number and the payload; no TLS, no
compression, as the tests' clients speak it).

The fault, a file in DIR the test writes (read at every COMMIT):
  cut_commit   holds a text; the next transaction (START TRANSACTION ...
               COMMIT) whose statements or parameters contain that text has
               its COMMIT passed on to the server, which carries it out,
               and then its connection closed before the server's answer
               reaches the client: a connection lost after the commit took.
               The file is removed when used (one cut per file).
  cut_statement holds a text; the next statement outside a transaction
               whose SQL contains it (a query, or the execution of a
               prepared statement whose prepared text contains it) is
               passed on and run, and its connection closed before the
               answer reaches the client. Removed when used.
Written by the relay:
  port         written once listening (the test waits for it)
  cuts.log     one line per cut: "EPOCH TEXT"
Stops on SIGTERM or SIGINT.
"""

import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import relay_cli  # noqa: E402

HOST = relay_cli.HOST
COM_QUERY = 0x03
COM_STMT_PREPARE = 0x16
COM_STMT_EXECUTE = 0x17


class Conn:
    """One client connection and its server connection."""

    def __init__(self, relay, client):
        self.relay = relay
        self.client = client
        self.server = socket.create_connection((HOST, relay.target))
        self.cut_next_answer = threading.Event()
        self.in_txn = False
        self.seen = b""          # the transaction's packets so far
        self.stmts = {}          # prepared statement id -> its SQL
        self.preparing = None    # the SQL of a PREPARE whose answer is due

    def close(self):
        for s in (self.client, self.server):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def answers(self):
        """Server to client; the answer to a cut COMMIT or statement is
        never passed on. The first packet after a PREPARE names the
        statement's id (COM_STMT_PREPARE_OK: 0x00, 4 bytes id)."""
        buf = b""
        try:
            while True:
                data = self.server.recv(65536)
                if not data:
                    break
                if self.cut_next_answer.is_set():
                    break  # the server has run it; the client never hears
                buf += data
                while len(buf) >= 4:
                    n = int.from_bytes(buf[:3], "little")
                    if len(buf) < 4 + n:
                        break
                    payload, buf = buf[4:4 + n], buf[4 + n:]
                    if self.preparing is not None:
                        if payload[:1] == b"\x00" and len(payload) >= 5:
                            self.stmts[payload[1:5]] = self.preparing
                        self.preparing = None
                self.client.sendall(data)
        except OSError:
            pass
        self.close()

    def cut_text(self, name="cut_commit"):
        try:
            with open(os.path.join(self.relay.dir, name), "rb") as f:
                return f.read().strip()
        except OSError:
            return b""

    def cut_statement(self, sql):
        """Whether the statement SQL, about to run, is the one to cut."""
        text = self.cut_text("cut_statement")
        if self.in_txn or not text or text not in sql:
            return False
        try:
            os.unlink(os.path.join(self.relay.dir, "cut_statement"))
        except OSError:
            return False  # another connection took it
        self.relay.log("cuts.log", text.decode(errors="replace"))
        return True

    def packet(self, payload):
        """One client packet: pass it on, after deciding whether to cut."""
        query = payload[1:].strip().upper() if payload[:1] == bytes([COM_QUERY]) else None
        if payload[:1] == bytes([COM_STMT_PREPARE]):
            self.preparing = payload[1:]
        elif payload[:1] == bytes([COM_STMT_EXECUTE]):
            if self.cut_statement(self.stmts.get(payload[1:5], b"")):
                self.cut_next_answer.set()
        elif query is not None and query not in (b"COMMIT", b"ROLLBACK") and \
                self.cut_statement(payload[1:]):
            self.cut_next_answer.set()
        if query in (b"START TRANSACTION", b"BEGIN"):
            self.in_txn, self.seen = True, b""
        elif query in (b"COMMIT", b"ROLLBACK"):
            text = self.cut_text()
            if query == b"COMMIT" and self.in_txn and text and text in self.seen:
                try:
                    os.unlink(os.path.join(self.relay.dir, "cut_commit"))
                except OSError:
                    pass
                self.relay.log("cuts.log", text.decode(errors="replace"))
                self.cut_next_answer.set()
            self.in_txn, self.seen = False, b""
        elif self.in_txn:
            self.seen += payload

    def requests(self):
        """Client to server, packet by packet."""
        buf = b""
        try:
            while True:
                data = self.client.recv(65536)
                if not data:
                    break
                buf += data
                while len(buf) >= 4:
                    n = int.from_bytes(buf[:3], "little")
                    if len(buf) < 4 + n:
                        break
                    frame, buf = buf[:4 + n], buf[4 + n:]
                    self.packet(frame[4:])
                    self.server.sendall(frame)
        except OSError:
            pass
        self.close()


class Relay:
    def __init__(self, d, port, target):
        self.dir = d
        self.target = target
        self.lock = threading.Lock()
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind((HOST, port))
        self.listener.listen(64)

    def log(self, name, line):
        with self.lock, open(os.path.join(self.dir, name), "a") as f:
            f.write(f"{time.time():.6f} {line}\n")

    def serve(self):
        while True:
            client, _ = self.listener.accept()
            try:
                c = Conn(self, client)
            except OSError:
                client.close()  # the server is down: so is the relay, to the client
                continue
            threading.Thread(target=c.answers, daemon=True).start()
            threading.Thread(target=c.requests, daemon=True).start()


if __name__ == "__main__":
    sys.exit(relay_cli.run("db_cut.py",
                           "TCP relay in front of MariaDB that loses a COMMIT's answer", Relay))
