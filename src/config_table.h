/*
 * config_table.h - every environment variable gpurma reads, in one table.
 *
 * X(field, NAME, type, default, help): the variable is GPURMA_<NAME>; field is
 * the member of gpurma_config_t; type is one of INT, SIZE, STR, BOOL.
 * gpurma-info prints this table with the values in effect.
 */
#ifndef GPURMA_CONFIG_TABLE_H
#define GPURMA_CONFIG_TABLE_H

#define GPURMA_CONFIG_TABLE(X)                                                            \
    X(bootstrap,    BOOTSTRAP,    STR,  "auto",  "Bootstrap: auto, pmix, uid, mpi, single")            \
    X(engine,       ENGINE,       STR,  "auto",  "Engine for every window: auto, mem, port, switch")   \
    X(device,       DEVICE,       STR,  "auto",  "GPU to use: auto (node rank mod GPUs), host (host backend), or an ordinal; init params override") \
    X(timeout_ms,   TIMEOUT_MS,   INT,  "60000", "Bound on waits, barriers and bootstrap calls (ms)")  \
    X(log_level,    LOG_LEVEL,    STR,  "warn",  "Log level: error, warn, info, debug, trace")         \
    X(log_subsys,   LOG_SUBSYS,   STR,  "all",   "Comma list of subsystems to log: init,boot,win,rma,mem,port,all") \
    X(num_signals,  NUM_SIGNALS,  INT,  "64",    "Default signal slots per window")                    \
    X(num_counters, NUM_COUNTERS, INT,  "16",    "Default local-completion counters per window")       \
    X(node_id,      NODE_ID,      STR,  "",      "Override the node identity (makes ranks on one host act as separate nodes)") \
    X(uid_token,    UID_TOKEN,    STR,  "",      "Shared secret for the uid bootstrap; connections without it are rejected") \
    X(uid_iface,    UID_ADDR,     STR,  "",      "Address the uid bootstrap root listens on (default MASTER_ADDR)") \
    X(mpi_plugin,   MPI_PLUGIN,   STR,  "",      "Path of libgpurma_bootstrap_mpi.so (default: next to libgpurma)") \
    X(liveness_ms,  LIVENESS_MS,  INT,  "20",    "How often waits check that node peers are alive (ms)") \
    X(spin_us,      SPIN_US,      INT,  "50",    "Host waits spin this long before yielding the core (us); 0 when the node has more ranks than cores") \
    X(port_contexts, PORT_CONTEXTS, INT, "1",    "Proxy contexts (threads) a port-engine window spreads its peers over, 1 to 4") \
    X(disable_switch, DISABLE_SWITCH, BOOL, "0", "Refuse the switch engine")

#endif
