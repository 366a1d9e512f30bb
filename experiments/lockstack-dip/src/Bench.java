import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Fixed-time throughput harness for the four stacks.
 *
 *   java -cp build Bench --impl=nonfair|fair|spin|treiber --threads=N --seconds=S [--seed=N]
 *
 * Prints exactly one JSON object line on stdout. Everything else goes to stderr.
 * Exit status: 0 ok, 1 the implementation failed a correctness check (no
 * throughput is reported for it), 2 bad command line.
 */
public final class Bench {
    /**
     * Look at the clock only once per this many operations. Calling
     * System.nanoTime() after every operation measures the clock instead of the
     * stack (trap 1 of the seed: on macOS every call CASes one global word).
     */
    static final int CHECK_EVERY = 64;

    /** Operations per thread's pre-generated workload; a power of two so we can mask. */
    static final int WORKLOAD_SIZE = 1 << 16;
    static final int MASK = WORKLOAD_SIZE - 1;

    /** Workload encoding: a non-negative entry is "push this value", POP is "pop". */
    static final int POP = -1;

    static final int PREFILL = 1024;
    static final int VERIFY_OPS = 10_000;

    static final String USAGE =
            "usage: java -cp build Bench --impl=nonfair|fair|spin|treiber --threads=N --seconds=S [--seed=N]";

    public static void main(String[] args) throws InterruptedException {
        Options o = Options.parse(args);

        // Single-threaded verification before any timing. The C harness of the
        // seed prints a checksum on every run and refuses to report a time for a
        // result it could not verify; this is the same rule. The checksum depends
        // only on the seed, so all four implementations must print the same one,
        // which makes a broken variant visible in the results, not just here.
        long checksum = verify(o);

        SplittableRandom master = new SplittableRandom(o.seed);
        master.split(); // the stream verify() used; keeps per-thread workloads independent of it

        // Generate every workload before timing so the timed loop does no RNG
        // work and every thread sees a fixed, reproducible sequence.
        int[][] work = new int[o.threads][];
        for (int t = 0; t < o.threads; t++) {
            work[t] = workload(master.split());
        }

        IntStack stack = newStack(o.impl);
        long prefillSum = 0;
        SplittableRandom pre = master.split();
        for (int k = 0; k < PREFILL; k++) {
            int v = pre.nextInt(1 << 30);
            stack.push(v);
            prefillSum += v;
        }

        Run run = timedRun(stack, work, o);

        // Conservation check on the concurrent run: every element is either
        // still in the stack or was popped exactly once. A lost or duplicated
        // node changes the sum (values are random 30-bit ints).
        long pushedSum = 0;
        for (int t = 0; t < o.threads; t++) {
            int[] w = work[t];
            for (long i = 0; i < run.opsPerThread[t]; i++) {
                int e = w[(int) (i & MASK)];
                if (e != POP) {
                    pushedSum += e;
                }
            }
        }
        long poppedSum = 0;
        for (long s : run.popSumPerThread) {
            poppedSum += s;
        }
        long remainingSum = 0;
        for (int v; (v = stack.pop()) != IntStack.EMPTY; ) {
            remainingSum += v;
        }
        if (prefillSum + pushedSum - poppedSum != remainingSum) {
            System.err.printf(Locale.ROOT,
                    "error: %s lost or duplicated elements under %d threads "
                            + "(prefill+pushed-popped=%d, left in stack=%d); not reporting a time%n",
                    o.impl, o.threads, prefillSum + pushedSum - poppedSum, remainingSum);
            System.exit(1);
        }

        long ops = 0;
        for (long n : run.opsPerThread) {
            ops += n;
        }
        double elapsed = run.elapsedNanos / 1e9;
        // "config" echoes the options as parsed, so a harness can verify that what ran is
        // what was asked for (trap 5 of the seed: options swallowed by the shell).
        System.out.println("{\"config\":{\"impl\":\"" + o.impl + "\""
                + ",\"threads\":" + o.threads
                + ",\"seconds\":" + o.seconds + "}"
                + ",\"ops\":" + ops
                + ",\"mops\":" + String.format(Locale.ROOT, "%.4f", ops / elapsed / 1e6)
                + ",\"elapsed_s\":" + String.format(Locale.ROOT, "%.4f", elapsed)
                + ",\"checksum\":\"" + String.format(Locale.ROOT, "%016x", checksum) + "\""
                + ",\"parks_per_op\":" + significant(ops == 0 ? 0.0 : (double) run.parks / ops, 4)
                + "}");
    }

    static IntStack newStack(String impl) {
        switch (impl) {
            case "nonfair": return new LockStack(new ReentrantLock(false));
            case "fair":    return new LockStack(new ReentrantLock(true));
            case "spin":    return new LockStack(new SpinLock());
            case "treiber": return new TreiberStack();
            default: throw new AssertionError(impl); // Options.parse rejects anything else
        }
    }

    /** Half pushes, half pops, in seeded random order. Exactly half, so the stack does not drift. */
    static int[] workload(SplittableRandom rng) {
        int[] w = new int[WORKLOAD_SIZE];
        for (int k = 0; k < WORKLOAD_SIZE; k++) {
            w[k] = k < WORKLOAD_SIZE / 2 ? rng.nextInt(1 << 30) : POP;
        }
        for (int k = WORKLOAD_SIZE - 1; k > 0; k--) { // Fisher-Yates
            int j = rng.nextInt(k + 1);
            int tmp = w[k];
            w[k] = w[j];
            w[j] = tmp;
        }
        return w;
    }

    /**
     * Runs VERIFY_OPS seeded pushes/pops on a fresh instance of the chosen
     * implementation and on a trivial array model, starting empty so pops on an
     * empty stack are exercised too. Returns FNV-1a 64 of every pop result
     * (EMPTY included) followed by the final contents, top to bottom. Exits 1
     * if the implementation disagrees with the model.
     */
    static long verify(Options o) {
        SplittableRandom rng = new SplittableRandom(o.seed).split();
        IntStack s = newStack(o.impl);
        int[] model = new int[VERIFY_OPS];
        int size = 0;
        long h = FNV_OFFSET;
        for (int k = 0; k < VERIFY_OPS; k++) {
            if (rng.nextBoolean()) {
                int v = rng.nextInt(1 << 30);
                s.push(v);
                model[size++] = v;
            } else {
                int got = s.pop();
                int want = size == 0 ? IntStack.EMPTY : model[--size];
                if (got != want) {
                    verifyFailed(o, "pop #" + k + " returned " + got + ", expected " + want);
                }
                h = fnv(h, got);
            }
        }
        while (size > 0) {
            int got = s.pop();
            int want = model[--size];
            if (got != want) {
                verifyFailed(o, "draining returned " + got + ", expected " + want);
            }
            h = fnv(h, got);
        }
        if (s.pop() != IntStack.EMPTY) {
            verifyFailed(o, "stack not empty after draining " + VERIFY_OPS + " operations");
        }
        return h;
    }

    static void verifyFailed(Options o, String what) {
        System.err.println("error: " + o.impl + " failed single-threaded verification: " + what
                + "; not reporting a time");
        System.exit(1);
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

    static final class Run {
        long elapsedNanos;
        long parks;
        long[] opsPerThread;
        long[] popSumPerThread;
    }

    static Run timedRun(IntStack stack, int[][] work, Options o) throws InterruptedException {
        int n = o.threads;
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        CountDownLatch ready = new CountDownLatch(n);
        CountDownLatch go = new CountDownLatch(1);
        long[] deadlineBox = new long[1]; // written before go.countDown(), read after go.await(): happens-before
        Run run = new Run();
        run.opsPerThread = new long[n];
        run.popSumPerThread = new long[n];
        long[] parks = new long[n];
        Thread[] threads = new Thread[n];

        for (int t = 0; t < n; t++) {
            final int id = t;
            final int[] w = work[t];
            threads[t] = new Thread(() -> {
                ready.countDown();
                awaitUninterruptibly(go);
                // Park counter. In HotSpot every LockSupport.park call (including
                // one that returns at once because a permit was pending)
                // increments the thread's "waited" count, which ThreadMXBean
                // exposes without JFR or any wrapper around the lock. Each read
                // costs about a microsecond; we take one here and one after the
                // loop, so the parks in go.await() above are excluded. Read by
                // the thread itself because a terminated thread has no ThreadInfo.
                long tid = Thread.currentThread().getId();
                long parks0 = waitedCount(mx, tid);
                final long deadline = deadlineBox[0];
                long i = 0;
                long popSum = 0;
                while (System.nanoTime() - deadline < 0) {
                    for (int j = 0; j < CHECK_EVERY; j++) {
                        int e = w[(int) (i++ & MASK)];
                        if (e == POP) {
                            int v = stack.pop();
                            if (v != IntStack.EMPTY) {
                                popSum += v;
                            }
                        } else {
                            stack.push(e);
                        }
                    }
                }
                parks[id] = waitedCount(mx, tid) - parks0;
                run.opsPerThread[id] = i; // i advances by exactly CHECK_EVERY per pass
                run.popSumPerThread[id] = popSum;
            }, "worker-" + t);
            threads[t].start();
        }

        ready.await();
        long start = System.nanoTime();
        deadlineBox[0] = start + (long) (o.seconds * 1e9);
        go.countDown();
        for (Thread th : threads) {
            th.join(); // join() also publishes the workers' result writes to us
        }
        run.elapsedNanos = System.nanoTime() - start;
        for (long p : parks) {
            run.parks += p;
        }
        return run;
    }

    static long waitedCount(ThreadMXBean mx, long tid) {
        ThreadInfo ti = mx.getThreadInfo(tid);
        return ti.getWaitedCount();
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

    /** x rounded to `digits` significant digits, plain decimal notation (valid JSON). */
    static String significant(double x, int digits) {
        if (x == 0) {
            return "0";
        }
        return new java.math.BigDecimal(x)
                .round(new java.math.MathContext(digits))
                .stripTrailingZeros()
                .toPlainString();
    }

    /**
     * Strict command line. An argument that is not exactly one of the four
     * options is a hard error: a sweep script whose shell passed
     * "--algo bmm --block 4" as one word quietly ran the default algorithm six
     * times (trap 5 of the seed). Better to refuse than to time the wrong thing.
     */
    static final class Options {
        String impl;
        int threads;
        double seconds;
        long seed = 42;

        static Options parse(String[] args) {
            Options o = new Options();
            boolean haveImpl = false, haveThreads = false, haveSeconds = false, haveSeed = false;
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
                    case "--impl=":
                        haveImpl = once(haveImpl, a);
                        if (!val.matches("nonfair|fair|spin|treiber")) {
                            usageError("--impl must be one of nonfair, fair, spin, treiber, got \"" + val + "\"", null);
                        }
                        o.impl = val;
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
            if (!haveImpl || !haveThreads || !haveSeconds) {
                StringBuilder missing = new StringBuilder();
                if (!haveImpl) missing.append(" --impl=");
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
