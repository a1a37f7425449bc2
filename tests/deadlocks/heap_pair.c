/* SPDX-License-Identifier: MIT */
/* heap_pair: the common pattern of a lock-order deadlock: one function
 * that locks two objects of the heap in the order of its arguments,
 * called with them swapped (tests/deadlocks.sh, docs/deadlocks.md).
 *
 *   heap_pair deadlock|sequential
 *
 * Two accounts, each with its mutex, are allocated with malloc (so the
 * mutexes have no names: the report shows their addresses, which the
 * program says as "heap_pair: account x at 0xADDR" and "... y at ...").
 * transfer(from, to) locks from (transfer_takes_from), then to
 * (transfer_takes_to), moves an amount and unlocks both.  Thread hp-xy
 * calls transfer(x, y), thread hp-yx transfer(y, x):
 *   deadlock    both at once, with a barrier between their first and
 *               second lock: each holds its first and waits for the
 *               other's, forever (the program never ends);
 *   sequential  hp-xy first, joined, then hp-yx: no deadlock, the program
 *               says "heap_pair: done" and ends with status 0.
 *
 * What hotlock-run --deadlocks reports on deadlock: 2 threads,
 *   hp-xy waits for mutex y at transfer_takes_to, and holds x, taken at
 *     transfer_takes_from;
 *   hp-yx waits for mutex x at transfer_takes_to, and holds y, taken at
 *     transfer_takes_from.
 * What hotlock-run --lock-order reports on sequential: an inversion of 2
 * locks, x then y (hp-xy) and y then x (hp-yx), each taken first at
 * transfer_takes_from and second at transfer_takes_to.  --deadlocks
 * reports nothing there. */
#include "dl.h"

struct account {
	pthread_mutex_t mu;
	long balance;
};

static struct account *x, *y;
static int at_once;
static pthread_barrier_t both_hold_one;

DL_SITE static void transfer_takes_from(struct account *from)
{
	dl_check(pthread_mutex_lock(&from->mu), "transfer: from");
}

DL_SITE static void transfer_takes_to(struct account *to)
{
	dl_check(pthread_mutex_lock(&to->mu), "transfer: to");
}

static void transfer(struct account *from, struct account *to, long amount)
{
	transfer_takes_from(from);
	if (at_once)
		pthread_barrier_wait(&both_hold_one);
	transfer_takes_to(to);          /* at once: never returns */
	from->balance -= amount;
	to->balance += amount;
	dl_check(pthread_mutex_unlock(&to->mu), "transfer: unlock to");
	dl_check(pthread_mutex_unlock(&from->mu), "transfer: unlock from");
}

static void *xy(void *arg)
{
	dl_name("heap_pair", "hp-xy");
	transfer(x, y, 10);
	return arg;
}

static void *yx(void *arg)
{
	dl_name("heap_pair", "hp-yx");
	transfer(y, x, 20);
	return arg;
}

static struct account *account_new(void)
{
	struct account *acc = malloc(sizeof(*acc));
	if (!acc)
		dl_fail("malloc failed");
	dl_check(pthread_mutex_init(&acc->mu, NULL), "pthread_mutex_init");
	acc->balance = 100;
	return acc;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	at_once = !strcmp(mode, "deadlock");
	if (!at_once && strcmp(mode, "sequential"))
		dl_fail("usage: heap_pair deadlock|sequential");
	x = account_new();
	y = account_new();
	dl_say("heap_pair: pid %d", getpid());
	dl_say("heap_pair: account x at %p", (void *)&x->mu);
	dl_say("heap_pair: account y at %p", (void *)&y->mu);
	dl_check(pthread_barrier_init(&both_hold_one, NULL, 2), "pthread_barrier_init");
	pthread_t t1 = dl_start(xy, NULL);
	if (!at_once)
		dl_join(t1);
	pthread_t t2 = dl_start(yx, NULL);
	if (at_once)
		dl_join(t1);
	dl_join(t2);
	if (x->balance != 110 || y->balance != 90)
		dl_fail("heap_pair: the balances are wrong");
	dl_say("heap_pair: done");
	return 0;
}
