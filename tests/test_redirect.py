"""The Hub as it really answers: `resolve` for a large file is a 302 to its CDN, another host.

With the fake Hub's redirect on, model.safetensors (and pytorch_model.bin) come from 127.0.0.2 through the
real huggingface_hub client: the ranges still go there, the token goes to the Hub only, and a CDN or Hub
that refuses gives one line, exit 5, and nothing in the cache.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from conftest import COMMIT, run_cli, run_json, run_process
from fakehub import FakeHub, Repo, VirtualFile
from tinymodel import Tiny, hub_files, xl_files, xl_sample

TOKEN = "hf_redirect_test_token"


@pytest.fixture
def redirecting(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> FakeHub:
    hub.redirect = True
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    return hub


def cached_nothing(caches: dict[str, Path]) -> bool:
    return not list(caches["cache"].rglob("manifest.json")) and not list(caches["cache"].rglob("refs/*"))


def test_first_use_through_the_redirect(redirecting: FakeHub, tiny: Tiny, caches: dict[str, Path]) -> None:
    proc = run_process("neighbors", "cat", "-k", "3", "--json")  # a real process, HF_TOKEN in its environment
    assert proc.returncode == 0, proc.stderr
    assert [n["token"] for n in json.loads(proc.stdout)["items"][0]["neighbors"]][:2] == [" cats", " kitten"]

    weights = redirecting.served("cdn", "model.safetensors")
    assert [s.method for s in weights] == ["GET"] * 4 and all(s.range.startswith("bytes=") for s in weights)
    size = len(hub_files(tiny)["model.safetensors"])
    fetched = sum(int(b) - int(a) + 1 for a, b in (s.range[6:].split("-") for s in weights))
    wanted = tiny.wte.nbytes + tiny.wpe.nbytes
    assert wanted < fetched < wanted + 4096 < size  # the header and wte/wpe, not the blocks
    # the Hub answered every request for the weights with the redirect, and served none of their bytes
    assert {s.method for s in redirecting.served("hub", "model.safetensors")} == {"HEAD", "GET"}
    assert redirecting.authorization("hub") and set(redirecting.authorization("hub")) == {f"Bearer {TOKEN}"}
    assert redirecting.authorization("cdn") == [None] * 4  # the token never left the Hub
    assert len(list(caches["cache"].rglob("manifest.json"))) == 1


def test_xl_through_the_redirect_fetches_only_the_embeddings(redirecting: FakeHub, tiny: Tiny) -> None:
    rows, wpe = xl_sample()
    files = xl_files(tiny, rows, wpe)
    checkpoint = files["model.safetensors"]
    assert isinstance(checkpoint, VirtualFile)
    redirecting.repos["openai-community/gpt2-xl"] = Repo("a" * 40, files)
    redirecting.bytes_served = 0
    doc = run_json("vector", "id:3", "--full", "-m", "xl")
    np.testing.assert_allclose(doc["items"][0]["vector"], rows[3], rtol=1e-6)
    assert doc["model"] == "gpt2-xl" and run_json("positions", "0", "-m", "xl")["norms"][0] == pytest.approx(
        float(np.linalg.norm(wpe[0])), rel=1e-5
    )
    embeddings = (50257 + 1024) * 1600 * 4
    assert checkpoint.size > 6e9
    assert (
        embeddings < redirecting.bytes_served < embeddings + 200_000
    )  # 5% of the checkpoint, small files included
    assert len(redirecting.served("cdn", "model.safetensors")) == 4
    assert set(redirecting.authorization("cdn")) == {None}


def test_a_pickle_checkpoint_downloaded_whole_through_the_redirect(redirecting: FakeHub, tiny: Tiny) -> None:
    redirecting.repos["someone/gpt2-bin"] = Repo(COMMIT, hub_files(tiny, weights="bin"))
    doc = run_json("vector", "cat", "--full", "-m", "someone/gpt2-bin")
    np.testing.assert_allclose(doc["items"][0]["vector"], tiny.wte[tiny.id("cat")], rtol=1e-6)
    assert [s.range for s in redirecting.served("cdn", "pytorch_model.bin")] == [
        ""
    ]  # the file, by huggingface_hub
    assert set(redirecting.authorization("cdn")) == {None}


REFUSALS = {  # what answers, with what, and what the one line then says
    # the CDN refuses the range asked (a stale answer, a file changed since its header was read)
    "416": ("cdn", "416", "the server refused to send bytes 0-7 of model.safetensors"),
    # the Hub gates the weights: it says so on the HEAD that finds them, before any redirect
    "403 gated": (
        "hub",
        "403",
        "openai-community/gpt2 is gated: accept its terms on the Hub and set HF_TOKEN",
    ),
    # the CDN refuses the signed URL the Hub gave
    "403 cdn": ("cdn", "403", "HTTP 403 Forbidden from 127.0.0.2:"),
    # the CDN sends the client back to the Hub, which redirects it to the CDN again
    "loop": ("cdn", "loop", "the server redirected in a loop"),
}


@pytest.mark.parametrize("refusal", list(REFUSALS))
def test_refusals_are_one_line_exit_5_and_leave_nothing(
    redirecting: FakeHub, caches: dict[str, Path], refusal: str
) -> None:
    host, fault, said = REFUSALS[refusal]
    weights = "/lfs/" if host == "cdn" else "/resolve/"
    redirecting.fault = lambda method, path: (
        fault if weights in path and "model.safetensors" in path else None
    )
    for as_json in (False, True):
        result = run_cli("neighbors", "cat", *(["--json"] if as_json else []))
        assert result.exit_code == 5, result.output
        assert result.stdout == "" and len(result.stderr.strip().splitlines()) == 1
        message = json.loads(result.stderr)["error"]["message"] if as_json else result.stderr
        assert said in message, message
        assert cached_nothing(caches)
    assert set(redirecting.authorization("cdn")) <= {None}
    redirecting.fault = None  # and once the Hub answers again, the first use works
    assert run_json("neighbors", "cat", "-k", "1")["items"][0]["neighbors"][0]["token"] == " cats"
