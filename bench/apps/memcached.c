/* SPDX-License-Identifier: MIT */
/* hotlock-bench-apps: a run of memcached: the server on a free port of
 * 127.0.0.1 (under hotlock-run or not), memaslap on glibc driving it for
 * --duration seconds, the rate from memaslap's summary, the server stopped
 * with SIGTERM and reaped. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "apps.h"

/* A TCP port of 127.0.0.1 nobody listens on now. */
static unsigned free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof sa;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) != 0)
		bench_fatal("apps: finding a free port: %s", strerror(errno));
	close(fd);
	return ntohs(sa.sin_port);
}

static bool accepts(unsigned port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	if (fd < 0)
		bench_fatal("apps: socket: %s", strerror(errno));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ok = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
	close(fd);
	return ok;
}

/* Starts the server with t threads on port, and waits until it accepts
 * connections (10 s at most). */
static void start_server(const struct apps *a, const char *label, unsigned t,
			 enum side s, unsigned port, struct child *srv)
{
	struct cmd argv = { .n = 0 };
	struct output so;
	double t0;

	cmd_add(&argv, a->memcached, "-l", "127.0.0.1", "-p", NULL);
	cmd_fmt(&argv, "%u", port);
	cmd_add(&argv, "-t", NULL);
	cmd_fmt(&argv, "%u", t);
	cmd_add(&argv, "-U", "0", NULL);
	if (geteuid() == 0)
		cmd_add(&argv, "-u", "root", NULL);
	spawn(srv, a, side_shim(a, s), side_report(a, s), "memcached", &argv);
	for (t0 = bench_now(); !accepts(port); sleep_s(0.01)) {
		if (reap(srv, false, 0)) {
			child_output(srv, &so);
			child_failed(label, srv, &so, "ended before it accepted a connection");
		}
		if (bench_now() - t0 > 10) {
			reap(srv, true, 0);
			child_output(srv, &so);
			child_failed(label, srv, &so, "did not accept connections within 10 s");
		}
	}
}

void run_memcached(const struct apps *a, unsigned t, enum side s, struct app_run *r)
{
	char label[128];
	struct cmd argv = { .n = 0 };
	struct child srv, gen;
	struct output so, go;
	struct bench_machine_mark m;
	const unsigned port = free_port();
	const unsigned loadgen = 2 * t < a->loadgen_threads ? 2 * t : a->loadgen_threads;
	/* 2T connections, a multiple of the load generator's threads. */
	const unsigned conns = (2 * t + loadgen - 1) / loadgen * loadgen;
	double tps, ops, run_s;

	run_label(a, label, sizeof label, APP_MEMCACHED, t, s);
	bench_machine_mark(&m);
	start_server(a, label, t, s, port, &srv);

	cmd_add(&argv, a->memaslap, NULL);
	cmd_fmt(&argv, "--servers=127.0.0.1:%u", port);
	cmd_fmt(&argv, "--threads=%u", loadgen);
	cmd_fmt(&argv, "--concurrency=%u", conns);
	cmd_fmt(&argv, "--time=%us", a->duration);
	/* The load generator runs on glibc either way. */
	run_to_end(a, label, false, false, strrchr(a->memaslap, '/') + 1, &argv,
		   a->duration + 60.0, &gen, &go);
	if (!find_number(go.out, "TPS:", &tps) || !find_number(go.out, "Ops:", &ops) ||
	    !find_number(go.out, "Run time:", &run_s) || !(tps > 0))
		child_failed(label, &gen, &go, "printed no 'Run time: ... Ops: ... TPS: ...'");

	/* The server must still be up, then stops on SIGTERM (memcached ends
	 * its event loop within a second). */
	if (reap(&srv, false, 0)) {
		child_output(&srv, &so);
		child_failed(label, &srv, &so, "ended while it was being measured");
	}
	kill(srv.pid, SIGTERM);
	if (!reap(&srv, true, 15)) {
		fprintf(stderr, "hotlock-bench: %s: memcached did not end within 15 s of "
			"SIGTERM and was killed\n", label);
		srv.status = 0;
	}
	child_output(&srv, &so);
	if (!WIFEXITED(srv.status) || WEXITSTATUS(srv.status) != 0)
		child_failed(label, &srv, &so, NULL);

	r->value = tps;
	r->ops = (uint64_t)ops;
	r->work_s = run_s;
	r->cpu_s = child_cpu(&srv);
	r->loadgen_cpu_s = child_cpu(&gen);
	r->wall_s = srv.wall_s;
	load_since(&m, r->cpu_s + r->loadgen_cpu_s, r);
	shim_stats(so.err, r);
	output_free(&so);
	output_free(&go);
	check_side(a, label, s, r);
	reports_check(a, label, s, 1, r);
}
