"""The Hugging Face Hub, through huggingface_hub: files, ranged reads, and its errors turned into ours."""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from gpt2emb.errors import BadModel, Gpt2embError, NetworkError, NotCached, UnknownModel, UsageError
from gpt2emb.report import HUB_BARS, Task

ReadRange = Callable[[int, int, Task | None], bytearray]  # (start, length, progress) -> exactly length bytes
# (start, into, landed): fill `into` with the bytes from start on, calling landed(n) as each n bytes land
FillRange = Callable[[int, memoryview, Callable[[int], None]], None]


def range_reader(repo: str, filename: str, commit: str) -> ReadRange:
    """HTTP Range reads through huggingface_hub's own session, so HF_ENDPOINT, HF_TOKEN and proxies apply."""
    fill = range_filler(repo, filename, commit)

    def read(start: int, length: int, task: Task | None) -> bytearray:
        data = bytearray(length)  # one buffer, filled in place: no second copy of a 322 MB matrix
        fill(start, memoryview(data), task.advance if task else lambda n: None)
        return data

    return read


def range_filler(repo: str, filename: str, commit: str) -> FillRange:
    """A Range read straight into a buffer (a kept download's, see partial.py), saying as each chunk lands."""
    from huggingface_hub import constants, hf_hub_url
    from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status  # type: ignore[attr-defined]

    probe(repo, filename, commit)
    url = hf_hub_url(repo, filename, revision=commit)
    headers = build_hf_headers()

    def fill(start: int, into: memoryview, landed: Callable[[int], None]) -> None:
        length = len(into)
        wanted = {**headers, "Range": f"bytes={start}-{start + length - 1}"}
        got = 0
        with (
            errors_of(repo),
            get_session().stream(
                "GET", url, headers=wanted, timeout=constants.HF_HUB_DOWNLOAD_TIMEOUT
            ) as response,
        ):
            if response.status_code == 416:  # a stale CDN answer, or a file changed since its header was read
                asked = f"bytes {start}-{start + length - 1} of {filename}"
                raise NetworkError(fetch_failed(repo, f"the server refused to send {asked}"))
            if response.status_code >= 400:
                response.read()  # the error message is in the body
            hf_raise_for_status(response)
            if response.status_code != 206:
                raise NetworkError(fetch_failed(repo, f"the server ignored a Range request for {filename}"))
            for chunk in response.iter_bytes():  # as they arrive: a cut download keeps what came
                if got + len(chunk) > length:
                    raise NetworkError(fetch_failed(repo, f"the server sent more of {filename} than asked"))
                into[got : got + len(chunk)] = chunk
                got += len(chunk)
                landed(len(chunk))
        if got != length:
            raise NetworkError(fetch_failed(repo, f"the download of {filename} stopped early"))

    return fill


_ETAGS: dict[tuple[str, str, str], str | None] = {}  # what size() heard, so that no second request asks


def etag(repo: str, filename: str, commit: str) -> str | None:
    """The ETag the Hub gives a file at a commit (a large file's own, behind a redirect: its SHA-256)."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_url

    if (repo, filename, commit) not in _ETAGS:
        probe(repo, filename, commit)
        with errors_of(repo):
            _ETAGS[repo, filename, commit] = get_hf_file_metadata(
                hf_hub_url(repo, filename, revision=commit)
            ).etag
    return _ETAGS[repo, filename, commit]


# ---------------------------------------------------------------- the Hub


@contextlib.contextmanager
def errors_of(
    repo: str, revision: str = "main", failed: Callable[[str, str], str] | None = None
) -> Iterator[None]:
    """Turn huggingface_hub's and httpx's errors into ours, with the fix in the message.

    failed(what, reason) words a failed request; by default, as a first use that fetched nothing."""
    from huggingface_hub import errors

    _quiet_logging()
    what = labelled(repo, revision)
    failed = failed or fetch_failed

    try:
        yield
    except Gpt2embError:
        raise
    except errors.GatedRepoError:
        raise NetworkError(f"{repo} is gated: accept its terms on the Hub and set HF_TOKEN") from None
    except errors.RepositoryNotFoundError:
        raise UnknownModel(f"there is no Hub repo {repo} (if it is private, set HF_TOKEN)") from None
    except errors.RevisionNotFoundError:
        raise UsageError(
            f"{repo} has no revision {revision}: give one of its branches, tags or commit ids"
        ) from None
    except (errors.OfflineModeIsEnabled, errors.LocalEntryNotFoundError):
        raise NotCached(not_cached(what)) from None
    except errors.HfHubHTTPError as e:
        raise NetworkError(failed(what, _http_reason(e))) from None
    except OSError as e:
        raise NetworkError(failed(what, str(e) or type(e).__name__)) from None
    except ValueError as e:  # huggingface_hub refuses what the server said (a commit id that is a path, ...)
        raise NetworkError(failed(what, f"unusable answer: {str(e).splitlines()[0][:200]}")) from None
    except Exception as e:
        # httpx's transport errors (connection reset, timeouts, a body cut short) do not derive from OSError
        if type(e).__module__.split(".")[0] in ("httpx", "httpx2", "httpcore", "httpcore2", "h11"):
            reason = "the server redirected in a loop" if type(e).__name__ == "TooManyRedirects" else None
            raise NetworkError(failed(what, reason or type(e).__name__)) from None
        raise


@functools.cache
def _quiet_logging() -> None:
    """huggingface_hub logs errors alone: its retry warnings would break our one-line messages. Once, on its
    first use (its level is then whatever a program that imports gpt2emb sets it to)."""
    from huggingface_hub.utils import logging

    logging.set_verbosity_error()  # type: ignore[no-untyped-call]


def _http_reason(e: Exception) -> str:
    """An HTTP error in a few words: its status and the host that answered (another host than the Hub's may,
    its CDN), never the URL, whose query may hold a signature."""
    response = getattr(e, "response", None)
    if response is None:
        return str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__
    status = f"HTTP {response.status_code} {response.reason_phrase}".strip()
    reason = f"{status} from {response.url.netloc.decode()}"
    message = getattr(e, "server_message", None)
    return f"{reason}: {message.strip().splitlines()[0][:200]}" if message and message.strip() else reason


def labelled(repo: str, revision: str = "main") -> str:
    """A repo as messages name it: with the branch or tag a user asked for (a commit id needs none here)."""
    return repo if revision == "main" or is_full_commit(revision) else f"{repo} at revision {revision}"


def fetch_failed(repo: str, reason: str) -> str:
    return (
        f"{repo} is not cached, and fetching it from the Hub failed ({reason}); nothing partial is "
        "ever used, and the next run resumes the download: check the network and run again"
    )


# the two ways on for a model never fetched, as every "not cached" message gives them
WAYS_ON = (
    "run once with the network to fetch it, or try the tiny example model "
    "(python docs/examples/tiny_gpt2.py, then -m ./tiny-gpt2)"
)


def not_cached(repo: str, reason: str = "") -> str:
    if offline():
        return f"{repo} is not cached and HF_HUB_OFFLINE is set: {WAYS_ON}"
    because = f" ({reason})" if reason else ""
    return (
        f"{repo} is not cached and the Hub cannot be reached{because}: {WAYS_ON}; "
        "HF_HUB_OFFLINE=1 gives this answer at once"
    )


# The probe's timeouts, in seconds: (connect, read, write, pool), the 4-tuple httpx documents for `timeout`.
# A first use must say within 5 s that it cannot connect, and within 15 s that a Hub that connected does
# not answer. huggingface_hub's first request of a day may spend 3 s of those looking up its list of coding
# agents (utils/_detect_agent.py, unless HF_HUB_DISABLE_TELEMETRY is set); a connection, TLS included,
# takes well under a second, and the Hub answers a HEAD in about as long. HF_HUB_ETAG_TIMEOUT, when set,
# is the read's, as it is hf_hub_download's.
PROBE_CONNECT, PROBE_READ = 1.5, 6.0
PROBE_REMEMBERED = 60.0  # seconds a Hub that answered is not asked again (one probe for a run's many files)
_ANSWERED: dict[str, float] = {}  # endpoint -> when it last answered the probe (time.monotonic)


def probe(repo: str, filename: str, revision: str, what: str | None = None) -> None:
    """Before a first use fetches anything, one metadata request that does not retry: NotCached at once when
    the Hub cannot be reached, where huggingface_hub's own download would retry for some 24 s (refused) or
    minutes (a host that connects and never answers). Any answer, even an error worth retrying (429, 5xx),
    lets the download go on with huggingface_hub's retries. what: what the message says is not cached."""
    import time

    from huggingface_hub import constants, get_hf_file_metadata, hf_hub_url

    endpoint, answered = constants.ENDPOINT, _ANSWERED.get(constants.ENDPOINT)
    if offline() or (answered is not None and time.monotonic() - answered < PROBE_REMEMBERED):
        return
    _quiet_logging()
    read = PROBE_READ
    if constants.HF_HUB_ETAG_TIMEOUT != constants.DEFAULT_ETAG_TIMEOUT:  # the user's own, as hf_hub_download
        read = float(constants.HF_HUB_ETAG_TIMEOUT)
    timeout = (PROBE_CONNECT, read, read, read)
    try:
        get_hf_file_metadata(hf_hub_url(repo, filename, revision=revision), timeout=timeout)  # type: ignore[arg-type]
    except Exception as e:
        reason = _unreachable(e, read)
        if reason is not None:
            raise NotCached(not_cached(what or labelled(repo, revision), reason)) from None
        # an answer (an HTTP error included) or a failure of another kind: the download itself says more
    _ANSWERED[endpoint] = time.monotonic()


def _unreachable(e: Exception, read: float) -> str | None:
    """Why the Hub cannot be reached, in a few words; None when the failure is not that (an HTTP answer, a
    connection broken in the middle of an answer). Named by class, as in errors_of: httpx or httpx2."""
    if type(e).__module__.split(".")[0] not in ("httpx", "httpx2"):
        return None
    name = type(e).__name__
    if name == "ConnectTimeout":
        return f"no connection within {PROBE_CONNECT:g} s"
    if name in ("ConnectError", "ProxyError"):
        detail = str(e).strip().splitlines()[0][:200] if str(e).strip() else ""
        return f"cannot connect: {detail}" if detail else "cannot connect"
    if name in ("ReadTimeout", "WriteTimeout", "PoolTimeout"):
        return f"it connected, then sent no answer within {read:g} s"
    return None


def offline() -> bool:
    from huggingface_hub import constants

    return bool(constants.is_offline_mode())


def file(repo: str, filename: str, revision: str, bar: bool = False) -> Path | None:
    """A file of a Hub repo, from the HF cache or downloaded into it; None if the repo has no such file."""
    from huggingface_hub import errors, hf_hub_download

    # a bar for a few kilobytes is noise; a whole pickle checkpoint keeps huggingface_hub's own bar where the
    # run shows bars (tqdm_class: the download's own switch, where disable_progress_bars is the process's)
    silent = None if bar and HUB_BARS.get() else _silent_bar()
    if cached(repo, filename, revision) is None:
        probe(repo, filename, revision)
    with errors_of(repo, revision):
        try:
            return Path(hf_hub_download(repo, filename, revision=revision, tqdm_class=silent))
        except errors.RemoteEntryNotFoundError:
            return None
        except errors.LocalEntryNotFoundError:
            if filename == "config.json":
                raise
            return None  # offline: an optional file that was never fetched counts as absent


def _silent_bar() -> type[Any]:
    """huggingface_hub's bar, off for the one download it is given to (no library-wide switch)."""
    from huggingface_hub.utils import tqdm  # type: ignore[attr-defined]

    class Silent(tqdm):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **{**kwargs, "disable": True})  # type: ignore[no-untyped-call]

    return Silent


def size(repo: str, filename: str, commit: str) -> int | None:
    """A file's size as the Hub reports it (a large file's own, behind a redirect); None if absent."""
    from huggingface_hub import errors, get_hf_file_metadata, hf_hub_url

    probe(repo, filename, commit)
    with errors_of(repo):
        try:
            metadata = get_hf_file_metadata(hf_hub_url(repo, filename, revision=commit))
        except errors.RemoteEntryNotFoundError:
            return None
    found, _ETAGS[repo, filename, commit] = metadata.size, metadata.etag
    if found is None:  # a header is checked against the file's size, so the size is not optional
        raise NetworkError(fetch_failed(repo, f"the Hub did not say how large {filename} is"))
    return found


def cached(repo: str, filename: str, commit: str) -> Path | None:
    """The file from the HF cache, without asking the Hub; None when it was never fetched."""
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(repo, filename, revision=commit)
    return Path(found) if isinstance(found, str) else None


_COMMIT = re.compile(r"[0-9a-zA-Z][0-9a-zA-Z_.-]{0,99}")
_FULL_COMMIT = re.compile(r"[0-9a-f]{40}")


def is_commit_name(commit: str) -> bool:
    """A commit id as we accept it: it names a folder of ours, so it must never be a path."""
    return bool(_COMMIT.fullmatch(commit))


def is_full_commit(revision: str) -> bool:
    """A whole git commit id: it names one commit for ever, so it needs no asking the Hub."""
    return bool(_FULL_COMMIT.fullmatch(revision))


def commit_of(repo: str, revision: str) -> str:
    """The commit a revision names now (fetching the repo's config.json, which every model has)."""
    config = file(repo, "config.json", revision)
    if config is None:
        raise BadModel(f"{repo} has no config.json: it is not a transformers model")
    commit = config.parent.name if config.parent.parent.name == "snapshots" else revision
    if not is_commit_name(commit):
        raise BadModel(f"the Hub gave {repo} a commit id that is not one ({commit!r})")
    return commit


def remote_commit(repo: str, revision: str) -> str:
    """The commit a branch or tag names on the Hub now: asked of the Hub itself, never of the HF cache."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_url

    asking = f"asking the Hub which commit {revision} of {repo} is now"

    def failed(what: str, reason: str) -> str:
        return f"{asking} failed ({reason}); nothing was changed: check the network and run again"

    if offline():
        raise NotCached(f"{asking} needs the network: unset HF_HUB_OFFLINE")
    with errors_of(repo, revision, failed):
        commit = get_hf_file_metadata(hf_hub_url(repo, "config.json", revision=revision)).commit_hash
    if commit is None or not is_commit_name(commit):
        raise BadModel(f"the Hub gave {repo} a commit id that is not one ({commit!r})")
    return commit
