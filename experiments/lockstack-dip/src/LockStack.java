import java.util.concurrent.locks.Lock;

/**
 * A linked stack guarded by one lock. The nonfair, fair and spin variants are
 * all this class; only the Lock passed in differs, so any throughput
 * difference between them is the lock's and nothing else's.
 *
 * Nodes are allocated before taking the lock to keep allocation (and any
 * TLAB refill) out of the critical section.
 */
final class LockStack implements IntStack {
    private final Lock lock;
    private Node top; // guarded by lock

    LockStack(Lock lock) {
        this.lock = lock;
    }

    @Override
    public void push(int value) {
        Node n = new Node(value);
        lock.lock();
        try {
            n.next = top;
            top = n;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public int pop() {
        lock.lock();
        try {
            Node t = top;
            if (t == null) {
                return EMPTY;
            }
            top = t.next;
            return t.value;
        } finally {
            lock.unlock();
        }
    }
}
