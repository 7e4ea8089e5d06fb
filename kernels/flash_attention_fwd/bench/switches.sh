# Sourced by run_variants.sh and plans/run_plan.sh. has_switch FILE NAME:
# true when the kernel FILE has the compile-time switch NAME (its #ifndef,
# or a test of `defined NAME`), so that a -D or #define of a removed or
# misspelt switch is refused instead of building the defaults under a
# variant's name.
has_switch() {
  grep -q "defined $2\\b\\|ifndef $2\\b" "$1"
}
