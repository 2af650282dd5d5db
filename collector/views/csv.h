/* The CSV exporter. */
#ifndef PT_CSV_H
#define PT_CSV_H

#include <stdio.h>

#include "model/model.h"

/* The header line, without the line end. */
#define PT_CSV_HEADER "pipeline_id,job_id,job_name,type,command,start," \
	"duration,pid,ppid,exit_code,signal,user_cpu,sys_cpu,max_rss_kb," \
	"cwd,exe,package,unfinished"

/*
 * Write every execution of m to f as CSV (CRLF-free, "\n" line ends, RFC
 * 4180 quoting), in start order.  Returns 0, or -1 if a write failed.
 */
int pt_csv_write(const struct pt_model *m, FILE *f);

#endif
