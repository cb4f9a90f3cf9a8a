"""gpt2emb: look inside GPT-2's embeddings from the shell."""
