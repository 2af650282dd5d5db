/*
 * The floor: a preload library that does nothing.  What the dynamic
 * loader costs to map one more object into each process is the overhead
 * no LD_PRELOAD tracer can go below.
 */
int pt_bench_empty;
