/*
 * pmix_detect.c - recognizes a PMIx launch (mpirun, srun --mpi=pmix), in
 * builds with PMIx (pmix.c) and without it (pmix_none.c) alike: a PMIx
 * launch must never fall through to running each process alone.
 */
#include "bootstrap.h"

int gpurma_bootstrap_pmix_detect(const gpurma_bootstrap_args_t *args, const char **why)
{
    (void)args;
    if (!gpurma_bootstrap_env_set("PMIX_RANK") && !gpurma_bootstrap_env_set("PMIX_NAMESPACE"))
        return 0;
    *why = "PMIX_RANK/PMIX_NAMESPACE are set (launched by mpirun or srun --mpi=pmix)";
    return 1;
}
