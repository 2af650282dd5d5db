"""The upstream source of an installed Debian package, for the tests that
run a project's own test suite against the installed program
(test/integration/make-suite.py, coreutils-suite.py).

    top = debsource.fetch("make", "make-dfsg", cache, log)

fetch() asks dpkg-query for the installed version of the binary package,
downloads that version's source package with `apt-get source
--download-only` through an apt state of its own (a sources.list with one
deb-src line for the system's own archive, lists and cache in a scratch
directory under CACHE), so that no deb-src line is needed, root is not
needed, and nothing of the system's apt changes; unpacks the upstream
tarball (the .orig, without Debian's patches) once into
CACHE/BINARY-VERSION/ and returns the tarball's top directory there.
Later calls find it there and download nothing.
"""

import glob
import os
import re
import shutil
import subprocess
import tarfile
import tempfile


class Unavailable(Exception):
    """The source cannot be had on this machine (no network, no archive
    that holds that version): the machine's reason, a test skips."""


class Broken(Exception):
    """Something that should not happen (no installed package, a source
    package without its tarball): a test fails."""


def mirror():
    """The first Debian or Ubuntu archive the system's apt names."""
    files = (glob.glob("/etc/apt/sources.list") +
             glob.glob("/etc/apt/sources.list.d/*.list") +
             glob.glob("/etc/apt/sources.list.d/*.sources"))
    for f in files:
        try:
            text = open(f).read()
        except OSError:
            continue
        for m in re.finditer(r"(https?://\S+)", text):
            uri = m.group(1)
            if "security" not in uri and "snapshot" not in uri:
                return uri
    return "http://deb.debian.org/debian"


def installed_version(binary):
    """dpkg's version of the installed package BINARY; Broken if none."""
    version = subprocess.run(["dpkg-query", "-W", "-f=${Version}", binary],
                             capture_output=True, text=True).stdout.strip()
    if not version:
        raise Broken(f"dpkg-query knows no installed {binary}")
    return version


def _top(unpacked):
    dirs = [d for d in os.listdir(unpacked)
            if os.path.isdir(os.path.join(unpacked, d))]
    if len(dirs) != 1:
        raise Broken(f"{unpacked}: not one top directory: {dirs}")
    return os.path.join(unpacked, dirs[0])


def fetch(binary, source, cache, log):
    """The unpacked upstream source of the installed BINARY (whose source
    package is SOURCE), under CACHE: the path of its top directory.
    LOG(message) is told before a download.  Raises Unavailable when
    apt-get cannot download it, Broken on anything else."""
    version = installed_version(binary)
    unpacked = os.path.join(cache, f"{binary}-{version}")
    if os.path.isdir(unpacked):
        return _top(unpacked)
    os.makedirs(cache, exist_ok=True)
    work = tempfile.mkdtemp(prefix="apt-", dir=cache)
    try:
        codename = ""
        for line in open("/etc/os-release"):
            if line.startswith("VERSION_CODENAME="):
                codename = line.split("=", 1)[1].strip().strip('"')
        for d in ("lists/partial", "cache/archives/partial", "etc"):
            os.makedirs(os.path.join(work, d))
        with open(os.path.join(work, "etc", "sources.list"), "w") as f:
            f.write(f"deb-src {mirror()} {codename} main\n")
        user = subprocess.run(["id", "-un"], capture_output=True,
                              text=True).stdout.strip()
        opts = []
        for k, v in (("Dir::Etc::SourceList", work + "/etc/sources.list"),
                     ("Dir::Etc::SourceParts", work + "/etc/none"),
                     ("Dir::State::Lists", work + "/lists"),
                     ("Dir::Cache", work + "/cache"),
                     ("Debug::NoLocking", "1"),
                     ("APT::Sandbox::User", user)):
            opts += ["-o", f"{k}={v}"]
        log(f"fetching the source of {binary} {version} (once)")
        said = ""
        for args in (["update"], ["source", "--download-only",
                                  f"{source}={version}"]):
            r = subprocess.run(["apt-get", "-q"] + opts + args, cwd=work,
                               capture_output=True, text=True)
            # Without the network apt-get update says "W: Failed to
            # fetch" and exits 0; source then finds no deb-src line.
            said += r.stderr[-1500:]
            if r.returncode != 0:
                raise Unavailable(f"apt-get {args[0]} failed:\n" + said)
        orig = glob.glob(os.path.join(work, f"{source}_*.orig.tar.*"))
        if not orig:
            raise Broken(f"no orig tarball of {source} was fetched")
        part = unpacked + ".part"
        shutil.rmtree(part, ignore_errors=True)
        with tarfile.open(orig[0]) as t:
            try:
                t.extractall(part, filter="data")
            except TypeError:       # Python before 3.11.4: no filters
                t.extractall(part)
        os.rename(part, unpacked)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return _top(unpacked)
