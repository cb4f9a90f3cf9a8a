"""sizes (parameter counts) and models (the registry's named models)."""

from gpt2emb.commands import JSON, Command, Method, Stem

STEM = Stem(
    place=60,
    commands=(
        Command(
            "sizes",
            shows="the parameters of the four GPT-2s, `wte`'s share, the tables' megabytes",
            modes={JSON: ("SizesResult", "gpt2emb sizes --json (and sizes -m MODEL... --json)")},
            fuzz=(("sizes", "--dtype", "{w}"), ("sizes", "-m", "{w}", "--revision", "{v}")),
            warm=("sizes",),
        ),
        Command(
            "models",
            shows="the models gpt2emb knows by name, and which are cached",
            modes={JSON: ("ModelsResult", "gpt2emb models --json")},
            fuzz=(("models", "{w}"),),
            warm=("models",),
        ),
    ),
    handle=(
        Method(
            "sizes",
            {"models": None, "dtype": "fp32", "verify": False, "revision": None, "reporter": None},
            same_as=("sizes",),
            module_level=True,
        ),
        Method("models", {}, same_as=("models",), module_level=True),
    ),
)
