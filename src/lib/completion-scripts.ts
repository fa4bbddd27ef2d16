/**
 * The completion scripts. Each is a thin shim: it hands the words typed so
 * far to `omh __complete`, which answers one candidate a line (a word, a tab
 * and a description), or `:files` for the shell's own file names.
 */

export const SHELLS = ['bash', 'zsh', 'fish'] as const
export type Shell = (typeof SHELLS)[number]

const bash = (bin: string) => `# omh completion for bash: eval "$(${bin} completion bash)" in ~/.bashrc
_omh_complete() {
  local IFS=$'\\n' line words=() files=
  COMPREPLY=()
  while IFS= read -r line; do
    if [[ $line == :files ]]; then files=1; else words+=("\${line%%$'\\t'*}"); fi
  done < <(${bin} __complete "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
  COMPREPLY=("\${words[@]}")
  if [[ -n $files ]]; then COMPREPLY+=($(compgen -f -- "\${COMP_WORDS[COMP_CWORD]}")); fi
  return 0
}
complete -o default -o nosort -F _omh_complete ${bin} 2>/dev/null || complete -o default -F _omh_complete ${bin}
`

const zsh = (bin: string) => `#compdef ${bin}
# omh completion for zsh: eval "$(${bin} completion zsh)" in ~/.zshrc (after compinit),
# or save it as _${bin} in a directory of $fpath.
_omh() {
  local line files=0
  local -a described plain
  for line in "\${(@f)$(${bin} __complete "\${(@)words[2,CURRENT]}" 2>/dev/null)}"; do
    [[ -z $line ]] && continue
    if [[ $line == :files ]]; then files=1
    elif [[ $line == *$'\\t'* ]]; then described+=("\${\${line%%$'\\t'*}//:/\\\\:}:\${line#*$'\\t'}")
    else plain+=("$line"); fi
  done
  (( \${#described} )) && _describe -t commands 'omh' described
  (( \${#plain} )) && compadd -a plain
  (( files )) && _files
  return 0
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then _omh "$@"; else compdef _omh ${bin}; fi
`

const fish = (bin: string) => `# omh completion for fish: ${bin} completion fish > ~/.config/fish/completions/${bin}.fish
function __omh_complete
    set -l words (commandline -opc)[2..-1] (commandline -ct)
    for line in (${bin} __complete $words 2>/dev/null)
        if test "$line" = :files
            __fish_complete_path (commandline -ct)
        else
            printf '%s\\n' $line
        end
    end
end
complete -c ${bin} -f -a '(__omh_complete)'
`

/** The script for one shell, completing the command `bin`. */
export function completionScript(shell: Shell, bin: string): string {
  return { bash, zsh, fish }[shell](bin)
}
