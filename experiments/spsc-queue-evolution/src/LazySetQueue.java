import java.util.concurrent.atomic.AtomicLong;

/**
 * Step 2: head and tail become AtomicLongs, read with get() and written with lazySet(), a
 * release store: it still orders the element's store before the index's, but does not wait
 * for the store buffer to drain as a volatile store does. Correct because each index has a
 * single writer.
 */
final class LazySetQueue implements SpscQueue {
    private final Object[] buffer;
    private final int capacity;
    private final AtomicLong head = new AtomicLong();
    private final AtomicLong tail = new AtomicLong();

    LazySetQueue(int capacity) {
        this.capacity = capacity;
        this.buffer = new Object[capacity];
    }

    @Override
    public boolean offer(Object e) {
        long t = tail.get();
        if (t - head.get() == capacity) {
            return false;
        }
        buffer[(int) (t % capacity)] = e;
        tail.lazySet(t + 1);
        return true;
    }

    @Override
    public Object poll() {
        long h = head.get();
        if (h == tail.get()) {
            return null;
        }
        int i = (int) (h % capacity);
        Object e = buffer[i];
        buffer[i] = null;
        head.lazySet(h + 1);
        return e;
    }
}
