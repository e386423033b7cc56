"""Relays carry bytes both ways between TCP and Unix sockets, with real sockets."""
import socket
import threading

from desktop_env.server.relay import TcpToUnixRelay, UnixToTcpRelay


def echo_server(sock: socket.socket) -> None:
    def serve():
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            with conn:
                while data := conn.recv(4096):
                    conn.sendall(data.upper())
    threading.Thread(target=serve, daemon=True).start()


def test_tcp_client_reaches_a_unix_socket_service(tmp_path):
    path = str(tmp_path / "svc.sock")
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen()
    echo_server(server)
    relay = TcpToUnixRelay(path)
    try:
        with socket.create_connection((relay.host, relay.port), timeout=5) as client:
            client.sendall(b"hello")
            assert client.recv(100) == b"HELLO"
    finally:
        relay.close()
        server.close()


def test_unix_client_reaches_a_tcp_service_and_the_socket_is_owner_only(tmp_path):
    server = socket.create_server(("127.0.0.1", 0))
    echo_server(server)
    path = str(tmp_path / "port.sock")
    relay = UnixToTcpRelay(path, "127.0.0.1", server.getsockname()[1])
    try:
        assert (tmp_path / "port.sock").stat().st_mode & 0o077 == 0
        with socket.socket(socket.AF_UNIX) as client:
            client.settimeout(5)
            client.connect(path)
            client.sendall(b"abc" * 50000)
            received = b""
            while len(received) < 150000:
                received += client.recv(65536)
            assert received == b"ABC" * 50000
    finally:
        relay.close()
        server.close()


def test_client_is_dropped_when_the_service_is_down(tmp_path):
    relay = TcpToUnixRelay(str(tmp_path / "nobody-listens.sock"))
    try:
        with socket.create_connection((relay.host, relay.port), timeout=5) as client:
            assert client.recv(10) == b""
    finally:
        relay.close()
