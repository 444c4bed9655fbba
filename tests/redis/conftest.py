"""Real redis-server processes with the module loaded, for the Redis module's tests.

The paths come from the environment (ctest sets them; see redis/CMakeLists.txt):
CUCKOO_REDIS_MODULE (the .so), CUCKOO_REDIS_SERVER, CUCKOO_REDIS_CLI, optionally CUCKOO_CLI (the
`cuckoo` tool) and REDIS_SERVER_PRELOAD (an LD_PRELOAD for the server: the ASan runtime when the
module is built with sanitizers). Every server is started on a free loopback port in its own
temporary directory and stopped by the fixture, by its process id: SIGTERM, then SIGKILL after a
bound.
"""

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
import redis

MODULE = os.environ.get("CUCKOO_REDIS_MODULE", "")
SERVER = os.environ.get("CUCKOO_REDIS_SERVER", "/usr/bin/redis-server")
CLI = os.environ.get("CUCKOO_REDIS_CLI", "/usr/bin/redis-cli")
START_TIMEOUT_S = 20.0
STOP_TIMEOUT_S = 20.0


def free_port(with_cluster_bus=False):
    """A loopback port nobody listens on now (and port + 10000, for a cluster node's bus)."""
    for _ in range(200):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        if port > 55000 and with_cluster_bus:
            continue
        if not with_cluster_bus:
            return port
        with socket.socket() as bus:
            try:
                bus.bind(("127.0.0.1", port + 10000))
                return port
            except OSError:
                continue
    raise RuntimeError("no free port pair found")


def wait_until(condition, timeout_s, what):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise TimeoutError(f"timed out after {timeout_s} s waiting for {what}")


class RedisServer:
    """One redis-server process; restart() keeps its port, directory and arguments."""

    def __init__(self, directory, extra_args=(), module_args=(), cluster=False):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.port = free_port(with_cluster_bus=cluster)
        self.extra_args = list(extra_args)
        self.module_args = [str(a) for a in module_args]
        self.process = None
        self.start()

    def arguments(self):
        return [SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--dir", str(self.directory),
                "--enable-debug-command", "yes", "--loglevel", "notice",
                "--logfile", str(self.directory / "redis.log"),
                "--loadmodule", MODULE, *self.module_args, *self.extra_args]

    def start(self):
        env = dict(os.environ)
        preload = os.environ.get("REDIS_SERVER_PRELOAD")
        if preload:
            env["LD_PRELOAD"] = preload
        # The server logs to its log file; its stderr is where a sanitizer in the module reports.
        with open(self.directory / "stderr.log", "ab") as stderr:
            self.process = subprocess.Popen(self.arguments(), env=env, stdin=subprocess.DEVNULL,
                                            stdout=subprocess.DEVNULL, stderr=stderr)
        try:
            wait_until(self.answers, START_TIMEOUT_S, f"redis-server on port {self.port}")
        except TimeoutError:
            self.stop()
            raise RuntimeError(f"redis-server did not start:\n{self.log()}")

    def answers(self):
        if self.process.poll() is not None:
            raise RuntimeError(f"redis-server exited with {self.process.returncode}:\n{self.log()}")
        try:
            return self.client().ping()
        except (redis.ConnectionError, redis.BusyLoadingError):
            return False

    def alive(self):
        return self.process is not None and self.process.poll() is None

    def log(self):
        path = self.directory / "redis.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else "(no log)"

    def sanitizer_reports(self):
        path = self.directory / "stderr.log"
        text = path.read_text(errors="replace") if path.exists() else ""
        return text if ("Sanitizer" in text or "runtime error" in text) else ""

    def client(self, **kwargs):
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=60, **kwargs)

    def cli(self, *args, check=True):
        """redis-cli's output for one command (non-interactive: plain text, no "(error)")."""
        result = subprocess.run([CLI, "-h", "127.0.0.1", "-p", str(self.port), *map(str, args)],
                                capture_output=True, timeout=60, check=check)
        return result.stdout

    def stop(self):
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=STOP_TIMEOUT_S)

    def restart(self):
        self.stop()
        self.start()


@pytest.fixture
def start_server(tmp_path):
    """A factory of servers; every one it started is stopped at teardown."""
    if not MODULE or not Path(MODULE).exists():
        pytest.fail(f"CUCKOO_REDIS_MODULE does not name the module: {MODULE!r}")
    servers = []

    def start(name="server", **kwargs):
        server = RedisServer(tmp_path / f"{name}{len(servers)}", **kwargs)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()
    reports = "".join(server.sanitizer_reports() for server in servers)
    assert not reports, reports


@pytest.fixture
def server(start_server):
    return start_server()


@pytest.fixture
def r(server):
    return server.client()


def wire_reply(port, *args):
    """The first line of the server's raw RESP reply: the exact error text a client sees."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        parts = [f"*{len(args)}\r\n".encode()]
        for arg in args:
            data = arg if isinstance(arg, bytes) else str(arg).encode()
            parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
        connection.sendall(b"".join(parts))
        reply = b""
        while b"\r\n" not in reply:
            chunk = connection.recv(65536)
            if not chunk:
                break
            reply += chunk
        return reply.split(b"\r\n", 1)[0].decode()
