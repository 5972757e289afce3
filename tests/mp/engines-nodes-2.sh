#!/bin/sh
# The multi-process suite through the port engine (nodes), its second half
# without test_accumulate and test_coll: see engines.sh.
ALONE="test_accumulate test_coll" exec "$(dirname "$0")/engines.sh" nodes 2
