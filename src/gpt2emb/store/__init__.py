"""gpt2emb's store: the Hub, what a checkpoint holds, and the cache of entries built from it.

The Hub is hub.py's. What a checkpoint holds is read by checkpoint.py (its config and headers checked),
checkpoint_files.py (where its files lie), table_rows.py (its tables' rows), whole_weights.py (every weight
file, to run the model), formats.py and tokenizer_files.py. The cache of entries is entries.py's and
revisions.py's to read, build.py's to build (with writing.py, encoder_files.py and install.py), and
verify.py's and manage.py's to check and clear.
"""
