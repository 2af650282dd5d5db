/*
 * Pids across pid namespaces, for the model.
 *
 * A process in a pid namespace (bwrap --unshare-pid, unshare -p, a
 * container) sees its namespace's pids: its own, its parent's, its
 * children's.  The collector sees its own pids (SO_PEERCRED translates a
 * peer's).  Each connection of such a process teaches one pair: (namespace,
 * its pid there) -> the collector's pid.  The other pids its records carry
 * are stood for by a reference to (namespace, pid), resolved once the whole
 * capture is read, as the pair may come later than the record naming it.
 */
#ifndef PT_PIDNS_H
#define PT_PIDNS_H

#include <stdint.h>

/* References have this bit set; no kernel hands out such pids. */
#define PT_PIDNS_REF 0x80000000u

struct pt_pidns {
	struct pt_pidns_ent {
		uint32_t ns, nspid, pid;        /* pid: 0 until learnt */
	} *ent;
	uint32_t n, cap;
	uint32_t *slot;                         /* index + 1, 0: empty */
	uint32_t mask;
};

/* The reference standing for pid nspid of namespace ns (nspid != 0). */
uint32_t pt_pidns_ref(struct pt_pidns *t, uint32_t ns, uint32_t nspid);

/* Pid nspid of namespace ns is the collector's pid. */
void pt_pidns_learn(struct pt_pidns *t, uint32_t ns, uint32_t nspid,
		    uint32_t pid);

/*
 * The collector's pid for raw, a pid or a reference: raw itself when it is
 * no reference or one never learnt.
 */
uint32_t pt_pidns_resolve(const struct pt_pidns *t, uint32_t raw);

/* What to show for raw: an unresolved reference shows its namespace pid. */
uint32_t pt_pidns_shown(const struct pt_pidns *t, uint32_t raw);

void pt_pidns_free(struct pt_pidns *t);

#endif
