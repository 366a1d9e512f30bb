import java.util.concurrent.atomic.AtomicLong;

/**
 * Step 5: step 3 (not 4: head and tail are plain AtomicLongs again, as in the write-up) with a
 * cached copy of the other side's index. The producer re-reads head only when its cached copy
 * says the queue is full, the consumer re-reads tail only when its copy says it is empty, so
 * most operations touch no cache line the other thread writes.
 */
final class CachedQueue implements SpscQueue {
    private final Object[] buffer;
    private final int capacity;
    private final int mask;
    private final AtomicLong head = new AtomicLong();
    private final AtomicLong tail = new AtomicLong();
    private long headCache; // producer only
    private long tailCache; // consumer only

    CachedQueue(int capacity) {
        this.capacity = capacity;
        this.mask = capacity - 1;
        this.buffer = new Object[capacity];
    }

    @Override
    public boolean offer(Object e) {
        long t = tail.get();
        if (t - headCache == capacity) {
            headCache = head.get();
            if (t - headCache == capacity) {
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
        if (h == tailCache) {
            tailCache = tail.get();
            if (h == tailCache) {
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
