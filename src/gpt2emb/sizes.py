"""TEMPORARY, while cli.py is split into cli/: sizes.py moved to core/sizes.py."""

from gpt2emb.core.sizes import *  # noqa: F403
