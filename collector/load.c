/* Loading captures for output; see load.h. */
#include "load.h"

int pt_model_load(struct pt_model *m, char *const *paths, size_t n,
		  struct pt_redact *red)
{
	int status = 0;
	size_t i;

	pt_model_init(m);
	for (i = 0; i < n; i++) {
		int rc = pt_model_add_capture(m, paths[i]);

		if (rc < 0) {
			pt_model_free(m);
			return -1;
		}
		if (rc > 0)
			status = 1;
	}
	pt_model_finish(m);
	if (red)
		pt_redact_model(red, m);
	return status || m->damaged;
}
