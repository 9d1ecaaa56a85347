#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: everything the lab measures, in one go.
#   scripts/gpu-run.sh LOGDIR [STEPS...]
# STEPS (default: all, in this order):
#   device    what the lab sees (device attributes, clocks)
#   tests     make test-gpu (CPU and GPU tests)
#   check     every kernel's correctness pass at small sizes
#   sanitize  that pass under compute-sanitizer memcheck and racecheck
#   record    re-measure every chapter into results/<device>/
#   book      build the book with execution (live measurement)
# Each step's output goes to LOGDIR/<step>.log; the script goes on after a failed step and
# exits non-zero at the end if any failed. PY=python3 uses that interpreter instead of .venv;
# CHAPTER=NN-slug limits check, sanitize (quick: no sweeps) and record to that chapter.
set -uo pipefail
cd "$(dirname "$0")/.."
logdir=${1:?usage: scripts/gpu-run.sh LOGDIR [STEPS...]}
shift
steps=${*:-device tests check sanitize record book}
mkdir -p "$logdir"
mk=(make ${PY:+PY=$PY})
py=${PY:-.venv/bin/python}
[ -n "${PY:-}" ] && export PYTHONPATH="$PWD/lib${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1 PERFLAB_MODE=live
failed=()
for s in $steps; do
  start=$SECONDS
  case $s in
    device)   cmd=("$py" -m perflab device) ;;
    tests)    cmd=("${mk[@]}" test-gpu) ;;
    check)    cmd=("$py" -m perflab check ${CHAPTER:+--chapter $CHAPTER}) ;;
    sanitize) cmd=("${mk[@]}" sanitize ${CHAPTER:+ARGS="--chapter $CHAPTER --quick"}) ;;
    record)   cmd=("${mk[@]}" record ${CHAPTER:+ARGS="--chapter $CHAPTER"}) ;;
    book)     cmd=("${mk[@]}" book) ;;
    *) echo "unknown step $s"; failed+=("$s"); continue ;;
  esac
  echo "=== $s: ${cmd[*]}"
  if "${cmd[@]}" >"$logdir/$s.log" 2>&1; then rc=0; else rc=$?; failed+=("$s"); fi
  tail -n 25 "$logdir/$s.log"
  echo "=== $s: exit $rc after $((SECONDS - start)) s"
done
if ((${#failed[@]})); then echo "FAILED: ${failed[*]}"; exit 1; fi
echo "all steps passed"
