import java.util.concurrent.ArrayBlockingQueue;

/** Step 0, the baseline: the JDK's ArrayBlockingQueue, one lock shared by both ends. */
final class AbqQueue implements SpscQueue {
    private final ArrayBlockingQueue<Object> q;

    AbqQueue(int capacity) {
        q = new ArrayBlockingQueue<>(capacity);
    }

    @Override
    public boolean offer(Object e) {
        return q.offer(e);
    }

    @Override
    public Object poll() {
        return q.poll();
    }
}
