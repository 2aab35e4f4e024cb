/* Memory shared between server processes at the same logical address: the
 * sim backend's mem_export/mem_import, which a standby uses to back a
 * session with the active server's own physical memory. */
#include <criterion/criterion.h>

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <driver_types.h>

#include "backend.h"

#define ARENA_BASE 0x200000000000ull
#define ARENA_SIZE (1ull << 30)
#define GRAN (2ull << 20)

static const tdm_backend_ops *ops = &tdm_backend_sim_ops;

static tdm_backend *start(void)
{
    tdm_backend_config cfg = { .device = 0, .arena_base = ARENA_BASE, .arena_size = ARENA_SIZE };
    tdm_backend *b = NULL;

    cr_assert_eq(ops->init(&b, &cfg), 0);
    cr_assert_eq(ops->arena_reserve(b), 0);
    return b;
}

/* Runs in a forked child standing in for the standby process: it drops the
 * inherited arena, reserves its own at the same address, imports `fd` and
 * checks what the exporter wrote, then writes its own answer.  The exit
 * status says which step failed. */
static int standby_child(int fd, uint64_t addr)
{
    tdm_backend *b = NULL;
    tdm_backend_config cfg = { .device = 0, .arena_base = ARENA_BASE, .arena_size = ARENA_SIZE };
    tdm_bmem *mem = NULL;
    uint32_t *p = (uint32_t *)(uintptr_t)addr;

    /* The arena and the module globals window the sim reserves right
     * after it (1 GiB, sim_internal.h). */
    munmap((void *)(uintptr_t)ARENA_BASE, ARENA_SIZE + (1ull << 30));
    if (ops->init(&b, &cfg) || ops->arena_reserve(b))
        return 10;
    if (ops->mem_import(b, addr, GRAN, fd, &mem))
        return 11;
    for (uint32_t i = 0; i < GRAN / 4; i += 1024)
        if (p[i] != i * 2654435761u)
            return 12;
    p[1] = 0xfeedbeefu;
    if (ops->mem_unmap(b, addr, GRAN, mem))
        return 13;
    ops->shutdown(b);
    return 0;
}

Test(mem_share, a_second_process_sees_the_same_bytes_at_the_same_address)
{
    tdm_backend *b = start();
    tdm_bmem *mem = NULL;
    uint64_t addr = ARENA_BASE + 4 * GRAN;
    uint32_t *p = (uint32_t *)(uintptr_t)addr;
    int fd = -1, st = 0;
    pid_t child;

    cr_assert_eq(ops->mem_map(b, addr, GRAN, &mem), 0);
    for (uint32_t i = 0; i < GRAN / 4; i++)
        p[i] = i * 2654435761u;
    cr_assert_eq(ops->mem_export(b, mem, &fd), 0);
    cr_assert_geq(fd, 0);

    child = fork();
    cr_assert_geq(child, 0);
    if (child == 0)
        _exit(standby_child(fd, addr));
    cr_assert_eq(waitpid(child, &st, 0), child);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "standby side failed (status %#x)", st);
    /* The standby's write landed in the exporter's memory. */
    cr_expect_eq(p[1], 0xfeedbeefu);
    cr_expect_eq(p[2], 2u * 2654435761u);

    close(fd);
    cr_expect_eq(ops->mem_unmap(b, addr, GRAN, mem), 0);
    ops->shutdown(b);
}

Test(mem_share, import_refuses_what_is_not_memory_of_that_size)
{
    tdm_backend *b = start();
    tdm_bmem *mem = NULL, *bad = NULL;
    int fd = -1, pipefd[2];

    cr_assert_eq(ops->mem_map(b, ARENA_BASE, GRAN, &mem), 0);
    cr_assert_eq(ops->mem_export(b, mem, &fd), 0);
    /* Bigger than the file: touching the tail would SIGBUS the server. */
    cr_expect_eq(ops->mem_import(b, ARENA_BASE + 2 * GRAN, 2 * GRAN, fd, &bad), cudaErrorInvalidValue);
    cr_expect_null(bad);
    /* Over memory that is already mapped. */
    cr_expect_neq(ops->mem_import(b, ARENA_BASE, GRAN, fd, &bad), 0);
    cr_expect_null(bad);
    /* Outside the arena, and not a memory file at all. */
    cr_expect_eq(ops->mem_import(b, ARENA_BASE + ARENA_SIZE, GRAN, fd, &bad), cudaErrorInvalidValue);
    cr_assert_eq(pipe(pipefd), 0);
    cr_expect_eq(ops->mem_import(b, ARENA_BASE + 2 * GRAN, GRAN, pipefd[0], &bad), cudaErrorInvalidValue);
    cr_expect_null(bad);
    close(pipefd[0]);
    close(pipefd[1]);
    close(fd);
    cr_expect_eq(ops->mem_unmap(b, ARENA_BASE, GRAN, mem), 0);
    ops->shutdown(b);
}
