#!/bin/sh
# The multi-process suite through the port engine (port): see engines.sh.
exec "$(dirname "$0")/engines.sh" port
