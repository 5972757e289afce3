#!/bin/sh
# The multi-process suite through the switch engine (switch): see engines.sh.
exec "$(dirname "$0")/engines.sh" switch
