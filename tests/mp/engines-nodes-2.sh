#!/bin/sh
# The multi-process suite through the port engine (nodes), its second half:
# see engines.sh.
exec "$(dirname "$0")/engines.sh" nodes 2
