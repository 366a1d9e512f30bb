import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Fixed-time throughput of a read-only peek, and of the clock that times it.
 *
 *   java -cp build Clock --mode=clock|peek-every-op|peek-every-64 --threads=N --seconds=S [--seed=N]
 *
 * Every mode is the same fixed-time loop: each thread runs until a shared deadline and
 * counts what it did.
 *
 *   clock          only reads System.nanoTime(), one call per counted operation: the
 *                  throughput of the clock itself, the ceiling of the next mode;
 *   peek-every-op  peeks at the top of a stack and reads the clock after every peek;
 *   peek-every-64  peeks 64 times between two reads of the clock.
 *
 * Prints exactly one JSON object line on stdout (everything else goes to stderr). Exit
 * status: 0 ok, 1 a peek saw something other than the top it should see (no throughput is
 * reported), 2 bad command line.
 */
public final class Clock {
    /** Peeks per clock read in peek-every-64 mode. */
    static final int BATCH = 64;

    /** Values pushed on the stack before timing; peek reads only the top one. */
    static final int STACK_SIZE = 1024;

    static final String USAGE =
            "usage: java -cp build Clock --mode=clock|peek-every-op|peek-every-64 --threads=N --seconds=S [--seed=N]";

    /** An immutable node of a Treiber-style stack. */
    static final class Node {
        final int value;
        final Node next;

        Node(int value, Node next) {
            this.value = value;
            this.next = next;
        }
    }

    /** The shared stack: `top` is read with volatile semantics on every peek, as a real one would be. */
    static final AtomicReference<Node> TOP = new AtomicReference<>();

    static void push(int v) {
        Node old;
        Node n;
        do {
            old = TOP.get();
            n = new Node(v, old);
        } while (!TOP.compareAndSet(old, n));
    }

    static int peek() {
        return TOP.get().value;
    }

    public static void main(String[] args) throws InterruptedException {
        Options o = Options.parse(args);

        SplittableRandom rng = new SplittableRandom(o.seed);
        for (int k = 0; k < STACK_SIZE; k++) {
            push(rng.nextInt(1 << 30));
        }
        final int top = peek();

        Result r = timedRun(o);

        // The workload is read-only: every peek must have returned the top pushed above, so
        // each thread's sum of peeked values is its operation count times that top. A peek
        // that was optimised away or read something else breaks the equality.
        long ops = 0;
        for (int t = 0; t < o.threads; t++) {
            long expected = o.mode.equals("clock") ? 0 : r.ops[t] * top;
            if (r.sums[t] != expected) {
                System.err.printf(Locale.ROOT,
                        "error: thread %d peeked a sum of %d over %d operations, expected %d;"
                                + " not reporting a time%n", t, r.sums[t], r.ops[t], expected);
                System.exit(1);
            }
            ops += r.ops[t];
        }
        // The checksum is the stack's contents after the run (FNV-1a 64, top to bottom): the
        // same for every mode and run with the same seed, or a peek was not read-only.
        long checksum = FNV_OFFSET;
        for (Node n = TOP.get(); n != null; n = n.next) {
            checksum = fnv(checksum, n.value);
        }

        double elapsed = r.elapsedNanos / 1e9;
        // "config" echoes the options as parsed, so the harness can verify that what ran is
        // what was asked for.
        System.out.println("{\"config\":{\"mode\":\"" + o.mode + "\""
                + ",\"threads\":" + o.threads
                + ",\"seconds\":" + o.seconds + "}"
                + ",\"ops\":" + ops
                + ",\"mops\":" + String.format(Locale.ROOT, "%.4f", ops / elapsed / 1e6)
                + ",\"ns_per_op_per_thread\":"
                + String.format(Locale.ROOT, "%.4f", ops == 0 ? 0.0 : r.elapsedNanos * (double) o.threads / ops)
                + ",\"elapsed_s\":" + String.format(Locale.ROOT, "%.4f", elapsed)
                + ",\"checksum\":\"" + String.format(Locale.ROOT, "%016x", checksum) + "\""
                + "}");
    }

    static final class Result {
        long elapsedNanos;
        long[] ops;
        long[] sums;
    }

    static Result timedRun(Options o) throws InterruptedException {
        int n = o.threads;
        CountDownLatch ready = new CountDownLatch(n);
        CountDownLatch go = new CountDownLatch(1);
        long[] deadlineBox = new long[1]; // written before go.countDown(), read after go.await()
        Result r = new Result();
        r.ops = new long[n];
        r.sums = new long[n];
        Thread[] threads = new Thread[n];
        for (int t = 0; t < n; t++) {
            final int id = t;
            threads[t] = new Thread(() -> {
                ready.countDown();
                awaitUninterruptibly(go);
                long deadline = deadlineBox[0];
                long[] opsAndSum;
                switch (o.mode) {
                    case "clock":
                        opsAndSum = clockOnly(deadline);
                        break;
                    case "peek-every-op":
                        opsAndSum = peekEveryOp(deadline);
                        break;
                    default:
                        opsAndSum = peekEvery64(deadline);
                }
                r.ops[id] = opsAndSum[0];
                r.sums[id] = opsAndSum[1];
            }, "worker-" + t);
            threads[t].start();
        }
        ready.await();
        long start = System.nanoTime();
        deadlineBox[0] = start + (long) (o.seconds * 1e9);
        go.countDown();
        for (Thread th : threads) {
            th.join(); // join() also publishes the workers' writes to this thread
        }
        r.elapsedNanos = System.nanoTime() - start;
        return r;
    }

    /** One clock read per counted operation and nothing else. */
    static long[] clockOnly(long deadline) {
        long i = 0;
        while (System.nanoTime() - deadline < 0) {
            i++;
        }
        return new long[] {i, 0};
    }

    /** One peek and one clock read per operation: the loop the write-up started with. */
    static long[] peekEveryOp(long deadline) {
        long i = 0;
        long sum = 0;
        while (System.nanoTime() - deadline < 0) {
            sum += peek();
            i++;
        }
        return new long[] {i, sum};
    }

    /** BATCH peeks per clock read: the fix. */
    static long[] peekEvery64(long deadline) {
        long i = 0;
        long sum = 0;
        while (System.nanoTime() - deadline < 0) {
            for (int j = 0; j < BATCH; j++) {
                sum += peek();
            }
            i += BATCH;
        }
        return new long[] {i, sum};
    }

    static final long FNV_OFFSET = 0xcbf29ce484222325L;
    static final long FNV_PRIME = 0x100000001b3L;

    static long fnv(long h, int v) {
        for (int b = 0; b < 4; b++) { // little-endian bytes of v
            h ^= (v >>> (8 * b)) & 0xff;
            h *= FNV_PRIME;
        }
        return h;
    }

    static void awaitUninterruptibly(CountDownLatch latch) {
        for (;;) {
            try {
                latch.await();
                return;
            } catch (InterruptedException e) {
                // nobody interrupts workers; retry rather than start early
            }
        }
    }

    /**
     * Strict command line: an argument that is not exactly one of the options is a hard error,
     * with a hint when it looks like several options passed as one.
     */
    static final class Options {
        String mode;
        int threads;
        double seconds;
        long seed = 42;

        static Options parse(String[] args) {
            Options o = new Options();
            boolean haveMode = false, haveThreads = false, haveSeconds = false, haveSeed = false;
            for (String a : args) {
                if (a.chars().anyMatch(Character::isWhitespace)) {
                    usageError("unexpected argument \"" + a + "\"",
                            "hint: \"" + a + "\" looks like several options in one argument;"
                                    + " pass them as separate arguments");
                }
                int eq = a.indexOf('=');
                String key = eq < 0 ? a : a.substring(0, eq + 1);
                String val = eq < 0 ? null : a.substring(eq + 1);
                switch (key) {
                    case "--mode=":
                        haveMode = once(haveMode, a);
                        if (!val.matches("clock|peek-every-op|peek-every-64")) {
                            usageError("--mode must be one of clock, peek-every-op, peek-every-64, got \""
                                    + val + "\"", null);
                        }
                        o.mode = val;
                        break;
                    case "--threads=":
                        haveThreads = once(haveThreads, a);
                        o.threads = (int) parseLong(a, val, 1, 4096);
                        break;
                    case "--seconds=":
                        haveSeconds = once(haveSeconds, a);
                        try {
                            o.seconds = Double.parseDouble(val);
                        } catch (NumberFormatException e) {
                            usageError("bad number in \"" + a + "\"", null);
                        }
                        if (!(o.seconds > 0 && o.seconds <= 86_400)) {
                            usageError("--seconds must be > 0 and at most 86400, got \"" + val + "\"", null);
                        }
                        break;
                    case "--seed=":
                        haveSeed = once(haveSeed, a);
                        o.seed = parseLong(a, val, Long.MIN_VALUE, Long.MAX_VALUE);
                        break;
                    default:
                        usageError("unknown argument \"" + a + "\"", null);
                }
            }
            if (!haveMode || !haveThreads || !haveSeconds) {
                StringBuilder missing = new StringBuilder();
                if (!haveMode) missing.append(" --mode=");
                if (!haveThreads) missing.append(" --threads=");
                if (!haveSeconds) missing.append(" --seconds=");
                usageError("missing required option(s):" + missing, null);
            }
            return o;
        }

        static boolean once(boolean seen, String a) {
            if (seen) {
                usageError("option given twice: \"" + a + "\"", null);
            }
            return true;
        }

        static long parseLong(String a, String val, long min, long max) {
            long v = 0;
            try {
                v = Long.parseLong(val);
            } catch (NumberFormatException e) {
                usageError("bad integer in \"" + a + "\"", null);
            }
            if (v < min || v > max) {
                usageError("value out of range [" + min + ", " + max + "] in \"" + a + "\"", null);
            }
            return v;
        }

        static void usageError(String msg, String hint) {
            System.err.println("error: " + msg);
            if (hint != null) {
                System.err.println(hint);
            }
            System.err.println(USAGE);
            System.exit(2);
        }
    }
}
