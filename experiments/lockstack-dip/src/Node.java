/** Shared by LockStack and TreiberStack so both allocate exactly the same nodes. */
final class Node {
    final int value;
    Node next;

    Node(int value) {
        this.value = value;
    }
}
