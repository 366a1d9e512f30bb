/**
 * The structure under test. Values are ints so the hot loop does not box;
 * {@link #EMPTY} is returned by pop on an empty stack, and the workload never
 * pushes it (pushed values are non-negative).
 */
interface IntStack {
    int EMPTY = Integer.MIN_VALUE;

    void push(int value);

    int pop();
}
