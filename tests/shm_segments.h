/*
 * shm_segments.h - how many shared-memory segments this process has in
 * /dev/shm (the library names them gpurma-<pid>-...). Tests count them
 * before and after a call to prove nothing was left behind.
 */
#ifndef GPURMA_TESTS_SHM_SEGMENTS_H
#define GPURMA_TESTS_SHM_SEGMENTS_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static inline int t_own_segments(void)
{
    char prefix[32];
    int n = 0, plen = snprintf(prefix, sizeof(prefix), "gpurma-%d-", (int)getpid());
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += !strncmp(e->d_name, prefix, (size_t)plen);
    if (d)
        closedir(d);
    return n;
}

#endif
