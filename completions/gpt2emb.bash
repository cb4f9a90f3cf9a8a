_gpt2emb_completion() {
    local IFS=$'
'
    COMPREPLY=( $( env COMP_WORDS="${COMP_WORDS[*]}" \
                   COMP_CWORD=$COMP_CWORD \
                   _GPT2EMB_COMPLETE=complete_bash $1 ) )
    return 0
}

complete -o default -F _gpt2emb_completion gpt2emb
