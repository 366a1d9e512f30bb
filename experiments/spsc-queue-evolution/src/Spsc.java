import java.util.Locale;
import java.util.SplittableRandom;

/**
 * Throughput of one producer thread handing items to one consumer thread through a queue.
 *
 *   java -cp build Spsc --queue=abq|ring|lazyset|mask|padded|cached|all --cpus=N
 *                       --items=N --iterations=K [--seed=N]
 *
 * One queue is made per run, then K iterations each pass N items through it: a new producer
 * thread offers them in order while the main thread polls them; a full or empty queue makes the
 * waiting side Thread.yield() and retry. Each iteration prints one JSON line with its own
 * throughput; a last line echoes the configuration and gives the checksum of the items received.
 * The clock is read twice per iteration, never per item.
 *
 * --cpus is the number of CPUs the run was pinned to by whoever started it (the JVM sees its
 * affinity mask); a run that can use a different number exits 3 rather than report a placement
 * it did not have. Exit status: 0 ok, 1 items were lost, duplicated or reordered (no
 * throughput is trusted), 2 bad command line, 3 the CPU count does not match.
 */
public final class Spsc {
    /** Capacity of every queue: 32 Ki slots, a power of two so the mask step applies. */
    static final int CAPACITY = 32 * 1024;

    /** Distinct item objects the producer cycles through; their values feed the checksum. */
    static final int POOL = 1024;

    static final String USAGE = "usage: java -cp build Spsc --queue=abq|ring|lazyset|mask|padded|cached|all"
            + " --cpus=N --items=N --iterations=K [--seed=N]";

    public static void main(String[] args) throws InterruptedException {
        Options o = Options.parse(args);
        int available = Runtime.getRuntime().availableProcessors();
        if (available != o.cpus) {
            System.err.println("error: asked to run on " + o.cpus + " CPU(s) but the JVM may use " + available
                    + "; pin the process (taskset, or the variant's cpus) or fix --cpus");
            System.exit(3);
        }

        Integer[] pool = new Integer[POOL];
        SplittableRandom rng = new SplittableRandom(o.seed);
        for (int k = 0; k < POOL; k++) {
            pool[k] = Integer.valueOf(1_000 + rng.nextInt(1 << 20)); // > 127: distinct boxes
        }
        long expected = checksumOf(pool, o.items);

        SpscQueue q = newQueue(o.queue);
        long runStart = System.nanoTime();
        for (int it = 0; it < o.iterations; it++) {
            Thread producer = new Thread(() -> produce(q, pool, o.items), "producer");
            long start = System.nanoTime();
            producer.start();
            long got = consume(q, o.items);
            long nanos = System.nanoTime() - start;
            producer.join();
            if (got != expected) {
                System.err.printf(Locale.ROOT, "error: iteration %d received items with checksum %s, expected %s;"
                        + " the queue lost, duplicated or reordered items%n", it, hex(got), hex(expected));
                System.exit(1);
            }
            System.out.println("{\"iteration\":" + it + ",\"mops\":"
                    + String.format(Locale.ROOT, "%.4f", o.items * 1e3 / nanos) + "}");
        }
        double elapsed = (System.nanoTime() - runStart) / 1e9;
        // "config" echoes the options as parsed (and the CPU count the JVM saw), so the harness
        // can verify that what ran is what was asked for.
        System.out.println("{\"config\":{\"queue\":\"" + o.queue + "\""
                + ",\"cpus\":" + available
                + ",\"capacity\":" + CAPACITY
                + ",\"items\":" + o.items
                + ",\"iterations\":" + o.iterations + "}"
                + ",\"elapsed_s\":" + String.format(Locale.ROOT, "%.4f", elapsed)
                + ",\"checksum\":\"" + hex(expected) + "\"}");
    }

    static SpscQueue newQueue(String name) {
        switch (name) {
            case "abq": return new AbqQueue(CAPACITY);
            case "ring": return new RingQueue(CAPACITY);
            case "lazyset": return new LazySetQueue(CAPACITY);
            case "mask": return new MaskQueue(CAPACITY);
            case "padded": return new PaddedQueue(CAPACITY);
            case "cached": return new CachedQueue(CAPACITY);
            case "all": return new AllQueue(CAPACITY);
            default: throw new AssertionError(name); // Options.parse rejects anything else
        }
    }

    static void produce(SpscQueue q, Integer[] pool, long items) {
        for (long i = 0; i < items; i++) {
            Integer e = pool[(int) i & (POOL - 1)];
            while (!q.offer(e)) {
                Thread.yield();
            }
        }
    }

    /**
     * Polls `items` items and returns their order-sensitive checksum: a Fletcher-style pair of
     * running sums (the second sums the first), so a lost, duplicated or swapped item changes it.
     */
    static long consume(SpscQueue q, long items) {
        long s1 = 0;
        long s2 = 0;
        for (long i = 0; i < items; i++) {
            Object e;
            while ((e = q.poll()) == null) {
                Thread.yield();
            }
            s1 += (Integer) e;
            s2 += s1;
        }
        return s1 * 0x9E3779B97F4A7C15L ^ s2;
    }

    /** The checksum consume() must return, computed without a queue. */
    static long checksumOf(Integer[] pool, long items) {
        long s1 = 0;
        long s2 = 0;
        for (long i = 0; i < items; i++) {
            s1 += pool[(int) i & (POOL - 1)];
            s2 += s1;
        }
        return s1 * 0x9E3779B97F4A7C15L ^ s2;
    }

    static String hex(long x) {
        return String.format(Locale.ROOT, "%016x", x);
    }

    /**
     * Strict command line: an argument that is not exactly one of the options is a hard error,
     * with a hint when it looks like several options passed as one.
     */
    static final class Options {
        String queue;
        int cpus;
        long items;
        int iterations;
        long seed = 42;

        static Options parse(String[] args) {
            Options o = new Options();
            boolean haveQueue = false, haveCpus = false, haveItems = false, haveIterations = false,
                    haveSeed = false;
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
                    case "--queue=":
                        haveQueue = once(haveQueue, a);
                        if (!val.matches("abq|ring|lazyset|mask|padded|cached|all")) {
                            usageError("--queue must be one of abq, ring, lazyset, mask, padded, cached, all, got \""
                                    + val + "\"", null);
                        }
                        o.queue = val;
                        break;
                    case "--cpus=":
                        haveCpus = once(haveCpus, a);
                        o.cpus = (int) parseLong(a, val, 1, 4096);
                        break;
                    case "--items=":
                        haveItems = once(haveItems, a);
                        o.items = parseLong(a, val, 1, 1L << 40);
                        break;
                    case "--iterations=":
                        haveIterations = once(haveIterations, a);
                        o.iterations = (int) parseLong(a, val, 1, 1_000_000);
                        break;
                    case "--seed=":
                        haveSeed = once(haveSeed, a);
                        o.seed = parseLong(a, val, Long.MIN_VALUE, Long.MAX_VALUE);
                        break;
                    default:
                        usageError("unknown argument \"" + a + "\"", null);
                }
            }
            if (!haveQueue || !haveCpus || !haveItems || !haveIterations) {
                StringBuilder missing = new StringBuilder();
                if (!haveQueue) missing.append(" --queue=");
                if (!haveCpus) missing.append(" --cpus=");
                if (!haveItems) missing.append(" --items=");
                if (!haveIterations) missing.append(" --iterations=");
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
