/*
 * handle.c - public handles are checked without trusting the pointer, and
 * they outlive what they stand for.
 *
 * Registry. A handle is a pointer the user gives back; it may be NULL, a
 * small integer, freed memory or readable garbage. Before any of its bytes
 * are read it is looked up here: only addresses the library registered
 * (with their kind: context, team, window, switch) are dereferenced, so a
 * wild pointer gets GPURMA_ERR_INVALID_ARG, never a segfault or a read of
 * memory the library does not own. As with file descriptors, a handle's
 * identity must not be reused while a stale copy may exist: here the
 * address is the generation, and it is never reused, because of the next
 * rule.
 *
 * Tombstones. A window, team or context handle may be kept after
 * gpurma_win_free, gpurma_team_free or gpurma_finalize. The struct behind
 * a released handle is never returned to malloc: its resources go, the
 * struct stays (a few hundred bytes per freed window or team, for the life
 * of the process) with a dead magic word, so a later call reads "freed"
 * from memory that is still the library's. The list keeps tombstones
 * reachable, so leak checkers see them as live memory, not as leaks.
 *
 * The registry is an open-addressing hash set of addresses, written under
 * a lock and read without one (every public call looks a handle up): it
 * only grows, entries are never removed (a forgotten one is marked so),
 * and a table that was replaced by a larger one is kept, since a reader
 * may still be probing it.
 */
#include <pthread.h>
#include <stdlib.h>

#include "gpurma_internal.h"

static pthread_mutex_t tomb_lock = PTHREAD_MUTEX_INITIALIZER;
static void **tombs;
static size_t ntombs, cap;

/* ------------------------------------------------------------ registry */

typedef struct handle_entry {
    uintptr_t addr;  /* 0: empty; written last, with release order */
    uint32_t  kind;  /* gpurma_handle_kind_t                       */
    uint32_t  known; /* 0 once forgotten (memory about to be freed)  */
} handle_entry_t;

typedef struct handle_table {
    size_t                mask; /* capacity - 1 (a power of two)   */
    size_t                used; /* entries with an address         */
    struct handle_table  *older; /* replaced tables, kept for readers */
    handle_entry_t        e[];
} handle_table_t;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static handle_table_t *registry;

static size_t slot_of(uintptr_t a, size_t mask)
{
    return (size_t)(((uint64_t)a >> 4) * 0x9e3779b97f4a7c15ull >> 20) & mask;
}

static handle_entry_t *find(handle_table_t *t, uintptr_t a)
{
    for (size_t i = slot_of(a, t->mask), n = 0; n <= t->mask; i = (i + 1) & t->mask, n++) {
        uintptr_t k = __atomic_load_n(&t->e[i].addr, __ATOMIC_ACQUIRE);
        if (k == a)
            return &t->e[i];
        if (!k)
            return NULL;
    }
    return NULL;
}

/* Under reg_lock: the entry for a, made if missing (NULL: no memory). */
static handle_entry_t *insert(uintptr_t a)
{
    handle_table_t *t = registry;
    handle_entry_t *have = t ? find(t, a) : NULL;
    if (have)
        return have;
    if (!t || 2 * (t->used + 1) > t->mask + 1) {
        size_t ncap = t ? 2 * (t->mask + 1) : 256;
        handle_table_t *n = calloc(1, sizeof(*n) + ncap * sizeof(handle_entry_t));
        if (!n)
            return NULL;
        n->mask = ncap - 1;
        n->older = t;
        for (size_t i = 0; t && i <= t->mask; i++) {
            if (!t->e[i].addr)
                continue;
            size_t j = slot_of(t->e[i].addr, n->mask);
            while (n->e[j].addr)
                j = (j + 1) & n->mask;
            n->e[j] = t->e[i];
            n->used++;
        }
        __atomic_store_n(&registry, n, __ATOMIC_RELEASE);
        t = n;
    }
    size_t j = slot_of(a, t->mask);
    while (t->e[j].addr)
        j = (j + 1) & t->mask;
    t->used++;
    return &t->e[j];
}

int gpurma_handle_register(const void *obj, gpurma_handle_kind_t kind)
{
    pthread_mutex_lock(&reg_lock);
    handle_entry_t *e = insert((uintptr_t)obj);
    if (e) {
        __atomic_store_n(&e->kind, (uint32_t)kind, __ATOMIC_RELAXED);
        __atomic_store_n(&e->known, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&e->addr, (uintptr_t)obj, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&reg_lock);
    return e ? GPURMA_SUCCESS
             : gpurma_set_error(GPURMA_ERR_NO_MEMORY, "out of memory for the handle registry");
}

static void set_known(const void *obj, uint32_t known)
{
    pthread_mutex_lock(&reg_lock);
    handle_entry_t *e = registry ? find(registry, (uintptr_t)obj) : NULL;
    if (e)
        __atomic_store_n(&e->known, known, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&reg_lock);
}

void gpurma_handle_forget(const void *obj) { set_known(obj, 0); }

int gpurma_handle_is(const void *h, gpurma_handle_kind_t kind)
{
    handle_table_t *t = __atomic_load_n(&registry, __ATOMIC_ACQUIRE);
    handle_entry_t *e = h && t ? find(t, (uintptr_t)h) : NULL;
    return e && __atomic_load_n(&e->known, __ATOMIC_ACQUIRE) &&
           __atomic_load_n(&e->kind, __ATOMIC_RELAXED) == (uint32_t)kind;
}

/* ----------------------------------------------------------- tombstones */

void gpurma_handle_bury(void *obj)
{
    /* Its memory stays for good: a forgotten handle is known again. */
    set_known(obj, 1);
    pthread_mutex_lock(&tomb_lock);
    if (ntombs == cap) {
        size_t ncap = cap ? 2 * cap : 64;
        void **n = realloc(tombs, ncap * sizeof(*n));
        if (!n) { /* still never freed: at worst invisible to leak checkers */
            pthread_mutex_unlock(&tomb_lock);
            return;
        }
        tombs = n;
        cap = ncap;
    }
    tombs[ntombs++] = obj;
    pthread_mutex_unlock(&tomb_lock);
}
