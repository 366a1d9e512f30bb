import java.util.concurrent.atomic.AtomicLong;

/**
 * Step 3: step 2 with a power-of-two capacity, so the index wraps with a bitwise mask instead
 * of a division.
 */
final class MaskQueue implements SpscQueue {
    private final Object[] buffer;
    private final int capacity;
    private final int mask;
    private final AtomicLong head = new AtomicLong();
    private final AtomicLong tail = new AtomicLong();

    MaskQueue(int capacity) {
        this.capacity = capacity;
        this.mask = capacity - 1;
        this.buffer = new Object[capacity];
    }

    @Override
    public boolean offer(Object e) {
        long t = tail.get();
        if (t - head.get() == capacity) {
            return false;
        }
        buffer[(int) t & mask] = e;
        tail.lazySet(t + 1);
        return true;
    }

    @Override
    public Object poll() {
        long h = head.get();
        if (h == tail.get()) {
            return null;
        }
        int i = (int) h & mask;
        Object e = buffer[i];
        buffer[i] = null;
        head.lazySet(h + 1);
        return e;
    }
}
