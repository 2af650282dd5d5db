#!/usr/bin/env python3
"""The CI recipes of doc/ci.md, run as written: the YAML is read from the
page itself, and every shell command in it runs (but the lines marked
`# runner setup`, which install packages from the network) with the
variables GitHub Actions and GitLab CI set, faked; the actions a step
`uses` (checkout, cache, artifact upload) are played by this script.

Each recipe runs twice on a small make project: once passing, then with
the build failing, against the first run's cached capture.  Checked: the
job fails exactly when the build does and the build step's status is
make's own; the capture and CSV (whose pipeline and job columns are the
fake CI ids) are there either way; the summary or report, the diff against
the last run; an HTML report and a Markdown summary exactly when this
proftrace can write them, an OTLP export (to a local HTTP server) exactly
when it has `export`.

`git clone` of $PROFTRACE_REPO gets a repository made from this source
tree, and `meson install` installs into /usr/local, so all of it runs in a
private mount namespace in which /usr/local and /etc are overlays (as
test/install/ns.sh does); it needs root,
and skips otherwise.
"""
import argparse
import glob
import http.server
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading

import yaml

ap = argparse.ArgumentParser()
ap.add_argument("--source", required=True)
args = ap.parse_args()
src = os.path.abspath(args.source)
failures = []


def check(what, ok, detail=""):
    print(("ok:   " if ok else "FAIL: ") + what + (f" ({detail})" if detail and not ok else ""))
    if not ok:
        failures.append(what)


def in_namespace():
    if os.environ.get("PT_IN_NS") == "1":
        return
    ns = ["unshare", "-m"] if os.getuid() == 0 else ["unshare", "-rm"]
    with tempfile.TemporaryDirectory() as t:
        os.mkdir(t + "/u")
        os.mkdir(t + "/w")
        # Writable too (see test/install/ns.sh): not in a user namespace.
        p = subprocess.run(ns + ["sh", "-c",
                                 "mount -t overlay overlay -o "
                                 f"lowerdir=/etc,upperdir={t}/u,workdir={t}/w "
                                 "/etc && touch /etc/ld.so.conf.d/.pt-probe"],
                           stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        print(f"SKIP: cannot write to an overlay of /etc in a private mount "
              f"namespace ({' '.join(ns)}; a real install needs root): "
              f"{p.stderr.strip()}")
        sys.exit(77)
    env = dict(os.environ, PT_IN_NS="1")
    sys.exit(subprocess.run(ns + [sys.executable] + sys.argv, env=env).returncode)


def overlays(tmp):
    for d in ("etc", "usr/local"):
        u, w = f"{tmp}/ov/{d}/u", f"{tmp}/ov/{d}/w"
        os.makedirs(u)
        os.makedirs(w)
        subprocess.run(["mount", "-t", "overlay", "overlay", "-o",
                        f"lowerdir=/{d},upperdir={u},workdir={w}", "/" + d],
                       check=True)


def recipes():
    """The YAML blocks of doc/ci.md: (GitHub workflow, GitLab CI file)."""
    text = open(os.path.join(src, "doc", "ci.md")).read()
    found = re.findall(r"^```yaml\n(.*?)^```$", text, re.M | re.S)
    docs = [yaml.safe_load(b) for b in found]
    gh = [d for d in docs if "jobs" in d]
    gl = [d for d in docs if "jobs" not in d]
    check("doc/ci.md has one GitHub and one GitLab recipe",
          len(gh) == 1 and len(gl) == 1, f"{len(gh)}, {len(gl)}")
    return gh[0], gl[0]


def setup_lines_removed(script):
    """The script without its '# runner setup' lines, which must only
    install packages."""
    out = []
    for line in script.splitlines():
        if "# runner setup" in line:
            check("a runner setup line only installs packages",
                  re.match(r"^\s*(sudo )?apt-get update && (sudo )?apt-get install", line),
                  line)
            continue
        out.append(line)
    return "\n".join(out)


def make_repo(tmp):
    """A git repository of this source tree's files: what `git clone` of
    $PROFTRACE_REPO gets."""
    repo = os.path.join(tmp, "proftrace.git-src")
    files = subprocess.run(["git", "-C", src, "ls-files", "-z", "--cached",
                            "--others", "--exclude-standard"], check=True,
                           stdout=subprocess.PIPE).stdout.split(b"\0")
    for f in filter(None, files):
        f = f.decode()
        if os.path.isfile(os.path.join(src, f)):
            os.makedirs(os.path.dirname(os.path.join(repo, f)), exist_ok=True)
            shutil.copy2(os.path.join(src, f), os.path.join(repo, f))
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "src"]):
        subprocess.run(["git", "-C", repo] + cmd, check=True, env=env)
    return "file://" + repo


def make_project(ws):
    os.makedirs(ws)
    with open(os.path.join(ws, "f.c"), "w") as f:
        f.write("int f(void) { return 1; }\n")
    with open(os.path.join(ws, "main.c"), "w") as f:
        f.write("int f(void);\nint main(void) { return f() - 1; }\n")
    with open(os.path.join(ws, "Makefile"), "w") as f:
        # With FAIL set, compiling f.c fails: make exits 2.
        f.write("prog: main.o f.o\n\tcc -o prog main.o f.o\n"
                "main.o: main.c\n\tcc -c main.c\n"
                "f.o: f.c\n\tcc -c f.c $(if $(FAIL),-include /nonexistent.h,)\n")


class OTLP(http.server.BaseHTTPRequestHandler):
    posts = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        OTLP.posts.append((self.path, body))
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *a):
        pass


def feature(cmd, word, env):
    out = subprocess.run(["proftrace"] + cmd + ["--help"], env=env,
                         stdout=subprocess.PIPE, text=True).stdout
    return re.search(r"\b%s\b" % word, out) is not None


def base_env(tmp, repo, endpoint):
    shims = os.path.join(tmp, "shims")
    os.makedirs(shims, exist_ok=True)
    # Root already, in this namespace: sudo only runs the command.
    with open(os.path.join(shims, "sudo"), "w") as f:
        f.write('#!/bin/sh\nexec "$@"\n')
    os.chmod(os.path.join(shims, "sudo"), 0o755)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PROFTRACE", "LD_PRELOAD", "MESON", "CI_",
                                "GITHUB_", "GITLAB", "PT_"))}
    env["PATH"] = shims + ":/usr/local/bin:/usr/local/sbin:" + \
        ":".join(p for p in os.environ["PATH"].split(":")
                 if "build" not in p)
    env.update(CI="true", PROFTRACE_REPO=repo,
               OTEL_EXPORTER_OTLP_ENDPOINT=endpoint)
    return env


def sh(script, cwd, env):
    p = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail",
                        "-c", script], cwd=cwd, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    print(p.stdout[-3000:], end="")
    return p.returncode


def artifacts_check(label, ws, paths, env, run_no, failed_build):
    have = {p: bool(glob.glob(os.path.join(ws, p))) for p in paths}
    check(f"{label}: capture and CSV uploaded",
          have.get("build.ptcap") and have.get("build.csv"), str(have))
    if "build.html" in have:
        check(f"{label}: HTML exactly when convert writes it",
              have["build.html"] == feature(["convert"], "html", env))
    if "report.md" in have:
        check(f"{label}: Markdown report exactly when report writes it",
              have["report.md"] == feature(["report"], "markdown", env))
    check(f"{label}: diff only against a last run",
          have.get("diff.txt") == (run_no == 2))
    return have


def csv_ids(ws, pipeline, job):
    rows = open(os.path.join(ws, "build.csv")).read().splitlines()[1:]
    ok = rows and all(r.startswith(f"{pipeline},{job},") for r in rows)
    check(f"CSV rows carry the CI ids {pipeline},{job}", ok, rows[:1])
    check("CSV has the compiler runs", any(",cc -c " in r for r in rows))


def expand(value, run_id):
    return str(value).replace("${{ github.run_id }}", run_id)


def github(wf, tmp, repo, endpoint, cache):
    for run_no in (1, 2):
        run_id = str(4000 + run_no)
        ws = os.path.join(tmp, f"gh{run_no}", "ws")
        runner_temp = os.path.join(tmp, f"gh{run_no}", "runner")
        os.makedirs(runner_temp)
        summary = os.path.join(tmp, f"gh{run_no}", "summary.md")
        env = base_env(tmp, repo, endpoint)
        env.update({k: str(v) for k, v in wf.get("env", {}).items()})
        env.update(PROFTRACE_REPO=repo, GITHUB_ACTIONS="true",
                   GITHUB_RUN_ID=run_id, GITHUB_JOB="build",
                   GITHUB_WORKSPACE=ws, RUNNER_TEMP=runner_temp,
                   GITHUB_STEP_SUMMARY=summary)
        if run_no == 2:
            env["FAIL"] = "1"
        failed, build_rc, uploaded = False, None, None
        OTLP.posts.clear()
        for step in wf["jobs"]["build"]["steps"]:
            if failed and step.get("if") != "always()":
                continue
            uses = step.get("uses", "")
            w = {k: expand(v, run_id) for k, v in step.get("with", {}).items()}
            if uses.startswith("actions/checkout"):
                make_project(ws)
            elif uses.startswith("actions/cache/restore"):
                keys = [w["key"]] + w.get("restore-keys", "").split()
                for k in keys:
                    hit = [c for c in cache if c == k or c.startswith(k)]
                    if hit:
                        shutil.copytree(cache[sorted(hit)[-1]],
                                        os.path.join(ws, w["path"]))
                        break
            elif uses.startswith("actions/cache/save"):
                cache[w["key"]] = os.path.join(tmp, f"cache-{w['key']}")
                shutil.copytree(os.path.join(ws, w["path"]), cache[w["key"]])
            elif uses.startswith("actions/upload-artifact"):
                uploaded = artifacts_check(f"GitHub run {run_no}", ws,
                                           w["path"].split(), env, run_no,
                                           run_no == 2)
            elif "run" in step:
                rc = sh(setup_lines_removed(step["run"]), ws, env)
                if step.get("name") == "Build":
                    build_rc = rc
                else:
                    check(f"GitHub run {run_no}: step '{step.get('name')}' passes",
                          rc == 0, f"exit {rc}")
                failed = failed or rc != 0
            else:
                check(f"GitHub: step {step} is known", False)
        check(f"GitHub run {run_no}: the build step's status is make's",
              build_rc == (2 if run_no == 2 else 0), f"exit {build_rc}")
        check(f"GitHub run {run_no}: artifacts uploaded", uploaded is not None)
        csv_ids(ws, run_id, "build")
        text = open(summary).read() if os.path.exists(summary) else ""
        check(f"GitHub run {run_no}: the report is in the step summary",
              "Critical path" in text or "critical path" in text.lower(),
              text[:200])
        otlp = feature([], "export", env)
        check(f"GitHub run {run_no}: OTLP export exactly when available",
              bool(OTLP.posts) == otlp and
              all(p == "/v1/traces" for p, _ in OTLP.posts))


def gitlab(ci, tmp, repo, endpoint, cache):
    job = ci["build"]
    for run_no in (1, 2):
        ws = os.path.join(tmp, f"gl{run_no}", "ws")
        make_project(ws)
        env = base_env(tmp, repo, endpoint)
        env.update({k: str(v) for k, v in job.get("variables", {}).items()})
        env.update(PROFTRACE_REPO=repo, GITLAB_CI="true",
                   CI_PIPELINE_ID=str(900 + run_no), CI_JOB_ID=str(9100 + run_no),
                   CI_JOB_NAME="build", CI_PROJECT_DIR=ws,
                   TMPDIR=os.path.join(tmp, f"gl{run_no}", "tmp"))
        os.makedirs(env["TMPDIR"])
        if run_no == 2:
            env["FAIL"] = "1"
        key = job["cache"]["key"]
        if key in cache:
            for p in job["cache"]["paths"]:
                shutil.copytree(os.path.join(cache[key], p), os.path.join(ws, p))
        OTLP.posts.clear()
        # The runner runs before_script and script in one shell, stopping
        # at the first failure; after_script in another, always.
        before = sh(setup_lines_removed("\n".join(job["before_script"])), ws, env)
        check(f"GitLab run {run_no}: before_script passes", before == 0,
              f"exit {before}")
        rc = sh("\n".join(job["script"]), ws, env)
        check(f"GitLab run {run_no}: script's status is make's",
              rc == (2 if run_no == 2 else 0), f"exit {rc}")
        after = sh("\n".join(job["after_script"]), ws, env)
        check(f"GitLab run {run_no}: after_script passes", after == 0)
        if job["cache"].get("when") == "always" or rc == 0:
            cache[key] = os.path.join(tmp, f"glcache{run_no}")
            for p in job["cache"]["paths"]:
                shutil.copytree(os.path.join(ws, p), os.path.join(cache[key], p))
        check(f"GitLab run {run_no}: artifacts kept when the job fails",
              job["artifacts"].get("when") == "always")
        artifacts_check(f"GitLab run {run_no}", ws, job["artifacts"]["paths"],
                        env, run_no, run_no == 2)
        csv_ids(ws, str(900 + run_no), str(9100 + run_no))
        otlp = feature([], "export", env)
        check(f"GitLab run {run_no}: OTLP export exactly when available",
              bool(OTLP.posts) == otlp)


in_namespace()
with tempfile.TemporaryDirectory() as tmp:
    overlays(tmp)
    gh, gl = recipes()
    repo = make_repo(tmp)
    server = http.server.HTTPServer(("127.0.0.1", 0), OTLP)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{server.server_port}"
    github(gh, tmp, repo, endpoint, {})
    gitlab(gl, tmp, repo, endpoint, {})
    server.shutdown()
    for d in ("usr/local", "etc"):
        subprocess.run(["umount", "/" + d])
sys.exit(1 if failures else 0)
