/**
 * A bounded queue for exactly one producer thread and one consumer thread.
 * offer returns false when the queue is full, poll returns null when it is empty; neither
 * blocks, so the harness decides how to wait.
 */
interface SpscQueue {
    boolean offer(Object e);

    Object poll();
}
