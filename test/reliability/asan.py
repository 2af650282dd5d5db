#!/usr/bin/env python3
"""An AddressSanitizer program runs traced as it runs untraced.

gcc's -fsanitize=address (and clang's with -shared-libasan) link the ASan
runtime as a shared library, which aborts at start unless it is the first
object in dl_iterate_phdr's list: a preloaded library used to come first
("ASan runtime does not come first in initial library list", exit 1).

For each compiler found, one program is built and run twice, untraced and
under `proftrace record`: once clean (prints a line, exits 3) and once with
a planted heap-buffer-overflow (ASan's report, exit 1).  Exit status,
stdout and stderr must be the same, the report compared frame for frame
with its addresses and pids masked; the capture must hold the execution
with its exit status.
"""

import os
import re
import shutil
import subprocess

import ptrel

PROG = r"""
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	char *p = malloc(16);

	p[argc > 1 ? 16 : 0] = 1;       /* argv[1]: one byte past the end */
	printf("hello %d\n", p[0]);
	free(p);
	return 3;
}
"""


def normalize(text):
    out, n = [], 0
    for line in text.splitlines():
        m = re.match(r"(\s*)#\d+ (.*)", line)
        if m:
            line = "%s#%d %s" % (m.group(1), n, m.group(2))
            n += 1
        else:
            n = 0
        line = re.sub(r"0x[0-9a-f]+", "ADDR", line)
        line = re.sub(r"==\d+==", "==PID==", line)
        out.append(line)
    return "\n".join(out)


def compilers(d):
    found = []
    if shutil.which("gcc"):
        found.append(("gcc", ["gcc", "-fsanitize=address"]))
    if shutil.which("clang"):
        rt = subprocess.run(["clang", "-print-file-name=libclang_rt.asan-x86_64.so"],
                            stdout=subprocess.PIPE, text=True).stdout.strip()
        if os.path.isfile(rt):
            found.append(("clang -shared-libasan",
                          ["clang", "-fsanitize=address", "-shared-libasan",
                           "-Wl,-rpath," + os.path.dirname(rt)]))
    return found


def main():
    a = ptrel.args(__doc__)
    d = ptrel.tmpdir("asan")
    src = os.path.join(d, "a.c")
    with open(src, "w") as f:
        f.write(PROG)
    tried = 0
    for name, cmd in compilers(d):
        exe = os.path.join(d, "a-" + name.split()[0])
        r = ptrel.run(cmd + ["-g", "-o", exe, src])
        if r.returncode != 0:
            ptrel.log("%s: cannot build an ASan program, skipped" % name)
            continue
        tried += 1
        for extra in ([], ["bug"]):
            plain = ptrel.run([exe] + extra, env=ptrel.untraced_env(), cwd=d)
            cap = os.path.join(d, "c.ptcap")
            # Under a shell that waits for it: ASan ends a program it
            # stops by a bare exit_group system call, which only the
            # parent's wait reports.
            traced = ptrel.run([a.proftrace, "record", "-q", "--force", "-o",
                                cap, "--", "sh", "-c", '"$@"; exit $?',
                                "sh", exe] + extra,
                               env=ptrel.untraced_env(), cwd=d)
            what = "%s %s" % (name, "with a planted bug" if extra else "clean")
            ptrel.check(plain.returncode == (1 if extra else 3),
                        "%s: untraced exit %d" % (what, plain.returncode))
            ptrel.check(traced.returncode == plain.returncode,
                        "%s: exit %d traced, %d untraced; stderr:\n%s"
                        % (what, traced.returncode, plain.returncode,
                           traced.stderr.decode(errors="replace")[-2000:]))
            ptrel.check(traced.stdout == plain.stdout,
                        "%s: stdout differs" % what)
            pe = normalize(plain.stderr.decode(errors="replace"))
            te = normalize(traced.stderr.decode(errors="replace"))
            ptrel.check(te == pe, "%s: stderr differs:\n--- untraced\n%s\n"
                        "--- traced\n%s" % (what, pe, te))
            st, out, err = ptrel.convert(a, cap)
            rows = [r for r in ptrel.csv_rows(out) if r["exe"] == exe]
            ptrel.check(st == 0 and len(rows) == 1,
                        "%s: capture has %d rows for %s (%s)"
                        % (what, len(rows), exe, err))
            ptrel.check(rows[0]["exit_code"] == str(plain.returncode),
                        "%s: recorded exit %r" % (what, rows[0]["exit_code"]))
            ptrel.log("%s: exit %d, output identical, recorded"
                      % (what, plain.returncode))
    if not tried:
        ptrel.skip("no compiler here builds ASan programs")


if __name__ == "__main__":
    main()
