/* convert -f files: each execution's inputs and outputs, as CSV. */
#ifndef PT_FILES_CSV_H
#define PT_FILES_CSV_H

#include <stdio.h>

#include "model/model.h"

#define PT_FILES_CSV_HEADER "execution,pid,access,path,time"

/* The access kinds as the CSV and deps name them ("read", "write"...). */
const char *pt_file_kind_name(char kind);

/*
 * Write every file access of m to f, one row each, executions in start
 * order: execution (its command line, quoted as the CSV's command),
 * pid, access (read, write, delete, new, mkdir, probe; exec for the
 * image's program file, at its start), path, time (Unix epoch seconds);
 * the header alone for a capture without file accesses.
 * Returns 0, or -1 if a write failed.
 */
int pt_files_csv_write(const struct pt_model *m, FILE *f);

#endif
