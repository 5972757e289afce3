#!/bin/sh
# The multi-process suite through the port engine (nodes), its first half:
# see engines.sh (engines-nodes-2.sh runs the other half).
exec "$(dirname "$0")/engines.sh" nodes 1
