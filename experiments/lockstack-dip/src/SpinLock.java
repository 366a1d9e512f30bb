import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * Test-and-test-and-set spin lock that never parks. It exists to show what the
 * ReentrantLock curve looks like with parking taken out, so it must never call
 * LockSupport.park (directly or through anything that does).
 *
 * Only lock/unlock are implemented; LockStack needs nothing else.
 */
final class SpinLock implements Lock {
    /**
     * With more runnable threads than cores the holder can be preempted while a
     * waiter burns its whole time slice spinning. Yielding after this many failed
     * attempts lets the holder run again so the lock cannot stall for a full
     * scheduler quantum per handoff forever. Thread.yield is sched_yield, not
     * park, so the "never parks" property still holds (and parks_per_op shows 0).
     */
    private static final int SPINS_BEFORE_YIELD = 1 << 10;

    private final AtomicBoolean held = new AtomicBoolean();

    @Override
    public void lock() {
        int failed = 0;
        for (;;) {
            // Spin on a plain read first so waiters share the line in S state
            // and only the CAS attempt pulls it exclusive.
            if (!held.get() && held.compareAndSet(false, true)) {
                return;
            }
            Thread.onSpinWait();
            if (++failed == SPINS_BEFORE_YIELD) {
                failed = 0;
                Thread.yield();
            }
        }
    }

    @Override
    public void unlock() {
        held.set(false);
    }

    @Override
    public void lockInterruptibly() {
        throw new UnsupportedOperationException();
    }

    @Override
    public boolean tryLock() {
        throw new UnsupportedOperationException();
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) {
        throw new UnsupportedOperationException();
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException();
    }
}
