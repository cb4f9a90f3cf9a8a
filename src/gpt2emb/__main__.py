from gpt2emb.cli import main

main()
