/**
 * Step 6, all together: single writers, release stores, a power-of-two mask, cached indexes,
 * and every hot field (head, tail and both caches) padded onto cache lines of its own.
 */
final class AllQueue implements SpscQueue {
    private final Object[] buffer;
    private final int capacity;
    private final int mask;
    private final PaddedCounter head = new PaddedCounter();
    private final PaddedCounter tail = new PaddedCounter();
    private final PaddedLong headCache = new PaddedLong(); // producer only
    private final PaddedLong tailCache = new PaddedLong(); // consumer only

    AllQueue(int capacity) {
        this.capacity = capacity;
        this.mask = capacity - 1;
        this.buffer = new Object[capacity];
    }

    @Override
    public boolean offer(Object e) {
        long t = tail.get();
        if (t - headCache.value == capacity) {
            headCache.value = head.get();
            if (t - headCache.value == capacity) {
                return false;
            }
        }
        buffer[(int) t & mask] = e;
        tail.lazySet(t + 1);
        return true;
    }

    @Override
    public Object poll() {
        long h = head.get();
        if (h == tailCache.value) {
            tailCache.value = tail.get();
            if (h == tailCache.value) {
                return null;
            }
        }
        int i = (int) h & mask;
        Object e = buffer[i];
        buffer[i] = null;
        head.lazySet(h + 1);
        return e;
    }
}
