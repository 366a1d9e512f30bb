/**
 * Step 4: step 3 with head and tail each alone on its cache lines, so that the producer's
 * stores to tail do not take the line holding head away from the consumer (false sharing).
 */
final class PaddedQueue implements SpscQueue {
    private final Object[] buffer;
    private final int capacity;
    private final int mask;
    private final PaddedCounter head = new PaddedCounter();
    private final PaddedCounter tail = new PaddedCounter();

    PaddedQueue(int capacity) {
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
