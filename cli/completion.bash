# bash completion for layerplan, installed as /usr/share/bash-completion/completions/layerplan
# (cmake/CliDocs.cmake); bash-completion loads it the first time `layerplan <TAB>` is typed,
# or `source cli/completion.bash` in a shell of your own.
#
# The commands, each command's flags and which flags take a value are read from the help of
# the layerplan being completed (`layerplan --help`, `layerplan COMMAND --help`, once per
# shell), so they are those of that binary. What a flag's value is comes from the tables
# below; model and GPU names come from `layerplan models` and `layerplan gpus`.
# tests/package/completion.sh checks the tables against layerplan itself.

# Flags whose value is a file (in every command that has them), and those whose value is a folder.
declare -g _layerplan_file_flags=" -o --output --json --cluster --config --topology-xml --report --trace
  --profile-db --profile-db-out --plan --log-json --log-csv --profile --save --resume --init-from --link --measured "
declare -g _layerplan_dir_flags=" --model-path --tensorboard "
# The words a flag takes, by COMMAND:FLAG. @models and @gpus: the names layerplan lists;
# @files: file names as well.
declare -gA _layerplan_values=(
  [plan:--model]="@models @files" [models:--model]="@models @files" [models:--export]="@models @files"
  [check-plan:--model]="@models @files" [train:--model]="@models @files" [predict:--model]="@models @files"
  [plan:--gpu]="@gpus"
  [plan:--precision]="fp32 tf32 bf16 fp16" [plan:--layout]="nhwc nchw"
  [plan:--placement]="first-block aligned-blocks" [plan:--node-runs]="auto any by-samples"
  [plan:--sync]="ring ps" [plan:--overlap]="on off" [plan:--mode]="auto layerwise data model owt"
  [report:--sync]="ring ps"
  [launch:--backend]="cpu gpu"
  [train:--data]="synthetic fashion-mnist imagefolder: @files" [train:--val-data]="imagefolder: @files"
  [train:--lr-schedule]="constant cosine step"
  [train:--optimizer]="sgd adamw"
  [train:--shuffle]="on off" [train:--overlap]="on off" [train:--kernels]="onednn reference" [train:--backend]="cpu gpu"
  [train:--precision]="fp32 tf32 bf16"
  [predict:--kernels]="onednn reference" [predict:--overlap]="on off"
)
declare -gA _layerplan_cache=()

# BIN [COMMAND]: without COMMAND the commands, one a line; with it, COMMAND's flags as
# "FLAG 1" (takes a value) or "FLAG 0", and "@positional" when it takes an argument.
_layerplan_help() {
  local key="$1|${2:-}"
  if [ -z "${_layerplan_cache[$key]+set}" ]; then
    _layerplan_cache[$key]=$("$1" ${2:+"$2"} --help 2>/dev/null | awk -v command="${2:-}" '
      # CLI11 pads each name to the column where the description of -h,--help starts.
      /^  -h,--help / { column = index($0, "Print") }
      /^[A-Za-z]+:$/ { section = $0; next }
      command == "" && section == "Subcommands:" && /^  [a-z]/ { print $1; next }
      command != "" && section == "Positionals:" && /^  [a-z]/ { print "@positional"; next }
      command != "" && section == "Options:" && /^  -/ {
        name = $0
        if (column > 0 && length($0) >= column && substr($0, column - 1, 1) == " ") name = substr($0, 1, column - 1)
        split(name, fields, " ")
        gsub(/\{[^}]*\}/, "", fields[1])
        n = split(fields[1], flags, ",")
        for (i = 1; i <= n; i++) print flags[i], (fields[2] != "" ? 1 : 0)
      }')
  fi
  printf '%s\n' "${_layerplan_cache[$key]}"
}

# BIN WHAT: the names `layerplan models` or `layerplan gpus` lists (the first column, past its heading).
_layerplan_names() {
  "$1" "$2" 2>/dev/null | awk 'NR > 1 && NF > 0 { print $1 }'
}

# Adds to COMPREPLY the words in $1 that start with the current word.
_layerplan_add_words() {
  local word
  while IFS= read -r word; do COMPREPLY+=("$word"); done < <(compgen -W "$1" -- "$cur")
}

_layerplan_add_files() {  # $1: -f for files, -d for folders
  local name
  while IFS= read -r name; do COMPREPLY+=("$name"); done < <(compgen "$1" -- "$cur")
  compopt -o filenames 2>/dev/null
}

# The value of FLAG of COMMAND.
_layerplan_value() {
  local bin=$1 command=$2 flag=$3 value
  if [[ $_layerplan_dir_flags == *" $flag "* ]]; then
    _layerplan_add_files -d
    return
  fi
  if [[ $_layerplan_file_flags == *" $flag "* ]]; then
    _layerplan_add_files -f
    return
  fi
  for value in ${_layerplan_values[$command:$flag]:-}; do
    case $value in
      @models | @gpus) _layerplan_add_words "$(_layerplan_names "$bin" "${value#@}")" ;;
      @files) _layerplan_add_files -f ;;
      *) _layerplan_add_words "$value" ;;
    esac
  done
}

_layerplan() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev="" bin=${COMP_WORDS[0]} command="" i
  COMPREPLY=()
  [ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
  # --flag=value: bash splits it at "=" (COMP_WORDBREAKS).
  if [ "$cur" = "=" ]; then
    cur=""
  elif [ "$prev" = "=" ] && [ "$COMP_CWORD" -gt 1 ]; then
    prev=${COMP_WORDS[COMP_CWORD - 2]}
  elif [ "$prev" = "=" ]; then
    prev=""
  fi
  # shellcheck disable=SC2088  # a literal ~/ as typed, which bash has not expanded
  [[ $bin == "~/"* ]] && bin=$HOME/${bin#"~/"}
  command -v "$bin" >/dev/null 2>&1 || bin=layerplan

  for ((i = 1; i < COMP_CWORD; i++)); do
    if [[ ${COMP_WORDS[i]} != -* ]]; then
      command=${COMP_WORDS[i]}
      break
    fi
  done
  if [ -z "$command" ]; then
    if [[ $cur == -* ]]; then _layerplan_add_words "--help --version"; else _layerplan_add_words "$(_layerplan_help "$bin")"; fi
    return 0
  fi
  # layerplan launch ... -- COMMAND ARGS: the ranks' command line.
  if [ "$command" = launch ]; then
    for ((i = i + 1; i < COMP_CWORD; i++)); do
      if [ "${COMP_WORDS[i]}" = "--" ]; then
        if [ $((i + 1)) -eq "$COMP_CWORD" ]; then _layerplan_add_words "$(compgen -c -- "$cur")"; else _layerplan_add_files -f; fi
        return 0
      fi
    done
  fi

  local help flag
  help=$(_layerplan_help "$bin" "$command")
  if [[ $prev == -* ]] && grep -qx -- "$prev 1" <<<"$help"; then
    _layerplan_value "$bin" "$command" "$prev"
    return 0
  fi
  if [[ $cur == -* ]] || ! grep -qx "@positional" <<<"$help"; then
    flag=$(awk '$1 ~ /^-/ { print $1 }' <<<"$help")
    _layerplan_add_words "$flag"
  else
    _layerplan_add_files -f
  fi
  return 0
}
complete -F _layerplan layerplan
