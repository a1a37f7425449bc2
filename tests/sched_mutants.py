#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Seeded bugs in the library's real code, each of which the
controlled-schedule tests (sched.c) must catch.

For every mutant: make the one change in a copy of the source tree
(configured and built once), rebuild test_sched, and run up to SCHEDULES
schedules of the lock (50,000), until the first that fails; the mutant
must fail one (the run prints the schedule and the replay command).  A
mutant that survives fails this test: a checker that cannot catch these bugs
proves nothing.  A change that no longer applies (the code moved on) fails
too, so that the list is kept up to date with the code.

A mutant that the schedules catch only late carries a factor: it gets
that many times SCHEDULES (the same schedules first, so that where it was
caught before it still is).

Usage: sched_mutants.py SOURCE_DIR C_COMPILER [SCHEDULES] [MUTANT ...]
"""
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

# name, file, lock, what the bug is, old text, new text[, budget factor]
MUTANTS = [
    ("mutex-unlock-ignores-flags", "src/mutex.c", "mutex",
     "hl_mutex_unlock clears the word without looking at WAKE/HANDOFF",
     "\t\tif (has_live_flags(w))\n\t\t\tbreak;\n\t\t/* No flags, or a fork parent's",
     "\t\tif (0)\n\t\t\tbreak;\n\t\t/* No flags, or a fork parent's"),
    ("wait-park-plain-store", "src/wait.c", "mutex",
     "the waiter parks with a plain store instead of a CAS from WAITING",
     "\t\tif (hl__cas(&n->state, &s, PARKED_OF(waiting), HL_SEQ_CST))\n\t\t\tbreak;",
     "\t\thl__store(&n->state, PARKED_OF(waiting), HL_RELAXED);\n\t\tbreak;"),
    ("cna-leave-drops-secondary", "src/queue.c", "mutex-cna",
     "leave empties the queue when the primary queue empties, dropping the secondary queue",
     "\tif (hl__load(tail, HL_RELAXED) == me) {\n\t\tif (!sec->head) {",
     "\tif (hl__load(tail, HL_RELAXED) == me) {\n\t\tif (1) {"),
    ("mutex-release-before-pass", "src/mutex.c", "mutex-free",
     "the unlock frees the word, then passes headship on for a head that gave up (glibc bug 13690)",
     "\t\tw &= OWNER_MASK;\n\t\thl__store(&m->word, w, HL_RELAXED);\n\t\tpass_head(m, h, 0);",
     "\t\thl__store(&m->word, 0, HL_RELEASE);\n\t\tpass_head(m, h, 0);\n\t\treturn;"),
    ("mutex-pass-keeps-flags", "src/mutex.c", "mutex",
     "the unlock passes headship on with the gone head's flags still in the word",
     "\t\tw &= OWNER_MASK;\n\t\thl__store(&m->word, w, HL_RELAXED);\n",
     ""),
    ("rwlock-withdraw-keeps-head", "src/rwlock.c", "rwlock",
     "a waiter that withdrew its flags at its deadline returns without passing headship on: the waiters behind it sleep for ever",
     "\t\t/* Our flags withdrawn, or none set: we are the head. */\n\t\thl__queue_pass_head(&l->tail, n, 0);\n",
     "\t\t/* Our flags withdrawn, or none set: we are the head. */\n"),
    ("rwlock-withdraw-after-commit", "src/rwlock.c", "rwlock",
     "a waiter whose deadline passed withdraws its flags from a word whose release has already committed, instead of waiting for the releaser's signal",
     "\t\tif (!held(clean(s)) || !hl__node_armed(hl__load(&n->state, HL_ACQUIRE))) {\n",
     "\t\tif (!hl__node_armed(hl__load(&n->state, HL_ACQUIRE))) {\n"),
    ("rwlock-writer-release-no-commit", "src/rwlock.c", "rwlock",
     "a writer with a head's flags releases without committing first: the head can withdraw its flags between the releaser's look at them and its claim",
     "\t\t\tuint64_t committed = s & ~WRITER_MASK;\n",
     "\t\t\tuint64_t committed = s;\n"),
    ("queue-take-last-no-cas", "src/queue.c", "rwlock-reader",
     "extract takes the last node out without the CAS of the tail: the next enqueuer links to a node that left the queue",
     "\tif (hl__cas(tail, &expect, hl__queue_word(pred), HL_ACQ_REL))\n\t\treturn true;\n",
     "\t(void)expect;\n\treturn true;\n"),
    ("thread-node-before-level", "src/thread.c", "mutex-signal",
     "hl__thread_node_get reads the level's node before it claims the level: a handler in between takes the same node",
     "\thl__store(&self->depth, d + 1, HL_RELAXED);\n\tatomic_signal_fence(memory_order_seq_cst);\n\tuint32_t i = self->nodes[d];",
     "\tuint32_t i = self->nodes[d];\n\tatomic_signal_fence(memory_order_seq_cst);\n\thl__store(&self->depth, d + 1, HL_RELAXED);"),
    ("thread-abandoned-level-first", "src/thread.c", "mutex-signal",
     "hl__thread_node_abandoned gives the level back before it replaces the abandoned node",
     "\tself->nodes[d] = node_alloc();\n\tatomic_signal_fence(memory_order_seq_cst);\n\thl__store(&self->depth, d, HL_RELAXED);",
     "\thl__store(&self->depth, d, HL_RELAXED);\n\tatomic_signal_fence(memory_order_seq_cst);\n\tself->nodes[d] = node_alloc();"),
    ("rwlock-refused-member-keeps-share", "src/rwlock.c", "rwlock",
     "a group member that gave up keeps its share in the count",
     "\t\t\thl__fetch_sub(&l->state, ONE_READER, HL_RELAXED);\n\t\t\thl__node_recycle(w);",
     "\t\t\thl__node_recycle(w);"),
    ("cond-take-without-keep", "src/cond.c", "cond",
     "signal and broadcast take a waiter without keeping its wait: one that times out meanwhile is signalled or moved onto the mutex queue, and cleaned up by its thread as well",
     "\tif (!hl__node_keep(n))\n\t\treturn false;",
     ""),
    ("cond-unlock-before-list", "src/cond.c", "cond",
     "a waiter releases the mutex before it is on the list: a signal sent in between finds nobody",
     "\t/* Step 2. */\n\tlist_lock(c);",
     "\t/* Step 2. */\n\thl_mutex_unlock(m);\n\tlist_lock(c);"),
    ("cond-nudge-without-wake", "src/wait.c", "cond",
     "a nudge makes a sleeping moved waiter WAITING_KEPT without waking it: the signal that makes it head then sees it running and wakes nobody",
     "\t\thl__counter_add(&self->fx[HL_LK_NUDGED], 1);\n\thl_futex_wake((uint32_t *)&n->state, 1);\n",
     "\t\thl__counter_add(&self->fx[HL_LK_NUDGED], 1);\n"),
    ("cond-nudged-as-signal", "src/wait.c", "cond",
     "a waiter that parked unkept and was kept and nudged meanwhile takes WAITING_KEPT for its signal",
     "\t\t\tif (s == HL_NODE_WAITING_KEPT) {\n",
     "\t\t\tif (s == HL_NODE_WAITING_KEPT && parked == HL_NODE_PARKED_KEPT) {\n"),
    ("mutex-record-head-blind", "src/mutex.c", "mutex-sem",
     "step 5 records its successor with WAKE in a word it took without looking again: another thread's unlock in between leaves WAKE with no owner",
     "\t\tif (!(w & OWNER_MASK)) {\n\t\t\tbool parked;",
     "\t\tif (0) {\n\t\t\tbool parked;",
     # Caught late: schedule 1,534 when written, 30,144 and then 47,229
     # as src/mutex.c changed (docs/verification.md).
     3),
    ("mutex-passive-never-rejoins", "src/mutex.c", "mutex",
     "a head that sleeps passive (step 4b) has no timer: nobody wakes it, and the waiters behind it sleep for ever",
     "\tuint32_t sig = hl__node_wait_woken(n, 0, wake, dl);",
     "\tuint32_t sig = hl__node_wait_woken(n, 0, 0, NULL);"),
    ("mutex-holder-relock-refused", "src/mutex.c", "mutex-sem",
     "the shim's lock of a normal mutex answers its holder's relock with EDEADLK instead of waiting for another thread's unlock",
     "\treturn lock_lookup(M(pm), dl, true);",
     "\treturn lock_lookup(M(pm), dl, false);"),
    ("swap-wake-no-futex", "src/swap.c", "swap",
     "the wake exchanges the state for WOKEN but does not futex_wake a waiter that was PARKED",
     "\tif (old == PARKED)\n\t\thl_futex_wake((uint32_t *)&peer->state, 1);",
     "\tif (0)\n\t\thl_futex_wake((uint32_t *)&peer->state, 1);"),
    ("swap-park-plain-store", "src/swap.c", "swap",
     "a waiter whose spin ran out parks with a plain store of PARKED, overwriting a wake that came during the spin",
     "\t\tif (!hl__cas(&self->state, &s, PARKED, HL_ACQUIRE))\n\t\t\treturn take(self);",
     "\t\thl__store(&self->state, PARKED, HL_RELAXED);"),
    ("swap-give-up-blind", "src/swap.c", "swap",
     "a wait at its deadline gives up with a plain store of IDLE, dropping a wake that has just come",
     "\tif (hl__cas(&self->state, &seen, IDLE, HL_ACQUIRE))\n\t\treturn ETIMEDOUT;",
     "\thl__store(&self->state, IDLE, HL_RELAXED);\n\tif (seen)\n\t\treturn ETIMEDOUT;"),
    ("swap-take-keeps-wake", "src/swap.c", "swap",
     "a wait that takes a wake leaves WOKEN in the word: the next wait returns with no wake",
     "\thl__store(&self->state, IDLE, HL_RELAXED);\n\treturn 0;",
     "\treturn 0;"),
    ("channel-timeout-current-no-gone", "src/channel.c", "channel",
     "a call that times out while the server serves it returns without taking it back from current: the reply goes to a record whose call has returned",
     "\t\t\tch->current_ = NULL;    /* taken, not replied: refuse the reply */\n\t\t\tch->current_gone_ = 1;\n",
     ""),
    ("channel-shutdown-no-wake", "src/channel.c", "channel",
     "the shutdown fails the waiting calls with ESHUTDOWN but does not wake them",
     "\t\thl__swap_wake(&waiting->point);\n",
     ""),
    ("channel-reply-wakes-before-resp", "src/channel.c", "channel",
     "the reply wakes the client before it writes the response",
     "\tch->current_ = NULL;\n\tc->resp = resp;",
     "\tch->current_ = NULL;\n\thl__swap_wake(&c->point);\n\tc->resp = resp;"),
    ("channel-no-wake-server", "src/channel.c", "channel",
     "a call that finds the server waiting clears server_waiting but does not wake it",
     "\tbool wake_server = ch->server_waiting_;\n\tch->server_waiting_ = 0;\n\tunlock(ch);\n\tint err",
     "\tbool wake_server = false;\n\tch->server_waiting_ = 0;\n\tunlock(ch);\n\tint err"),
]


def copy_tree(src, dst):
    def ignore(d, names):
        return [n for n in names if n.startswith("build") or n in (".git", "results")]
    shutil.copytree(src, dst, ignore=ignore)


def run_mutant(tree, build_dir, schedules, name, path, lock, what, old, new, factor):
    """Builds and runs one mutant in tree; returns 1 if it survived or
    broke, 0 if the schedules caught it.  The file is written back as it
    was, whatever happens (main checks that the build is the unchanged one
    again)."""
    budget = schedules * (factor[0] if factor else 1)
    t0 = time.time()
    f = os.path.join(tree, path)
    text = open(f).read()
    if text.count(old) != 1:
        print(f"{name}: FAILED: the change no longer applies to {path} "
              f"({text.count(old)} matches): update tests/sched_mutants.py")
        return 1
    try:
        open(f, "w").write(text.replace(old, new))
        set_newer(f)
        cfg = build(build_dir)
        if cfg.returncode != 0:
            print(f"{name}: FAILED: the mutant does not build:\n{cfg.stdout[-2000:]}{cfg.stderr[-2000:]}")
            return 1
        run = subprocess.run(
            [os.path.join(build_dir, "tests", "test_sched"), "--lock", lock,
             "--schedules", str(budget), "--max-failures", "1"],
            capture_output=True, text=True)
    finally:
        open(f, "w").write(text)
        set_newer(f)
    out = run.stdout + run.stderr
    caught = re.search(r"FAILED: \d+ schedules failed; the first: schedule (\d+), seed (0x[0-9a-f]+)", out)
    kind = re.search(r"hotlock-sched: FAILED at step \d+ [^:]*: ([^\n]{0,80})", out)
    secs = time.time() - t0
    if run.returncode != 0 and caught:
        print(f"{name} ({what}): caught by schedule {caught.group(1)} of {lock}, "
              f"seed {caught.group(2)}: {kind.group(1).split(':')[0] if kind else '?'}; {secs:.0f} s")
        return 0
    print(f"{name} ({what}): FAILED: not caught in {budget} schedules; {secs:.0f} s")
    print(out[-3000:])
    return 1


def set_newer(f):
    """Gives f a modification time later than any object built so far, so
    that ninja rebuilds from it: the file system's clock may be coarser
    than the time between a build and the next write (a jiffy)."""
    t = time.time_ns() + 2_000_000_000
    os.utime(f, ns=(t, t))


def binary_digest(build_dir):
    with open(os.path.join(build_dir, "tests", "test_sched"), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def build(build_dir):
    return subprocess.run(["cmake", "--build", build_dir, "--target", "test_sched"],
                          capture_output=True, text=True)


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    src, cc = sys.argv[1], sys.argv[2]
    schedules = int(sys.argv[3]) if len(sys.argv) > 3 else 50000
    only = set(sys.argv[4:])
    failures = 0
    start = time.time()
    # One copy of the tree, configured and built once; each mutant is its
    # one change written into it, rebuilt (the changed file and the links),
    # run, and written back.
    with tempfile.TemporaryDirectory(prefix="hotlock-mutant-") as tmp:
        tree = os.path.join(tmp, "src")
        build_dir = os.path.join(tmp, "build")
        copy_tree(src, tree)
        cfg = subprocess.run(
            ["cmake", "-S", tree, "-B", build_dir, "-G", "Ninja", f"-DCMAKE_C_COMPILER={cc}",
             "-DHOTLOCK_BUILD_BENCH=OFF", "-DHOTLOCK_BUILD_TESTS=ON", "-DHOTLOCK_WERROR=OFF",
             "-DCMAKE_BUILD_TYPE=RelWithDebInfo"],
            capture_output=True, text=True)
        if cfg.returncode == 0:
            cfg = build(build_dir)
        if cfg.returncode != 0:
            print(f"sched_mutants: FAILED: the unchanged tree does not build:\n"
                  f"{cfg.stdout[-2000:]}{cfg.stderr[-2000:]}")
            return 1
        unchanged = binary_digest(build_dir)
        for name, path, lock, what, old, new, *factor in MUTANTS:
            if only and name not in only:
                continue
            failures += run_mutant(tree, build_dir, schedules, name, path, lock, what, old, new,
                                   factor)
            sys.stdout.flush()
            # A mutant left in the build would be caught again as the next
            # one, whatever the next one is: the rebuild from the written
            # back tree must give the unchanged binary, byte for byte.
            cfg = build(build_dir)
            if cfg.returncode != 0 or binary_digest(build_dir) != unchanged:
                print(f"sched_mutants: FAILED: after {name}, the tree no longer builds the "
                      f"unchanged test_sched")
                return 1
    print(f"sched_mutants: {failures} of the mutants survived or broke; {time.time() - start:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
