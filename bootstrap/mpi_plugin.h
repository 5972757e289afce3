/*
 * mpi_plugin.h - the private contract between libgpurma and its MPI plugin
 * (libgpurma_bootstrap_mpi.so) beyond the open symbol in bootstrap.h.
 *
 * The plugin cannot reach libgpurma's hidden error functions, so it keeps the
 * text of its last error itself; bootstrap.c fetches it through this symbol.
 */
#ifndef GPURMA_MPI_PLUGIN_H
#define GPURMA_MPI_PLUGIN_H

/* Returns the calling thread's last plugin error text (never NULL). */
typedef const char *(*gpurma_bootstrap_mpi_error_fn)(void);
#define GPURMA_BOOTSTRAP_MPI_ERROR_SYMBOL "gpurma_bootstrap_mpi_plugin_error"

#endif
