"""cache: what is cached (list, clear, verify, refresh, path)."""

from gpt2emb.commands import JSON, Command, Method, Stem

STEM = Stem(
    place=120,
    commands=(
        Command("cache", shows="what is cached: list, clear, verify, refresh, path"),
        Command(
            "cache list",
            modes={JSON: ("CacheResult", "gpt2emb cache list --json")},
            fuzz=(("cache", "list"),),
            warm=("cache", "list"),
        ),
        Command(
            "cache clear",
            modes={JSON: ("CacheResult", "gpt2emb cache clear --json")},
            fuzz=(("cache", "clear", "{w}"),),
        ),
        Command(
            "cache verify",
            modes={JSON: ("VerifyResult", "gpt2emb cache verify --json")},
            fuzz=(("cache", "verify", "{w}"),),
        ),
        Command(
            "cache refresh",
            modes={JSON: ("RefreshResult", "gpt2emb cache refresh --json")},
            fuzz=(("cache", "refresh", "{w}"),),
        ),
        Command(
            "cache path",
            modes={JSON: ("CachePath", "gpt2emb cache path --json")},
            fuzz=(("cache", "path", "{w}"),),
        ),
    ),
    handle=(
        # cache_clear's example is a model never cached: the contract's fuzz clears nothing else
        Method("cache_list", {}, same_as=("cache", "list"), module_level=True),
        Method(
            "cache_verify",
            {"model": "gpt2", "repair": False, "reporter": None},
            same_as=("cache", "verify", "gpt2"),
            module_level=True,
        ),
        Method("cache_clear", {"model": "someone/never-cached", "outdated": False}, module_level=True),
        Method("cache_refresh", {"model": "gpt2", "reporter": None}, module_level=True),
    ),
)
