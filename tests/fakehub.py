"""A loopback stand-in for the Hugging Face Hub: HEAD and GET on /{repo}/resolve/{revision}/{file}.

It answers with the headers huggingface_hub relies on (X-Repo-Commit, ETag, Content-Length, X-Error-Code),
honours Range requests, counts the bytes it serves, and can inject faults. A file is either bytes or a
VirtualFile (a real header, array bytes where tensors live, zeros elsewhere), so a checkpoint with real
GPT-2 shapes can be served without writing gigabytes; a DiskFile is served from disk.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


@dataclass
class VirtualFile:
    size: int
    segments: list[tuple[int, bytes]]  # (offset, bytes); everything else reads as zeros

    def read(self, start: int, end: int) -> bytes:  # [start, end)
        out = bytearray(end - start)
        for offset, data in self.segments:
            lo, hi = max(start, offset), min(end, offset + len(data))
            if lo < hi:
                out[lo - start : hi - start] = data[lo - offset : hi - offset]
        return bytes(out)


@dataclass
class DiskFile:
    path: Path

    @property
    def size(self) -> int:
        return self.path.stat().st_size

    def read(self, start: int, end: int) -> bytes:
        with self.path.open("rb") as f:
            f.seek(start)
            return f.read(end - start)


Content = bytes | VirtualFile | DiskFile


@dataclass
class Repo:
    commit: str
    files: dict[str, Content]


@dataclass(repr=False)  # its repr would hold every file: hypothesis prints the fixtures of a failing case
class FakeHub:
    repos: dict[str, Repo] = field(default_factory=dict)
    bytes_served: int = 0
    requests: list[tuple[str, str, str]] = field(default_factory=list)  # (method, path, range)
    fault: Callable[[str, str], str | None] | None = None  # (method, path) -> None | "500" | "drop" | "cut"
    url: str = ""

    def __repr__(self) -> str:
        return f"FakeHub({self.url}, repos={sorted(self.repos)})"

    def start(self) -> FakeHub:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_HEAD(self) -> None:
                hub._answer(self, body=False)

            def do_GET(self) -> None:
                hub._answer(self, body=True)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def reset(self) -> None:
        self.repos.clear()
        self.requests.clear()
        self.bytes_served = 0
        self.fault = None

    def _answer(self, h: BaseHTTPRequestHandler, body: bool) -> None:
        method = "GET" if body else "HEAD"
        self.requests.append((method, h.path, h.headers.get("Range", "")))
        fault = self.fault(method, h.path) if self.fault else None
        if fault == "drop":
            h.close_connection = True
            h.connection.close()
            return
        if fault == "500":
            return self._send(h, 500, {"X-Error-Message": "injected"}, b"", body)
        m = re.fullmatch(r"/(.+?)/resolve/([^/]+)/(.+)", h.path.split("?")[0])
        if not m:
            return self._send(h, 404, {}, b"", body)
        repo_id, revision, filename = m.groups()
        repo = self.repos.get(repo_id)
        if repo is None:
            return self._send(h, 401, {"X-Error-Code": "RepoNotFound"}, b"", body)
        if revision not in ("main", repo.commit):
            return self._send(h, 404, {"X-Error-Code": "RevisionNotFound"}, b"", body)
        content = repo.files.get(filename)
        headers = {"X-Repo-Commit": repo.commit}
        if content is None:
            return self._send(h, 404, {**headers, "X-Error-Code": "EntryNotFound"}, b"", body)
        size = len(content) if isinstance(content, bytes) else content.size
        headers["ETag"] = '"' + hashlib.sha1(f"{repo.commit}/{filename}/{size}".encode()).hexdigest() + '"'
        headers["Accept-Ranges"] = "bytes"
        start, end, status = 0, size, 200
        rng = re.fullmatch(r"bytes=(\d+)-(\d*)", h.headers.get("Range", ""))
        if rng:
            start = int(rng.group(1))
            end = min(size, int(rng.group(2)) + 1) if rng.group(2) else size
            status = 206
            headers["Content-Range"] = f"bytes {start}-{end - 1}/{size}"
        if not body:  # HEAD: the length only, without building the body
            h.send_response(status)
            for k, v in {**headers, "Content-Length": str(end - start)}.items():
                h.send_header(k, v)
            h.end_headers()
            return
        data = content[start:end] if isinstance(content, bytes) else content.read(start, end)
        if fault == "cut" and body:
            headers["Content-Length"] = str(len(data))
            h.send_response(status)
            for k, v in headers.items():
                h.send_header(k, v)
            h.end_headers()
            h.wfile.write(data[: len(data) // 2])
            h.close_connection = True
            return
        self._send(h, status, headers, data, body)

    def _send(
        self, h: BaseHTTPRequestHandler, status: int, headers: dict[str, str], data: bytes, body: bool
    ) -> None:
        h.send_response(status)
        for k, v in headers.items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        if body:
            h.wfile.write(data)
            self.bytes_served += len(data)
