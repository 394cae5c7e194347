"""A real PostgreSQL server for the remote-sync tests and benchmark: Debian's ``initdb`` and ``pg_ctl``
(``apt-get install postgresql``), a cluster in a temporary directory, listening on 127.0.0.1 only on a
random free port, with TLS (a self-signed certificate for ``localhost``) when ``openssl`` exists.

``initdb`` refuses to run as root: as root the cluster belongs to the ``postgres`` OS user (which the
Debian package creates) and the binaries run through ``runuser``. ``unavailable()`` says in one line why
a server cannot be started here (the tests skip with it).
"""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import socket
import subprocess
import tempfile

ADMIN = "agentctx_admin"


def bindir() -> str | None:
    """The newest Debian PostgreSQL bin directory (or wherever ``initdb`` is on PATH)."""
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]), reverse=True):
        if os.path.exists(os.path.join(folder, "initdb")) and os.path.exists(os.path.join(folder, "pg_ctl")):
            return folder
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return os.path.dirname(os.path.realpath(found))
    return None


def unavailable() -> str | None:
    """Why no server can be started here (one line), or None."""
    if bindir() is None:
        return "PostgreSQL server binaries (initdb, pg_ctl) are not installed: apt-get install postgresql"
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            return "running as root without runuser: initdb cannot run as root"
        try:
            import pwd

            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' OS user to own the cluster"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (uv sync --group dev)"
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One cluster: ``start()``, ``stop()``, ``dsn()``, ``admin()`` (a superuser connection)."""

    def __init__(self, *, fsync: bool = False, settings: dict[str, str] | None = None):
        self.bin = bindir()
        if self.bin is None:
            raise RuntimeError(unavailable())
        self.root = tempfile.mkdtemp(prefix="agentctx-pg-")
        self.data = os.path.join(self.root, "data")
        self.port = free_port()
        self.password = secrets.token_hex(16)
        self.ssl = shutil.which("openssl") is not None
        self.ca = os.path.join(self.root, "server.crt")
        self.settings = {"fsync": "on" if fsync else "off", "max_connections": "200", **(settings or {})}
        self.as_postgres = os.geteuid() == 0

    def _run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
        cmd = ["runuser", "-u", "postgres", "--", *argv] if self.as_postgres else list(argv)
        out = subprocess.run(cmd, capture_output=True, text=True)
        if check and out.returncode != 0:
            raise RuntimeError(f"{' '.join(argv[:2])} failed: {out.stderr.strip() or out.stdout.strip()}")
        return out

    def start(self) -> Server:
        pwfile = os.path.join(self.root, "pw")
        with open(pwfile, "w") as fh:
            fh.write(self.password + "\n")
        if self.as_postgres:
            shutil.chown(self.root, "postgres")
            shutil.chown(pwfile, "postgres")
        self._run(os.path.join(self.bin, "initdb"), "-D", self.data, "-U", ADMIN, f"--pwfile={pwfile}",
                  "--auth=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync")
        os.remove(pwfile)
        conf = dict(self.settings, listen_addresses="'127.0.0.1'", port=str(self.port), unix_socket_directories="''")
        if self.ssl:
            self._certificate()
            conf.update(ssl="on", ssl_cert_file=f"'{self.ca}'", ssl_key_file=f"'{os.path.join(self.root, 'server.key')}'")
        with open(os.path.join(self.data, "postgresql.auto.conf"), "a") as fh:
            fh.writelines(f"{k} = {v}\n" for k, v in conf.items())
        with open(os.path.join(self.data, "pg_hba.conf"), "w") as fh:
            fh.write("host all all 127.0.0.1/32 scram-sha-256\n")
        self._run(os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-l", os.path.join(self.root, "log"), "-w",
                  "-t", "60", "start")
        return self

    def _certificate(self) -> None:
        key = os.path.join(self.root, "server.key")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", self.ca,
                        "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"],
                       capture_output=True, check=True)
        os.chmod(key, 0o600)
        if self.as_postgres:
            shutil.chown(key, "postgres")
            shutil.chown(self.ca, "postgres")

    def stop(self) -> None:
        self._run(os.path.join(self.bin, "pg_ctl"), "-D", self.data, "-m", "immediate", "-w", "stop", check=False)
        shutil.rmtree(self.root, ignore_errors=True)

    def log_tail(self, lines: int = 30) -> str:
        try:
            with open(os.path.join(self.root, "log"), encoding="utf-8", errors="replace") as fh:
                return "".join(fh.readlines()[-lines:])
        except OSError:
            return ""

    def dsn(self, database: str, user: str, *, host: str = "127.0.0.1", port: int | None = None, **params: str) -> str:
        """A URL without a password (clients find theirs in PGPASSFILE)."""
        query = "&".join(f"{k}={v}" for k, v in params.items())
        return f"postgresql://{user}@{host}:{port or self.port}/{database}" + (f"?{query}" if query else "")

    def admin(self, database: str = "postgres"):
        import psycopg

        return psycopg.connect(host="127.0.0.1", port=self.port, user=ADMIN, password=self.password,
                               dbname=database, autocommit=True, sslmode="disable")

    def create_database(self, name: str) -> None:
        with self.admin() as conn:
            conn.execute(f'CREATE DATABASE "{name}"')

    def create_login(self, role: str, password: str) -> None:
        """A login role for a member (what a team's admin creates once per person)."""
        with self.admin() as conn:
            conn.execute(f'CREATE ROLE "{role}" LOGIN PASSWORD \'{password}\'')


def write_pgpass(path: str, entries: dict[str, str]) -> str:
    """A ~/.pgpass-format file (mode 0600): each role's password for 127.0.0.1 and localhost, any port."""
    with open(path, "w") as fh:
        fh.writelines(f"{host}:*:*:{role}:{pw}\n" for role, pw in entries.items() for host in ("127.0.0.1", "localhost"))
    os.chmod(path, 0o600)
    return path



class Gate:
    """A TCP forwarder in front of the server, to take one client's network down and up again:
    ``down()`` refuses new connections and cuts open ones, ``up()`` listens again on the same port."""

    def __init__(self, port: int):
        import threading

        self.target = port
        self.port = free_port()
        self.lock = threading.Lock()
        self.open: list[socket.socket] = []
        self.listener: socket.socket | None = None
        self.up()

    def up(self) -> None:
        import threading

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        sock.listen(16)
        self.listener = sock
        threading.Thread(target=self._accept, args=(sock,), daemon=True).start()

    def down(self) -> None:
        if self.listener is not None:
            try:
                self.listener.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked in accept()
            except OSError:
                pass
            self.listener.close()
            self.listener = None
        with self.lock:
            for s in self.open:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()
            self.open.clear()

    def _accept(self, sock: socket.socket) -> None:
        import threading

        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target))
            except OSError:
                conn.close()
                continue
            with self.lock:
                self.open += [conn, upstream]
            for a, b in ((conn, upstream), (upstream, conn)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
