/* Loading captures for output: what every reading command does first. */
#ifndef PT_LOAD_H
#define PT_LOAD_H

#include <stddef.h>

#include "model/model.h"
#include "model/redact.h"

/*
 * Initialize m, read every capture (or spool directory) in paths into it
 * (a directory that holds captures, *.ptcap, and no spool file stands for
 * those captures),
 * build it, and mask it with red (NULL or empty: nothing to mask).
 * Returns 0; 1 if an input was damaged (what was intact is in m, and a
 * warning was printed); or -1 if one is not a capture at all (a one-line
 * error was printed and m is already freed): better no output than one
 * that silently lacks an input.
 */
int pt_model_load(struct pt_model *m, char *const *paths, size_t n,
		  struct pt_redact *red);

/*
 * The same into a lean model (pt_model_set_lean): red masks only the
 * recorded command ("command" metadata), the command lines being read
 * again by whoever streams them.
 */
int pt_model_load_lean(struct pt_model *m, char *const *paths, size_t n,
		       struct pt_redact *red);

#endif
