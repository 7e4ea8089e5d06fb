# Sourced by run_variants.sh, sass_check.sh and plans/run_plan.sh.
# has_switch FILE NAME: true when the kernel FILE has the compile-time
# switch NAME (its #ifndef, or a test of `defined NAME`), so that a -D or
# #define of a removed or misspelt switch is refused instead of building
# the defaults under a variant's name.
has_switch() {
  grep -q "defined $2\\b\\|ifndef $2\\b" "$1"
}

# harness_flags: the nvcc flags of every CUDA compile of the harness, one
# per line (the quoted strings of harness/src/cuda_flags.inc, which
# compile.cc includes; run from the repository root).
harness_flags() {
  grep -o '"[^"]*"' harness/src/cuda_flags.inc | tr -d '"'
}

# check_variants SCRIPT: every variant of FA_VARIANTS (NAME=FILE [nvcc
# flags];...) checked before any compiles: its file, and no -D of a switch
# the file does not have (has_switch). Otherwise exits the calling script
# with status 2, the message prefixed with SCRIPT.
check_variants() {
  local spec name rest words file flag specs
  IFS=';' read -r -a specs <<< "${FA_VARIANTS:?set FA_VARIANTS=NAME=FILE [flags];...}"
  for spec in "${specs[@]}"; do
    name=${spec%%=*}; rest=${spec#*=}
    read -r -a words <<< "$rest"
    file=${words[0]:-}
    [[ -f $file ]] || { echo "$1: $name: no file $file" >&2; exit 2; }
    for flag in "${words[@]:1}"; do
      if [[ $flag =~ ^-D(KSEEK_FA_[A-Z0-9_]+)(=|$) ]] && ! has_switch "$file" "${BASH_REMATCH[1]}"; then
        echo "$1: $name: $file has no switch ${BASH_REMATCH[1]} (removed? see NOTES.md)" >&2
        exit 2
      fi
    done
  done
}
