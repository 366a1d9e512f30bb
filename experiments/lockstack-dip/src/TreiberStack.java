import java.util.concurrent.atomic.AtomicReference;

/**
 * Lock-free Treiber stack: every push and pop is a CAS on the one top pointer.
 * ABA cannot happen because nodes are never reused (the GC keeps a node alive
 * while any thread still holds a reference to it).
 */
final class TreiberStack implements IntStack {
    private final AtomicReference<Node> top = new AtomicReference<>();

    @Override
    public void push(int value) {
        Node n = new Node(value);
        Node t;
        do {
            t = top.get();
            n.next = t;
        } while (!top.compareAndSet(t, n));
    }

    @Override
    public int pop() {
        for (;;) {
            Node t = top.get();
            if (t == null) {
                return EMPTY;
            }
            if (top.compareAndSet(t, t.next)) {
                return t.value;
            }
        }
    }
}
