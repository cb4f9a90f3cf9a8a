"""The cores of the commands, one module per stem: names and words in, a result dataclass out. They sit below
the handle (handle.py) and the CLI, take an opened model (open.py) and know nothing of terminals."""
