#!/bin/sh
# The multi-process suite through the port engine (nodes): test_accumulate
# and test_coll, as long as the rest of the suite there; see engines.sh.
exec "$(dirname "$0")/engines.sh" nodes "test_accumulate test_coll"
