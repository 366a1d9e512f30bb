/**
 * Step 1: a ring buffer without locks. Only the producer writes tail and only the consumer
 * writes head (the single-writer principle), so plain volatile stores suffice; the index wraps
 * with the remainder operator.
 */
final class RingQueue implements SpscQueue {
    private final Object[] buffer;
    private final int capacity;
    private volatile long head;
    private volatile long tail;

    RingQueue(int capacity) {
        this.capacity = capacity;
        this.buffer = new Object[capacity];
    }

    @Override
    public boolean offer(Object e) {
        long t = tail;
        if (t - head == capacity) {
            return false;
        }
        buffer[(int) (t % capacity)] = e;
        tail = t + 1; // volatile store: publishes the element
        return true;
    }

    @Override
    public Object poll() {
        long h = head;
        if (h == tail) {
            return null;
        }
        int i = (int) (h % capacity);
        Object e = buffer[i];
        buffer[i] = null;
        head = h + 1;
        return e;
    }
}
