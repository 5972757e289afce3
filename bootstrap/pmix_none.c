/*
 * pmix_none.c - the pmix bootstrap of a build without PMIx (the build
 * selects it instead of pmix.c): a PMIx launch is still recognized, so that
 * it fails clearly instead of running every process as a job of its own.
 */
#include "bootstrap.h"
#include "gpurma_internal.h"

static int pmix_refuse(const gpurma_bootstrap_args_t *args, gpurma_bootstrap_t **out)
{
    (void)out;
    return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                            "bootstrap 'pmix' chosen (%s) but gpurma was built without PMIx "
                            "(configure --with-pmix); set GPURMA_BOOTSTRAP to another bootstrap",
                            args->why);
}

const gpurma_bootstrap_entry_t gpurma_bootstrap_pmix = {
    .name   = "pmix",
    .detect = gpurma_bootstrap_pmix_detect,
    .open   = pmix_refuse,
};
