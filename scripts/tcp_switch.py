"""A TCP forwarder whose target can be switched: what a virtual IP, a DNS name or a proxy such as
HAProxy is to PostgreSQL clients in a failover. Switching closes every forwarded connection, as the
old primary's death does. Python standard library only; used by scripts/storage_drill.py."""
import socket
import threading


class TCPSwitch:
    def __init__(self, target_port):
        self.target_port = target_port
        self.lock = threading.Lock()
        self.pairs = []
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(128)
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def switch(self, target_port):
        with self.lock:
            self.target_port = target_port
            pairs, self.pairs = self.pairs, []
        for pair in pairs:
            for s in pair:
                self._close(s)

    def close(self):
        self._close(self.listener)
        self.switch(None)

    @staticmethod
    def _close(s):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                port = self.target_port
            try:
                upstream = socket.create_connection(("127.0.0.1", port), timeout=5) if port else None
            except OSError:
                upstream = None
            if upstream is None:                # what a dead primary behind the address looks like
                self._close(client)
                continue
            upstream.settimeout(None)
            with self.lock:
                self.pairs.append((client, upstream))
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client), daemon=True).start()

    def _pump(self, source, sink):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                sink.sendall(data)
        except OSError:
            pass
        self._close(source)
        self._close(sink)
