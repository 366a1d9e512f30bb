/* The cost of birth in the session's PID namespace (see crates/exec/src/pid_namespace.rs): N
 * spawns of /bin/true the way lab spawns a run (clone(CLONE_VM | CLONE_VFORK), execve), in
 * lab's own namespace (mode 0) and in a PID namespace held by an init (mode 1: setns into it
 * before each clone and back after, as lab does). Needs root.
 *
 *   cc -O2 -o /tmp/pid-namespace benches/pid-namespace.c
 *   for i in $(seq 12); do /tmp/pid-namespace 0; /tmp/pid-namespace 1; done
 *
 * Prints the mean wall time of a spawn, in µs, per mode. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { SPAWNS = 3000, STACK = 65536 };
static char stack[STACK];
static char *const true_argv[] = {"/bin/true", NULL};

static int child(void *unused) {
    (void)unused;
    execv(true_argv[0], true_argv);
    _exit(127);
}

/* A PID namespace whose init sleeps until killed; its descriptor. */
static int namespace_with_init(pid_t *init) {
    if (unshare(CLONE_NEWPID) != 0) { perror("unshare"); exit(1); }
    *init = fork();
    if (*init == 0) { for (;;) pause(); }
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/ns/pid", *init);
    return open(path, O_RDONLY | O_CLOEXEC);
}

int main(int argc, char **argv) {
    int inside = argc > 1 && atoi(argv[1]) == 1;
    int own = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
    pid_t init = 0;
    int ns = inside ? namespace_with_init(&init) : -1;
    if (inside && setns(own, CLONE_NEWPID) != 0) { perror("setns"); return 1; }
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < SPAWNS; i++) {
        if (inside && setns(ns, CLONE_NEWPID) != 0) return 1;
        int status, pid = clone(child, stack + STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
        if (inside && setns(own, CLONE_NEWPID) != 0) return 1;
        if (pid < 0 || waitpid(pid, &status, 0) < 0 || WEXITSTATUS(status) != 0) return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double us = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e3 / SPAWNS;
    printf("mode %d: %.1f us a spawn\n", inside, us);
    if (init > 0) kill(init, SIGKILL);
    return 0;
}
