/* The heap-shift shim: preloaded (LD_PRELOAD) into every run of a session whose layout is
 * randomised, before the program's own code runs it allocates HEAP_BASE + LAB_HEAP_SHIFT
 * bytes from the C allocator and keeps them, so every later allocation of the process sits
 * LAB_HEAP_SHIFT bytes further on than it would otherwise (glibc's malloc, like every
 * allocator that carves blocks in turn from the top of its heap, rounds a request of
 * HEAP_BASE + a multiple of 16 bytes to a block exactly that much larger). lab draws the
 * shift per run from the session's seed and records it: the heap counterpart of the
 * environment padding, as STABILIZER (Curtsinger & Berger, ASPLOS 2013) randomises the heap.
 *
 * Built by build.rs with the system C compiler (cc -shared -fPIC -O2) and embedded in lab.
 * It does nothing where LAB_HEAP_SHIFT is absent or not a number below 1 MiB. */
#include <stdlib.h>

/* Allocated whatever the shift, so that a shift of 0 and one of 16 differ by 16 bytes: the
 * smallest block an allocator gives (32 bytes in glibc) would take both. */
#define HEAP_BASE 64

/* Kept, never freed: the room stays taken for the life of the process. */
static void *volatile kept;

__attribute__((constructor)) static void lab_shift_heap(void) {
    const char *text = getenv("LAB_HEAP_SHIFT");
    if (text == NULL || *text == '\0') return;
    char *end;
    unsigned long shift = strtoul(text, &end, 10);
    if (*end != '\0' || shift >= (1ul << 20)) return;
    kept = malloc(HEAP_BASE + shift);
}
