"""Whether this machine lets a process make a user namespace, for the
tests that need one (bubblewrap as an ordinary user, `unshare -r`).

The kernel refuses one to every process inside a chroot (root included:
its root is not its mount namespace's), where user.max_user_namespaces
is 0, or (Debian's older kernels) kernel.unprivileged_userns_clone is
0; Ubuntu 24.04's AppArmor lets an unconfined program make one but not
map its uid in it.  A test skips what needs one there, with the reason,
rather than failing for the machine's sake.

    python3 userns.py [COMMAND PREFIX...]   prints "allowed" or
                                            "refused: REASON" (exit 1)
"""

import os
import subprocess
import sys

# What may refuse, and the value that does.
KNOBS = (("/proc/sys/user/max_user_namespaces", "0"),
         ("/proc/sys/kernel/unprivileged_userns_clone", "0"),
         ("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1"))


def refused(prefix=()):
    """None when `unshare --user --map-root-user true`, run after PREFIX
    (setpriv or runuser to the user the test runs as; nothing for the
    caller itself), succeeds: a user namespace made and the uid mapped
    in it, as bubblewrap does.  Otherwise the reason, one line: unshare's
    own message and the settings of this machine that refuse."""
    try:
        r = subprocess.run(list(prefix) + ["unshare", "--user",
                                           "--map-root-user", "true"],
                           stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True)
    except OSError as e:
        return "cannot run unshare: %s" % e
    if r.returncode == 0:
        return None
    why = []
    for path, bad in KNOBS:
        try:
            with open(path) as f:
                v = f.read().strip()
        except OSError:
            continue
        if v == bad:
            why.append("%s=%s" % (path[len("/proc/sys/"):].replace("/", "."),
                                  v))
    if root_not_init():
        why.append("its root is not pid 1's: a chroot?")
    who = " ".join(prefix) if prefix else "uid %d:" % os.geteuid()
    msg = r.stderr.strip().splitlines()
    return ("the machine refuses a user namespace (%s unshare -r: %s%s)"
            % (who, msg[-1] if msg else "exit %d" % r.returncode,
               "; " + ", ".join(why) if why else ""))


def root_not_init():
    """True when this process's root is not pid 1's (a chroot, or a
    container's pivot_root); False where /proc/1/root may not be read."""
    try:
        a, b = os.stat("/"), os.stat("/proc/1/root/")
    except OSError:
        return False
    return (a.st_dev, a.st_ino) != (b.st_dev, b.st_ino)


if __name__ == "__main__":
    why = refused(sys.argv[1:])
    print("allowed" if why is None else "refused: " + why)
    sys.exit(0 if why is None else 1)
