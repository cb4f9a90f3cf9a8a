"""A loopback stand-in for the Hugging Face Hub: HEAD and GET on /{repo}/resolve/{revision}/{file}.

It answers with the headers huggingface_hub relies on (X-Repo-Commit, ETag, Content-Length, X-Error-Code),
honours Range requests, counts the bytes it serves, and can inject faults. A file is either bytes or a
VirtualFile (a real header, array bytes where tensors live, zeros elsewhere), so a checkpoint with real
GPT-2 shapes can be served without writing gigabytes; a DiskFile is served from disk.

A repo has branches and tags (Repo.refs) and the files of each commit. With `redirect` on, the Hub answers
`resolve` for a large (LFS) file as the real one does: a 302 carrying X-Repo-Commit, X-Linked-Etag and
X-Linked-Size, to a second loopback host (127.0.0.2, the Hub's CDN) that serves the bytes with Range.
Every request is recorded per host with its Authorization header, so a test can see where a token went.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, unquote


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
    """main's commit and files; other branches and tags (name -> commit) and the files of their commits."""

    commit: str
    files: Mapping[str, Content]
    refs: dict[str, str] = field(default_factory=dict)
    commits: dict[str, Mapping[str, Content]] = field(default_factory=dict)  # commits other than main's

    def at(self, revision: str) -> tuple[str, Mapping[str, Content]] | None:
        """The commit a branch, tag or commit id names and its files; None when the repo has no such one."""
        commit = self.commit if revision == "main" else self.refs.get(revision, revision)
        if commit == self.commit:
            return commit, self.files
        files = self.commits.get(commit)
        return None if files is None else (commit, files)

    def push(self, commit: str, files: Mapping[str, Content], branch: str = "main") -> None:
        """A new commit on a branch (made if new); the commit it replaces stays reachable by its id."""
        if branch == "main":
            self.commits[self.commit] = self.files
            self.commit, self.files = commit, files
        else:
            self.refs[branch] = commit
            self.commits[commit] = files


@dataclass(frozen=True)
class Seen:
    host: str  # "hub" or "cdn"
    method: str
    path: str
    range: str
    authorization: str | None


LFS = (".safetensors", ".bin")  # what the real Hub stores in LFS and redirects to its CDN
Fault = str | None  # None | "500" | "drop" | "cut" | "416" | "403" (gated on the Hub) | "loop"


@dataclass(repr=False)  # its repr would hold every file: hypothesis prints the fixtures of a failing case
class FakeHub:
    repos: dict[str, Repo] = field(default_factory=dict)
    bytes_served: int = 0  # by both hosts
    file_bytes: dict[str, int] = field(default_factory=dict)  # bytes served of each file, cut ones too
    requests: list[tuple[str, str, str]] = field(default_factory=list)  # (method, path, range), both hosts
    seen: list[Seen] = field(default_factory=list)
    fault: Callable[[str, str], Fault] | None = None  # (method, path) -> a fault; CDN paths start with /lfs/
    redirect: bool = False  # LFS files are served by the CDN host, through a 302
    url: str = ""
    cdn_url: str = ""

    def __repr__(self) -> str:
        return f"FakeHub({self.url}, repos={sorted(self.repos)})"

    def start(self) -> FakeHub:
        hub, cdn = self._serve("127.0.0.1", "hub"), self._serve("127.0.0.2", "cdn")
        self._servers = [hub, cdn]
        self.url, self.cdn_url = f"http://127.0.0.1:{hub.server_port}", f"http://127.0.0.2:{cdn.server_port}"
        return self

    def _serve(self, address: str, host: str) -> ThreadingHTTPServer:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # headers and body are two writes: with Nagle's algorithm the body waited for the client's
            # delayed ACK, some 30 ms an answer (a first use of the tiny model took 0.3 s, 0.06 s of it work)
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_HEAD(self) -> None:
                hub._answer(self, host, body=False)

            def do_GET(self) -> None:
                hub._answer(self, host, body=True)

        server = ThreadingHTTPServer((address, 0), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server

    def stop(self) -> None:
        for server in self._servers:
            server.shutdown()
            server.server_close()

    def reset(self) -> None:
        self.repos.clear()
        self.requests.clear()
        self.seen.clear()
        self.bytes_served = 0
        self.file_bytes.clear()
        self.fault = None
        self.redirect = False

    def authorization(self, host: str) -> list[str | None]:
        """The Authorization header of every request one host received (None where there was none)."""
        return [s.authorization for s in self.seen if s.host == host]

    def served(self, host: str, suffix: str = "") -> list[Seen]:
        return [s for s in self.seen if s.host == host and s.path.split("?")[0].endswith(suffix)]

    def _answer(self, h: BaseHTTPRequestHandler, host: str, body: bool) -> None:
        method = "GET" if body else "HEAD"
        asked = h.headers.get("Range", "")
        self.requests.append((method, h.path, asked))
        self.seen.append(Seen(host, method, h.path, asked, h.headers.get("Authorization")))
        fault = self.fault(method, h.path) if self.fault else None
        if fault == "drop":
            h.close_connection = True
            h.connection.close()
            return
        if fault == "500":
            return self._send(h, 500, {"X-Error-Message": "injected"}, b"", body)
        if fault == "403" and host == "hub":
            gated = {"X-Error-Code": "GatedRepo", "X-Error-Message": "Access to this model is restricted"}
            return self._send(h, 403, gated, b"", body)
        if fault == "403":  # the CDN refuses a signed URL: no Hub headers, an XML body
            denied = b"<Error><Code>AccessDenied</Code></Error>"
            return self._send(h, 403, {"Content-Type": "application/xml"}, denied, body)
        pattern = r"/(.+?)/resolve/([^/]+)/(.+)" if host == "hub" else r"/lfs/([^/]+/[^/]+)/([^/]+)/(.+)"
        m = re.fullmatch(pattern, h.path.split("?")[0])
        if not m:
            return self._send(h, 404, {}, b"", body)
        repo_id, revision, filename = (unquote(g) for g in m.groups())
        repo = self.repos.get(repo_id)
        if repo is None:
            return self._send(h, 401, {"X-Error-Code": "RepoNotFound"}, b"", body)
        found = repo.at(revision)
        if found is None:
            return self._send(h, 404, {"X-Error-Code": "RevisionNotFound"}, b"", body)
        commit, files = found
        content = files.get(filename)
        headers = {"X-Repo-Commit": commit} if host == "hub" else {}
        if content is None:
            return self._send(h, 404, {**headers, "X-Error-Code": "EntryNotFound"}, b"", body)
        size = len(content) if isinstance(content, bytes) else content.size
        etag = '"' + hashlib.sha1(f"{commit}/{filename}/{size}".encode()).hexdigest() + '"'
        if fault == "loop" and host == "cdn":  # the CDN sends the client back to the Hub, which sends it here
            hub_url = f"{self.url}/{quote(repo_id)}/resolve/{commit}/{quote(filename)}"
            return self._send(h, 302, {"Location": hub_url}, b"", body)
        if self.redirect and host == "hub" and filename.endswith(LFS):
            linked = {"X-Linked-Etag": etag, "X-Linked-Size": str(size), "ETag": '"pointer"'}
            location = f"{self.cdn_url}/lfs/{quote(repo_id)}/{commit}/{quote(filename)}?X-Amz-Signature=fake"
            return self._send(h, 302, {**headers, **linked, "Location": location}, b"", body)
        headers["ETag"] = etag
        headers["Accept-Ranges"] = "bytes"
        start, end, status = 0, size, 200
        rng = re.fullmatch(r"bytes=(\d+)-(\d*)", h.headers.get("Range", ""))
        if rng and fault == "416":
            return self._send(h, 416, {"Content-Range": f"bytes */{size}"}, b"", body)
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
            self._count(h, len(data) // 2)
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
            self._count(h, len(data))

    def _count(self, h: BaseHTTPRequestHandler, n: int) -> None:
        name = unquote(h.path.split("?")[0].rsplit("/", 1)[-1])
        self.file_bytes[name] = self.file_bytes.get(name, 0) + n
