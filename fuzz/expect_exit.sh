#!/bin/sh
# Runs CMD and passes only when it exits with exactly STATUS: tests of the
# replay driver's own failure paths (a misspelled mutant is a usage error,
# exit 2, never taken for the kill a test expects).
#   expect_exit.sh STATUS CMD [ARGS...]
set -u
want=$1
shift
"$@"
got=$?
if [ "$got" -ne "$want" ]; then
  echo "expect_exit: wanted exit status $want, got $got from: $*" >&2
  exit 1
fi
echo "expect_exit: exit status $got, as expected"
