"""Cross-cutting: where the docs' tiny model contradicts GPT-2 (its sizes, its neighbours, the inputs' ranks
with --keep-inputs), the page that shows it says why in a sentence beside the example, and what the sentence
says of the tiny model holds (issue 54, point 3)."""

from __future__ import annotations

from pathlib import Path

from conftest import run_json
from fakehub import FakeHub

DOCS = Path(__file__).resolve().parents[1] / "docs"


def said_after(page: str, example: str) -> str:
    """The page's prose right after the console block that runs `example`, up to the next block."""
    text = (DOCS / page).read_text()
    block = text.index(f"$ gpt2emb {example}\n")
    after = text.index("```\n", block) + len("```\n")
    return " ".join(text[after : text.index("```", after)].split())


def test_the_sizes_page_says_the_tiny_wpe_outweighs_its_wte(hub: FakeHub) -> None:
    doc = run_json("sizes", "-m", "gpt2")  # counted from the headers of gpt2, here the tiny model
    (model,) = doc["models"]
    assert model["wpe_params"] > 2.9 * model["wte_params"]  # "three times"
    assert (model["wte_params"], model["wpe_params"]) == (10_976, 32_768)
    sentence = "The tiny model's `wpe` (32,768 parameters) is three times its `wte` (10,976)"
    assert sentence in said_after("commands/sizes.md", "sizes -m ./tiny-gpt2")
    assert "part 4: its position table is larger than its token table" in said_after(
        "commands/lab.md", "lab -m ./tiny-gpt2"
    )


def test_the_pages_say_the_tiny_neighbours_hold_no_forms_of_the_word(hub: FakeHub) -> None:
    (king,) = run_json("neighbors", "king", "-k", "10")["items"]
    nearest = [n["token"] for n in king["neighbors"]]
    assert nearest[:2] == [" man", " queen"]  # the planted ones
    assert not any(t.strip().lower().rstrip("s") == "king" for t in nearest)  # none of its forms
    (kitten,) = run_json("neighbors", "kitten", "--fold", "-k", "3")["items"]
    assert kitten["form_share"] == 0
    assert "holds no other form of `kitten`" in said_after(
        "commands/neighbors.md", "neighbors kitten -m ./tiny-gpt2 --fold -k 3"
    )
    lab = said_after("commands/lab.md", "lab -m ./tiny-gpt2")
    assert 'part 2: its rows are random but for a few planted ones, so `" king"`\'s nearest tokens' in lab


def test_the_pages_say_why_the_tiny_inputs_rank_below_queen(hub: FakeHub) -> None:
    doc = run_json("analogy", "king", "man", "woman", "--keep-inputs", "-k", "5")
    assert doc["results"][0]["token"] == " queen"
    ranks = {i["word"]: i["rank"] for i in doc["inputs"]}
    assert ranks["king"] == 5
    said = said_after("commands/analogy.md", "analogy king man woman -m ./tiny-gpt2 -k 3 --keep-inputs")
    assert 'so it stays first with the inputs kept and `" king"` ranks 5th' in said
    assert 'part 3: `" queen"` was planted' in said_after("commands/lab.md", "lab -m ./tiny-gpt2")
