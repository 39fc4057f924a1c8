#!/usr/bin/env bash
# loom model checks of the runtime's park/unpark protocol, task state machine, channel and
# the fast scheduler's mailbox and watch slot.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUSTFLAGS="--cfg loom" cargo test -p schedlab-rt --release --test loom_park --target-dir target/loom "$@"
