"""Serve the test fixture's tiny GPT-2 as openai-community/gpt2 on a loopback fake Hub, to try the CLI:

python scripts/demo_hub.py &        # prints the URL
HF_ENDPOINT=<url> gpt2emb analogy king man woman
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from fakehub import FakeHub, Repo
from tinymodel import build, hub_files

if __name__ == "__main__":
    hub = FakeHub().start()
    hub.repos["openai-community/gpt2"] = Repo("0123456789abcdef0123456789abcdef01234567", hub_files(build()))
    print(hub.url, flush=True)
    while True:
        time.sleep(3600)
