/*
 * config_table.h - the core's environment variables, in one table.
 *
 * X(field, NAME, type, default, accepts, help): the variable is GPURMA_<NAME>;
 * field is the member of gpurma_config_t; accepts says which values are valid
 * (the macros are in config_section.h):
 *
 *   INT   GPURMA_CFG_RANGE(min, max, unit): a decimal or 0x-hex integer in
 *         [min, max], nothing else (no suffix, sign only when min < 0)
 *   BOOL  GPURMA_CFG_ANY: 1/0, yes/no, true/false, on/off (any case)
 *   ENUM  GPURMA_CFG_ONE_OF("a", "b", ...): one of the words (any case); the
 *         field holds the word as written here, field_index its position.
 *         GPURMA_CFG_ONE_OF_EACH(words) takes words each followed by a comma,
 *         as a plug-in list generates them
 *   LIST  GPURMA_CFG_ONE_OF(...): a comma list of the words; field_mask has
 *         bit i set for word i
 *   STR   GPURMA_CFG_ANY (free text) or GPURMA_CFG_CHECKED(fn, words):
 *         fn(text, &value) says whether text is valid and may store what it
 *         read in field_value; words say what is valid
 *
 * A component's own variables are not here: it declares them in its own
 * file with the same columns (config_section.h), and they are parsed,
 * checked and printed with these.
 *
 * A value that does not parse leaves the default in the field and makes
 * gpurma_config_check() fail. gpurma-info prints this table with the values
 * in effect and what each variable accepts.
 */
#ifndef GPURMA_CONFIG_TABLE_H
#define GPURMA_CONFIG_TABLE_H

/* In the order of gpurma_log_level_t and gpurma_log_subsys_t. */
#define GPURMA_LOG_LEVEL_NAMES  "error", "warn", "info", "debug", "trace"
/* From gpurma.h's list of engine kinds, each followed by a comma;
 * gpurma_engine_name() uses the same list. */
#define GPURMA_ENGINE_WORD(kind, name, value) #name,
#define GPURMA_ENGINE_NAMES     GPURMA_ENGINE_LIST(GPURMA_ENGINE_WORD)
/* GPURMA_COLL_ALGO_NAMES: made from the algorithms' list, in gpurma_coll_algo_t's order. */
#include "gpurma/detail/coll_algos.h"
#define GPURMA_LOG_SUBSYS_NAMES "init", "boot", "win", "rma", "mem", "port"

/* 7 days: timeouts in nanoseconds stay far from overflowing 64 bits. */
#define GPURMA_CFG_TIMEOUT_MS_MAX 604800000

#define GPURMA_CONFIG_TABLE(X)                                                            \
    X(engine,       ENGINE,       ENUM, "auto",                                           \
      GPURMA_CFG_ONE_OF_EACH(GPURMA_ENGINE_NAMES),                                        \
      "Engine for every window (auto: chosen per peer); window params override")                                 \
    X(device,       DEVICE,       STR,  "auto",                                           \
      GPURMA_CFG_CHECKED(gpurma_config_device_ok, "auto, host or a GPU ordinal (0 or more)"), \
      "GPU to use: auto (node rank mod GPUs), host (host backend), or an ordinal; init params override") \
    X(timeout_ms,   TIMEOUT_MS,   INT,  "60000",                                          \
      GPURMA_CFG_RANGE(1, GPURMA_CFG_TIMEOUT_MS_MAX, "milliseconds"),                     \
      "Bound on waits, barriers and bootstrap calls (ms)")                                \
    X(log_level,    LOG_LEVEL,    ENUM, "warn",                                           \
      GPURMA_CFG_ONE_OF(GPURMA_LOG_LEVEL_NAMES),                                          \
      "Most verbose level logged to stderr")                                       \
    X(log_subsys,   LOG_SUBSYS,   LIST, "all",                                            \
      GPURMA_CFG_ONE_OF(GPURMA_LOG_SUBSYS_NAMES, "all"),                                  \
      "Subsystems to log")                  \
    X(num_signals,  NUM_SIGNALS,  INT,  "64",                                             \
      GPURMA_CFG_RANGE(0, 1048576, "signal slots"),                                       \
      "Default signal slots per window")                                                  \
    X(num_counters, NUM_COUNTERS, INT,  "16",                                             \
      GPURMA_CFG_RANGE(0, 1048576, "counters"),                                           \
      "Default local-completion counters per window")                                     \
    X(node_id,      NODE_ID,      STR,  "",     GPURMA_CFG_ANY,                           \
      "Override the node identity (makes ranks on one host act as separate nodes)")      \
    X(uid_iface,    UID_ADDR,     STR,  "",     GPURMA_CFG_ANY,                           \
      "Address the uid bootstrap root listens on (default MASTER_ADDR)")                  \
    X(ucx_net_devices, UCX_NET_DEVICES, STR, "", GPURMA_CFG_ANY,                          \
      "Network devices of the port engine's UCX (as UCX_NET_DEVICES; default: the interface toward the bootstrap's job address (uid), else UCX's choice; all: every device)") \
    X(liveness_ms,  LIVENESS_MS,  INT,  "20",                                             \
      GPURMA_CFG_RANGE(1, 60000, "milliseconds"),                                         \
      "How often waits check that node peers are alive (ms)")                             \
    X(spin_us,      SPIN_US,      INT,  "50",                                             \
      GPURMA_CFG_RANGE(0, 1000000, "microseconds"),                                       \
      "Host waits spin this long before yielding the core (us); 0 when the node has more ranks than cores") \
    X(port_contexts, PORT_CONTEXTS, INT, "1",                                             \
      GPURMA_CFG_RANGE(1, GPURMA_DEV_MAX_PORTS, "proxy contexts"),                                           \
      "Proxy contexts (threads) a port-engine window spreads its peers over")     \
    X(disable_switch, DISABLE_SWITCH, BOOL, "0", GPURMA_CFG_ANY,                          \
      "Refuse the switch engine's NVLink multicast path (its emulation stays)")           \
    X(switch_enable, SWITCH, BOOL, "0", GPURMA_CFG_ANY,                                   \
      "Opt in to the switch engine's NVLink multicast path (refused when GPURMA_DISABLE_SWITCH, NCCL_NVLS_ENABLE=0 or NVSHMEM_DISABLE_NVLS is set)") \
    X(coll_algo,    COLL_ALGO,    ENUM, "auto",                                           \
      GPURMA_CFG_ONE_OF(GPURMA_COLL_ALGO_NAMES),                                          \
      "Collectives' algorithm (auto: the selector's table, docs/collectives.md); one that does not apply to a collective falls back to oneshot") \
    X(coll_slot_bytes, COLL_SLOT_BYTES, INT, "131072",                                    \
      GPURMA_CFG_RANGE(1024, 67108864, "bytes"),                                          \
      "Collectives: bytes per peer and step in a team's scratch window (larger pieces go in several steps)") \
    X(coll_channels, COLL_CHANNELS, INT, "128",                                           \
      GPURMA_CFG_RANGE(1, 256, "channels"),                                               \
      "Collectives on GPUs: channels of a team's scratch window, shared out among the members that share a GPU; the most thread blocks a scratch-path or LL16 collective spreads over (each holds an LL16 slot of up to 8176 bytes a peer, so LL16 takes pieces up to channels x that); the same on every rank") \
    X(coll_ll16_part_bytes, COLL_LL16_PART_BYTES, INT, "1024",                            \
      GPURMA_CFG_RANGE(0, 1048576, "bytes"),                                              \
      "Small collectives on a stream (LL16): at least one part (a thread block) per this many bytes of the piece a rank sends a peer, up to the team's channels (0: as few parts as the slots allow); the same on every rank") \
    X(coll_direct_min, COLL_DIRECT_MIN, INT, "1048576",                                    \
      GPURMA_CFG_RANGE(0, INT64_MAX, "bytes"),                                            \
      "Collectives on GPU buffers: an LL algorithm keeps a call it can take while its busiest rank moves fewer bytes than this (the piece one rank sends one peer times the peers); larger calls, and those no LL algorithm can take, run zero-copy where the buffers allow; the same on every rank") \
    X(coll_graph_register, COLL_GRAPH_REGISTER, BOOL, "1", GPURMA_CFG_ANY,                \
      "Collectives captured into CUDA graphs run zero-copy on unregistered GPU buffers too (the members map each other's allocations while the graph lives); the same on every rank") \
    X(coll_direct_block_bytes, COLL_DIRECT_BLOCK_BYTES, INT, "4096",                      \
      GPURMA_CFG_RANGE(1024, 1073741824, "bytes"),                                        \
      "Zero-copy collectives: bytes a rank's thread block moves (one block per this many, 1 to GPURMA_COLL_DIRECT_BLOCKS)") \
    X(coll_direct_blocks, COLL_DIRECT_BLOCKS, INT, "64",                                  \
      GPURMA_CFG_RANGE(1, 1024, "thread blocks"),                                         \
      "Zero-copy collectives: most thread blocks a rank's kernel takes (ranks sharing a GPU need all their kernels resident at once)")

#endif
