"""Make every generated file again, each by its generator, in an order where each reads what the ones before
wrote: the JSON Schemas (gen_schemas.py: the package's and docs/schema/), the completion scripts
(gen_completions.py), then the docs (gen_docs.py: every page's --help and examples, docs/index.md's table of
commands, and the figures of docs/img/ by gen_figures.py), and the picture of the code's layers
(gen_architecture.py, docs/img/architecture.svg). A test fails while any of them is stale
(tests/test_schemas.py, test_completions.py, test_docs.py, test_figures.py); tests/test_generated.py checks
that this runs every generator of scripts/. The screenshots of lab --html's page (gen_screenshots.py) need
Chromium and their pixels differ from one machine to another, so no test compares them: --all takes them.

    python scripts/generate.py            # write them all
    python scripts/generate.py --all      # and the screenshots (Chromium)
    python scripts/generate.py --check    # name what is stale, exit 1 if anything is
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent
GENERATORS = ("gen_schemas.py", "gen_completions.py", "gen_docs.py", "gen_architecture.py")
CALLED = {"gen_figures.py": "gen_docs.py"}  # a generator run by another
BY_HAND = ("gen_screenshots.py",)  # with --all (no --check: no test compares them)


def main(check: bool, every: bool) -> int:
    failed = []
    for name in GENERATORS + (BY_HAND if every and not check else ()):
        print(f"== {name}{' --check' if check else ''}", flush=True)
        code = subprocess.run(
            [sys.executable, str(SCRIPTS / name), *(["--check"] if check else [])]
        ).returncode
        if code != 0:
            failed.append(name)
    if failed:
        print(f"{'stale' if check else 'failed'}: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main("--check" in sys.argv, "--all" in sys.argv))
