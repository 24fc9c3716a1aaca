#!/bin/sh
# An abort the target did not mark as a finding (r3_fuzz_finding,
# fuzz/replay_hooks.h) is a crash: the replay driver exits 3, never 1 (a
# finding) nor 0 (the kill that --expect-kill waits for). The abort comes
# from outside: the driver reads a FIFO that this script holds open without
# writing, then gets SIGABRT.
#   abort_is_a_crash.sh REPLAY
set -u
replay=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fifo="$dir/input.r3case"
mkfifo "$fifo"
"$replay" --expect-kill "$fifo" &
pid=$!
# Opening the write end returns once the driver has opened the read end,
# which it does only after installing its SIGABRT handler.
exec 3>"$fifo"
kill -ABRT "$pid"
wait "$pid"
got=$?
exec 3>&-
if [ "$got" -ne 3 ]; then
  echo "abort_is_a_crash: wanted exit status 3 after an abort that is no finding, got $got" >&2
  exit 1
fi
echo "abort_is_a_crash: exit status 3, as expected"
