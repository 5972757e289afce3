#!/bin/sh
# The multi-process suite through the port engine (nodes), its first half
# without test_accumulate and test_coll: see engines.sh (engines-nodes-2.sh runs the
# other half, engines-nodes-3.sh those two).
ALONE="test_accumulate test_coll" exec "$(dirname "$0")/engines.sh" nodes 1
