/* The cost of the Landlock signal scope each run restricts itself to (see
 * crates/exec/src/landlock.rs): N spawns of /bin/true the way lab spawns a run
 * (clone(CLONE_VM | CLONE_VFORK), no_new_privs, execve), without the scope (mode 0) and with
 * it (mode 1: landlock_restrict_self of a ruleset scoping signals, a domain per child).
 *
 *   cc -O2 -o /tmp/signal-scope benches/signal-scope.c
 *   for i in $(seq 12); do /tmp/signal-scope 0; /tmp/signal-scope 1; done
 *
 * Prints the mean wall time of a spawn, in µs, per mode. */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { SPAWNS = 3000, STACK = 65536 };
static char stack[STACK];
static char *const true_argv[] = {"/bin/true", NULL};
static int scoped, ruleset;

static int child(void *unused) {
    (void)unused;
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    if (scoped && syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) _exit(120);
    execv(true_argv[0], true_argv);
    _exit(127);
}

int main(int argc, char **argv) {
    scoped = argc > 1 && atoi(argv[1]) == 1;
    /* struct landlock_ruleset_attr of ABI 6: no access handled, LANDLOCK_SCOPE_SIGNAL. */
    struct { uint64_t fs, net, scoped; } attr = {0, 0, 1 << 1};
    ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
    if (ruleset < 0) { perror("landlock_create_ruleset"); return 1; }
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < SPAWNS; i++) {
        int status, pid = clone(child, stack + STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
        if (pid < 0 || waitpid(pid, &status, 0) < 0 || WEXITSTATUS(status) != 0) return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double us = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e3 / SPAWNS;
    printf("mode %d: %.1f us a spawn\n", scoped, us);
    return 0;
}
