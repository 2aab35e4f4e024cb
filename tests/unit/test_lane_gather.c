/* The lane piece decision (proto/lane_gather.h), case by case: which chunk
 * joins the gathered piece and when the piece waits for more.  Guards the
 * order of a program's uploads (a chunk that does not continue the piece
 * never joins it: other bytes, another device address, another stream) and
 * the bound on a piece (TDM_LANE_PIECE_MAX, or TANDEM_TCP_PIECE). */
#include <criterion/criterion.h>

#include "lane_gather.h"

#define MIB ((uint64_t)1 << 20)

static char buf[64];   /* stands for a program's buffer: only its addresses matter */

typedef struct gather_case {
    const char *what;
    tdm_gather_run acc, next;
    bool more;
    uint64_t piece_max;
    bool join, hold;
} gather_case;

/* acc: 16 MiB of buf to device 0x1000 on stream 7. */
#define ACC16 { .dst = 0x1000, .stream = 7, .src = buf, .len = 16 * MIB }
#define NEXT(d, st, s, l) { .dst = (d), .stream = (st), .src = (s), .len = (l) }

static const gather_case cases[] = {
    { "the first chunk of a copy starts a piece and waits", { 0 }, NEXT(0x1000, 7, buf, 8 * MIB), true, 32 * MIB,
      false, true },
    { "a copy of one chunk goes at once", { 0 }, NEXT(0x1000, 7, buf, 8 * MIB), false, 32 * MIB, false, false },
    { "the next chunk joins and the piece waits for a fourth", ACC16,
      NEXT(0x1000 + 16 * MIB, 7, buf + 16 * MIB, 8 * MIB), true, 32 * MIB, true, true },
    { "the last chunk joins and the piece goes", ACC16, NEXT(0x1000 + 16 * MIB, 7, buf + 16 * MIB, 3 * MIB), false,
      32 * MIB, true, false },
    { "another device address: the piece goes first", ACC16, NEXT(0x9000 + 16 * MIB, 7, buf + 16 * MIB, 8 * MIB),
      true, 32 * MIB, false, true },
    { "other host bytes: the piece goes first", ACC16, NEXT(0x1000 + 16 * MIB, 7, buf + 8 * MIB, 8 * MIB), true,
      32 * MIB, false, true },
    { "another stream: the piece goes first", ACC16, NEXT(0x1000 + 16 * MIB, 8, buf + 16 * MIB, 8 * MIB), true,
      32 * MIB, false, true },
    { "past the piece's bound: it goes first", ACC16, NEXT(0x1000 + 16 * MIB, 7, buf + 16 * MIB, 8 * MIB), true,
      20 * MIB, false, true },
    { "a full piece goes at once", { .dst = 0x1000, .stream = 7, .src = buf, .len = 24 * MIB },
      NEXT(0x1000 + 24 * MIB, 7, buf + 24 * MIB, 8 * MIB), true, 32 * MIB, true, false },
    { "pieces of one chunk (TANDEM_TCP_PIECE=8 MiB): nothing joins or waits",
      { .dst = 0x1000, .stream = 7, .src = buf, .len = 8 * MIB }, NEXT(0x1000 + 8 * MIB, 7, buf + 8 * MIB, 8 * MIB),
      true, 8 * MIB, false, false },
    { "an empty piece is nothing to continue", { .dst = 0x1000, .stream = 7, .src = buf, .len = 0 },
      NEXT(0x1000, 7, buf, 8 * MIB), true, 32 * MIB, false, true },
};

Test(lane_gather, each_case_gives_its_step)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const gather_case *c = &cases[i];
        tdm_gather_step s = tdm_lane_gather_step(c->acc, c->next, c->more, c->piece_max, 8 * MIB);
        cr_expect_eq(s.join, c->join, "%s: join %d", c->what, s.join);
        cr_expect_eq(s.hold, c->hold, "%s: hold %d", c->what, s.hold);
    }
}
