#!/bin/sh
# file-layers.sh - inside coll/, rma/, rma/switch/, compat/nvshmem/,
# bootstrap/ and api/, files call each other one way only (file_layers.py
# prints each folder's call graph). Exit 77 without python3.
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
exec python3 "$top/tests/unit/file_layers.py" "$top"
