"""gpt2emb's store: the Hub (hub.py), what a checkpoint holds (checkpoint.py, formats.py, tokenizer_files.py),
and the cache of entries built from it (entries.py, revisions.py, build.py, verify.py, manage.py)."""
