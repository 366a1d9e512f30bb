/**
 * A plain long alone on its cache lines (see PaddedCounter for the layout). Used for the
 * cached copies of the indexes, each read and written by one thread only.
 */
final class PaddedLong extends PaddedLongValue {
    long p9, p10, p11, p12, p13, p14, p15;

    long padding() {
        return p1 + p2 + p3 + p4 + p5 + p6 + p7 + p9 + p10 + p11 + p12 + p13 + p14 + p15;
    }
}

class PaddedLongLeft {
    long p1, p2, p3, p4, p5, p6, p7;
}

class PaddedLongValue extends PaddedLongLeft {
    long value;
}
