#!/bin/sh
# Regenerates configure and Makefile.in from configure.ac and Makefile.am.
# Needs autoconf >= 2.69, automake >= 1.15, libtool; pkg-config is optional.
set -e
cd "$(dirname "$0")"
autoreconf --force --install "$@"
