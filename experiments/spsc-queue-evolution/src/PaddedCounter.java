import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A long index alone on its cache lines: seven longs before it and seven after (56 bytes each
 * side, so no 64-byte line holds the value and another object's field). HotSpot lays out a
 * superclass's fields before a subclass's, which fixes the order; fields within one class may
 * be reordered. get() is a volatile read and lazySet() a release store, as on AtomicLong.
 */
final class PaddedCounter extends PaddedCounterValue {
    long p9, p10, p11, p12, p13, p14, p15;

    /** Keeps the padding fields from looking unused; never called on the hot path. */
    long padding() {
        return p1 + p2 + p3 + p4 + p5 + p6 + p7 + p9 + p10 + p11 + p12 + p13 + p14 + p15;
    }
}

class PaddedCounterLeft {
    long p1, p2, p3, p4, p5, p6, p7;
}

class PaddedCounterValue extends PaddedCounterLeft {
    private static final VarHandle VALUE;

    static {
        try {
            VALUE = MethodHandles.lookup().findVarHandle(PaddedCounterValue.class, "value", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private volatile long value;

    final long get() {
        return value;
    }

    final void lazySet(long v) {
        VALUE.setRelease(this, v);
    }
}
