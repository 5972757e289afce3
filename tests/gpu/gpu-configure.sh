# gpu-configure.sh - sourced by the GPU scripts that build gpurma themselves:
# gpu_configure configures $build (CUDA, no UCX) unless it already has a
# Makefile, taking the generated build system from .gpu-carry/ when the tree
# has none (the device machine has no autotools). Uses $top, $build, $logs
# and the script's note(); returns non-zero when configure failed.
gpu_configure() {
    [ -f "$build/Makefile" ] && return 0
    if [ ! -x "$top/configure" ] && [ -d "$top/.gpu-carry" ]; then
        cp -a "$top/.gpu-carry/." "$top/"
        touch "$top/aclocal.m4" "$top/configure" "$top/config.h.in" "$top/Makefile.in" 2>/dev/null
    fi
    mkdir -p "$build"
    (cd "$build" && "$top/configure" --with-cuda=/usr/local/cuda --with-ucx=no) \
        >"$logs/configure.log" 2>&1 || { note "configure failed (configure.log)"; return 1; }
}
